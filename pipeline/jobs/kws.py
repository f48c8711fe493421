"""Keyword search over relational data streams: one Parquet row per output event.

``streamspec run kws --schema SCHEMA --input REL=FILE [REL=FILE ...] --keywords k1,k2
--tmax T (--window W | --deletions FILE) --engine NAME --output DIR [--partitions P]``
(shared flags: ``streamspec.pipeline.flags``; the spec has no lateness policy: the
inputs are merged in time order, so there is no ``--lateness``) reads the schema and
the tuples (``streamspec.pipeline.io.kws``), runs the engine and writes every output
event (notes/kws.md): ``kind`` ("appear" or "end"), ``time``, ``end`` (null unless
known), ``tids`` (sorted tids as strings), ``edges`` (sorted
``edge_id:left_tid:right_tid``); plus ``key`` first when the input is keyed.

Events travel through Spark as rows (``event_rows``: order, time and the event's
JSON), never as a broadcast of the whole stream.

Keyed replay: a ``key`` column in the relation files holds independent database
streams (each key its own tids and results); one engine per key
(``replay_keyed``), each key's rows together and in canonical order.

Exact time-partitioned replay (one stream, sliding window): time is cut into
``P`` ranges ``[lo, hi)``; the task of a range replays the events from ``lo - w``
on (the halo of one window: every tuple alive at some instant of the range),
closes its last instant with the watermark ``hi`` and keeps the outputs with
``lo <= time < hi``; schema changes before the halo are replayed too.  An output
at ``tau`` depends only on the tuples alive at ``tau`` (paper Lemma 1: a result
lives from its latest tuple's start to its earliest tuple's end), so the union
equals the single-process run.  Deletions of tuples before the halo are left out
(their tuples are not replayed).  In the positive-negative model a tuple may live
forever, so the stream is replayed in one task.  ``conformance.kws.partitioned_mismatch``
checks both replays against the oracle.

Streaming: ``streamspec stream kws --schema SCHEMA --keywords k1,k2 --tmax T
(--window W | --positive-negative) --source DIR --checkpoint DIR --output DIR
[--trigger-once]`` (``streamspec.pipeline.streaming``).  The source files hold one
event a row, every relation in one stream:

- ``rel`` (string), ``tid`` (string, required: unique in its key's stream), ``t``
  (long, non-decreasing per key), ``op`` (``insert``, the default when null, or
  ``delete``: ends tuple ``tid`` at ``t``; its other columns are ignored), and one
  column per attribute name of the schema (names shared by relations share the
  column), plus the optional ``key`` (each key its own database stream).
- An insert takes its relation's columns as its values; a value in a column of
  another relation is the spec's error.  Column types: the schema's declared
  ``types`` (``streamspec.pipeline.io.kws``), else ``string``.  Values are used as
  their column gives them: declare ``long`` for numeric join attributes read from
  Parquet; in a ``string`` column ``1`` and ``"1"`` are both the text ``1`` (the
  batch job's CSV reader would make an undeclared ``1`` an integer: declare types
  and both read the same).  A ``long`` column with nulls reaches the engine as
  floats (``1.0 == 1`` joins alike; exact to 2**53).
- An example row (JSON lines): ``{"key": "eu", "rel": "movie", "tid": "m1", "t": 20,
  "mid": 11, "did": 1, "title": "Pulp Fiction"}``; a deletion: ``{"key": "eu",
  "op": "delete", "tid": "m1", "t": 90}``.

Each key's rows of a micro-batch reach its engine as one columnar batch
(``streamspec.spec.kws.TupleBatch``, validated by the spec column by column).
Outputs are the batch job's rows, ``key`` first.  An instant's outputs are written
once a later row of its key arrives (a stream has no end to flush): an expiry needs
no output of its own (``Appear`` carries the window end), a deletion's ``End`` comes
with the key's next later row.  Schema changes are not streamed (the schema file
fixes the schema).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import attrs
import numpy as np
import pandas as pd

from streamspec.pipeline import flags
from streamspec.pipeline.job import Summary
from streamspec.pipeline.summary import counted
from streamspec.spec.kws import (PROBLEM, SCHEMA_EVENTS, Appear, Delete, Insert, KwsEngine, Params,
                                 TupleBatch, event_from_json, event_to_json)

PREFERRED_ENGINES = ("fullmesh", "forest", "oracle")
OUTPUT_SCHEMA = "kind string, time long, end long, tids array<string>, edges array<string>"
EVENT_SCHEMA = "seq long, t long, schema boolean, event string"    # ``event_rows``
INT64_MIN = -2**63
DATA = Path(__file__).resolve().parent.parent / "data" / "kws"


def output_rows(outputs) -> pd.DataFrame:
    rows = [("appear" if isinstance(o, Appear) else "end", o.time,
             o.end if isinstance(o, Appear) else None,
             [str(t) for t in o.tids], [f"{e}:{a}:{b}" for e, a, b in o.edges]) for o in outputs]
    frame = pd.DataFrame(rows, columns=["kind", "time", "end", "tids", "edges"])
    frame["time"] = frame["time"].astype("int64")
    frame["end"] = frame["end"].astype("Int64")
    return frame


def run_range(engine_cls, params: Params, events: list, lo: int | None, hi: int | None) -> list:
    """Outputs with ``lo <= time < hi`` (None: unbounded) of a replay of ``events``."""
    engine = engine_cls(params)
    out = list(engine.process(events))
    out += engine.advance_to(hi) if hi is not None else engine.flush()
    return [o for o in out if (lo is None or o.time >= lo) and (hi is None or o.time < hi)]


def range_events(events: list, lo: int, hi: int | None, w: int) -> list:
    """Every schema change before ``hi``, the halo of one window before ``lo`` and
    the events of ``[lo, hi)``."""
    picked, inserted = [], set()
    for ev in events:
        if hi is not None and ev.t >= hi:
            break
        if ev.t < lo - w and not isinstance(ev, SCHEMA_EVENTS):
            continue
        if isinstance(ev, Insert):
            inserted.add(ev.tid)
        elif isinstance(ev, Delete) and ev.tid not in inserted:
            continue
        picked.append(ev)
    return picked


def time_ranges(events: list, partitions: int) -> list[tuple[int, int | None]]:
    if not events:
        return [(None, None)]
    t0, t1 = events[0].t, events[-1].t
    parts = max(1, min(partitions, t1 - t0 + 1))
    bounds = [t0 + (t1 + 1 - t0) * p // parts for p in range(parts)]
    return [(lo, hi) for lo, hi in zip(bounds, bounds[1:] + [None])]


# -- events through Spark ----------------------------------------------------------------
def event_rows(events: list, keys: list | None = None) -> pd.DataFrame:
    """Events as rows of ``EVENT_SCHEMA`` (plus ``key``): ``seq`` (stream order), ``t``,
    ``schema`` (a schema change: replayed by every range) and ``event``, the event's JSON
    (``streamspec.spec.kws.event_to_json``: int and str tids, value types and nulls
    survive, which the outputs' canonical order depends on)."""
    frame = pd.DataFrame({
        "seq": np.arange(len(events), dtype=np.int64),
        "t": np.array([ev.t for ev in events], dtype=np.int64),
        "schema": np.array([isinstance(ev, SCHEMA_EVENTS) for ev in events], dtype=bool),
        "event": pd.Series([json.dumps(event_to_json(ev)) for ev in events], dtype=object)})
    if keys is not None:
        frame["key"] = pd.Series(keys, dtype=np.int64 if key_type(keys) == "long" else object)
    return frame


def events_of(pdf: pd.DataFrame) -> list:
    """The events of rows of ``event_rows``, in stream order (shuffles do not keep it)."""
    ordered = pdf.sort_values("seq", kind="stable")
    return [event_from_json(json.loads(text)) for text in ordered["event"].tolist()]


def key_type(keys: list) -> str:
    return "long" if all(isinstance(k, int) for k in keys) else "string"


def replay_keyed(spark, engine_cls, params: Params, events: list, keys: list, partitions: int):
    """One engine per key (``groupBy(key).applyInPandas``, the pattern of
    ``streamspec.pipeline.replay.keyed``): each key's events in stream order through a
    fresh engine, flushed; rows ``key`` first, each key's rows together and in canonical
    order."""
    ktype = key_type(keys)
    frame = event_rows(events, keys)
    df = spark.createDataFrame(frame, f"{EVENT_SCHEMA}, key {ktype}")
    # one shuffle: groupBy reuses the key partitioning (``partitions`` tasks)
    df = df.repartition(max(1, min(partitions, len(set(keys)))), "key")

    def per_key(pdf: pd.DataFrame) -> pd.DataFrame:
        key = pdf["key"].iloc[0]
        rows = output_rows(run_range(engine_cls, params, events_of(pdf), None, None))
        rows.insert(0, "key", pd.Series([key] * len(rows),
                                        dtype=np.int64 if ktype == "long" else object))
        return rows

    return df.groupBy("key").applyInPandas(per_key, f"key {ktype}, {OUTPUT_SCHEMA}")


def replay_events(spark, engine_cls, params: Params, events: list, partitions: int):
    """One stream, exactly time-partitioned (module docstring): the output rows, each
    range's in canonical order.

    The events travel as rows; each range task gets, through a join with the ranges
    (broadcast, a few rows), the schema changes before its end and the other events
    of ``[lo - w, hi)``, and drops deletions of tuples inserted before that
    (``range_events``).  The positive-negative model, one partition or an empty stream
    is one task over every event."""
    from pyspark.sql import functions as F

    if not events:
        return spark.createDataFrame([], OUTPUT_SCHEMA)
    w = params.window
    tasks = [(None, None)] if w is None or partitions <= 1 else time_ranges(events, partitions)
    rows = spark.createDataFrame(event_rows(events), EVENT_SCHEMA)
    # per range: events from ``t_from`` (the halo's start; null: all) to ``hi`` (null: all)
    bounds = spark.createDataFrame(
        [(p, None if lo is None else max(lo - w, INT64_MIN), hi)
         for p, (lo, hi) in enumerate(tasks)], "part int, t_from long, hi long")
    picked = rows.join(F.broadcast(bounds),
                       (F.col("hi").isNull() | (F.col("t") < F.col("hi")))
                       & (F.col("t_from").isNull() | F.col("schema")
                          | (F.col("t") >= F.col("t_from"))))

    def per_range(pdf: pd.DataFrame) -> pd.DataFrame:
        lo, hi = tasks[int(pdf["part"].iloc[0])]
        evs = events_of(pdf)
        if lo is not None:
            evs = range_events(evs, lo, hi, w)
        return output_rows(run_range(engine_cls, params, evs, lo, hi))

    return (picked.repartition(len(tasks), "part").groupBy("part")
            .applyInPandas(per_range, OUTPUT_SCHEMA))


def validate(params: Params, events: list, wheres: list) -> None:
    """The spec's checks on the driver, before Spark starts; errors name ``file:line``.
    (Keyed: once per key, each key its own stream.)"""
    from streamspec.spec.errors import RecordError
    try:
        KwsEngine(params)._validate(events)
    except RecordError as err:
        if err.index is not None and err.index < len(wheres):
            raise err.at(wheres[err.index]) from None
        raise


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--schema", required=True, help="schema file, JSON or YAML (required)")
    flags.add_input(parser, "REL=FILE", "tuples of relation REL: CSV, JSON lines or Parquet with "
                                        "an integer column t, optional tid and key (independent "
                                        "streams, one engine per key); one REL=FILE per "
                                        "relation", nargs="+")
    parser.add_argument("--keywords", required=True, help="comma-separated query keywords (required)")
    parser.add_argument("--tmax", type=flags.int64, required=True, metavar="T",
                        help="max tuples per result (required)")
    model = parser.add_mutually_exclusive_group(required=True)
    flags.add_window(parser, kind=flags.int64, aliases=("-w",), required=False, target=model,
                     note="(the sliding-window model; one of --window and --deletions is required)")
    model.add_argument("--deletions", metavar="FILE",
                       help="negative tuples (columns tid, t[, key]): the positive-negative model instead "
                            "of a window (one of --window and --deletions is required)")
    flags.add_engine(parser, PROBLEM, PREFERRED_ENGINES)
    flags.add_run_options(parser, unit="time ranges (window model, one stream) or key partitions")


def demo_argv(output_dir: str) -> list[str]:
    inputs = [f"{r}={DATA / (r + '.csv')}" for r in ("director", "movie", "plays", "actor")]
    return ["--schema", str(DATA / "schema.json"), "--input", *inputs, "--keywords",
            "tarantino,travolta", "--tmax", "5", "--window", "1000", "--output", output_dir,
            "--overwrite"]


@attrs.frozen
class Plan:
    params: Params
    events: list
    keys: list | None = None      # the key of each event (keyed input), else None


def prepare(args) -> Plan:
    """The schema, the tuples and the spec's checks, on the driver before Spark."""
    from streamspec.pipeline.io.kws import read_events, read_schema, read_types
    from streamspec.spec.errors import InvalidParameter

    schema = read_schema(args.schema)
    types = read_types(args.schema)
    inputs = []
    for item in args.input:
        rel, eq, path = item.partition("=")
        if not eq or not rel or not path:
            raise InvalidParameter(f"--input expects REL=FILE, got {item!r}")
        inputs.append((rel, path))
    params = Params(schema, args.keywords, args.tmax, args.window)
    tuples = read_events(inputs, args.deletions, types)
    if tuples.keys is None:
        validate(params, tuples.events, tuples.wheres)
    else:
        for events, wheres in tuples.by_key().values():
            validate(params, events, wheres)
    return Plan(params, tuples.events, tuples.keys)


def replay(spark, plan: Plan, engine_cls, partitions: int):
    if plan.keys is not None:
        return replay_keyed(spark, engine_cls, plan.params, plan.events, plan.keys, partitions)
    return replay_events(spark, engine_cls, plan.params, plan.events, partitions)


def summarize(plan: Plan, rows) -> Summary:
    """Counts of appeared and early-ended results (one Spark job over the held rows)."""
    params = plan.params
    counts = dict(rows.groupBy("kind").count().collect())
    appear, ended = counts.get("appear", 0), counts.get("end", 0)
    keys = f" over {counted(len(set(plan.keys)), 'key')}" if plan.keys is not None else ""
    return Summary(f"{counted(appear, 'result')} that appeared and {ended} that ended early{keys}",
                   counted(len(plan.events), "event"),
                   f"keywords {','.join(params.keywords)}, t_max={params.t_max}, "
                   + (f"w={params.window}" if params.window else "negative tuples"))


# -- streamspec stream kws (streamspec.pipeline.streaming) ---------------------------------
STREAM_COLUMNS = ("rel", "tid", "t", "op")      # before the attribute columns
OPS = ("insert", "delete")


def add_stream_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--schema", required=True,
                        help="schema file, JSON or YAML; its attributes are the source rows' "
                             "columns (required)")
    parser.add_argument("--keywords", required=True, help="comma-separated query keywords (required)")
    parser.add_argument("--tmax", type=flags.int64, required=True, metavar="T",
                        help="max tuples per result (required)")
    model = parser.add_mutually_exclusive_group(required=True)
    flags.add_window(parser, kind=flags.int64, aliases=("-w",), required=False, target=model,
                     note="(the sliding-window model; one of --window and --positive-negative "
                          "is required)")
    model.add_argument("--positive-negative", action="store_true",
                       help="tuples live until a delete row ends them, the positive-negative "
                            "model, instead of a window (one of --window and --positive-negative "
                            "is required)")
    flags.add_engine(parser, PROBLEM, PREFERRED_ENGINES)


