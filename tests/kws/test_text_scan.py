"""The kws tuple files read by Spark tasks (``pipeline.io.kws_text``, ``jobs.kws.replay_files``).

The chunk parser against the driver's reader (``pipeline.io.kws.read_events``) on
CSV and JSON lines cut at every few bytes (blank lines, CRLF ends, default tids
``REL:LINE``, declared types, keys), what it refuses (a lone ``\\r``, a quote in a
CSV cut into chunks, a bad record: the driver then names it), the plan's
first-record check; through Spark: rows equal to the driver path's and to the
oracle's, unkeyed and keyed, with deletions, ties in time across files, chunk and
partition counts 1..4; a bad line deep in a file exits 2 with the driver reader's
exact ``file:line`` message and writes nothing.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from streamspec.engines.kws.fullmesh import FullMeshEngine
from streamspec.pipeline.io import kws_text
from streamspec.pipeline.io.kws import read_events, read_schema, read_types
from streamspec.pipeline.jobs import kws as job
from streamspec.reference.kws import evaluate
from streamspec.spec.kws import Params

SCHEMA = {"relations": [{"name": "director", "attributes": ["did", "name"], "text": ["name"]},
                        {"name": "movie", "attributes": ["mid", "did", "title"],
                         "text": ["title"], "types": {"title": "string"}},
                        {"name": "plays", "attributes": ["mid", "aid"]},
                        {"name": "actor", "attributes": ["aid", "name"], "text": ["name"]}],
          "edges": [{"id": "md", "left": "movie.did", "right": "director.did"},
                    {"id": "pm", "left": "plays.mid", "right": "movie.mid"},
                    {"id": "pa", "left": "plays.aid", "right": "actor.aid"}]}
WORDS = ["pulp", "fiction", "travolta", "rooms", "quentin", "uma", "007", "x"]
COLUMNS = {"director": ["did", "name"], "movie": ["mid", "did", "title"],
           "plays": ["mid", "aid"], "actor": ["aid", "name"]}


def _value(rng, rel, attr):
    if attr in ("name", "title"):
        return " ".join(rng.choice(WORDS) for _ in range(2))
    return rng.randint(1, 4)


def write_db(tmp: Path, fmt: str, *, keyed=False, deletions=False, crlf=False, seed=0,
             rows=14, explicit=("movie",)):
    """Four relation files (``fmt``: csv or json; ``explicit`` relations carry tids, the
    others get ``REL:LINE``), times with ties across files, blank lines, and with
    ``deletions`` a deletions file ending some tuples; returns ``(inputs, deletions)``."""
    rng = random.Random(seed)
    end = "\r\n" if crlf else "\n"
    inputs, alive = [], []
    for rel, cols in COLUMNS.items():
        path = tmp / f"{rel}.{'csv' if fmt == 'csv' else 'jsonl'}"
        names = (["tid"] if rel in explicit else []) + ["t", *cols] + (["key"] if keyed else [])
        lines = [",".join(names)] if fmt == "csv" else []
        t = 0
        for i in range(rows):
            t += rng.choice((0, 1, 2))
            if rng.random() < 0.2:
                lines.append(rng.choice(["", "  ", ",,," if fmt == "csv" else " \t"]))
            row = {"tid": f"{rel[0]}{i}", "t": t, **{a: _value(rng, rel, a) for a in cols}}
            if keyed:
                row["key"] = rng.choice(["eu", "us"]) if keyed == "str" else rng.choice([1, 22])
            if rng.random() < 0.15:
                row[cols[-1]] = None                    # a null attribute
            if fmt == "csv":
                lines.append(",".join("" if row.get(c) is None else str(row[c]) for c in names))
            else:
                lines.append(json.dumps({c: row.get(c) for c in names if c != "tid"
                                         or rel in explicit}))
            tid = row["tid"] if rel in explicit else f"{rel}:{len(lines)}"
            alive.append((t, tid, row.get("key")))
        path.write_bytes((end.join(lines) + end).encode())
        inputs.append((rel, str(path)))
    dels = None
    if deletions:
        picked = rng.sample(alive, len(alive) // 4)
        names = ["tid", "t"] + (["key"] if keyed else [])
        rows_ = [(tid, t, key) for t, tid, key in
                 sorted((t + rng.choice((0, 1, 3)), tid, key) for t, tid, key in picked)]
        path = tmp / f"del.{'csv' if fmt == 'csv' else 'jsonl'}"
        if fmt == "csv":
            text = end.join([",".join(names)] + [",".join(map(str, r[:len(names)])) for r in rows_])
        else:
            text = end.join(json.dumps(dict(zip(names, r))) for r in rows_)
        path.write_bytes((text + end).encode())
        dels = str(path)
    return inputs, dels


def schema_file(tmp: Path) -> str:
    path = tmp / "schema.json"
    path.write_text(json.dumps(SCHEMA))
    return str(path)


def args_for(schema: str, inputs, deletions, window=6, out="unused"):
    parser = argparse.ArgumentParser()
    job.add_arguments(parser)
    model = ["--deletions", deletions] if deletions else ["--window", str(window)]
    return parser.parse_args(["--schema", schema, "--input", *(f"{r}={p}" for r, p in inputs),
                              "--keywords", "pulp,travolta", "--tmax", "3", *model,
                              "--output", out])


def chunk_events(plan, chunk_bytes):
    """The events of the plan's files as the chunk tasks read and the replay tasks assemble
    them (one stream, in merge order), and the keys."""
    cs = kws_text.chunks(plan.files, 2, chunk_bytes)
    tables, lines = [], []
    for chunk in cs:
        table, stats = kws_text.chunk_table(plan.files[chunk.file], chunk)
        tables.append(table)
        lines.append(stats["lines"])
    bases = kws_text.line_bases(plan.files, cs, lines)
    stream, attributes = kws_text.assemble(tables, bases)
    events = [ev for piece in job.inputs_of(stream, attributes) for ev in piece.events()]
    return events, stream["key"].to_pylist()


def plain_event(ev):
    """An event as comparable values: null attributes left out (a missing attribute is null),
    values with their types (``1`` and ``1.0`` differ here)."""
    values = sorted((a, type(v).__name__, v) for a, v in getattr(ev, "values", ()) if v is not None)
    return type(ev).__name__, getattr(ev, "relation", None), ev.tid, ev.t, values


@pytest.mark.parametrize("fmt", ["csv", "json"])
@pytest.mark.parametrize("keyed", [False, "str", "int"])
@pytest.mark.parametrize("crlf", [False, True])
def test_chunks_read_what_the_driver_reads(tmp_path, fmt, keyed, crlf):
    schema = schema_file(tmp_path)
    inputs, dels = write_db(tmp_path, fmt, keyed=keyed, deletions=True, crlf=crlf)
    plan = job.prepare(args_for(schema, inputs, dels))
    assert plan.files is not None
    want = read_events(inputs, dels, read_types(schema))
    assert any(":" in ev.tid for ev in want.events)        # default tids REL:LINE
    for chunk_bytes in (None, 7, 30, 200):
        events, keys = chunk_events(plan, chunk_bytes)
        assert list(map(plain_event, events)) == list(map(plain_event, want.events)), chunk_bytes
        if keyed:
            assert [int(k) if keyed == "int" else k for k in keys] == want.keys


def test_chunk_counts_and_line_numbers(tmp_path):
    inputs, _ = write_db(tmp_path, "csv", rows=40)
    schema = schema_file(tmp_path)
    plan = job.prepare(args_for(schema, inputs, None))
    for wanted in (1, 2, 3, 4):
        size = max(f.size for f in plan.files)
        cs = kws_text.chunks(plan.files, 2, -(-size // wanted))
        assert len([c for c in cs if c.file == 0]) <= wanted
        assert all(c.start < c.stop for c in cs)


def test_refusals_and_declines(tmp_path):
    schema = schema_file(tmp_path)
    types = read_types(schema)
    rs = read_schema(schema)
    good = tmp_path / "d.csv"
    good.write_text("t,did,name\n1,1,a\n2,2,b\n3,3,c\n")
    files = kws_text.plan_files([("director", str(good))], None, types, rs)
    assert files is not None and files[0].header == ("t", "did", "name")
    # a lone carriage return: lines would be numbered differently
    cr = tmp_path / "cr.csv"
    cr.write_bytes(b"t,did,name\n1,1,a\n" + b"4,4,d\n" * 20000 + b"2,2,b\r3,3,c\n")
    files = kws_text.plan_files([("director", str(cr))], None, types, rs)
    assert files is not None
    with pytest.raises(kws_text.Unfit):
        kws_text.chunk_table(files[0], kws_text.chunks(files, 1)[0])
    # a quote in a CSV cut into chunks: a quoted newline could straddle a cut
    quoted = tmp_path / "q.csv"
    quoted.write_text('t,did,name\n1,1,"a\nb"\n2,2,c\n3,3,d\n')
    files = kws_text.plan_files([("director", str(quoted))], None, types, rs)
    cs = kws_text.chunks(files, 2, 8)
    assert len(cs) > 1
    with pytest.raises(kws_text.Unfit):
        kws_text.chunk_table(files[0], cs[0])
    whole = kws_text.chunks(files, 1)                   # one chunk: read as the driver does
    assert len(whole) == 1 and kws_text.chunk_table(files[0], whole[0])[1]["rows"] == 3
    # a bad first record, an unknown relation, a directory: the driver reads everything
    bad = tmp_path / "bad.csv"
    bad.write_text("t,did,name\nsoon,1,a\n2,2,b\n")
    assert kws_text.plan_files([("director", str(bad))], None, types, rs) is None
    assert kws_text.plan_files([("nosuch", str(good))], None, types, rs) is None
    assert kws_text.plan_files([("director", str(tmp_path))], None, types, rs) is None
    # a column of no attribute (even empty) is the driver's error at its record
    other = tmp_path / "other.csv"
    other.write_text("t,did,name,zzz\n1,1,a,\n")
    files = kws_text.plan_files([("director", str(other))], None, types, rs)
    assert files is None
    # keys the tasks cannot type surely are left to the driver
    assert [kws_text.key_kind(k) for k in ("7", "-7", "007", "eu", "1.5", " 7", "+7", "٣")] == \
        ["int", "int", "int", "str", "str", "unfit", "unfit", "unfit"]


# -- through Spark ----------------------------------------------------------------------------
def _plain(v):
    if isinstance(v, (list, tuple, np.ndarray)):
        return tuple(str(x) for x in v)
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return None
    return v.item() if isinstance(v, np.generic) else v


def rows_of(frame) -> list:
    return sorted(tuple(map(_plain, r)) for r in frame.astype(object).itertuples(index=False))


def oracle_rows(params, tuples) -> list:
    if tuples.keys is None:
        return rows_of(job.output_rows(evaluate(params, tuples.events)))
    out = []
    for key, (events, _) in tuples.by_key().items():
        frame = job.output_rows(evaluate(params, events))
        frame.insert(0, "key", [key] * len(frame))
        out += rows_of(frame)
    return sorted(out)


@pytest.mark.spark
@pytest.mark.parametrize("fmt,keyed,deletions,crlf,grid", [
    ("csv", False, False, False, ((1, None), (4, 9))),
    ("json", False, False, True, ((2, 25), (3, 60))),
    ("csv", False, True, True, ((2, 9),)),
    ("json", "int", True, False, ((2, 30),)),
    ("csv", "str", False, True, ((1, 60), (3, 9)))])
def test_spark_read_rows_equal_the_driver_path(spark, tmp_path, fmt, keyed, deletions, crlf, grid):
    """Rows equal to the oracle's and the driver path's, in several (partitions, chunk
    bytes): 1..4 time ranges or key partitions, 1 to dozens of chunks a file."""
    schema = schema_file(tmp_path)
    inputs, dels = write_db(tmp_path, fmt, keyed=keyed, deletions=deletions, crlf=crlf,
                            seed=zlib.crc32(repr((fmt, keyed, deletions, crlf)).encode()), rows=30)
    args = args_for(schema, inputs, dels)
    plan = job.prepare(args)
    assert plan.files is not None
    driver = job.read_tuples(plan.params, plan.inputs, plan.deletions, plan.types)
    want = oracle_rows(plan.params, read_events(inputs, dels, read_types(schema)))
    assert want, "the case should have results"
    for partitions, chunk_bytes in grid:
        got = job.replay_files(spark, plan, FullMeshEngine, partitions, chunk_bytes)
        assert got is not None
        assert rows_of(got.toPandas()) == want, (partitions, chunk_bytes)
        assert plan.n_events == len(driver.events)
        assert plan.n_keys == (len(set(driver.keys)) if keyed else 0)
    driver_rows = job.replay(spark, driver, FullMeshEngine, 3).toPandas()
    assert rows_of(driver_rows) == want


@pytest.mark.spark
def test_spark_read_falls_back_on_what_the_tasks_refuse(spark, tmp_path, monkeypatch):
    """A repeated tid across time ranges (no one range sees both), a lone CR deep in a
    file, a key on some rows only: ``replay_files`` gives None; ``replay`` then reads on
    the driver (which raises, or replays what it finds good)."""
    schema = schema_file(tmp_path)
    d = tmp_path / "director.csv"
    d.write_text("tid,t,did,name\n" + "".join(f"d{i},{i},1,pulp\n" for i in range(30))
                 + "d0,40,1,pulp\n")
    plan = job.prepare(args_for(schema, [("director", str(d))], None, window=3))
    assert plan.files is not None
    assert job.replay_files(spark, plan, FullMeshEngine, 3, 40) is None
    from streamspec.spec.errors import InvalidRecord
    with pytest.raises(InvalidRecord, match=r"director.csv:32: duplicate tid 'd0'"):
        job.replay(spark, plan, FullMeshEngine, 3, 40)
    # a lone CR deep in the file (beyond the head the plan reads): the driver's reader
    # numbers lines its own way
    monkeypatch.setattr(kws_text, "HEAD_BYTES", 64)
    m = tmp_path / "movie.csv"
    m.write_bytes(b"t,mid,did,title\n" + b"".join(b"%d,1,1,pulp\n" % i for i in range(20))
                  + b"21,1,1,x\r22,1,1,y\n")
    plan = job.prepare(args_for(schema, [("movie", str(m))], None, window=3))
    assert plan.files is not None
    assert job.replay_files(spark, plan, FullMeshEngine, 2, 30) is None
    rows = job.replay(spark, plan, FullMeshEngine, 2, 30)
    assert plan.files is None and len(plan.events) == 22 and rows.count() >= 0
    # a key on some rows only
    k = tmp_path / "keyed.csv"
    k.write_text("t,did,name,key\n1,1,a,eu\n" + "".join(f"{i},1,a,eu\n" for i in range(2, 30))
                 + "31,1,a,\n")
    plan = job.prepare(args_for(schema, [("director", str(k))], None))
    assert job.replay_files(spark, plan, FullMeshEngine, 2, 30) is None


def _cli(argv):
    from streamspec.pipeline.cli import main
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


@pytest.mark.spark
@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_a_bad_line_deep_in_a_file_exits_2_with_the_drivers_message(spark, tmp_path, capsys, fmt,
                                                                    monkeypatch):
    # the plan reads 64 bytes of each file, chunks of 64 bytes: a task meets the bad line
    monkeypatch.setattr(kws_text, "HEAD_BYTES", 64)
    monkeypatch.setattr(kws_text, "MIN_CHUNK_BYTES", 64)
    schema = schema_file(tmp_path)
    inputs, _ = write_db(tmp_path, fmt, rows=60)
    rel, path = inputs[1]                       # movie
    lines = Path(path).read_text().splitlines(keepends=True)
    n = len(lines) - 5
    bad = ('{"tid": "zz", "t": "soon", "mid": 1}\n' if fmt == "json"
           else "zz,soon,1,1,pulp\n")
    lines.insert(n, bad)
    Path(path).write_text("".join(lines))
    expected = None
    try:
        read_events(inputs, None, read_types(schema))
    except Exception as err:
        expected = str(err)
    assert expected and f"{Path(path).name}:{n + 1}:" in expected
    # chunks small enough that the bad line is far from the first record
    plan = job.prepare(args_for(schema, inputs, None))
    assert plan.files is not None
    out = tmp_path / "out"
    argv = ["run", "kws", "--schema", schema, "--input", *(f"{r}={p}" for r, p in inputs),
            "--keywords", "pulp,travolta", "--tmax", "3", "--window", "6", "--output", str(out),
            "--partitions", "2", "--no-progress"]
    assert _cli(argv) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err, err
    assert not out.exists()


@pytest.mark.spark
def test_cli_spark_read_output_equals_the_engine(spark, tmp_path, capsys):
    schema = schema_file(tmp_path)
    inputs, dels = write_db(tmp_path, "csv", keyed="str", deletions=True, rows=25, seed=3)
    out = tmp_path / "out"
    argv = ["run", "kws", "--schema", schema, "--input", *(f"{r}={p}" for r, p in inputs),
            "--keywords", "pulp,travolta", "--tmax", "3", "--deletions", dels,
            "--output", str(out), "--partitions", "2", "--no-progress"]
    assert _cli(argv) == 0
    said = capsys.readouterr().out
    tuples = read_events(inputs, dels, read_types(schema))
    params = Params(read_schema(schema), "pulp,travolta", 3, None)
    assert rows_of(pd.read_parquet(out)[["key", "kind", "time", "end", "tids", "edges"]]) == \
        oracle_rows(params, tuples)
    assert f"from {len(tuples.events)} events" in said and "over 2 keys" in said


@pytest.mark.parametrize("odd", [None, "bool", "float_tid", "declared"])
def test_parquet_row_groups_read_what_the_driver_reads(tmp_path, odd):
    """Parquet row groups, read column-wise (``_parquet_columns``) or, for columns it does
    not take (a bool, a float tid, a declared type), row by row: the driver's events,
    default tids ``REL:N`` counted across row groups."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(7)
    schema = dict(SCHEMA)
    schema["relations"] = [dict(r) for r in SCHEMA["relations"]]
    if odd != "declared":
        schema["relations"][1].pop("types")
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    inputs = []
    for rel, cols in COLUMNS.items():
        n = 23
        frame = {"t": sorted(rng.randint(0, 20) for _ in range(n))}
        if rel == "movie":
            frame["tid"] = [float(i) for i in range(n)] if odd == "float_tid" else list(range(n))
        for a in cols:
            values = [_value(rng, rel, a) for _ in range(n)]
            frame[a] = [None if rng.random() < 0.2 else v for v in values]
        if rel == "director" and odd == "bool":
            frame["did"] = [rng.random() < 0.5 for _ in range(n)]
        table = pa.table(frame)
        pq.write_table(table, tmp_path / f"{rel}.parquet", row_group_size=5)
        inputs.append((rel, str(tmp_path / f"{rel}.parquet")))
    plan = job.prepare(args_for(str(path), inputs, None))
    assert plan.files is not None and all(len(f.groups) == 5 for f in plan.files)
    columnar = [kws_text._parquet_columns(f, c) is not None
                for c in kws_text.chunks(plan.files, 2) for f in [plan.files[c.file]]]
    assert all(columnar) if odd is None else not all(columnar)
    want = read_events(inputs, None, read_types(str(path)))
    events, _ = chunk_events(plan, None)
    assert list(map(plain_event, events)) == list(map(plain_event, want.events))


