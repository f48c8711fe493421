"""``streamspec stream kws``: engines in group state, restart from the checkpoint exactly
once (the shared check: ``tests/pipeline/streamcheck.py``), and the source rows
(``streamspec.pipeline.jobs.kws``, "Streaming").

The streams: several keys over the paper's movie schema (Figure 1.1), the same tids
in every key, equal timestamps (within and across keys), gaps longer than the window
(every tuple expires), deletions (negative tuples) and, in the window model, arrivals
exactly at a tuple's window end.
"""
from __future__ import annotations

import json
import random

import pandas as pd
import pytest

from streamspec.pipeline.jobs import kws as job
from streamspec.spec.errors import InvalidParameter, InvalidRecord, MalformedRecord
from streamspec.spec.kws import Delete, Insert, Params, TupleBatch
from streamspec.spec.registry import Registry
from streamspec.pipeline.io.kws import read_schema

from .test_keyed import SCHEMA

WINDOW = 6
ATTRIBUTES = {"director": ("did", "name"), "movie": ("mid", "did", "title"),
              "plays": ("mid", "aid", "role"), "actor": ("aid", "name")}
NAMES = ("Quentin Tarantino", "John Travolta", "Uma Thurman", "tarantino travolta", "Nobody")


def key_stream(rng: random.Random, key, n: int, window: int | None, text_values: bool):
    """One key's rows in arrival order: inserts and deletions of alive tuples."""
    rows, alive, counts, t = [], [], dict.fromkeys(ATTRIBUTES, 0), 0
    for _ in range(n):
        t += rng.choice((0, 0, 1, 2, 3, WINDOW, 3 * WINDOW))
        if window is not None:
            alive = [(tid, start) for tid, start in alive if t < start + window]
        if alive and rng.random() < 0.2:
            tid, _ = alive.pop(rng.randrange(len(alive)))
            rows.append({"key": key, "op": "delete", "tid": tid, "t": t})
            continue
        rel = rng.choice(sorted(ATTRIBUTES))
        counts[rel] += 1
        tid = f"{rel[0]}{counts[rel]}"          # the same tids in every key
        row = {"key": key, "op": "insert", "rel": rel, "tid": tid, "t": t}
        for attr in ATTRIBUTES[rel]:
            value = rng.choice(NAMES) if attr in ("name", "title", "role") else rng.choice((1, 2, 3))
            row[attr] = str(value) if text_values else value
        rows.append(row)
        alive.append((tid, t))
    return rows


def stream_rows(seed: int, keys, window: int | None, text_values: bool = False) -> list[dict]:
    """The keys' streams interleaved at random, each key's own order kept."""
    rng = random.Random(seed)
    streams = [key_stream(rng, k, rng.randrange(40, 60), window, text_values) for k in keys]
    out = []
    while any(streams):
        s = rng.choice([s for s in streams if s])
        out.append(s.pop(0))
    return out


def argv(model: list[str], engine: str) -> list[str]:
    return ["--schema", SCHEMA, "--keywords", "tarantino,travolta", "--tmax", "4",
            "--engine", engine, *model]


@pytest.mark.spark
@pytest.mark.parametrize("fmt,engine,model", [
    ("json", "fullmesh", ["--window", str(WINDOW)]),
    ("parquet", "partialmesh", ["--positive-negative"]),
])
def test_restart_from_checkpoint_equals_the_batch_run(spark, tmp_path, fmt, engine, model):
    from tests.pipeline.streamcheck import restart_equals_batch

    window = WINDOW if "--window" in model else None
    # Parquet columns take one type per file: attribute values as text (string columns)
    rows = stream_rows(7, ("a", "b", "c"), window, text_values=fmt == "parquet")
    for key in "abc":       # what the streams are meant to hold, per key
        times = [r["t"] for r in rows if r["key"] == key]
        steps = {b - a for a, b in zip(times, times[1:])}
        assert 0 in steps and max(steps) > WINDOW       # ties, gaps past every tuple's end
        assert any(r["op"] == "delete" for r in rows if r["key"] == key)
    got = restart_equals_batch(spark, tmp_path, "kws", rows, argv(model, engine), fmt=fmt)
    assert set(got["key"]) == {"a", "b", "c"}
    assert list(got.columns) == ["key", "kind", "time", "end", "tids", "edges"]
    assert (got["kind"] == "end").any()             # deletions ended results early
    appear = got[got["kind"] == "appear"]
    if window is not None:                          # every appearance knows its window end
        assert appear["end"].notna().all() and (appear["end"] <= appear["time"] + window).all()
    else:
        assert appear["end"].isna().all()


