"""Keyed kws replay (issue 11): a ``key`` column in the relation files holds independent
database streams; the keyed run equals each key's files run alone, in-process.

The keys' databases reuse the same tids (``d1``, ``m1``...: each key has its own tid
space), share join values (a movie of one key must never join a director of another),
tie on timestamps across and within keys, and have gaps longer than the window.
"""
from __future__ import annotations

import random

import pandas as pd
import pytest

from streamspec.engines.kws.fullmesh import FullMeshEngine
from streamspec.pipeline.io.kws import read_events, read_schema
from streamspec.pipeline.jobs import kws as job
from streamspec.spec.errors import InvalidRecord, MalformedRecord
from streamspec.spec.kws import Delete, Params

SCHEMA = str(job.DATA / "schema.json")
WINDOW = 6
RELATIONS = ("director", "movie", "plays", "actor")
NAMES = ("Quentin Tarantino", "John Travolta", "Uma Thurman", "tarantino travolta", "Nobody")


def movie_db(rng: random.Random, n: int, deletions: bool):
    """``{relation: [row, ...]}`` and deletion rows of one key's database, times with
    ties (steps of 0) and gaps longer than the window of the tests (``WINDOW``)."""
    rows = {r: [] for r in RELATIONS}
    dels, t, alive = [], 0, []
    for i in range(n):
        t += rng.choice((0, 0, 1, 2, 5, 3 * WINDOW))
        rel = rng.choice(RELATIONS)
        tid = f"{rel[0]}{len(rows[rel]) + 1}"
        val = lambda: rng.choice((1, 2, 3))            # noqa: E731  few join values: many joins
        row = {"tid": tid, "t": t, **{
            "director": lambda: {"did": val(), "name": rng.choice(NAMES)},
            "movie": lambda: {"mid": val(), "did": val(), "title": rng.choice(NAMES)},
            "plays": lambda: {"mid": val(), "aid": val(), "role": rng.choice(NAMES)},
            "actor": lambda: {"aid": val(), "name": rng.choice(NAMES)}}[rel]()}
        rows[rel].append(row)
        alive.append(tid)
        if deletions and alive and rng.random() < 0.25:
            dels.append({"tid": alive.pop(rng.randrange(len(alive))), "t": t})
    return rows, dels



def write(folder, keyed: dict, deletions: bool):
    """One CSV per relation holding every key (column ``key``), and one set of files per
    key without it; returns (keyed inputs, keyed deletions, {key: (inputs, deletions)})."""
    folder.mkdir()
    merged = {r: [] for r in RELATIONS}
    merged_dels, alone = [], {}
    for key, (rows, dels) in keyed.items():
        inputs = []
        for rel in RELATIONS:
            path = folder / f"{rel}-{key}.csv"
            pd.DataFrame(rows[rel], columns=_columns(rel)).to_csv(path, index=False)
            inputs.append((rel, str(path)))
            merged[rel] += [{**r, "key": key} for r in rows[rel]]
        dpath = folder / f"deletions-{key}.csv"
        pd.DataFrame(dels, columns=["tid", "t"]).to_csv(dpath, index=False)
        alone[key] = (inputs, str(dpath) if deletions else None)
        merged_dels += [{**d, "key": key} for d in dels]
    inputs = []
    for rel in RELATIONS:   # keys interleaved by time in one file, each key's order kept
        path = folder / f"{rel}.csv"
        frame = pd.DataFrame(merged[rel], columns=["key", *_columns(rel)])
        frame.sort_values("t", kind="stable").to_csv(path, index=False)
        inputs.append((rel, str(path)))
    dpath = folder / "deletions.csv"
    pd.DataFrame(merged_dels, columns=["key", "tid", "t"]).sort_values("t", kind="stable") \
        .to_csv(dpath, index=False)
    return inputs, (str(dpath) if deletions else None), alone


def _columns(rel):
    attrs = {"director": ["did", "name"], "movie": ["mid", "did", "title"],
             "plays": ["mid", "aid", "role"], "actor": ["aid", "name"]}[rel]
    return ["tid", "t", *attrs]


def databases(seed: int, keys, deletions: bool) -> dict:
    rng = random.Random(seed)
    return {k: movie_db(rng, rng.randrange(15, 40), deletions) for k in keys}


