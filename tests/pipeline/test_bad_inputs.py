"""Bad input never ends in a traceback: exit code 2, a located typed message, no output.

Each class of bad input a hostile user might try (numbers beyond 64 bits, a
5 MB id, a directory that is not a Parquet dataset, a ragged CSV, an output
under a regular file, an unknown problem...) is one row of a table run through
``streamspec.pipeline.cli.main``.  The fast lane's rows fail on the driver
before Spark starts; the ``no_spark`` fixture makes starting it a test failure.
The rows that need Spark to see the problem (Parquet schemas read by Spark)
are marked ``spark`` and share the session fixture.
"""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from streamspec.pipeline.cli import main

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "pipeline" / "data"
EDGES, QUERIES = str(DATA / "connectivity-edges.txt"), str(DATA / "connectivity-queries.txt")
SETS = str(DATA / "simjoin-sets.jsonl")
ITEMS, REMOTE = str(DATA / "topkjoin" / "mentions.csv"), str(DATA / "topkjoin" / "followers-dfc.csv")
KWS = DATA / "kws"
BIG = "99999999999999999999999"
HUGE = "7" * 5_000_000


def connectivity(inp=EDGES, *extra, queries=QUERIES):
    return ["run", "connectivity", "--input", inp, "--window", "500", "--slide", "100",
            "--queries", queries, "--output", "{out}", *extra]


def simjoin(inp=SETS, *extra):
    return ["run", "simjoin", "--input", inp, "--k", "2", "--window", "300", "--output", "{out}",
            *extra]


def topkjoin(inp=ITEMS, *extra, remote=REMOTE):
    return ["run", "topkjoin", "--input", inp, "--remote", remote, "--window", "10",
            "--slide", "5", "--k", "2", "--output", "{out}", *extra]


def kws(*inputs, extra=(), schema=str(KWS / "schema.json")):
    inputs = inputs or [f"{r}={KWS / (r + '.csv')}" for r in ("director", "movie", "plays", "actor")]
    return ["run", "kws", "--schema", schema, "--input", *inputs, "--keywords", "tarantino",
            "--tmax", "3", "--window", "100", "--output", "{out}", *extra]


def files(d: Path) -> dict:
    """The bad inputs, written once per test into ``d``; returns name -> path."""
    (d / "empty_dir").mkdir()
    (d / "text_dir").mkdir()
    (d / "text_dir" / "part-0.txt").write_text("1 2 3\n")
    texts = {
        "a_file": "x",
        "big_id.txt": f"1 2 0\n{BIG} 3 1\n",
        "huge_id.txt": f"1 2 0\n{HUGE} 3 1\n",
        "big_query.txt": f"{BIG} 1\n",
        "not_parquet.parquet": "hello",
        "big_id.jsonl": json.dumps({"id": int(BIG), "ts": 1, "tokens": [1]}) + "\n",
        "big_token.jsonl": json.dumps({"id": 1, "ts": 1, "tokens": [int(BIG)]}) + "\n",
        "dict_key.jsonl": json.dumps({"id": 1, "ts": 1, "tokens": [1], "key": {"a": 1}}) + "\n",
        "big_ts.csv": f"id,x,ts\n1,1,{BIG}\n",
        "huge_id.csv": f"id,x,ts\n1,1,5\n{HUGE},1,6\n",
        "early.csv": "id,x,ts\n1,1,10\n2,1,30\n",
        "huge_x.jsonl": json.dumps({"id": 1, "x": 10 ** 400, "ts": 5}) + "\n",
        "ragged.csv": "id,x,ts\n1,1,10\n2,1\n",
        "text_value.csv": "key,time,value\n1,5,abc\n",
        "not_sqlite.db": "not a database",
        "big_t.csv": f"tid,t,did,name\nd1,{BIG},1,Q\n",
        "ragged_kws.csv": "tid,t,did,name\nd1,1,1,Q,extra\n",
    }
    for name, text in texts.items():
        (d / name).write_text(text)
    (d / "binary.txt").write_bytes(b"\x00\xff\xfe garbage\n")
    with sqlite3.connect(d / "text_value.db") as conn:
        conn.executescript("CREATE TABLE timeline (key, time INTEGER, value); "
                           "INSERT INTO timeline VALUES (1, 5, 'abc');")
    conn.close()
    return {p.name: str(p) for p in d.iterdir()}


