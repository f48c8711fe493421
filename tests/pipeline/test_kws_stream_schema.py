"""``streamspec stream kws --schema-changes FILE`` (issue 14): the batch job's schema-changes
file applied to every key of a stream (``streamspec.pipeline.jobs.kws``, ``SchemaChangeFeed``).

The same data goes to the stream (one file of event rows per micro-batch) and to the batch
job (one file per relation, ``--deletions``); the outputs must be equal.  The keys' streams
have rows at a change's very time (a new relation's first tuples), ties, gaps longer than
the window, and a key first seen after several changes (it must get them all before its
first row).  Without Spark, ``key_step`` runs over a fake group state (each micro-batch's
state pickled, as Spark keeps it, and a new feed built for the "restarted" half); with
Spark (lane ``spark``) the command line runs twice on a checkpoint, then the batch job.
Every stream ends, per key, with a row long after the last change that makes no output
(a lone actor): a stream never flushes, so the batch job's flushed last instant is then
empty too and the outputs can be compared whole.
"""
from __future__ import annotations

import json
import os
import pickle
import random
import re

import pandas as pd
import pytest

from streamspec.conformance import kws as suite
from streamspec.conformance.contracts import check_pickling
from streamspec.pipeline import streaming
from streamspec.pipeline.cli import build_parser, main
from streamspec.pipeline.io.kws import schema_changes_in_order
from streamspec.pipeline.jobs import kws as job
from streamspec.spec.errors import InvalidParameter, InvalidRecord, MalformedRecord, OutOfOrder
from streamspec.spec.kws import SCHEMA_EVENTS, AddRelation, RemoveEdge
from streamspec.spec.registry import Registry

from .streamcheck import canonical, write_file

SCHEMA = str(job.DATA / "schema.json")      # director, movie, plays, actor
WINDOW = 20
ATTRIBUTES = {"director": ("did", "name"), "movie": ("mid", "did", "title"),
              "plays": ("mid", "aid", "role"), "actor": ("aid", "name"), "review": ("mid", "text")}
INPUT_ORDER = ("director", "movie", "plays", "actor", "review")     # --input order: ties' order
NAMES = ("Quentin Tarantino", "John Travolta", "Uma Thurman", "tarantino travolta", "Nobody")
# a new relation joined at once, an edge removed and put back under another id, the
# relation removed again (its edge with it), a second edge to it later on
CHANGES = [
    {"t": 20, "add_relation": {"name": "review", "attributes": ["mid", "text"], "text": ["text"]}},
    {"t": 20, "add_edge": {"id": "rm", "left": "review.mid", "right": "movie.mid"}},
    {"t": 45, "remove_edge": "directed_by"},
    {"t": 70, "add_edge": ["directed_by2", "movie", "did", "director", "did"]},
    {"t": 95, "remove_relation": "review"},
    {"t": 110, "add_relation": {"name": "review", "attributes": ["mid", "text"]}},
    {"t": 110, "add_edge": ["rm2", "review", "mid", "movie", "mid"]},
]
SEED = 11                   # a seed whose changes end results early in both models
LAST = 140                  # rows until then; the closing row of each key at LAST + 3 * WINDOW


def review_exists(t: int) -> bool:
    return 20 <= t < 95 or t >= 110


def review_generation(t: int) -> int:
    """Which ``review`` relation exists at ``t`` (a tuple of the removed one is dead)."""
    return 0 if t < 95 else 1


