"""``streamspec stream``: every rejected stream row located, and an output that plain Parquet
readers read after a crash (issue 30).

Spark's file source refuses some rows itself (malformed JSON, a string, float, 1e30 or 2^64
where a long belongs, an array where an object belongs, a CSV line with the wrong field
count, invalid UTF-8) and says only ``FAILED_READ_FILE`` and the file: the query's error is
then located by the project's readers (``streamspec.pipeline.stream_check``).  A row Spark
reads as null (a JSON row without ``t``, a Parquet null) is rejected by the problem at its
row, and a query id of the wrong type before Spark starts.  Every case exits 2 with
``file:line`` (or ``file: row N``) and leaves no part file at ``--output``.  After a
``kill -9`` mid-stream and a restart, ``pyarrow.parquet.read_table(OUTPUT)`` equals the
uninterrupted run's rows: a restart removes the part files its sink log does not list.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pyarrow.parquet as pq
import pytest

from streamspec.pipeline.arrivals import log_entries, tidy_output
from streamspec.pipeline.cli import build_parser, main
from streamspec.pipeline.stream_check import check_file, schema_fields
from streamspec.spec.errors import MalformedRecord

from .streamcheck import batch_rows, canonical, write_file

GOOD = '{"u":1,"v":2,"t":1}'
# (format, the second record's text, words the message must hold): line 2 (CSV: 4, after a
# first record whose quoted key holds a newline) is bad
BAD = {
    "malformed JSON": ("json", '{"u":2,"v":3,"t":', "not JSON"),
    "string time": ("json", '{"u":2,"v":3,"t":"soon"}', "column t: expected an integer"),
    "float time": ("json", '{"u":2,"v":3,"t":1.5}', "column t: expected an integer"),
    "1e30": ("json", '{"u":2,"v":3,"t":1e30}', "column t: expected an integer"),
    "2^64": ("json", '{"u":2,"v":3,"t":18446744073709551616}', "does not fit in a long"),
    "array": ("json", "[1,2,3]", "expected a JSON object"),
    "array id": ("json", '{"u":[2],"v":3,"t":2}', "column u: expected an integer"),
    "invalid UTF-8": ("json", b'{"u":2,"v":3,"t":2,"x":"\xff"}', "not UTF-8 text"),
    "CSV field count": ("csv", "2,3,4,5,6", "expected 4 fields"),
    "CSV word time": ("csv", "2,3,soon,", "column t: expected an integer"),
    # Spark's CSV reader took this without a word (exit 0): the files are read first
    "CSV unterminated quote": ("csv", '2,3,2,"k', "unterminated quote"),
    "missing t": ("json", '{"u":2,"v":3}', "edge t is missing"),
    # read by Spark, refused by the spec: located at its line, not at its record number
    "CSV missing t": ("csv", "2,3,,", "edge t is missing"),
}
SPEC_REFUSES = ("missing t", "CSV missing t")


def write_bad(path, fmt: str, bad) -> int:
    """A two-record file, the second ``bad``; the bad record's line (CSV: the first record
    spans two lines, a quoted newline in its key)."""
    good = 'u,v,t,key\n1,2,1,"a\nb"\n' if fmt == "csv" else GOOD + "\n"
    bad = bad if isinstance(bad, bytes) else bad.encode()
    path.write_bytes(good.encode() + bad + b"\n")
    return 4 if fmt == "csv" else 2


@pytest.mark.parametrize("case", [c for c in BAD if c not in SPEC_REFUSES])
def test_the_driver_check_locates_what_sparks_reader_refuses(case, tmp_path):
    fmt, bad, words = BAD[case]
    line = write_bad(tmp_path / f"part-0001.{fmt}", fmt, bad)
    with pytest.raises(MalformedRecord) as caught:
        check_file(str(tmp_path / f"part-0001.{fmt}"), fmt, "u long, v long, t long, key string")
    assert caught.value.location == f"part-0001.{fmt}:{line}"
    assert words in str(caught.value)


def test_the_driver_check_accepts_what_spark_reads(tmp_path):
    schema = "id long, ts long, tokens array<string>, text string, side string, key string"
    (tmp_path / "a.json").write_text('{"id":1,"ts":2,"tokens":["x",null],"key":7}\n\n'
                                     '{"id":2,"ts":3,"text":"hi","extra":[1]}\n')
    check_file(str(tmp_path / "a.json"), "json", schema)
    (tmp_path / "b.csv").write_text("u,v,t\n1,2,3\n\n4,,5\n")
    check_file(str(tmp_path / "b.csv"), "csv", "u long, v long, t long")
    pd.DataFrame({"u": [1], "v": [2], "t": [3]}).to_parquet(tmp_path / "c.parquet")
    check_file(str(tmp_path / "c.parquet"), "parquet", "u long, v long, t long")
    assert schema_fields("`a b` array<struct<x:int,y:int>>, c long") == \
        [("a b", "array<struct<x:int,y:int>>"), ("c", "long")]


# a CSV stream file's header: Spark reads CSV columns by position, so the header must be
# the stream's columns in order (a header in another order was read silently by position)
HEADERS = {"another order": "t,u,v,key\n1,2,1,\n",
           "no key column": "u,v,t\n1,2,1\n"}


@pytest.mark.parametrize("case", list(HEADERS))
def test_a_csv_header_spark_would_read_by_position_is_refused_at_line_1(case, tmp_path):
    (tmp_path / "part-0001.csv").write_text(HEADERS[case])
    with pytest.raises(MalformedRecord) as caught:
        check_file(str(tmp_path / "part-0001.csv"), "csv", "u long, v long, t long, key string")
    assert caught.value.location == "part-0001.csv:1"
    assert "need the header u,v,t,key" in str(caught.value)


def test_a_parquet_column_of_the_wrong_type_is_named(tmp_path):
    pd.DataFrame({"u": [1], "v": [2], "t": ["soon"]}).to_parquet(tmp_path / "p.parquet")
    with pytest.raises(MalformedRecord, match=r"p.parquet: column t: column t holds string"):
        check_file(str(tmp_path / "p.parquet"), "parquet", "u long, v long, t long")


def stream_argv(d, fmt: str, *more: str) -> list[str]:
    (d / "q.txt").write_text("1 3\n")
    return ["stream", "connectivity", "--source", str(d / "in"), "--format", fmt,
            "--checkpoint", str(d / "ckpt"), "--output", str(d / "out"), "--window", "4",
            "--slide", "2", "--queries", str(d / "q.txt"), *more]


def no_part_files(out) -> None:
    assert not out.exists() or not [n for n in os.listdir(out) if n.startswith("part-")]


@pytest.mark.spark
@pytest.mark.parametrize("case", list(BAD))
def test_a_stream_row_sparks_reader_refuses_is_located(case, spark, tmp_path, capsys):
    fmt, bad, words = BAD[case]
    (tmp_path / "in").mkdir()
    line = write_bad(tmp_path / "in" / f"part-0001.{fmt}", fmt, bad)
    assert main(stream_argv(tmp_path, fmt, "--trigger-once")) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "FAILED_READ_FILE" not in err, err
    assert f"connectivity stream stopped: part-0001.{fmt}:{line}: " in err and words in err, err
    no_part_files(tmp_path / "out")


def other_problem(problem: str, d) -> tuple[list[str], str, str]:
    """Another problem's stream flags, a good JSON row and one Spark's reader refuses."""
    if problem == "simjoin":
        return (["--k", "2", "--window", "6", "--similarity", "jaccard"],
                '{"id":1,"ts":1,"tokens":[1,2],"key":"a"}', '{"id":2,"ts":"soon","key":"a"}')
    if problem == "topkjoin":
        from ..topkjoin.test_stream import keyed_case, stream_argv as topkjoin_argv
        return (topkjoin_argv(d, keyed_case(11, False)[0].params, "oracle", "long"),
                '{"id":1,"x":0.5,"ts":1,"key":"a"}', '{"id":2,"x":"high","ts":2,"key":"a"}')
    from ..kws.test_stream import argv
    return (argv(["--window", "5"], "fullmesh"),
            '{"key":"a","rel":"director","tid":"d1","t":1,"did":1,"name":"Q"}',
            '{"key":"a","rel":"director","tid":"d2","t":[2],"did":2,"name":"R"}')


# 2**53 + 1: Spark's double (simjoin --ts-type double) rounds it to the exact 2**53, which run
# rejects: the arrival check reads the integer itself
BEYOND_2_53 = ('{"id":2,"ts":9007199254740993,"tokens":[1,2],"key":"a"}',
               "column ts: timestamp must be a finite int or float, got 9007199254740993")


@pytest.mark.spark
@pytest.mark.parametrize("problem,column,beyond", [("simjoin", "ts", None), ("kws", "t", None),
                                                   ("topkjoin", "x", None),
                                                   ("simjoin", "ts", BEYOND_2_53)])
def test_every_problems_stream_locates_a_row_sparks_reader_refuses(problem, column, beyond, spark,
                                                                     tmp_path, capsys):
    flags, good, bad = other_problem(problem, tmp_path)
    words = f"column {column}: expected "
    if beyond is not None:
        bad, words = beyond
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "part-0001.json").write_text(f"{good}\n\n{bad}\n")
    argv = ["stream", problem, "--source", str(tmp_path / "in"), "--format", "json",
            "--checkpoint", str(tmp_path / "ckpt"), "--output", str(tmp_path / "out"),
            "--trigger-once", *flags]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{problem} stream stopped: part-0001.json:3: {words}" in err, err
    no_part_files(tmp_path / "out")


def test_an_integer_time_a_double_would_round_is_refused_at_its_line(tmp_path):
    """simjoin ``--ts-type double``: ±(2**53 + 1) became ±2**53 (exact, so accepted) where
    ``run`` rejects it; 2**53 itself, floats and short times pass (one regex scan)."""
    from streamspec.pipeline.stream_check import check_exact_json_numbers

    path = tmp_path / "part-0001.json"
    ok = ['{"id":1,"ts":9007199254740992,"tokens":[1]}', '{"id":12345678901234567,"ts":1.5}',
          '{"id":1,"ts":-9007199254740992.0}', "", '{"id":1,"ts":"12345678901234567"}']
    for sign in ("", "-"):
        path.write_text("\n".join(ok + [f'{{"id":3,"ts":{sign}9007199254740993}}']) + "\n")
        with pytest.raises(MalformedRecord, match=f"got {sign}9007199254740993") as caught:
            check_exact_json_numbers(str(path), "ts")
        assert caught.value.location == "part-0001.json:6"
    path.write_text("\n".join(ok) + "\n")
    check_exact_json_numbers(str(path), "ts")


class _State:
    """A new key's group state (what ``applyInPandasWithState`` hands the step)."""
    exists = False

    def update(self, value) -> None:
        self.value = value