# (argv with {name} placeholders for files(), words the message must contain)
FAST = {
    "engines: unknown problem": (["engines", "nosuch"],
                                 "unknown problem 'nosuch'; known problems: connectivity, kws, "
                                 "simjoin, topkjoin"),
    "connectivity: empty directory": (connectivity("{empty_dir}"), "directory holds no Parquet files"),
    "connectivity: directory of text": (connectivity("{text_dir}"), "part-0.txt: not a Parquet file"),
    "connectivity: not Parquet": (connectivity("{not_parquet.parquet}"), "not a Parquet file"),
    "connectivity: id beyond 64 bits": (connectivity("{big_id.txt}"),
                                        f"big_id.txt:2: id '{BIG}' is an integer beyond 64 bits"),
    "connectivity: 5 MB id": (connectivity("{huge_id.txt}"), "huge_id.txt:2: id '7777"),
    "connectivity: query id beyond 64 bits": (connectivity(EDGES, queries="{big_query.txt}"),
                                              "big_query.txt:1: id"),
    "connectivity: binary input": (connectivity("{binary.txt}"), "not a UTF-8 text file"),
    "connectivity: missing input": (connectivity("{empty_dir}/nope.txt"), "nope.txt: no such file"),
    "connectivity: window beyond 64 bits": (connectivity(EDGES, "--window", BIG),
                                            "--window/-r: 99999999999999999999999 does not fit"),
    "connectivity: negative window": (connectivity(EDGES, "--window", "-5"),
                                      "window size r must be > 0, got -5"),
    "connectivity: zero slide": (connectivity(EDGES, "-s", "0"), "slide s must be > 0, got 0"),
    "connectivity: origin after the first edge": (connectivity(EDGES, "--origin", "100000"),
                                                  "connectivity-edges.txt:5: edge time 3 is before "
                                                  "the origin"),
    "connectivity: output under a file": (connectivity(EDGES, "--output", "{a_file}/out"),
                                          "a_file is a file, not a directory"),
    "connectivity: bad master": (connectivity(EDGES, "--master", "nosuch://x"),
                                 "is not a Spark master URL"),
    "connectivity: zero partitions": (connectivity(EDGES, "--partitions", "0"),
                                      "argument --partitions: must be > 0"),
    "simjoin: id beyond 64 bits": (simjoin("{big_id.jsonl}"),
                                   f"big_id.jsonl:1: record id {BIG} does not fit in 64 bits"),
    "simjoin: token beyond 64 bits": (simjoin("{big_token.jsonl}"),
                                      f"big_token.jsonl:1: token {BIG} does not fit in 64 bits"),
    "simjoin: key of a wrong type": (simjoin("{dict_key.jsonl}"), "dict_key.jsonl:1: key must be"),
    "simjoin: binary input": (simjoin("{binary.txt}"), "binary.txt:1: not a UTF-8 text file"),
    "simjoin: empty directory": (simjoin("{empty_dir}"), "directory holds no Parquet files"),
    "simjoin: NaN window": (simjoin(SETS, "--window", "nan"), "window w must be a finite number > 0"),
    "simjoin: window not a number": (simjoin(SETS, "-w", "ten"), "expected a number, got 'ten'"),
    "simjoin: zero k": (simjoin(SETS, "--k", "0"), "k must be an integer >= 1, got 0"),
    "simjoin: output under a file": (simjoin(SETS, "--output", "{a_file}/out"), "is a file"),
    "topkjoin: ts beyond 64 bits": (topkjoin("{big_ts.csv}"),
                                    "big_ts.csv:2: ts must be a 64-bit integer"),
    "topkjoin: 5 MB id": (topkjoin("{huge_id.csv}"), "huge_id.csv:3: id '7777"),
    "topkjoin: x beyond a double": (topkjoin("{huge_x.jsonl}"),
                                    "huge_x.jsonl:1: x must be a number, got 1000"),
    "topkjoin: item before the origin": (topkjoin("{early.csv}", "--origin", "20"),
                                         "early.csv:2: item time 10 is before the origin t0=20"),
    "topkjoin: ragged CSV": (topkjoin("{ragged.csv}"), "ragged.csv:3: expected 3 fields"),
    "topkjoin: remote not SQLite": (topkjoin(ITEMS, remote="{not_sqlite.db}"),
                                    "cannot read the SQLite timeline"),
    "topkjoin: remote text value": (topkjoin(ITEMS, remote="{text_value.db}"),
                                    "text_value.db:table timeline rowid 1: value must be a finite"),
    "topkjoin: remote CSV text value": (topkjoin(ITEMS, remote="{text_value.csv}"),
                                        "text_value.csv:2: value must be a number"),
    "topkjoin: zero window (paper's name)": (topkjoin(ITEMS, "--omega", "0"),
                                             "window width omega must be > 0"),
    "topkjoin: output under a file": (topkjoin(ITEMS, "--output", "{a_file}/out"), "is a file"),
    "kws: schema is a directory": (kws(schema="{empty_dir}"), "empty_dir: cannot read"),
    "kws: schema not text": (kws(schema="{binary.txt}"), "not a UTF-8 text file"),
    "kws: time beyond 64 bits": (kws("director={big_t.csv}"),
                                 f"big_t.csv:2: time {BIG} does not fit in 64 bits"),
    "kws: ragged CSV": (kws("director={ragged_kws.csv}"), "ragged_kws.csv:2: expected 4 fields"),
    "kws: empty directory": (kws("director={empty_dir}"), "directory holds no Parquet files"),
    "kws: zero window": (kws(extra=("-w", "0")), "window w must be > 0, got 0"),
    "kws: output under a file": (kws(extra=("--output", "{a_file}/out")), "is a file"),
}