@pytest.mark.spark
def test_a_bad_row_stops_the_stream_with_the_specs_message(spark, tmp_path, capsys):
    from streamspec.pipeline.cli import main
    from tests.pipeline.streamcheck import write_file

    source = tmp_path / "in"
    source.mkdir()
    write_file(source, "part-0000.json", [
        {"key": "a", "rel": "director", "tid": "d1", "t": 1, "did": 1, "name": "Q"},
        {"key": "a", "rel": "director", "tid": "d1", "t": 2, "did": 2, "name": "R"}], 0, "json")
    code = main(["stream", "kws", "--source", str(source), "--format", "json",
                 "--checkpoint", str(tmp_path / "ckpt"), "--output", str(tmp_path / "out"),
                 "--trigger-once", *argv(["--window", "5"], "fullmesh")])
    assert code == 2
    assert "duplicate tid 'd1'" in capsys.readouterr().err


# -- the source rows, without Spark -------------------------------------------------------
def params(window=WINDOW) -> Params:
    return Params(read_schema(SCHEMA), "tarantino,travolta", 4, window)


def test_rows_become_the_specs_events():
    pdf = pd.DataFrame([
        {"rel": "movie", "tid": "m1", "t": 3, "op": None, "mid": 11.0, "did": None,
         "title": "Pulp Fiction", "name": None},
        {"rel": None, "tid": "m1", "t": 4, "op": "delete", "mid": None, "did": None,
         "title": None, "name": None},
        {"rel": "director", "tid": 7, "t": 4.0, "op": "insert", "mid": None, "did": 1,
         "title": None, "name": "Q"}])
    batch = job.stream_events(pdf, params())
    assert isinstance(batch, TupleBatch)
    assert batch.events() == [Insert("movie", "m1", {"mid": 11.0, "title": "Pulp Fiction"}, 3),
                              Delete("m1", 4), Insert("director", "7", {"did": 1, "name": "Q"}, 4)]
    assert all(isinstance(e.t, int) for e in batch.events())
    engine = Registry.get("kws", "oracle")(params())
    assert list(engine.process(batch)) == []


@pytest.mark.parametrize("row,error,message", [
    ({"rel": "movie", "tid": "m1", "t": None}, MalformedRecord, "integer time"),
    ({"rel": "movie", "tid": None, "t": 1}, MalformedRecord, "needs a tid"),
    ({"rel": "movie", "tid": "m1", "t": 1, "op": "upsert"}, MalformedRecord, "insert or delete"),
    ({"rel": None, "tid": "m1", "t": 1}, MalformedRecord, "needs a relation"),
])
def test_malformed_rows_are_named_by_position(row, error, message):
    pdf = pd.DataFrame([{"rel": "actor", "tid": "a1", "t": 0, "aid": 1}, row])
    with pytest.raises(error, match=message) as info:
        job.stream_events(pdf, params())
    assert info.value.index == 1


def test_a_value_in_another_relations_column_is_the_specs_error():
    from streamspec.spec.kws import KwsEngine
    batch = job.stream_events(pd.DataFrame([{"rel": "actor", "tid": "a1", "t": 0, "aid": 1,
                                             "title": None},
                                            {"rel": "actor", "tid": "a2", "t": 0, "aid": 1,
                                             "title": "x"}]), params())
    with pytest.raises(InvalidRecord, match="has no attribute 'title'") as info:
        list(KwsEngine(params()).process(batch))
    assert info.value.index == 1


def test_source_schema_columns_and_declared_types(tmp_path):
    from streamspec.pipeline.cli import build_parser

    def parse(schema):
        path = tmp_path / "schema.json"
        path.write_text(json.dumps(schema))
        return build_parser().parse_args(
            ["stream", "kws", "--source", "s", "--checkpoint", "c", "--output", "o",
             "--schema", str(path), "--keywords", "x", "--tmax", "2", "--window", "3"])

    rels = [{"name": "R", "attributes": ["a", "s"], "types": {"a": "long"}},
            {"name": "S", "attributes": ["a", "b"]}]
    args = parse({"relations": rels, "edges": [{"id": "e", "left": "R.a", "right": "S.a"}]})
    with pytest.raises(InvalidParameter, match="typed long and string"):
        job.stream_params(args)      # S.a is a string column, R.a a long one: one column
    rels[1]["types"] = {"a": "long", "b": "double"}
    args = parse({"relations": rels, "edges": []})
    assert job.source_schema(args) == ("rel string, tid string, t long, op string, `a` long, "
                                       "`s` string, `b` double")
    assert job.stream_params(args).window == 3
    args = parse({"relations": [{"name": "R", "attributes": ["op"]}]})
    with pytest.raises(InvalidParameter, match="attribute 'op' has the name of a column"):
        job.stream_params(args)