def stream_columns(schema, types: dict) -> list[tuple[str, str]]:
    """The attribute columns of the source rows, ``(name, Spark type)``: every attribute of
    the schema once, in schema order, typed as declared (``read_types``) else ``string``."""
    from streamspec.spec.errors import InvalidParameter

    columns: dict = {}
    for rel in schema.relations:
        for attr in rel.attributes:
            if attr in (*STREAM_COLUMNS, "key"):
                raise InvalidParameter(f"relation {rel.name}: attribute {attr!r} has the name of "
                                       "a column of the stream's rows; rename it")
            kind = types.get(rel.name, {}).get(attr, "string")
            if columns.setdefault(attr, kind) != kind:
                raise InvalidParameter(f"attribute {attr!r} is typed {columns[attr]} and {kind} "
                                       "in different relations; one column holds both in a stream")
    return list(columns.items())


def source_schema(args) -> str:
    """One event a row: ``rel, tid, t, op`` and the attribute columns (module docstring of
    ``streamspec.pipeline.streaming``: ``key`` is added there)."""
    from streamspec.pipeline.io.kws import read_schema, read_types

    columns = stream_columns(read_schema(args.schema), read_types(args.schema))
    return ", ".join(["rel string", "tid string", "t long", "op string",
                      *(f"`{name}` {kind}" for name, kind in columns)])