def key_rows(rng: random.Random, key: str, start: int, deletions: bool) -> list[dict]:
    """One key's event rows in the batch job's merge order (time, then ``INPUT_ORDER``,
    deletions last): inserts of every relation that exists at their time (a review at a
    change's own time too) and, with ``deletions``, deletions of live tuples."""
    events, alive, counts, t = [], [], dict.fromkeys(ATTRIBUTES, 0), start
    while t <= LAST:
        if deletions and alive and rng.random() < 0.15:
            tid, rel, gen = alive.pop(rng.randrange(len(alive)))
            if rel != "review" or (review_exists(t) and review_generation(t) == gen):
                events.append({"key": key, "op": "delete", "tid": tid, "t": t})
        else:
            rels = [r for r in ATTRIBUTES if r != "review" or review_exists(t)]
            rel = rng.choice(rels + (["review"] * 2 if "review" in rels else []))
            counts[rel] += 1
            row = {"key": key, "op": "insert", "rel": rel, "tid": f"{rel[0]}{counts[rel]}", "t": t}
            for attr in ATTRIBUTES[rel]:
                pick = NAMES if attr in ("name", "title", "role", "text") else ("1", "2", "3")
                row[attr] = rng.choice(pick)
            events.append(row)
            alive.append((row["tid"], rel, review_generation(t)))
        t = rng.choice((t, t, t, t + 1, t + 1, t + 2, t + 3, t + WINDOW + 1,
                        20 if t < 20 else t + 1))
    # the closing row: long after the last change, alone in its window, joins nothing
    events.append({"key": key, "op": "insert", "rel": "actor", "tid": "closing",
                   "t": LAST + 3 * WINDOW, "aid": "999", "name": "Nobody"})

    def order(pair):
        i, r = pair
        return r["t"], INPUT_ORDER.index(r["rel"]) if r["op"] == "insert" else len(INPUT_ORDER), i
    return [r for _, r in sorted(enumerate(events), key=order)]


def stream_rows(seed: int, deletions: bool) -> list[dict]:
    """Keys ``a`` and ``b`` from time 0, ``c`` from time 100 (after five changes), the
    keys merged by time, ties between keys broken at random (each key's order kept)."""
    rng = random.Random(seed)
    streams = [key_rows(rng, k, s, deletions) for k, s in (("a", 0), ("b", 0), ("c", 100))]
    out = []
    while any(streams):
        first = min(s[0]["t"] for s in streams if s)
        s = rng.choice([s for s in streams if s and s[0]["t"] == first])
        out.append(s.pop(0))
    return out


def batch_inputs(tmp_path, rows: list[dict], deletions: bool) -> list[str]:
    """The same rows as the batch job's inputs: one JSON-lines file per relation (and the
    deletions), the schema changes file; the flags of ``run kws`` without the output."""
    argv = ["--input"]
    for rel in INPUT_ORDER:
        path = tmp_path / f"{rel}.jsonl"
        path.write_text("".join(json.dumps({k: v for k, v in r.items() if k not in ("op", "rel")})
                                + "\n" for r in rows if r.get("rel") == rel and r["op"] == "insert"))
        argv.append(f"{rel}={path}")
    if deletions:
        path = tmp_path / "deletions.jsonl"
        path.write_text("".join(json.dumps({"key": r["key"], "tid": r["tid"], "t": r["t"]}) + "\n"
                                for r in rows if r["op"] == "delete"))
        argv += ["--deletions", str(path)]
    else:
        argv += ["--window", str(WINDOW)]
    return argv


def changes_file(tmp_path, changes=CHANGES, name="changes.jsonl") -> str:
    path = tmp_path / name
    path.write_text("".join(json.dumps(c) + "\n" for c in changes))
    return str(path)


def common(tmp_path, engine: str) -> list[str]:
    return ["--schema", SCHEMA, "--keywords", "tarantino,travolta", "--tmax", "4",
            "--engine", engine, "--schema-changes", changes_file(tmp_path)]


def stream_args(tmp_path, engine: str, deletions: bool, changes=None, extra=()):
    model = ["--positive-negative"] if deletions else ["--window", str(WINDOW)]
    argv = ["stream", "kws", "--source", str(tmp_path / "in"), "--checkpoint",
            str(tmp_path / "ckpt"), "--output", str(tmp_path / "out"), "--format", "json",
            "--trigger-once", *common(tmp_path, engine), *model, *extra]
    if changes is not None:
        argv[argv.index("--schema-changes") + 1] = changes
    return build_parser().parse_args(argv)


def batch_job_rows(tmp_path, rows, engine: str, deletions: bool, changes=None) -> pd.DataFrame:
    """What ``streamspec run kws --schema-changes`` computes (``changes``: another file),
    in-process: the driver's validating reader (the path it takes with schema changes),
    one engine per key."""
    argv = ["run", "kws", *common(tmp_path, engine), *batch_inputs(tmp_path, rows, deletions),
            "--output", str(tmp_path / "unused")]
    if changes is not None:
        argv[argv.index("--schema-changes") + 1] = changes
    args = build_parser().parse_args(argv)
    plan = job.prepare(args)
    engine_cls = Registry.get("kws", engine)
    parts = []
    for key in sorted(set(plan.keys)):
        events = [e for e, k in zip(plan.events, plan.keys) if k == key]
        frame = job.stream_rows(job.run_range(engine_cls, plan.params, events, None, None), 0)
        frame.insert(0, "key", key)
        parts.append(frame)
    return pd.concat(parts, ignore_index=True)