class _Ids:
    """An adapter and engine that take every row: the step's own checks are under test."""

    def __init__(self, params=None):
        pass

    @staticmethod
    def stream_events(pdf, params):
        return list(pdf["id"])

    def process(self, events):
        return iter(())


def test_files_spark_reads_directly_are_scanned_for_integer_times_in_the_tasks(tmp_path):
    """simjoin ``--ts-type double`` on a ``--source`` the driver's arrival log does not
    cover (another file system: here its ``file://`` URI as a task sees a URI; a glob): a
    task whose rows hold a time of magnitude 2**53 or more reads that file again through
    ``streamspec.pipeline.fs`` and refuses the integer beyond 2**53 at its line."""
    from argparse import Namespace

    from streamspec.pipeline.jobs import simjoin
    from streamspec.pipeline.stream_check import source_file
    from streamspec.pipeline.streaming import key_step

    check = simjoin.json_check(Namespace(ts_type="double"))
    (tmp_path / "in").mkdir()
    path = tmp_path / "in" / "part-0001.json"
    rows = pd.DataFrame({"id": [1, 2], "ts": [1.0, float(2 ** 53 + 1)], "key": "k",
                         "_file": "part-0001.json", "_block": 0, "_row": [0, 1]})
    for source in ((tmp_path / "in").as_uri(), str(tmp_path / "i*")):
        path.write_text('{"id":1,"ts":1,"key":"k"}\n\n{"id":2,"ts":9007199254740993,"key":"k"}\n')
        assert source_file(source, "part-0001.json") == str(path)
        step = key_step(_Ids, _Ids, None, "json", source=source, check=check)
        with pytest.raises(MalformedRecord, match="got 9007199254740993") as caught:
            list(step(("k",), iter([rows]), _State()))
        assert caught.value.location == "part-0001.json:3"
        path.write_text('{"id":1,"ts":1,"key":"k"}\n{"id":2,"ts":9007199254740992,"key":"k"}\n')
        assert list(step(("k",), iter([rows]), _State())) == []     # 2**53 itself is exact
    assert check.suspect_files(rows.assign(ts=[1.0, 2.0 ** 52])) == []