@pytest.mark.parametrize("keys,deletions", [(("a", "b", "c"), False), ((7, 11), True)])
def test_keyed_files_hold_each_keys_stream(tmp_path, keys, deletions):
    inputs, dels, alone = write(tmp_path / "db", databases(5, keys, deletions), deletions)
    tuples = read_events(inputs, dels)
    assert set(tuples.keys) == set(keys)
    assert all(isinstance(k, type(keys[0])) for k in tuples.keys)  # typed as ids are
    by_key = tuples.by_key()
    for key, (key_inputs, key_dels) in alone.items():
        assert by_key[key][0] == read_events(key_inputs, key_dels).events
    if deletions:
        assert any(isinstance(e, Delete) for e in tuples.events)


def test_each_key_has_its_own_tids_and_errors_name_the_record(tmp_path):
    (tmp_path / "d.csv").write_text("key,tid,t,did,name\na,d1,1,1,Q\nb,d1,2,1,Q\na,d1,3,2,R\n")
    params = Params(read_schema(SCHEMA), "q", 2, 10)
    tuples = read_events([("director", str(tmp_path / "d.csv"))], None)
    job.validate(params, *tuples.by_key()["b"])          # d1 again, in another key: fine
    with pytest.raises(InvalidRecord, match=r"d.csv:4: .*duplicate tid 'd1'"):
        job.validate(params, *tuples.by_key()["a"])
    (tmp_path / "m.jsonl").write_text('{"key": "a", "tid": "x", "t": 1, "did": 1}\n'
                                      '{"tid": "y", "t": 2, "did": 1}\n')
    with pytest.raises(MalformedRecord, match=r"m.jsonl:2: a keyed input needs"):
        read_events([("director", str(tmp_path / "m.jsonl"))], None)


@pytest.mark.spark
@pytest.mark.parametrize("keys,deletions", [(("a", "b", "c"), False), ((7, 11), True)])
def test_keyed_run_equals_each_key_alone(spark, tmp_path, keys, deletions):
    """``streamspec run kws`` on keyed files equals, key by key, the engine fed that key's
    own files in-process (window model over 3 string keys; negative tuples over 2 int keys)."""
    from streamspec.pipeline.cli import main

    inputs, dels, alone = write(tmp_path / "db", databases(11, keys, deletions), deletions)
    argv = ["run", "kws", "--schema", SCHEMA, "--input", *[f"{r}={p}" for r, p in inputs],
            "--keywords", "tarantino,travolta", "--tmax", "4", "--partitions", "2",
            "--output", str(tmp_path / "out"), "--no-progress",
            *(["--deletions", dels] if deletions else ["--window", str(WINDOW)])]
    assert main(argv) == 0
    got = spark.read.parquet(str(tmp_path / "out")).toPandas()
    assert list(got.columns) == ["key", "kind", "time", "end", "tids", "edges"]
    params = Params(read_schema(SCHEMA), "tarantino,travolta", 4, None if deletions else WINDOW)
    want = []
    for key, (key_inputs, key_dels) in alone.items():
        events = read_events(key_inputs, key_dels).events
        rows = job.output_rows(job.run_range(FullMeshEngine, params, events, None, None))
        # each key's rows come together and in canonical order
        mine = got[got["key"] == key].drop(columns="key").reset_index(drop=True)
        assert _plain(mine) == _plain(rows)
        rows.insert(0, "key", key)
        want.append(rows)
    want = pd.concat(want, ignore_index=True)
    assert sorted(_plain(got)) == sorted(_plain(want))
    assert len(want) > 0 and set(got["key"]) == set(keys)
    if deletions:
        assert (want["kind"] == "end").any()     # deletions ended results early


def _plain(frame: pd.DataFrame) -> list[tuple]:
    def plain(v):
        if v is None or (isinstance(v, float) and v != v) or v is pd.NA:
            return None
        if hasattr(v, "tolist"):
            v = v.tolist()
        return tuple(v) if isinstance(v, (list, tuple)) else v
    return [tuple(plain(v) for v in row) for row in frame.astype(object).itertuples(index=False)]