# -- the feed in key_step, over a fake group state (no Spark) ------------------------------
class GroupState:
    """What ``applyInPandasWithState`` hands the step: here a pickled tuple, as Spark keeps it."""

    def __init__(self):
        self.blob = None

    @property
    def exists(self) -> bool:
        return self.blob is not None

    @property
    def get(self):
        return pickle.loads(self.blob)

    def update(self, value) -> None:
        self.blob = pickle.dumps(value)


def run_steps(args, files: list[list[dict]], states: dict) -> pd.DataFrame:
    """Each file one micro-batch through ``key_step`` with the adapter's feed built from
    ``args`` (as ``streaming.run`` builds it on the driver), keys in ``states``."""
    engine_cls = Registry.get("kws", args.engine)
    params = job.stream_params(args)
    step = streaming.key_step(job, engine_cls, params, "json",
                              job.stream_feed(args, engine_cls, params), source=args.source)
    columns = [c.split()[0].strip("`") for c in job.source_schema(args).split(", ")]
    out = []
    os.makedirs(args.source, exist_ok=True)
    for n, rows in enumerate(files):
        name = f"part-{n:04d}.json"
        # the file the stream read them from: a rejected row is named at its line in it
        with open(os.path.join(args.source, name), "w") as f:
            f.writelines(json.dumps(r, default=str) + "\n" for r in rows)
        frame = pd.DataFrame(rows).reindex(columns=[*columns, "key"])
        frame["_file"], frame["_block"], frame["_row"] = name, 0, range(len(frame))
        for key, pdf in frame.groupby("key", sort=True):
            state = states.setdefault(key, GroupState())
            out += list(step((key,), iter([pdf.reset_index(drop=True)]), state))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