def test_a_row_in_a_split_of_a_large_json_file_is_named_at_its_line(tmp_path, monkeypatch):
    """Spark reads a large JSON-lines file in splits and numbers each split's rows from 0;
    Hadoop's line reader drops the line holding the split's first byte (the previous split
    reads it), so row N of the split from byte B is the N-th non-blank line after that one:
    found by counting the newlines before B (in chunks: 3 bytes here)."""
    from streamspec.pipeline import stream_check
    from streamspec.pipeline.streaming import _where

    monkeypatch.setattr(stream_check, "_CHUNK", 3)
    lines = ['{"id":1}', "", '{"id":2}', '{"id":3}', "", '{"id":4}']
    (tmp_path / "big.json").write_text("".join(line + "\n" for line in lines))
    starts = [sum(len(line) + 1 for line in lines[:k]) for k in range(len(lines))]

    def where(block: int, row: int) -> str:
        return _where({"_file": "big.json", "_row": row, "_block": block}, "json",
                      tmp_path.as_uri())
    assert where(starts[2] + 3, 0) == "big.json:4"      # inside line 3: line 4 on
    assert where(starts[2], 0) == "big.json:4"          # line 3 starts at B: the split before
    assert where(starts[1], 0) == "big.json:3"          # the blank line 2 dropped
    assert where(starts[2], 1) == "big.json:6"          # blank line 5 skipped, as Spark does
    assert where(starts[2], 2) == f"big.json: row 3 of the split from byte {starts[2]}"
    assert where(0, 3) == "big.json:6"