def stream_params(args) -> Params:
    from streamspec.pipeline.io.kws import read_schema, read_types

    schema = read_schema(args.schema)
    stream_columns(schema, read_types(args.schema))    # clashing names fail before Spark
    return Params(schema, args.keywords, args.tmax, None if args.positive_negative else args.window)


def stream_events(pdf: pd.DataFrame, params: Params) -> TupleBatch:
    """A micro-batch's rows of one key, in arrival order, as the engine's columnar input
    (``streamspec.spec.kws.TupleBatch``: validated by the spec column by column, no
    Insert objects).  Rows the spec cannot even read as events (no time, no tid, an
    unknown ``op``, an insert without ``rel``) are refused here, with the row's position
    (``index``)."""
    from streamspec.spec.errors import MalformedRecord

    n = len(pdf)

    def column(name):
        return pdf[name] if name in pdf else pd.Series([None] * n, dtype=object)

    op, rel, tid, t = (column(c) for c in ("op", "rel", "tid", "t"))
    dele = (op == "delete").to_numpy(dtype=bool)
    checks = [(t.isna(), "column t must be an integer time, got null"),
              (tid.isna(), "every row needs a tid"),
              (~(op.isna() | op.isin(OPS)), "column op must be insert or delete"),
              (rel.isna() & ~dele, "an insert needs a relation (column rel)")]
    firsts = [(int(np.flatnonzero(bad.to_numpy(dtype=bool))[0]), message)
              for bad, message in checks if bad.any()]
    if firsts:
        i, message = min(firsts)
        if message.startswith("column op"):
            message += f", got {op.iloc[i]!r}"
        raise MalformedRecord(message, index=i)
    times = t.to_numpy()
    if times.dtype.kind == "f" and np.all(times == np.round(times)):
        times = times.astype(np.int64)  # a float column holds the times after a null somewhere
    tids = [v if isinstance(v, str) else _tid_text(v) for v in tid.tolist()]
    relations = rel.tolist()
    names = [c for c in pdf.columns if c not in STREAM_COLUMNS]
    values = {}
    inserts = ~dele
    for name in {r for r, d in zip(relations, dele) if not d}:
        rows = (rel == name).to_numpy(dtype=bool) & inserts
        # every column: the relation's attributes, and the others (nulls, else the spec's error)
        values[name] = {c: pdf[c].to_numpy()[rows] for c in names}
    return TupleBatch.of(times, tids, relations, values, dele)


def _tid_text(v) -> str:
    """A tid read as a number (pandas makes ints floats next to a null) as its text."""
    v = v.item() if isinstance(v, np.generic) else v
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def stream_rows(outputs, first: int) -> pd.DataFrame:
    """The output rows of the batch job (``output_rows``); kws rows carry no event number.
    ``end`` as plain ints and None (not pandas' NA): the rows are plain Python values, as
    every problem's stream rows are (``tests/pipeline/streamcheck.py`` compares them so)."""
    rows = output_rows(outputs)
    rows["end"] = pd.Series([None if pd.isna(e) else int(e) for e in rows["end"]], dtype=object)
    return rows


def stream_schema(args) -> str:
    return OUTPUT_SCHEMA