def quarters(rows: list[dict]) -> list[list[dict]]:
    cut = [len(rows) * q // 4 for q in range(5)]
    return [rows[a:b] for a, b in zip(cut, cut[1:])]


@pytest.mark.parametrize("engine,deletions", [("fullmesh", False), ("partialmesh", True),
                                              ("forest-shared", False), ("oracle", True)])
def test_feed_equals_the_batch_job_across_a_restart(tmp_path, engine, deletions):
    rows = stream_rows(SEED, deletions)
    want = batch_job_rows(tmp_path, rows, engine, deletions)
    files = quarters(rows)
    assert not any(r["key"] == "c" for f in files[:2] for r in f), "c must come after the restart"
    states: dict = {}
    first = run_steps(stream_args(tmp_path, engine, deletions), files[:2], states)
    assert set(states) == {"a", "b"}
    applied = {k: pickle.loads(states[k].get[0]).applied for k in states}
    # restarted: a new feed from the same flags, the keys' states from the "checkpoint"
    second = run_steps(stream_args(tmp_path, engine, deletions), files[2:], states)
    got = pd.concat([first, second], ignore_index=True)
    assert list(got.columns) == list(want.columns) == ["key", "kind", "time", "end", "tids", "edges"]
    assert canonical(got) == canonical(want)
    # what the data is meant to hold: results through the new relation's edge, results
    # the changes ended early, and a restart that fell between changes
    assert got["edges"].map(lambda es: any(e.startswith(("rm:", "rm2:")) for e in es)).any()
    assert (got["kind"] == "end").any()
    assert 0 < min(applied.values()) < len(CHANGES)
    digest = job.change_digests([e for e, _ in schema_changes_in_order(changes_file(tmp_path))])[-1]
    for key in "abc":           # every key went past the last change: all applied, once
        state = pickle.loads(states[key].get[0])
        assert (state.applied, state.digest) == (len(CHANGES), digest)


def test_a_key_first_seen_late_gets_every_earlier_change_before_its_first_row(tmp_path):
    args = stream_args(tmp_path, "fullmesh", False)
    states: dict = {}
    row = {"key": "late", "op": "insert", "rel": "review", "tid": "r1", "t": 95 - 1, "mid": "1",
           "text": "tarantino"}
    # review exists from 20 to 95: the late key's first row is a review at 94, valid only
    # if the changes at 20 (and the removal of an edge at 45, the new one at 70) came first
    run_steps(args, [[row]], states)
    state = pickle.loads(states["late"].get[0])
    assert state.applied == 4
    assert state.engine.schema.relation("review").attributes == ("mid", "text")
    assert {e.id for e in state.engine.schema.edges} == {"rm", "in_movie", "by_actor", "directed_by2"}
    # the next row, at the removal's time: the removal first, so a review row is an error
    bad = {**row, "tid": "r2", "t": 95}
    with pytest.raises(InvalidRecord, match=r"part-0000.json:1: unknown relation 'review'"):
        run_steps(args, [[bad]], states)
    assert pickle.loads(states["late"].get[0]).applied == 4     # the failed batch left no trace
    out = run_steps(args, [[{**bad, "rel": "movie", "did": "1", "title": "x", "text": None}]], states)
    assert out.empty and pickle.loads(states["late"].get[0]).applied == 5


def test_a_restart_with_other_changes_is_refused(tmp_path):
    args = stream_args(tmp_path, "fullmesh", False)
    states: dict = {}
    rows = [{"key": "a", "op": "insert", "rel": "actor", "tid": f"x{t}", "t": t, "aid": "1",
             "name": "n"} for t in (0, 30, 60)]
    run_steps(args, [rows[:2]], states)
    assert pickle.loads(states["a"].get[0]).applied == 2
    # more changes after the times streamed: fine
    later = changes_file(tmp_path, CHANGES + [{"t": 200, "remove_edge": "rm2"}], "more.jsonl")
    run_steps(stream_args(tmp_path, "fullmesh", False, later), [rows[2:]], states)
    assert pickle.loads(states["a"].get[0]).applied == 3
    # an applied change edited: the digest of the applied ones differs
    edited = CHANGES[:1] + [{"t": 20, "add_edge": ["rm", "review", "mid", "movie", "did"]}] + CHANGES[2:]
    path = changes_file(tmp_path, edited, "edited.jsonl")
    with pytest.raises(InvalidParameter, match=r"edited.jsonl: its first 3 schema changes"):
        run_steps(stream_args(tmp_path, "fullmesh", False, path),
                  [[{**rows[0], "tid": "x99", "t": 99}]], states)
    # a change added at a time the key has passed (50 < 60; in time order the 4th, the
    # three before it agree): it cannot go in any more, named at its own line
    early = changes_file(tmp_path, CHANGES + [{"t": 50, "remove_edge": "in_movie"}], "early.jsonl")
    with pytest.raises(OutOfOrder, match=r"early.jsonl:8: event time 50 is earlier than 60"):
        run_steps(stream_args(tmp_path, "fullmesh", False, early),
                  [[{**rows[0], "tid": "x98", "t": 98}]], states)


def test_a_bare_engine_from_an_older_checkpoint_is_resumed_with_no_change_applied(tmp_path):
    # checkpoints made before schema changes were streamed hold the engine alone
    args = stream_args(tmp_path, "fullmesh", False)
    engine = Registry.get("kws", "fullmesh")(job.stream_params(args))
    state = GroupState()
    state.update((pickle.dumps(engine), 0))
    row = {"key": "a", "op": "insert", "rel": "review", "tid": "r1", "t": 30, "mid": "1",
           "text": "x"}
    run_steps(args, [[row]], {"a": state})
    resumed = pickle.loads(state.get[0])
    assert isinstance(resumed, job.KeyStream) and resumed.applied == 2     # the changes at 20


def test_a_malformed_row_in_a_later_micro_batch_is_located_in_its_own_file(tmp_path):
    # the adapter numbers the rows it refuses from 0, the spec from the engine's first
    # record: a second micro-batch's bad row must still be the second file's line
    args = stream_args(tmp_path, "fullmesh", False)
    states: dict = {}
    good = {"key": "a", "op": "insert", "rel": "actor", "tid": "x1", "t": 0, "aid": "1", "name": "n"}
    run_steps(args, [[good, {**good, "tid": "x2", "t": 1}]], states)
    with pytest.raises(MalformedRecord, match=r"part-0001.json:2: column op must be insert"):
        run_steps(args, [[], [{**good, "tid": "x3", "t": 30}, {**good, "op": "upsert", "t": 31}]],
                  states)
    with pytest.raises(InvalidRecord, match=r"part-0001.json:2: duplicate tid 'x1'"):
        run_steps(args, [[], [{**good, "tid": "x3", "t": 30}, {**good, "t": 31}]], states)


# -- the file, read and checked before Spark starts ------------------------------------------
@pytest.mark.parametrize("line,message", [
    ('{"t": 2, "add_edge": ["e", "movie", "mid"]}', r"changes.jsonl:2: add_edge: add_edge takes"),
    ('{"t": 2, "add_edgz": "e"}', r"changes.jsonl:2: a schema change is one of"),
    ("not json", r"changes.jsonl:2: .*not JSON"),
    ('{"t": 2, "remove_edge": "nope"}', r"changes.jsonl:2: unknown edge 'nope'"),
    ('{"t": 2, "add_edge": ["e", "movie", "zz", "director", "did"]}', r"changes.jsonl:2: .*zz"),
    ('{"t": 0, "add_relation": {"name": "u", "attributes": ["op"]}}',
     r"relation u: attribute 'op' has the name of a column"),
])
def test_a_bad_change_exits_2_naming_its_line_before_spark(tmp_path, capsys, line, message):
    (tmp_path / "changes.jsonl").write_text(json.dumps(CHANGES[0]) + "\n" + line + "\n")
    argv = ["stream", "kws", "--source", str(tmp_path / "in"), "--checkpoint", str(tmp_path / "ckpt"),
            "--output", str(tmp_path / "out"), "--trigger-once", "--schema", SCHEMA,
            "--keywords", "tarantino", "--tmax", "3", "--window", "5",
            "--schema-changes", str(tmp_path / "changes.jsonl")]
    (tmp_path / "in").mkdir()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("streamspec: error: ") and re.search(message, err), err
    assert not (tmp_path / "ckpt").exists() and not (tmp_path / "out").exists()


def test_source_columns_hold_the_added_relations_attributes(tmp_path):
    args = stream_args(tmp_path, "fullmesh", False)
    assert job.source_schema(args).endswith("`aid` string, `role` string, `text` string")
    typed = tmp_path / "typed.json"
    doc = json.loads(open(SCHEMA).read())
    doc["relations"][0]["types"] = {"did": "long"}
    doc["relations"][1]["types"] = {"mid": "long", "did": "long"}
    doc["relations"][2]["types"] = {"mid": "long"}
    typed.write_text(json.dumps(doc))
    args.schema = str(typed)
    # review.mid shares movie's long column; text is a new string column
    assert "`mid` long" in job.source_schema(args) and job.source_schema(args).count("`mid`") == 1
    assert job.stream_feed(args, Registry.get("kws", "fullmesh"), job.stream_params(args))
    args.schema_changes = None
    assert "`text`" not in job.source_schema(args)
    assert job.stream_feed(args, Registry.get("kws", "fullmesh"), job.stream_params(args)).changes == ()
    args.schema_rows = True
    assert job.source_schema(args).endswith("`aid` string, `role` string, change string")
    args.extra_columns = (("text", "string"), ("mid", "long"), ("stars", "double"))
    assert job.source_schema(args).endswith("`role` string, `text` string, `stars` double, "
                                            "change string")
    args.extra_columns = (("did", "string"),)       # typed long by the schema
    with pytest.raises(InvalidParameter, match="'did' is typed long and string"):
        job.source_schema(args)
    args.extra_columns = (("change", "string"),)
    with pytest.raises(InvalidParameter, match="attribute 'change' has the name of a column"):
        job.stream_params(args)


# -- a migrated engine in the state store --------------------------------------------------
MESH_ENGINES = ("fullmesh", "partialmesh", "forest", "forest-shared")


@pytest.mark.parametrize("name", MESH_ENGINES)
def test_a_migrated_engine_pickles_and_goes_on_as_one_never_pickled(name):
    engine_cls = Registry.get("kws", name)
    checked = 0
    for seed in range(400):
        case = suite.random_case(seed, max_events=24)
        events = case.events
        ends = [sum(case.chunks[:i + 1]) for i in range(len(case.chunks))]
        first_change = next((i for i, e in enumerate(events) if isinstance(e, SCHEMA_EVENTS)), None)
        if first_change is None:
            continue
        # every cut after the first schema change: the engine pickled once migrated
        for cut, end in enumerate(ends, 1):
            if end > first_change:
                mismatch = check_pickling(engine_cls, case, cut)
                assert mismatch is None, f"seed {seed}, cut {cut}: {mismatch}\n{suite.dump(case)}"
                checked += 1
        if checked >= 60:
            break
    assert checked >= 60


def test_key_stream_pickles_with_its_migrated_engine(tmp_path):
    args = stream_args(tmp_path, "fullmesh", False)
    engine_cls = Registry.get("kws", "fullmesh")
    feed = job.stream_feed(args, engine_cls, job.stream_params(args))
    state = feed.start()
    rows = [r for r in stream_rows(SEED, False) if r["key"] == "a"]
    half = len(rows) // 2
    frame = pd.DataFrame(rows).drop(columns="key").reindex(
        columns=[c.split()[0].strip("`") for c in job.source_schema(args).split(", ")])
    feed.feed(state, frame.iloc[:half].reset_index(drop=True))
    assert 0 < state.applied < len(CHANGES)
    assert any(isinstance(e, AddRelation) for e in feed.changes[:state.applied])
    copy = pickle.loads(pickle.dumps(state))
    assert (copy.applied, copy.digest) == (state.applied, state.digest)
    rest = frame.iloc[half:].reset_index(drop=True)
    assert feed.feed(copy, rest) == feed.feed(state, rest)
    assert copy.applied == state.applied == len(CHANGES)
    assert any(isinstance(e, RemoveEdge) for e in feed.changes)


# -- the command line over Spark -------------------------------------------------------------
@pytest.mark.spark
def test_stream_with_schema_changes_equals_run_with_them(spark, tmp_path):
    """Two ``--trigger-once`` runs on one checkpoint (key ``c`` first seen in the second),
    then ``streamspec run kws --schema-changes`` on the same data: equal rows."""
    rows = stream_rows(SEED, False)
    files = quarters(rows)
    source = tmp_path / "in"
    source.mkdir()
    argv = ["stream", "kws", "--source", str(source), "--checkpoint", str(tmp_path / "ckpt"),
            "--output", str(tmp_path / "out"), "--format", "json", "--trigger-once",
            *common(tmp_path, "fullmesh"), "--window", str(WINDOW)]
    for i in (0, 1):
        write_file(source, f"part-{i:04d}.json", files[i], 10 * i, "json")
    assert main(argv) == 0
    first = spark.read.parquet(str(tmp_path / "out")).count()
    for i in (2, 3):
        write_file(source, f"part-{i:04d}.json", files[i], 10 * i, "json")
    assert main(argv) == 0          # restarted: keys' engines and change counts from the state
    got = spark.read.parquet(str(tmp_path / "out")).toPandas()
    out = tmp_path / "batch"
    assert main(["run", "kws", *common(tmp_path, "fullmesh"), *batch_inputs(tmp_path, rows, False),
                 "--output", str(out)]) == 0
    want = pd.read_parquet(out)
    assert list(got.columns) == list(want.columns)
    assert canonical(got) == canonical(want)
    assert 0 < first < len(want) and set(got["key"]) == {"a", "b", "c"}
    assert (got["kind"] == "end").any()


# -- schema-change rows in the stream (--schema-rows): one key's changes -------------------
def with_schema_rows(rows: list[dict], key: str) -> list[dict]:
    """``rows`` with ``CHANGES`` as schema rows of ``key`` (each before that key's first
    row at or after its time, where the file would apply it) and no review rows in the
    other keys (their schema never has that relation)."""
    pending = [dict(c) for c in CHANGES]
    out = []
    for r in rows:
        if r["key"] != key and r.get("rel") == "review":
            continue
        while r["key"] == key and pending and pending[0]["t"] <= r["t"]:
            change = pending.pop(0)
            out.append({"key": key, "op": "schema", "t": change.pop("t"),
                        "change": json.dumps(change)})
        out.append(r)
    assert not pending
    return out


def expected_with_rows(tmp_path, rows: list[dict], key: str, engine: str) -> pd.DataFrame:
    """``key`` as the batch job runs it with the changes file, the other keys without."""
    plain = [r for r in rows if r["op"] != "schema"]
    none = changes_file(tmp_path, [], "none.jsonl")
    mine = batch_job_rows(tmp_path, [r for r in plain if r["key"] == key], engine, False)
    others = batch_job_rows(tmp_path, [r for r in plain if r["key"] != key], engine, False, none)
    return pd.concat([mine, others], ignore_index=True)


@pytest.mark.parametrize("engine", ["fullmesh", "partialmesh"])
def test_schema_rows_change_their_key_only_as_the_file_would(tmp_path, engine):
    rows = with_schema_rows(stream_rows(SEED, False), "b")
    want = expected_with_rows(tmp_path, rows, "b", engine)
    args = stream_args(tmp_path, engine, False, changes_file(tmp_path, [], "none.jsonl"),
                       extra=["--schema-rows", "--extra-columns", "text"])
    states: dict = {}
    files = quarters(rows)
    got = pd.concat([run_steps(args, files[:2], states), run_steps(args, files[2:], states)],
                    ignore_index=True)
    assert canonical(got) == canonical(want)
    assert got[got["key"] == "b"]["edges"].map(lambda es: any(e.startswith("rm") for e in es)).any()
    assert (got[got["key"] == "b"]["kind"] == "end").any()
    for key in "abc":           # the rows' changes are in the engine, not counted as the file's
        state = pickle.loads(states[key].get[0])
        assert state.applied == 0
        assert (state.engine.schema.relation("review") is not None) == (key == "b")


def test_schema_rows_follow_the_files_changes_of_their_time(tmp_path):
    # the file adds review at 20; a's own row at 20 joins it to movie: the file's change
    # comes first (changes before the rows of their time), then the row, then a review
    args = stream_args(tmp_path, "oracle", False, changes_file(tmp_path, CHANGES[:1], "one.jsonl"),
                       extra=["--schema-rows"])
    rows = [{"key": "a", "op": "insert", "rel": "movie", "tid": "m1", "t": 19, "mid": "1",
             "did": "1", "title": "tarantino"},
            {"key": "a", "op": "schema", "t": 20, "change": json.dumps(CHANGES[1])},
            {"key": "a", "op": "insert", "rel": "review", "tid": "r1", "t": 20, "mid": "1",
             "text": "travolta"},
            {"key": "a", "op": "insert", "rel": "actor", "tid": "x", "t": 21, "aid": "9",
             "name": "n"}]
    states: dict = {}
    got = run_steps(args, [rows], states)
    assert canonical(got) == [("a", "appear", 20, 39, ("m1", "r1"), ("rm:r1:m1",))]
    assert pickle.loads(states["a"].get[0]).applied == 1


@pytest.mark.parametrize("change,error,message", [
    ("not json", MalformedRecord, "column change is not JSON"),
    (None, MalformedRecord, "needs its change in column change"),
    (json.dumps(["remove_edge", "x"]), MalformedRecord, "must hold a JSON object"),
    (json.dumps({"t": 4, "remove_edge": "in_movie"}), MalformedRecord, "t 4 is not the row's t 5"),
    (json.dumps({"remove_edgz": "in_movie"}), MalformedRecord, "a schema change is one of"),
    (json.dumps({"remove_edge": "nope"}), InvalidRecord, "unknown edge 'nope'"),
    (json.dumps({"add_relation": {"name": "u", "attributes": ["mid", "zz"]}}), MalformedRecord,
     "attribute 'zz' is not a column of the stream"),
])
def test_a_bad_schema_row_is_named_by_its_file_and_line(tmp_path, change, error, message):
    args = stream_args(tmp_path, "fullmesh", False, changes_file(tmp_path, [], "none.jsonl"),
                       extra=["--schema-rows"])
    good = {"key": "a", "op": "insert", "rel": "actor", "tid": "x1", "t": 0, "aid": "1", "name": "n"}
    states: dict = {}
    run_steps(args, [[good]], states)
    bad = [{**good, "tid": "x2", "t": 5}, {"key": "a", "op": "schema", "t": 5, "change": change}]
    with pytest.raises(error, match=r"part-0001.json:2: .*" + re.escape(message)):
        run_steps(args, [[], bad], states)


def test_schema_rows_need_the_flag(tmp_path):
    args = stream_args(tmp_path, "fullmesh", False)
    row = {"key": "a", "op": "schema", "t": 5, "tid": "x", "rel": "actor"}
    with pytest.raises(MalformedRecord, match=r"part-0000.json:1: column op must be insert or "
                                              r"delete, got 'schema'"):
        run_steps(args, [[row]], {})


@pytest.mark.spark
def test_stream_with_schema_rows_over_spark(spark, tmp_path):
    """One ``--trigger-once`` run; the change column written as a JSON object (Spark's
    JSON reader gives a string column its text)."""
    rows = with_schema_rows(stream_rows(SEED, False), "b")
    want = expected_with_rows(tmp_path, rows, "b", "fullmesh")
    source = tmp_path / "in"
    source.mkdir()
    nested = [{**r, "change": json.loads(r["change"])} if r["op"] == "schema" else r for r in rows]
    write_file(source, "part-0000.json", nested, 0, "json")
    argv = ["stream", "kws", "--source", str(source), "--checkpoint", str(tmp_path / "ckpt"),
            "--output", str(tmp_path / "out"), "--format", "json", "--trigger-once",
            "--schema", SCHEMA, "--keywords", "tarantino,travolta", "--tmax", "4",
            "--engine", "fullmesh", "--window", str(WINDOW), "--schema-rows",
            "--extra-columns", "text:string"]
    assert main(argv) == 0
    got = spark.read.parquet(str(tmp_path / "out")).toPandas()
    assert canonical(got) == canonical(want)
    assert (got[got["key"] == "b"]["kind"] == "end").any()


# -- the generic step (streaming.EngineFeed, every other problem's) -------------------------
class CountingEngine:
    """An engine whose records are numbered from its first (``_seen``), as the spec's are."""

    def __init__(self, params):
        self._seen = 0

    def process(self, events):
        for i, ev in enumerate(events):
            if ev == "bad":
                raise InvalidRecord("refused by the spec", index=self._seen + i)
        self._seen += len(events)
        return iter(())


class Adapter:
    """An adapter refusing a row itself (index: the row's position, from 0)."""

    @staticmethod
    def stream_events(pdf, params):
        if pdf["x"].isna().any():
            raise MalformedRecord("x is missing", index=int(pdf["x"].isna().to_numpy().argmax()))
        return list(pdf["x"])


def test_the_default_feed_locates_a_rows_error_in_a_later_micro_batch(tmp_path):
    step = streaming.key_step(Adapter, CountingEngine, None, "json", source=str(tmp_path))
    state = GroupState()

    def batch(n, xs):
        # the file the rows came from, a blank line first: the error names the line, not
        # the record
        (tmp_path / f"part-{n}.json").write_text(
            "\n" + "".join(json.dumps({"x": x, "key": "k"}) + "\n" for x in xs))
        return iter([pd.DataFrame({"x": xs, "key": "k", "_file": f"part-{n}.json", "_block": 0,
                                   "_row": range(len(xs))})])
    list(step(("k",), batch(0, ["a", "b", "c"]), state))
    with pytest.raises(MalformedRecord, match=r"part-1.json:3: x is missing"):
        list(step(("k",), batch(1, ["d", None]), state))
    with pytest.raises(InvalidRecord, match=r"part-1.json:4: refused by the spec"):
        list(step(("k",), batch(1, ["d", "e", "bad"]), state))


def test_checkpoints_name_keystream_in_the_adapter_module():
    """Spark's group state pickles ``KeyStream`` by module and name: the name must stay
    the one checkpoints written before ``_kws_stream`` was split off hold."""
    import pickle
    import pickletools

    from streamspec.pipeline.jobs import kws as job

    blob = pickle.dumps(job.KeyStream(None, 0, ""), protocol=pickle.HIGHEST_PROTOCOL)
    names = [arg for op, arg, _ in pickletools.genops(blob) if op.name == "SHORT_BINUNICODE"]
    assert names[:2] == ["streamspec.pipeline.jobs.kws", "KeyStream"]
    assert pickle.loads(blob) == job.KeyStream(None, 0, "")