@pytest.mark.spark
def test_csv_streams_take_the_header_in_schema_order_and_refuse_others(spark, tmp_path, capsys):
    (tmp_path / "in").mkdir()
    key = 'k,"1"\nz'       # quoted as Python's csv module writes it: comma, "", newline
    rows = [{"u": 1, "v": 2, "t": 1, "key": key}, {"u": 2, "v": 3, "t": 2, "key": key},
            {"u": 1, "v": 3, "t": 7, "key": key}]
    (tmp_path / "in" / "part-0001.csv").write_text(     # a byte order mark is skipped
        "\ufeffu,v,t,key\n" + "".join('{u},{v},{t},"k,""1""\nz"\n'.format(**r) for r in rows))
    argv = stream_argv(tmp_path, "csv", "--trigger-once")
    assert main(argv) == 0
    got = pq.read_table(str(tmp_path / "out")).to_pandas()
    from streamspec.pipeline.jobs import connectivity
    want = batch_rows(connectivity, build_parser().parse_args(argv), rows)
    assert len(want) > 0 and canonical(got[list(want.columns)]) == canonical(want)
    for n, case in enumerate(HEADERS):
        capsys.readouterr()
        d = tmp_path / f"bad{n}"
        (d / "in").mkdir(parents=True)
        (d / "in" / "part-0001.csv").write_text(HEADERS[case])
        assert main(stream_argv(d, "csv", "--trigger-once")) == 2, case
        err = capsys.readouterr().err
        assert "connectivity stream stopped: part-0001.csv:1: " in err, err
        no_part_files(d / "out")