def test_csv_columns_type_fields_as_the_row_path(tmp_path, monkeypatch):
    """The column-wise CSV reader (``_csv_columns``) against the row path on fields each
    typed its own way by ``csv_value``: ints with zeros, signs, spaces or underscores,
    floats, nan, inf, huge digit runs, text, empty; tids typed then made text."""
    import pyarrow as pa

    schema = schema_file(tmp_path)
    fields = ["007", "-0", " 7", "7 ", "1_000", "1.50", "nan", "inf", "1e3", "x", "", "٣",
              "9" * 30, "-12", "pulp"]
    path = tmp_path / "director.csv"
    lines = ["tid,t,did,name"]
    for i, v in enumerate(fields):
        lines.append(f"{fields[(i + 3) % len(fields)] or 'z'},{i},{v},{fields[-1 - i]}")
    path.write_text("\n".join(lines) + "\n")
    plan = job.prepare(args_for(schema, [("director", str(path))], None))
    f = plan.files[0]
    for chunk in kws_text.chunks(plan.files, 2, 40):
        fast = kws_text._csv_columns(f, chunk)
        assert fast is not None
        monkeypatch.setattr(kws_text, "_csv_columns", lambda f, c: None)
        slow = kws_text.chunk_table(f, chunk)
        monkeypatch.undo()
        assert fast[1] == slow[1]
        a, b = fast[0], slow[0]
        assert set(a.column_names) == set(b.column_names)
        for name in a.column_names:
            x, y = a[name], b[name]
            assert x.type == y.type, name
            xs, ys = x.to_pylist(), y.to_pylist()
            assert [(type(v), v) if v == v else "nan" for v in xs] == \
                [(type(v), v) if v == v else "nan" for v in ys], name
        assert isinstance(fast[0], pa.Table)
