"""Keyword search over relational data streams: one Parquet row per output event.

``streamspec run kws --schema SCHEMA --input REL=FILE [REL=FILE ...] --keywords k1,k2
--tmax T (--window W | --deletions FILE) [--schema-changes FILE] --engine NAME --output DIR
[--partitions P]``
(shared flags: ``streamspec.pipeline.flags``; the spec has no lateness policy: the
inputs are merged in time order, so there is no ``--lateness``) reads the schema and
the tuples, runs the engine and writes every output event (notes/kws.md): ``kind`` ("appear" or "end"), ``time``, ``end`` (null unless
known), ``tids`` (sorted tids as strings), ``edges`` (sorted
``edge_id:left_tid:right_tid``); plus ``key`` first when the input is keyed.

Schema changes (``--schema-changes FILE``, JSON lines of timed ``add_relation``,
``remove_relation``, ``add_edge``, ``remove_edge``; ``streamspec.pipeline.io.kws``) are
events of the stream: each applies before the tuples of its time, the meshes migrate
(paper Section 4.4) and the results a change starts or ends are output at its time.
With them every input is read and validated on the driver (``read_tuples``; the
changes' errors name ``file:line`` too) and the events go to the tasks as rows.

What is read where (issue 11): the driver reads the schema and, for local tuple files
(CSV, JSON lines, a ``.parquet`` file), only their heads (``prepare``; a bad first
record fails before Spark starts).  Spark tasks read the rest (``replay_files``): one
task per chunk (a byte range at line starts, a row group) parses it with the driver
reader's own row functions (``streamspec.pipeline.io.kws_text``) into typed columns
carrying each row's merge order; each chunk is split by time range or key; the task
of a range or key puts its rows in merge order and replays them, the spec validating
them there.  Anything a task cannot read exactly as the driver would, or a record it
or the spec rejects, makes the job run the driver's validating reader
(``read_tuples``: every tuple on the driver, ``streamspec.pipeline.io.kws``), which
raises the located ``file:line`` (``file:row N``) error, exit 2, nothing written; it
reads other inputs (Parquet directories, remote paths) from the start, validates
them on the driver and sends the events to the tasks (``replay_events``,
``replay_keyed``).

Events travel through Spark as typed columns (``event_table``) and reach the engine as
its columnar batch (``streamspec.spec.kws.TupleBatch``), never as a broadcast of the
whole stream or one object per event.

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
(--window W | --positive-negative) [--schema-changes FILE] [--schema-rows
[--extra-columns A[:TYPE],...]] --source DIR --checkpoint DIR --output DIR
[--trigger-once]`` (``streamspec.pipeline.streaming``).  The source files hold one
event a row, every relation in one stream:

- ``rel`` (string), ``tid`` (string, required: unique in its key's stream), ``t``
  (long, non-decreasing per key), ``op`` (``insert``, the default when null, or
  ``delete``: ends tuple ``tid`` at ``t``; its other columns are ignored), and one
  column per attribute name of the schema (names shared by relations share the
  column), plus the optional ``key`` (each key its own database stream).
- An insert takes its relation's columns as its values; a value in a column of
  another relation is the spec's error.  Column types: the schema's declared
  ``types`` (``streamspec.pipeline.io.kws``), else ``string``; the attributes of a
  relation the schema changes add share the column of their name (its type), else
  are ``string`` columns; ``--extra-columns`` adds more (for relations that schema
  rows add).  Values are used as
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
with the key's next later row.

Schema changes in a stream (``--schema-changes FILE``, the batch job's file and parser,
``streamspec.pipeline.io.kws``): read and checked on the driver before the query starts
(``stream_feed``: a bad line is the batch job's error at ``file:line``, exit 2, no
checkpoint, nothing written).  Each key's engine applies every change whose time is at
most the time of the row it is about to process, in order, before that row
(``SchemaChangeFeed``): where the batch job's merge puts it, before the tuples of its
time, so the outputs are the batch job's (``tests/pipeline/test_kws_stream_schema.py``).
A key's group state keeps its engine and how many changes it applied (``KeyStream``):
a restart from the checkpoint applies none twice, a key first seen late gets every
earlier change before its first row, and a change after a key's last row waits for its
next row (then its outputs come with the row after that, as every instant's do).  A
restart may take a file with more changes after the times already streamed; one whose
applied changes differ is refused (their digest), and a change added at a time a key
has passed stops the query at its ``file:line``.

Schema rows (``--schema-rows``): a row with ``op`` = ``schema`` is a schema change of
its key only, at its place among the key's rows: column ``change`` holds the JSON
object of a schema-changes line (the same parser; its time is the row's ``t``, a ``t``
of its own must equal it), e.g. ``{"key": "eu", "op": "schema", "t": 600, "change":
{"add_edge": ["rm", "review", "mid", "movie", "mid"]}}`` (Spark's JSON reader gives the
string column an object's text; Parquet and CSV hold the text).  The file's changes due
at or before its time go first.  A bad change stops the query at the row's ``file:line``;
a relation it adds must find its attributes among the columns.  Its changes live in
the key's engine (its schema), so a restart keeps them.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import attrs
import numpy as np
import pandas as pd

from streamspec.pipeline import flags
from streamspec.pipeline.job import Summary
from streamspec.pipeline.streaming import EngineFeed
from streamspec.pipeline.summary import counted
from streamspec.spec.kws import (PROBLEM, SCHEMA_EVENTS, Appear, Delete, Insert, KwsEngine, Params,
                                 TupleBatch, event_from_json, event_to_json)

PREFERRED_ENGINES = ("fullmesh", "forest", "oracle")
OUTPUT_SCHEMA = "kind string, time long, end long, tids array<string>, edges array<string>"
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
    return time_bounds(events[0].t, events[-1].t, partitions)


def time_bounds(t0: int, t1: int, partitions: int) -> list[tuple[int, int | None]]:
    """``partitions`` time ranges (at most one per instant) from ``t0`` to ``t1`` on."""
    parts = max(1, min(partitions, t1 - t0 + 1))
    bounds = [t0 + (t1 + 1 - t0) * p // parts for p in range(parts)]
    return [(lo, hi) for lo, hi in zip(bounds, bounds[1:] + [None])]


# -- events through Spark, as columns ----------------------------------------------------
# One row per event: its order, time and kind, the insert's relation and tid (int or str:
# they sort differently, ``tid_key``), a schema change as its JSON, and one typed column per
# attribute name whose values all have one type (``long``, ``double`` or ``string``, the
# usual case); an attribute whose values mix types travels in the row's ``extra`` JSON.
# Tasks read the rows with Arrow (``applyInArrow``, IPC chunks: ints with nulls stay exact
# ints) into the engine's columnar batch (``TupleBatch``), no per-event objects on either side.
FIXED = ("seq long, t long, kind string, rel string, tid_int long, tid_str string, "
         "event string, extra string")
ARROW_TYPES = {"long": "int64", "double": "float64", "string": "string"}


@attrs.frozen
class EventTable:
    """The events as an Arrow table (``FIXED`` plus the attribute columns ``v0, v1...``)."""

    table: object                   # pyarrow.Table
    ddl: str                        # its Spark schema
    attributes: tuple               # ((attribute, column), ...) of the typed columns


def _value_type(values: list) -> str | None:
    """``long``, ``double`` or ``string`` when every non-null value has that type, else None."""
    kinds = {type(v) for v in values if v is not None}
    if kinds <= {int}:
        return "long" if all(-2**63 <= v < 2**63 for v in values if v is not None) else None
    return {frozenset({float}): "double", frozenset({str}): "string"}.get(frozenset(kinds))


def event_table(events: list, keys: list | None = None) -> EventTable:
    """The columns of ``events`` (and of their ``keys``), built on the driver in one pass."""
    import pyarrow as pa

    n = len(events)
    by_attr: dict = {}
    for ev in events:
        if isinstance(ev, Insert):
            for a, v in ev.values:
                by_attr.setdefault(a, []).append(v)
    typed = {a: kind for a, vs in by_attr.items() if (kind := _value_type(vs)) is not None}
    names = {a: f"v{j}" for j, a in enumerate(typed)}
    kind, rel, tid_int, tid_str, event, extra = ([None] * n for _ in range(6))
    cols = {a: [None] * n for a in typed}
    for i, ev in enumerate(events):
        if isinstance(ev, (Insert, Delete)):
            if isinstance(ev.tid, int):
                tid_int[i] = ev.tid
            else:
                tid_str[i] = ev.tid
        if isinstance(ev, Insert):
            kind[i], rel[i] = "insert", ev.relation
            mixed = {}
            for a, v in ev.values:
                if a in cols:
                    cols[a][i] = v
                elif v is not None:
                    mixed[a] = v
            if mixed:
                extra[i] = json.dumps(mixed)
        elif isinstance(ev, Delete):
            kind[i] = "delete"
        else:
            kind[i], event[i] = "schema", json.dumps(event_to_json(ev))
    arrays = {"seq": pa.array(np.arange(n, dtype=np.int64)),
              "t": pa.array(np.array([ev.t for ev in events], dtype=np.int64)),
              "kind": pa.array(kind, pa.string()), "rel": pa.array(rel, pa.string()),
              "tid_int": pa.array(tid_int, pa.int64()), "tid_str": pa.array(tid_str, pa.string()),
              "event": pa.array(event, pa.string()), "extra": pa.array(extra, pa.string())}
    ddl = FIXED
    for a, col in names.items():
        arrays[col] = pa.array(cols[a], getattr(pa, ARROW_TYPES[typed[a]])())
        ddl += f", {col} {typed[a]}"
    if keys is not None:
        ktype = key_type(keys)
        arrays["key"] = pa.array(keys, pa.int64() if ktype == "long" else pa.string())
        ddl += f", key {ktype}"
    return EventTable(pa.table(arrays), ddl, tuple(names.items()))


def inputs_of(table, attributes: tuple, halo_from: int | None = None) -> list:
    """``process`` inputs of a task's rows (any order): runs of inserts and deletions as
    ``TupleBatch`` es, schema changes as one-event lists, in stream order.  With
    ``halo_from`` (a time range's task), deletions of tuples inserted before it are left
    out, as ``range_events`` does: their tuples are not replayed."""
    import pyarrow as pa

    table = table.sort_by("seq")
    kind = table["kind"].to_pylist()
    tid_int, tid_str = table["tid_int"].to_pylist(), table["tid_str"].to_pylist()
    tids = [a if a is not None else b for a, b in zip(tid_int, tid_str)]
    if halo_from is not None and "delete" in kind:
        inserted = {x for x, k in zip(tids, kind) if k == "insert"}
        keep = [k != "delete" or x in inserted for x, k in zip(tids, kind)]
        if not all(keep):
            table = table.filter(pa.array(keep))
            kind = [k for k, ok in zip(kind, keep) if ok]
            tids = [x for x, ok in zip(tids, keep) if ok]
    out, start = [], 0
    schema_rows = [i for i, k in enumerate(kind) if k == "schema"]
    for stop in schema_rows + [len(kind)]:
        if stop > start:
            out.append(_batch_of(table.slice(start, stop - start), kind[start:stop],
                                 tids[start:stop], attributes))
        if stop < len(kind):
            out.append([event_from_json(json.loads(table["event"][stop].as_py()))])
        start = stop + 1
    return out


def _batch_of(part, kind: list, tids: list, attributes: tuple) -> TupleBatch:
    """A run of insert and deletion rows as a ``TupleBatch`` (values per relation)."""
    import pyarrow.compute as pc

    relation = part["rel"].to_pylist()
    dele = np.array([k == "delete" for k in kind], dtype=bool)
    values = {}
    for name in {r for r, d in zip(relation, dele) if not d}:
        rows = part.filter(pc.and_(pc.equal(part["rel"], name), pc.equal(part["kind"], "insert")))
        cols = {}
        for a, col in attributes:
            c = rows[col]
            if c.null_count == len(c):
                continue            # not this relation's attribute, or null throughout
            cols[a] = c.to_numpy() if c.null_count == 0 and c.type != "string" \
                else c.to_pylist()
        if rows["extra"].null_count < len(rows):
            mixed = [json.loads(x) if x is not None else {} for x in rows["extra"].to_pylist()]
            for a in dict.fromkeys(a for d in mixed for a in d):
                cols[a] = [d.get(a) for d in mixed]
        values[name] = cols
    return TupleBatch.of(part["t"].to_numpy(), tids, relation, values, dele)


def run_inputs(engine_cls, params: Params, inputs: list, lo: int | None, hi: int | None) -> list:
    """``run_range`` over ``process`` inputs (``inputs_of``)."""
    engine = engine_cls(params)
    out = [o for piece in inputs for o in engine.process(piece)]
    out += engine.advance_to(hi) if hi is not None else engine.flush()
    return [o for o in out if (lo is None or o.time >= lo) and (hi is None or o.time < hi)]


def arrow_rows(outputs, key=None, key_arrow=None):
    """Output events as an Arrow table of ``OUTPUT_SCHEMA`` (``key`` first when given)."""
    import pyarrow as pa

    frame = output_rows(outputs)
    arrays = {"kind": pa.array(frame["kind"].tolist(), pa.string()),
              "time": pa.array(frame["time"].tolist(), pa.int64()),
              "end": pa.array([None if pd.isna(e) else int(e) for e in frame["end"]], pa.int64()),
              "tids": pa.array(frame["tids"].tolist(), pa.list_(pa.string())),
              "edges": pa.array(frame["edges"].tolist(), pa.list_(pa.string()))}
    if key_arrow is not None:
        arrays = {"key": pa.array([key] * len(frame), key_arrow), **arrays}
    return pa.table(arrays)


def key_type(keys: list) -> str:
    return "long" if all(isinstance(k, int) for k in keys) else "string"


# The columns cross Spark in chunks of ``CHUNK_ROWS`` rows, each one Arrow IPC stream
# (lz4) in a binary cell: Spark moves a few large values, not every event's fields (at
# 270,000 events, 23 columns wide, Spark's row-by-row shuffle and conversion of the plain
# columns took 8 s of a 17 s task whose engine ran 6 s).  Tasks read their chunks back
# into Arrow tables, zero-copy.
CHUNK_ROWS = 16384


def _ipc(table) -> bytes:
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema,
                           options=pa.ipc.IpcWriteOptions(compression="lz4")) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _from_ipc(blobs) -> object:
    import pyarrow as pa

    return pa.concat_tables([pa.ipc.open_stream(b).read_all() for b in blobs])


def chunks(table) -> list[tuple[int, int, int | None, bytes]]:
    """``(first t, last t, t of the first schema change or None, IPC bytes)`` of the
    table's consecutive slices of ``CHUNK_ROWS`` rows (the table in stream order)."""
    out = []
    for start in range(0, table.num_rows, CHUNK_ROWS):
        part = table.slice(start, CHUNK_ROWS)
        t, kind = part["t"].to_numpy(), part["kind"].to_pylist()
        schema_t = next((int(x) for x, k in zip(t, kind) if k == "schema"), None)
        out.append((int(t[0]), int(t[-1]), schema_t, _ipc(part)))
    return out


def _chunk_frame(spark, rows: list, group: str, group_type):
    """A DataFrame of ``(group, data)`` rows (a task's or a key's chunks)."""
    import pyarrow as pa

    table = pa.table({group: pa.array([g for g, _ in rows], group_type),
                      "data": pa.array([d for _, d in rows], pa.binary())})
    ddl = "long" if group_type == pa.int64() else "string" if group_type == pa.string() else "int"
    return spark.createDataFrame(table, f"{group} {ddl}, data binary")


def replay_keyed(spark, engine_cls, params: Params, events: list, keys: list, partitions: int):
    """One engine per key (``groupBy(key).applyInArrow``, the pattern of
    ``streamspec.pipeline.replay.keyed``): each key's events in stream order through a
    fresh engine, flushed; rows ``key`` first, each key's rows together and in canonical
    order."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ktype = key_type(keys)
    key_arrow = pa.int64() if ktype == "long" else pa.string()
    table = event_table(events, keys)
    # each key's rows together (in stream order within it), cut into chunks
    ordered = table.table.take(pc.sort_indices(table.table, [("key", "ascending"),
                                                             ("seq", "ascending")]))
    column = ordered["key"].to_pylist()
    rows, start = [], 0
    for end in range(1, len(column) + 1):
        if end == len(column) or column[end] != column[start]:
            rows += [(column[start], data) for *_, data in chunks(ordered.slice(start, end - start))]
            start = end
    df = _chunk_frame(spark, rows, "key", key_arrow)
    # one shuffle: groupBy reuses the key partitioning (``partitions`` tasks)
    df = df.repartition(max(1, min(partitions, len(set(keys)))), "key")
    attributes = table.attributes

    def per_key(part):
        key = part["key"][0].as_py()
        stream = _from_ipc(part["data"].to_pylist())
        outputs = run_inputs(engine_cls, params, inputs_of(stream, attributes), None, None)
        return arrow_rows(outputs, key, key_arrow)

    return df.groupBy("key").applyInArrow(per_key, f"key {ktype}, {OUTPUT_SCHEMA}")


def replay_events(spark, engine_cls, params: Params, events: list, partitions: int):
    """One stream, exactly time-partitioned (module docstring): the output rows, each
    range's in canonical order.

    The events travel as columns (``event_table``) in chunks; the task of a range gets
    the chunks that hold its rows: the schema changes before its end and the other
    events of ``[lo - w, hi)`` (a chunk across a range boundary goes to both tasks), keeps
    those rows and drops deletions of tuples inserted before them (``inputs_of``, as
    ``range_events``).  The positive-negative model, one partition or an empty stream is
    one task over every event."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not events:
        return spark.createDataFrame([], OUTPUT_SCHEMA)
    w = params.window
    tasks = [(None, None)] if w is None or partitions <= 1 else time_ranges(events, partitions)
    table = event_table(events)
    pieces = chunks(table.table)
    rows = []
    for p, (lo, hi) in enumerate(tasks):
        t_from = None if lo is None else lo - w
        for first, last, schema_t, data in pieces:
            before_end = hi is None or first < hi
            if (before_end and (t_from is None or last >= t_from)) \
                    or (schema_t is not None and (hi is None or schema_t < hi)):
                rows.append((p, data))
    df = _chunk_frame(spark, rows, "part", pa.int32())
    attributes = table.attributes

    def per_range(part):
        lo, hi = tasks[part["part"][0].as_py()]
        stream = _from_ipc(part["data"].to_pylist())
        if lo is not None:
            t = stream["t"]
            keep = pc.and_(pc.less(t, hi) if hi is not None else pc.is_valid(t),
                           pc.or_(pc.greater_equal(t, max(lo - w, INT64_MIN)),
                                  pc.equal(stream["kind"], "schema")))
            stream = stream.filter(keep)
        inputs = inputs_of(stream, attributes, None if lo is None else lo - w)
        return arrow_rows(run_inputs(engine_cls, params, inputs, lo, hi))

    return (df.repartition(len(tasks), "part").groupBy("part")
            .applyInArrow(per_range, OUTPUT_SCHEMA))


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
    parser.add_argument("--schema-changes", metavar="FILE",
                        help="JSON lines of timed schema changes (add_relation, remove_relation, "
                             "add_edge, remove_edge), each applied before the tuples of its time; "
                             "see streamspec.pipeline.io.kws (default: none, the schema is fixed)")
    flags.add_engine(parser, PROBLEM, PREFERRED_ENGINES)
    flags.add_run_options(parser, unit="time ranges (window model, one stream) or key partitions")


def demo_argv(output_dir: str) -> list[str]:
    inputs = [f"{r}={DATA / (r + '.csv')}" for r in ("director", "movie", "plays", "actor")]
    return ["--schema", str(DATA / "schema.json"), "--input", *inputs, "--keywords",
            "tarantino,travolta", "--tmax", "5", "--window", "1000", "--output", output_dir,
            "--overwrite"]


@attrs.define
class Plan:
    """The job's parameters and inputs: the events read on the driver (``events``, and
    ``keys`` for a keyed input), or the tuple files the Spark tasks read (``files``,
    ``pipeline.io.kws_text.plan_files``; ``events`` None, the counts filled by the replay)."""

    params: Params
    events: list | None
    keys: list | None = None      # the key of each event (keyed input), else None
    files: tuple | None = None    # the files of the Spark-read path
    inputs: tuple = ()            # (relation, path) of each --input
    deletions: str | None = None
    types: dict | None = None
    schema_changes: str | None = None   # --schema-changes (the driver reads every input then)
    n_events: int = 0             # Spark-read path: events and keys (0: not keyed)
    n_keys: int = 0
    phases: dict = attrs.Factory(dict)  # Spark-read path: seconds of each step (benches)


def prepare(args) -> Plan:
    """The schema and, on the driver before Spark, either the tuple files' heads (local
    CSV, JSON lines and single Parquet files: the Spark tasks read the rest,
    ``replay_files``) or every tuple and the spec's checks (``read_tuples``)."""
    from streamspec.pipeline.io.kws import read_schema, read_types
    from streamspec.pipeline.io.kws_text import plan_files
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
    changes = getattr(args, "schema_changes", None)
    if changes:
        return read_tuples(params, inputs, args.deletions, types, changes)
    files = plan_files(inputs, args.deletions, types, schema)
    if files is not None:
        return Plan(params, None, files=files, inputs=tuple(inputs), deletions=args.deletions,
                    types=types)
    return read_tuples(params, inputs, args.deletions, types)


def read_tuples(params: Params, inputs, deletions, types, schema_changes=None) -> Plan:
    """Every tuple (and schema change) read and validated on the driver: errors name
    ``file:line``."""
    from streamspec.pipeline.io.kws import read_events

    tuples = read_events(list(inputs), deletions, types, schema_changes)
    if tuples.keys is None:
        validate(params, tuples.events, tuples.wheres)
    else:
        for events, wheres in tuples.by_key().values():
            validate(params, events, wheres)
    return Plan(params, tuples.events, tuples.keys, inputs=tuple(inputs), deletions=deletions,
                types=types, schema_changes=schema_changes)


def replay(spark, plan: Plan, engine_cls, partitions: int, chunk_bytes: int | None = None):
    """The output rows: from the files the tasks read (``replay_files``) when the plan has
    them and the tasks found them good; else (the driver's reader raises the located
    error of a bad input) from the events read on the driver."""
    if plan.files is not None:
        rows = replay_files(spark, plan, engine_cls, partitions, chunk_bytes)
        if rows is not None:
            return rows
        checked = read_tuples(plan.params, plan.inputs, plan.deletions, plan.types, plan.schema_changes)
        plan.events, plan.keys, plan.files = checked.events, checked.keys, None
    if plan.keys is not None:
        return replay_keyed(spark, engine_cls, plan.params, plan.events, plan.keys, partitions)
    return replay_events(spark, engine_cls, plan.params, plan.events, partitions)


# -- the Spark-read path: tasks parse the tuple files (pipeline.io.kws_text) --------------
REJECTED = "rejected"       # the kind of the marker row of a task whose rows the spec rejected
CHUNK_STATS = ("chunk int, ok boolean, rows long, lines long, keyed long, unkeyed long, "
               "t_min long, t_max long, explicit boolean, keys string, key_kinds string, "
               "data binary")


def replay_files(spark, plan: Plan, engine_cls, partitions: int, chunk_bytes: int | None = None):
    """The output rows of ``plan.files``, read by Spark tasks; None when a task found a
    chunk it cannot read as the driver would, or a record bad (the caller then runs the
    driver's validating reader, which names it).

    1. one task per chunk (``kws_text.chunks``: byte ranges at line starts, Parquet row
       groups) parses it into typed columns with each row's merge order
       (``kws_text.chunk_table``), kept once (``localCheckpoint``); the driver reads
       only the chunks' checks: every chunk fit, keyed rows everywhere or nowhere, one
       kind of keys (ints when every key is an integer), the time span, line counts;
    2. each chunk is split by time range (one stream: the ranges and halos of
       ``replay_events``) or by key (``replay_keyed``); the task of a range or key
       puts its pieces in merge order (``kws_text.assemble``: time, input position,
       chunk, row; default tids ``REL:LINE``) and replays them through the engine's
       columnar batches (``inputs_of``), the spec validating them; a rejection is a
       marker row; with several ranges, tasks of the same pass look for a tid repeated
       across them (which no one range may see) and answer with the marker row too.
    """
    import time

    import pyarrow as pa
    from pyspark.sql import functions as F

    from streamspec.pipeline.io.kws_text import chunk_table, chunks, line_bases
    from streamspec.pipeline.job import materialised

    began = [time.monotonic()]

    def phase(name):
        now = time.monotonic()
        plan.phases[name] = round(now - began[0], 3)
        began[0] = now

    files = plan.files
    cs = chunks(files, partitions, chunk_bytes)
    if not cs:
        plan.n_events = 0
        return spark.createDataFrame([], OUTPUT_SCHEMA)

    def parse(batches):
        for batch in batches:
            for c in batch.column(0).to_pylist():
                chunk = cs[c]
                try:
                    table, st = chunk_table(files[chunk.file], chunk)
                    cells = {**st, "ok": True, "data": _ipc(table)}
                except Exception:       # unfit or bad: the driver's reader judges it
                    cells = {"ok": False}
                yield pa.RecordBatch.from_pylist([{"chunk": c, **cells}],
                                                 _arrow_schema(CHUNK_STATS))

    numbers = spark.sparkContext.parallelize([(c,) for c in range(len(cs))], len(cs))
    parsed = (spark.createDataFrame(numbers, "chunk int").mapInArrow(parse, CHUNK_STATS)
              .localCheckpoint(eager=True))
    phase("parse")
    stats = sorted(parsed.drop("data").collect())
    phase("checks")
    if [s.chunk for s in stats] != list(range(len(cs))) or not all(s.ok for s in stats):
        return None
    keyed, unkeyed = sum(s.keyed for s in stats), sum(s.unkeyed for s in stats)
    if keyed and unkeyed:
        return None
    bases = line_bases(files, cs, [s.lines for s in stats])
    plan.n_events = sum(s.rows for s in stats)
    data = parsed.select("chunk", "data")
    if keyed:
        kinds = set().union(*(s.key_kinds.split(",") for s in stats)) - {""}
        if "unfit" in kinds:
            return None
        ktype = "long" if kinds <= {"int"} else "string"
        keys = {int(k) if ktype == "long" else k for s in stats for k in json.loads(s.keys)}
        plan.n_keys = len(keys)
        rows = _replay_chunks_keyed(data, plan.params, engine_cls, bases, ktype,
                                    max(1, min(partitions, len(keys))))
    else:
        if not plan.n_events:
            return spark.createDataFrame([], OUTPUT_SCHEMA)
        w = plan.params.window
        t0 = min(s.t_min for s in stats if s.rows)
        t1 = max(s.t_max for s in stats if s.rows)
        tasks = [(None, None)] if w is None or partitions <= 1 else time_bounds(t0, t1, partitions)
        rels = [f.rel for f in files if f.rel is not None]
        check = len(tasks) > 1 and (any(s.explicit for s in stats) or len(set(rels)) < len(rels))
        rows = _replay_chunks(data, plan.params, engine_cls, bases, tasks, check)
    rows = rows.localCheckpoint(eager=True)
    phase("replay")
    if rows.where(F.col("kind") == REJECTED).limit(1).count():
        return None
    phase("rejections")
    return materialised(rows.where(F.col("kind") != REJECTED))


def _arrow_schema(ddl: str):
    import pyarrow as pa

    kinds = {"int": pa.int32(), "long": pa.int64(), "boolean": pa.bool_(), "string": pa.string(),
             "binary": pa.binary()}
    return pa.schema([(name, kinds[kind]) for name, kind in
                      (c.split() for c in ddl.split(", "))])


def _rejected(key=None, key_arrow=None):
    """The marker row of a task whose rows the spec rejected."""
    import pyarrow as pa

    arrays = {"kind": pa.array([REJECTED]), "time": pa.array([0], pa.int64()),
              "end": pa.nulls(1, pa.int64()), "tids": pa.array([[]], pa.list_(pa.string())),
              "edges": pa.array([[]], pa.list_(pa.string()))}
    if key_arrow is not None:
        arrays = {"key": pa.array([key], key_arrow), **arrays}
    return pa.table(arrays)


def _replay_stream(engine_cls, params: Params, blobs, bases, lo, hi, key=None, key_arrow=None):
    """A range's or key's pieces of chunks in merge order through the engine (``lo``: the
    range's start, its halo from ``lo - w``); the output rows or the marker row."""
    from streamspec.pipeline.io.kws_text import assemble
    from streamspec.spec.errors import RecordError

    stream, attributes = assemble([_from_ipc([b]) for b in blobs], bases)
    try:
        if stream is None:
            outputs = run_inputs(engine_cls, params, [], lo, hi)
        else:
            halo = None if lo is None else lo - params.window
            outputs = run_inputs(engine_cls, params, inputs_of(stream, attributes, halo), lo, hi)
    except RecordError:
        return _rejected(key, key_arrow)
    return arrow_rows(outputs, key, key_arrow)


def _replay_chunks(data, params: Params, engine_cls, bases: dict, tasks: list,
                   check_tids: bool = False):
    """One stream: each chunk's rows split by time range (a range's halo included), one
    task per range.  With ``check_tids`` (several ranges, tids that could repeat across
    them, which no one range would see) the same pass also sends each chunk's insert
    tids to ``len(tasks)`` more tasks by a stable hash (CRC-32 of the text); a task that
    finds a repeat answers with the marker row, as a rejecting range does."""
    import zlib

    import pyarrow as pa
    import pyarrow.compute as pc

    w = params.window
    ranges = len(tasks)
    schema = _arrow_schema("part int, data binary")

    def piece(p, table):
        return pa.RecordBatch.from_pydict({"part": [p], "data": [_ipc(table)]}, schema)

    def split(batches):
        for batch in batches:
            for c, blob in zip(batch.column("chunk").to_pylist(), batch.column("data").to_pylist()):
                if ranges == 1:
                    yield pa.RecordBatch.from_pydict({"part": [0], "data": [blob]}, schema)
                    continue
                table = _from_ipc([blob])
                t = table["t"]
                for p, (lo, hi) in enumerate(tasks):
                    keep = pc.and_(pc.less(t, hi) if hi is not None else pc.is_valid(t),
                                   pc.greater_equal(t, max(lo - w, INT64_MIN)))
                    part = table.filter(keep)
                    if part.num_rows:
                        yield piece(p, part)
                if check_tids:
                    tid, rel, line = (table[x].to_pylist() for x in ("tid", "rel", "line"))
                    groups: dict = {}
                    for x, r, n in zip(tid, rel, line):
                        if r is None:
                            continue            # a deletion
                        x = x if x is not None else f"{r}:{bases.get(c, 0) + n}"
                        b = zlib.crc32(x.encode("utf-8", "surrogatepass")) % ranges
                        groups.setdefault(b, []).append(x)
                    for b, xs in groups.items():
                        yield piece(ranges + b, pa.table({"tid": pa.array(xs, pa.string())}))

    def per_task(part):
        p = part["part"][0].as_py()
        if p >= ranges:                 # a bucket of tids
            tids = _from_ipc(part["data"].to_pylist())["tid"]
            repeated = pc.count_distinct(tids).as_py() < len(tids)
            return _rejected() if repeated else arrow_rows([])
        lo, hi = tasks[p]
        return _replay_stream(engine_cls, params, part["data"].to_pylist(), bases, lo, hi)

    pieces = data.mapInArrow(split, "part int, data binary")
    n = ranges * (2 if check_tids and ranges > 1 else 1)
    return (pieces.repartition(n, "part").groupBy("part")
            .applyInArrow(per_task, OUTPUT_SCHEMA))


def _replay_chunks_keyed(data, params: Params, engine_cls, bases: dict, ktype: str, parts: int):
    """Keyed: each chunk's rows split by key, one engine per key (``replay_keyed``)."""
    import pyarrow as pa

    key_arrow = pa.int64() if ktype == "long" else pa.string()
    schema = pa.schema([("key", key_arrow), ("data", pa.binary())])

    def split(batches):
        for batch in batches:
            for blob in batch.column("data").to_pylist():
                table = _from_ipc([blob])
                groups: dict = {}
                for i, k in enumerate(table["key"].to_pylist()):
                    groups.setdefault(int(k) if ktype == "long" else k, []).append(i)
                for k, rows in groups.items():
                    part = table.take(pa.array(rows, pa.int64()))
                    yield pa.RecordBatch.from_pydict({"key": [k], "data": [_ipc(part)]}, schema)

    def per_key(part):
        key = part["key"][0].as_py()
        return _replay_stream(engine_cls, params, part["data"].to_pylist(), bases, None, None,
                              key, key_arrow)

    pieces = data.mapInArrow(split, f"key {ktype}, data binary")
    return (pieces.repartition(parts, "key").groupBy("key")
            .applyInArrow(per_key, f"key {ktype}, {OUTPUT_SCHEMA}"))


def summarize(plan: Plan, rows) -> Summary:
    """Counts of appeared and early-ended results (one Spark job over the held rows)."""
    params = plan.params
    counts = dict(rows.groupBy("kind").count().collect())
    appear, ended = counts.get("appear", 0), counts.get("end", 0)
    n_keys = len(set(plan.keys)) if plan.keys is not None else plan.n_keys
    n_events = len(plan.events) if plan.events is not None else plan.n_events
    keys = f" over {counted(n_keys, 'key')}" if n_keys else ""
    return Summary(f"{counted(appear, 'result')} that appeared and {ended} that ended early{keys}",
                   counted(n_events, "event"),
                   f"keywords {','.join(params.keywords)}, t_max={params.t_max}, "
                   + (f"w={params.window}" if params.window else "negative tuples"))


# -- streamspec stream kws (streamspec.pipeline.streaming) ---------------------------------
STREAM_COLUMNS = ("rel", "tid", "t", "op")      # before the attribute columns
OPS = ("insert", "delete")
SCHEMA_OP, CHANGE = "schema", "change"          # --schema-rows: op and column of a change row


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
    parser.add_argument("--schema-changes", metavar="FILE",
                        help="JSON lines of timed schema changes, the file of streamspec run kws "
                             "(streamspec.pipeline.io.kws), read before the query starts; each "
                             "key applies a change before its first row at or after the change's "
                             "time (default: none, the schema is fixed)")
    parser.add_argument("--schema-rows", action="store_true",
                        help="rows with op schema are schema changes of their key only: column "
                             "change holds the JSON object of a --schema-changes line, its time "
                             "the row's t (default: off, op is insert or delete)")
    parser.add_argument("--extra-columns", type=_extra_columns, default=(), metavar="A[:TYPE],...",
                        help="more attribute columns of the source rows (TYPE long, double or "
                             "string, the default), for relations that schema rows add "
                             "(default: none)")
    flags.add_engine(parser, PROBLEM, PREFERRED_ENGINES)


def _extra_columns(text: str) -> tuple:
    """``--extra-columns``: ``((name, type), ...)``."""
    from streamspec.pipeline.io.kws import TYPES

    out = []
    for item in filter(None, (x.strip() for x in text.split(","))):
        name, _, kind = item.partition(":")
        if kind and kind not in TYPES:
            raise argparse.ArgumentTypeError(f"type {kind!r} of column {name!r} is not one of "
                                             f"{', '.join(TYPES)}")
        out.append((name, kind or "string"))
    return tuple(out)


def stream_columns(schema, types: dict, changes=(), rows: bool = False,
                   extra=()) -> list[tuple[str, str]]:
    """The attribute columns of the source rows, ``(name, Spark type)``: every attribute of
    the schema once, in schema order, typed as declared (``read_types``) else ``string``,
    then the attributes of the relations the schema ``changes`` add (an attribute named
    like an earlier column shares it and its type, a new one is ``string``), then the
    ``extra`` columns (``--extra-columns``).  With schema rows (``rows``) no attribute may
    be named ``change``."""
    from streamspec.spec.errors import InvalidParameter
    from streamspec.spec.kws import AddRelation

    columns: dict = {}
    sources = [(r.name, r.attributes, types.get(r.name, {})) for r in schema.relations]
    sources += [(ev.relation.name, ev.relation.attributes, None) for ev in changes
                if isinstance(ev, AddRelation)]
    if extra:
        sources.append(("of --extra-columns", tuple(n for n, _ in extra), dict(extra)))
    reserved = (*STREAM_COLUMNS, "key", *((CHANGE,) if rows else ()))
    for name, attributes, declared in sources:
        for attr in attributes:
            if attr in reserved:
                raise InvalidParameter(f"relation {name}: attribute {attr!r} has the name of "
                                       "a column of the stream's rows; rename it")
            if declared is None:
                columns.setdefault(attr, "string")
                continue
            kind = declared.get(attr, "string")
            if columns.setdefault(attr, kind) != kind:
                raise InvalidParameter(f"attribute {attr!r} is typed {columns[attr]} and {kind} "
                                       "in different relations; one column holds both in a stream")
    return list(columns.items())


def source_schema(args) -> str:
    """One event a row: ``rel, tid, t, op`` and the attribute columns (module docstring of
    ``streamspec.pipeline.streaming``: ``key`` is added there)."""
    from streamspec.pipeline.io.kws import read_schema, read_types

    changes = [ev for ev, _ in _read_changes(args)]
    rows = getattr(args, "schema_rows", False)
    columns = stream_columns(read_schema(args.schema), read_types(args.schema), changes, rows,
                             getattr(args, "extra_columns", ()))
    return ", ".join(["rel string", "tid string", "t long", "op string",
                      *(f"`{name}` {kind}" for name, kind in columns),
                      *([f"{CHANGE} string"] if rows else [])])


def stream_params(args) -> Params:
    from streamspec.pipeline.io.kws import read_schema, read_types

    schema = read_schema(args.schema)
    # clashing names fail before Spark
    stream_columns(schema, read_types(args.schema), rows=getattr(args, "schema_rows", False),
                   extra=getattr(args, "extra_columns", ()))
    return Params(schema, args.keywords, args.tmax, None if args.positive_negative else args.window)


def _read_changes(args) -> list[tuple]:
    from streamspec.pipeline.io.kws import schema_changes_in_order

    path = getattr(args, "schema_changes", None)
    return schema_changes_in_order(path) if path else []


def stream_feed(args, engine_cls, params: Params):
    """The ``SchemaChangeFeed`` of the flags: with ``--schema-changes``, the file read and
    checked on the driver, before Spark starts (a bad line is the batch job's error at
    ``file:line``, exit 2, no checkpoint), applied to every key; with ``--schema-rows``,
    the change rows of each key; with neither, a feed of the rows alone whose states
    still say that no change was applied (a restart with changes then finds them due)."""
    from streamspec.pipeline.io.kws import read_schema, read_types

    rows = getattr(args, "schema_rows", False)
    pairs = _read_changes(args)
    changes, wheres = [ev for ev, _ in pairs], [where for _, where in pairs]
    validate(params, changes, wheres)       # each change fits the schema its predecessors left
    stream_columns(read_schema(args.schema), read_types(args.schema), changes, rows,
                   getattr(args, "extra_columns", ()))
    return SchemaChangeFeed(engine_cls, params, changes, wheres,
                            getattr(args, "schema_changes", None), rows)


@attrs.define
class KeyStream:
    """A key's state in ``streamspec stream kws``, pickled into Spark's group state: its
    engine and how many of the ``--schema-changes`` (in their order,
    ``schema_changes_in_order``) it has applied, with a digest of those (a restart with
    a file whose first ``applied`` changes differ is refused, not silently misapplied).
    Changes of ``--schema-rows`` live in the engine's schema alone."""

    engine: KwsEngine
    applied: int = 0
    digest: str = ""


def change_digests(changes: list) -> list[str]:
    """``digests[i]``: SHA-256 of the first ``i`` changes' JSON (``event_to_json``)."""
    import hashlib

    h, out = hashlib.sha256(), [hashlib.sha256().hexdigest()]
    for ev in changes:
        h.update(json.dumps(event_to_json(ev), sort_keys=True).encode() + b"\n")
        out.append(h.copy().hexdigest())
    return out


class SchemaChangeFeed(EngineFeed):
    """A key's rows and the schema changes due before them (paper Section 4.4: the
    changes are events of each key's stream, the meshes migrate).  Before a key's rows of
    a micro-batch, every change not yet applied whose time is at most the time of the
    next row goes in, in order, exactly where ``read_events`` puts it in the batch job's
    stream (before the tuples of its time); a key first seen late gets every earlier
    change before its first row.  A change after a key's last row waits for its next row
    (a stream has no end to flush), as the instant's outputs do."""

    def __init__(self, engine_cls, params: Params, changes: list, wheres: list,
                 path: str | None, rows: bool = False):
        super().__init__(sys.modules[__name__], engine_cls, params)
        self.changes, self.wheres, self.path = tuple(changes), tuple(wheres), path
        self.digests = change_digests(changes)
        self.rows = rows            # --schema-rows: rows with op "schema" are changes

    def start(self) -> KeyStream:
        return KeyStream(self.engine_cls(self.params), 0, self.digests[0])

    def resume(self, state) -> KeyStream:
        # a bare engine: a checkpoint of a version before schema changes were streamed
        return state if isinstance(state, KeyStream) else KeyStream(state, 0, self.digests[0])

    def feed(self, state: KeyStream, pdf: pd.DataFrame) -> list:
        from streamspec.spec.errors import InvalidParameter

        if state.applied > len(self.changes) or state.digest != self.digests[state.applied]:
            raise InvalidParameter(
                f"{self.path or '--schema-changes (none given)'}: its first {state.applied} "
                "schema changes are not those the checkpoint's keys applied; a restarted query "
                "takes the same file, or one with more changes after the times already streamed")
        out, pos, n = [], 0, len(pdf)
        if state.applied < len(self.changes):      # changes pending: the rows' times
            t = pdf["t"]
            known = t.notna().to_numpy(dtype=bool)
            times = t.to_numpy(dtype=np.int64) if known.all() else t.to_numpy(dtype=float)
        while state.applied < len(self.changes) and pos < n:
            change = self.changes[state.applied]
            due = np.flatnonzero(known[pos:] & (times[pos:] >= change.t))
            if not len(due):
                break
            out += self._rows(state.engine, pdf, pos, pos + int(due[0]))
            pos += int(due[0])
            out += self._change(state)
        out += self._rows(state.engine, pdf, pos, n)
        return out

    def _rows(self, engine, pdf: pd.DataFrame, lo: int, hi: int) -> list:
        """The outputs of rows ``[lo, hi)``: runs of tuple rows as the engine's columnar
        batch, a schema row (``--schema-rows``) as its change, in row order; errors
        numbered as rows of ``pdf``."""
        from streamspec.pipeline.streaming import process_rows
        from streamspec.spec.errors import RecordError

        if lo == hi:
            return []
        cuts = []
        if self.rows:
            cuts = [lo + int(i) for i in np.flatnonzero(
                (pdf["op"].iloc[lo:hi] == SCHEMA_OP).to_numpy(dtype=bool))]
        out = []
        for a, b in zip([lo] + [c + 1 for c in cuts], cuts + [hi]):
            if a < b:
                # the common case, a whole micro-batch of tuple rows, without a copy
                part = pdf if (a, b) == (0, len(pdf)) else pdf.iloc[a:b].reset_index(drop=True)
                if CHANGE in part:
                    part = part.drop(columns=[CHANGE])
                try:
                    events = stream_events(part, self.params)
                except RecordError as err:
                    if err.index is None:
                        raise
                    raise type(err)(err.message, index=err.index + a) from None
                out += process_rows(engine, events, engine._seen, a)
            if b < hi:
                out += process_rows(engine, [change_of_row(pdf, b)], engine._seen, b)
        return out

    def _change(self, state: KeyStream) -> list:
        """The next schema change through the key's engine; its errors at ``file:line``."""
        from streamspec.spec.errors import RecordError

        i = state.applied
        try:
            out = list(state.engine.process([self.changes[i]]))
        except RecordError as err:  # only a time order: the driver checked the changes
            raise type(err)(err.message + " (this key's rows had passed the change's time: "
                            "changes may only be added after the times already streamed)",
                            location=self.wheres[i]) from None
        state.applied, state.digest = i + 1, self.digests[i + 1]
        return out


def change_of_row(pdf: pd.DataFrame, i: int):
    """The schema change of schema row ``i`` (``--schema-rows``): the JSON object of column
    ``change``, a line of the schema-changes file whose time is the row's ``t`` (a ``t``
    of its own must equal it); ``MalformedRecord`` at the row (``index``).  Whether it
    fits the key's schema then is the spec's check, at the same row.  A relation it adds
    takes its values from the source's columns: each of its attributes must be one."""
    from streamspec.pipeline.io.kws import schema_change_of
    from streamspec.spec.errors import MalformedRecord, RecordError
    from streamspec.spec.kws import AddRelation

    text, t = pdf[CHANGE].iloc[i] if CHANGE in pdf else None, pdf["t"].iloc[i]
    try:
        if not isinstance(text, str):
            raise MalformedRecord("a schema row needs its change in column change")
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as err:
            raise MalformedRecord(f"column change is not JSON: {err.msg}") from None
        if not isinstance(obj, dict):
            raise MalformedRecord("column change must hold a JSON object")
        if pd.isna(t):
            raise MalformedRecord("column t must be an integer time, got null")
        t = int(t)
        if obj.setdefault("t", t) != t:
            raise MalformedRecord(f"the change's t {obj['t']!r} is not the row's t {t}")
        change = schema_change_of(obj, "")
        if isinstance(change, AddRelation):
            missing = [a for a in change.relation.attributes if a not in pdf.columns]
            if missing:
                raise MalformedRecord(
                    f"add_relation {change.relation.name}: attribute {missing[0]!r} is not a "
                    "column of the stream (columns: the attributes of --schema, of the "
                    "relations --schema-changes adds, and --extra-columns)")
        return change
    except RecordError as err:
        raise type(err)(err.message, index=i) from None


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