@pytest.mark.spark
def test_a_refused_csv_file_stops_a_running_stream_after_the_files_before_it(spark, tmp_path,
                                                                              capsys):
    """Without ``--trigger-once``: the arrival listing reads each CSV file first; the good
    file before the bad one is streamed and committed, then the query stops, located."""
    (tmp_path / "in").mkdir()
    rows = [{"u": 1, "v": 2, "t": 1, "key": "a"}, {"u": 2, "v": 3, "t": 2, "key": "a"},
            {"u": 1, "v": 3, "t": 7, "key": "a"}]
    (tmp_path / "in" / "part-0001.csv").write_text(
        "u,v,t,key\n" + "".join("{u},{v},{t},{key}\n".format(**r) for r in rows))
    (tmp_path / "in" / "part-0002.csv").write_text('u,v,t,key\n1,2,8,a\n3,"4,9,a\n')
    argv = stream_argv(tmp_path, "csv", "--interval", "0.5")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "connectivity stream stopped: part-0002.csv:3: unterminated quote" in err, err
    got = pq.read_table(str(tmp_path / "out")).to_pandas()
    from streamspec.pipeline.jobs import connectivity
    want = batch_rows(connectivity, build_parser().parse_args(argv), rows)
    assert len(want) > 0 and canonical(got[list(want.columns)]) == canonical(want)