@pytest.fixture
def no_spark(monkeypatch):
    """These inputs must fail on the driver: starting Spark is a failure of the test."""
    import streamspec.pipeline.spark as spark_module

    def refuse(*args, **kwargs):
        raise AssertionError("Spark was started for an input that is bad on the driver")
    monkeypatch.setattr(spark_module, "session", refuse)


def run(argv: list[str], names: dict, out: str) -> int:
    """``main`` on argv with ``{out}`` and ``{name}`` filled in; argparse's exit status
    counts as the return code."""
    names = {**names, "out": out}
    filled = []
    for arg in argv:
        for name, path in names.items():
            arg = arg.replace("{" + name + "}", path)
        filled.append(arg)
    try:
        return main(filled)
    except SystemExit as stop:
        return stop.code


@pytest.mark.parametrize("case", sorted(FAST))
def test_bad_input_exits_2_with_a_located_message(case, tmp_path, capsys, no_spark):
    argv, words = FAST[case]
    out = str(tmp_path / "out")
    code = run(argv, files(tmp_path), out)
    err = capsys.readouterr().err
    assert code == 2, err
    assert words in err and "Traceback" not in err
    assert not Path(out).exists()


def test_a_bad_input_through_the_installed_entry_point(tmp_path):
    """The same path as a user's shell: the process exits 2 with one line, no traceback."""
    done = subprocess.run([sys.executable, "-m", "streamspec.pipeline.cli", "engines", "nosuch"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == ("streamspec: error: unknown problem 'nosuch'; known problems: "
                                   "connectivity, kws, simjoin, topkjoin")


def parquet(path: Path, **columns) -> str:
    pd.DataFrame(columns).to_parquet(path)
    return str(path)


@pytest.mark.spark
def test_parquet_schemas_spark_reads_are_typed_errors(spark, tmp_path, capsys):
    """Column types of a Parquet edge dataset are read by Spark: still exit 2, no output."""
    cases = [
        (parquet(tmp_path / "t_double.parquet", u=[1], v=[2], t=[1.5]),
         "t_double.parquet: column t must be an integer type, got double"),
        (parquet(tmp_path / "key_list.parquet", u=[1], v=[2], t=[1], key=[[1]]),
         "key_list.parquet: column key must be integer or string"),
        (parquet(tmp_path / "late.parquet", u=[1, 2], v=[2, 3], t=[5, 3]),
         "late.parquet:row 2: edge time 3 is earlier than 5"),
    ]
    for n, (path, words) in enumerate(cases):
        out = str(tmp_path / f"out{n}")
        assert run(connectivity(path), {}, out) == 2
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err, err
        assert not Path(out).exists()