def test_a_csv_stream_of_a_problem_with_array_columns_is_refused_before_spark(
        tmp_path, capsys, monkeypatch):
    import streamspec.pipeline.spark as spark_module

    def refuse(*args, **kwargs):
        raise AssertionError("Spark was started for a stream CSV cannot hold")
    monkeypatch.setattr(spark_module, "session", refuse)
    (tmp_path / "in").mkdir()
    argv = ["stream", "simjoin", "--source", str(tmp_path / "in"), "--format", "csv",
            "--checkpoint", str(tmp_path / "ckpt"), "--output", str(tmp_path / "out"),
            "--k", "2", "--window", "6"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--format csv: a simjoin stream row has column tokens of type array<string>" in err
    assert not (tmp_path / "ckpt").exists() and not (tmp_path / "out").exists()


@pytest.mark.spark
@pytest.mark.parametrize("problem", ["connectivity", "topkjoin"])
def test_a_stream_time_without_room_for_its_window_is_located(problem, spark, tmp_path, capsys):
    # was an unlocated numpy allocation error (4 EiB) or "array is too big" from the engine
    (tmp_path / "in").mkdir()
    top = 2**63 - 2
    if problem == "connectivity":
        argv = stream_argv(tmp_path, "json", "--trigger-once")
        lines = [GOOD, f'{{"u":2,"v":3,"t":{top}}}']
    else:
        flags, good, _ = other_problem(problem, tmp_path)
        argv = ["stream", problem, "--source", str(tmp_path / "in"), "--format", "json",
                "--checkpoint", str(tmp_path / "ckpt"), "--output", str(tmp_path / "out"),
                "--trigger-once", *flags]
        lines = [good, f'{{"id":2,"x":0.5,"ts":{top},"key":"a"}}']
    (tmp_path / "in" / "part-0001.json").write_text("\n".join(lines) + "\n")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{problem} stream stopped: part-0001.json:2: " in err, err
    assert f"time {top} leaves no room for the window" in err, err
    no_part_files(tmp_path / "out")


@pytest.mark.spark
def test_a_null_in_a_stream_parquet_file_is_located_at_its_row(spark, tmp_path, capsys):
    (tmp_path / "in").mkdir()
    pd.DataFrame({"u": pd.array([1, 2, None, 4], "Int64"), "v": [2, 3, 4, 5],
                  "t": [1, 2, 3, 4]}).to_parquet(tmp_path / "in" / "part-0001.parquet")
    assert main(stream_argv(tmp_path, "parquet", "--trigger-once")) == 2
    err = capsys.readouterr().err
    assert "part-0001.parquet: row 3: edge u is missing" in err, err
    no_part_files(tmp_path / "out")


@pytest.mark.spark
@pytest.mark.parametrize("column,words", [("id", "record id must be an int or str, got None"),
                                          ("ts", "timestamp must be a finite int or float, got nan"),
                                          ("tokens", "tokens must be a collection, got None")])
def test_a_null_in_a_simjoin_stream_parquet_file_is_located_at_its_row(column, words, spark,
                                                                       tmp_path, capsys):
    import pyarrow as pa

    columns = {"id": pa.array([1, 2, 3, 4], pa.int64()), "ts": pa.array([1.0, 2.0, 3.0, 4.0]),
               "tokens": pa.array([["a", "b"], ["a"], ["b"], ["c"]], pa.list_(pa.string()))}
    values = columns[column].to_pylist()
    columns[column] = pa.array(values[:2] + [None] + values[3:], columns[column].type)
    (tmp_path / "in").mkdir()
    pq.write_table(pa.table(columns), tmp_path / "in" / "part-0001.parquet")
    argv = ["stream", "simjoin", "--source", str(tmp_path / "in"), "--format", "parquet",
            "--checkpoint", str(tmp_path / "ckpt"), "--output", str(tmp_path / "out"),
            "--trigger-once", "--k", "2", "--window", "6"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    assert "simjoin stream stopped: part-0001.parquet: row 3: " in err and words in err, err
    no_part_files(tmp_path / "out")


def test_a_text_query_id_with_long_ids_is_refused_before_spark(tmp_path, capsys, monkeypatch):
    import streamspec.pipeline.spark as spark_module

    def refuse(*args, **kwargs):
        raise AssertionError("Spark was started for a query file that is bad on the driver")
    monkeypatch.setattr(spark_module, "session", refuse)
    (tmp_path / "in").mkdir()
    argv = stream_argv(tmp_path, "json", "--trigger-once")
    (tmp_path / "q.txt").write_text("1 3\n2 abc\n")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "q.txt:2: query id 'abc' is not an integer" in err and "--id-type" in err, err
    assert not (tmp_path / "ckpt").exists() and not (tmp_path / "out").exists()


def sink_log(out, names: list[str]) -> None:
    (out / "_spark_metadata").mkdir(parents=True)
    entries = [json.dumps({"path": (out / n).as_uri(), "size": 1, "isDir": False,
                           "modificationTime": 1, "blockReplication": 1, "blockSize": 1,
                           "action": "add"}) for n in names]
    (out / "_spark_metadata" / "0").write_text("\n".join(["v1", *entries]) + "\n")


def test_tidy_output_removes_only_unlisted_part_files(tmp_path, capsys):
    out = tmp_path / "out"
    sink_log(out, ["part-00000-a-c000.snappy.parquet"])
    for name in ("part-00000-a-c000.snappy.parquet", "part-00000-b-c000.snappy.parquet",
                 ".part-00000-b-c000.snappy.parquet.crc", "part-00001-c-c000.snappy.parquet"):
        (out / name).write_bytes(b"")
    assert tidy_output(str(out)) == ["part-00000-b-c000.snappy.parquet",
                                     "part-00001-c-c000.snappy.parquet"]
    assert sorted(os.listdir(out)) == ["_spark_metadata", "part-00000-a-c000.snappy.parquet"]
    assert "removed 2 part file(s)" in capsys.readouterr().err
    assert tidy_output(str(tmp_path / "nowhere")) == []     # no sink log: nothing touched


# -- kill -9 mid-stream, restart: plain pyarrow reads the uninterrupted run's rows ------------
def connectivity_case(d):
    rows = [{"u": i % 7, "v": (3 * i + 1) % 7, "t": i, "key": "ab"[i % 2]} for i in range(60)]
    (q := "0 3\n1 5\n")
    return rows, q, ["--window", "6", "--slide", "3"]


def simjoin_case(d):
    from ..simjoin.test_stream import set_rows
    return set_rows(4, n=60), None, ["--k", "2", "--window", "6", "--similarity", "jaccard",
                                     "--engine", "swoop"]


def kws_case(d):
    from ..kws.test_stream import WINDOW, argv as kws_argv, stream_rows
    # one key is enough to hold results across the three files: the smallest kws stream
    return stream_rows(7, ("a",), WINDOW), None, kws_argv(["--window", str(WINDOW)], "fullmesh")


def topkjoin_case(d):
    from ..topkjoin.test_stream import keyed_case, stream_argv as topkjoin_argv
    case, rows, _ = keyed_case(11, False)
    return rows, None, topkjoin_argv(d, case.params, "at-bsm", "long")


def uncommitted(out) -> list[str]:
    if not (out / "_spark_metadata").is_dir():
        return []
    listed = {os.path.basename(e["path"]) for e in log_entries(str(out / "_spark_metadata"))}
    return [n for n in os.listdir(out) if n.startswith("part-") and n not in listed]


@pytest.mark.spark
@pytest.mark.parametrize("problem", ["connectivity", "simjoin", "kws", "topkjoin"])
def test_kill_9_mid_stream_then_restart_reads_back_whole(problem, spark, tmp_path):
    import importlib

    rows, queries, params = {"connectivity": connectivity_case, "simjoin": simjoin_case,
                             "kws": kws_case, "topkjoin": topkjoin_case}[problem](tmp_path)
    source, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    source.mkdir()
    if queries:
        (tmp_path / "q.txt").write_text(queries)
        params += ["--queries", str(tmp_path / "q.txt")]
    argv = ["stream", problem, "--source", str(source), "--checkpoint", str(ckpt),
            "--output", str(out), "--format", "json", "--files-per-batch", "1", *params]
    parts = 3
    for i in range(parts):
        write_file(source, f"part-{i:04d}.json", rows[i * len(rows) // parts:
                                                     (i + 1) * len(rows) // parts], i, "json")
    proc = subprocess.Popen([sys.executable, "-m", "streamspec.pipeline.cli", *argv,
                             "--interval", "0.2", "--master", "local[2]",
                             "--conf", "spark.sql.shuffle.partitions=2",
                             "--conf", "spark.ui.enabled=false"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    try:
        # kill when a micro-batch after the first committed one has written a part file its
        # sink log does not list yet (else once most batches committed: the restart check
        # holds either way)
        log = out / "_spark_metadata"
        while time.monotonic() < deadline and proc.poll() is None:
            if (log / "0").exists() and uncommitted(out) or (log / str(parts - 2)).exists():
                break
            time.sleep(0.01)
        print(f"killed after {time.monotonic() - deadline + 60:.1f} s; uncommitted: "
              f"{uncommitted(out)}")
    finally:
        # the driver and its JVM at once, as a lost machine: a JVM outliving its killed driver
        # goes on with the micro-batch a moment (the restart's end tidies what it writes)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    # what a killed micro-batch may leave: also a 0-byte part file, never committed
    (out / "_spark_metadata").mkdir(parents=True, exist_ok=True)
    (out / "part-00000-00000000-dead-beef-0000-000000000000-c000.snappy.parquet").write_bytes(b"")
    assert main([*argv, "--trigger-once"]) == 0
    assert uncommitted(out) == []
    got = pq.read_table(str(out)).to_pandas()
    adapter = importlib.import_module(f"streamspec.pipeline.jobs.{problem}")
    want = batch_rows(adapter, build_parser().parse_args(argv), rows)
    assert len(want) > 0
    assert canonical(got[list(want.columns)]) == canonical(want)


def test_csv_files_spark_reads_directly_are_checked_in_the_tasks(tmp_path):
    """A CSV ``--source`` the driver's arrival log does not cover (a glob, another file
    system's URI): Spark's CSV reader would take an unterminated quote without a word, so
    the tasks read each file of the micro-batch again with the project's CSV rule and
    refuse the quote at the line it opened; without the arrival log only (``for_tasks``),
    and each unchanged file once per process."""
    from streamspec.pipeline import stream_check
    from streamspec.pipeline.stream_check import CsvFiles
    from streamspec.pipeline.streaming import key_step

    (tmp_path / "in").mkdir()
    path = tmp_path / "in" / "part-0001.csv"
    rows = pd.DataFrame({"id": [1, 2], "key": "k", "_file": "part-0001.csv", "_block": 0,
                         "_row": [0, 1]})
    driver = CsvFiles("id long, key string")
    assert driver.suspect_files(rows) == []            # the arrival log checked them
    check = driver.for_tasks(True)
    assert check.suspect_files(rows) == ["part-0001.csv"]
    for source in ((tmp_path / "in").as_uri(), str(tmp_path / "i*")):
        path.write_text('id,key\n1,k\n2,"k\n3,k\n')
        step = key_step(_Ids, _Ids, None, "csv", source=source, check=check)
        with pytest.raises(MalformedRecord, match="quote") as caught:
            list(step(("k",), iter([rows]), _State()))
        assert caught.value.location == "part-0001.csv:3"
        path.write_text('id,key\n1,k\n2,"k"\n')
        assert list(step(("k",), iter([rows]), _State())) == []
        assert any(seen[0] == str(path) for seen in stream_check._CHECKED)
