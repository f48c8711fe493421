"""Keyword search over relational data streams: one Parquet row per output event.

``streamspec run kws --schema SCHEMA --input REL=FILE [REL=FILE ...] --keywords k1,k2
--tmax T (--window W | --deletions FILE) [--schema-changes FILE] --engine NAME --output DIR
[--partitions P]``
(shared flags: ``streamspec.pipeline.flags``; the spec has no lateness policy: the
inputs are merged in time order, so there is no ``--lateness``) reads the schema and
the tuples, runs the engine and writes every output event (``streamspec.spec.kws``): ``kind`` ("appear" or "end"), ``time``, ``end`` (null unless
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
task per chunk (a byte range at line starts, a row group; a run of consecutive chunks
when there are many more chunks than tasks can run at once) parses it with the driver
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

Streaming: ``streamspec stream kws`` (``streamspec.pipeline.streaming``), its source rows,
schema changes and schema rows: ``streamspec.pipeline.jobs._kws_stream``.

Modules: this one is the adapter (``streamspec.pipeline.job``) and the replays of events
read on the driver; the events and outputs as columns are in ``_kws_columns``, the
Spark-read path in ``_kws_file_replay``, the stream in ``_kws_stream``.  Their names are
importable from here (a stream's checkpoints name ``KeyStream`` here).
"""
from __future__ import annotations

import argparse
from pathlib import Path

import attrs

from streamspec.pipeline import flags
from streamspec.pipeline.job import Summary
from streamspec.pipeline.jobs._kws_columns import (  # noqa: F401
    ARROW_TYPES, CHUNK_ROWS, FIXED, INT64_MIN, OUTPUT_SCHEMA, EventTable, _chunk_frame, _from_ipc,
    arrow_rows, chunks, event_table, inputs_of, key_type, output_rows, run_inputs)
from streamspec.pipeline.jobs._kws_file_replay import (  # noqa: F401
    CHUNK_STATS, REJECTED, replay_files)
# the adapter's streaming functions (``streamspec.pipeline.streaming`` looks them up here)
from streamspec.pipeline.jobs._kws_stream import (  # noqa: F401
    CHANGE, OPS, SCHEMA_OP, STREAM_COLUMNS, KeyStream, SchemaChangeFeed, add_stream_arguments,
    change_digests, change_of_row, source_schema, stream_columns, stream_events, stream_feed,
    stream_params, stream_rows, stream_schema)
from streamspec.pipeline.summary import counted
from streamspec.spec.kws import PROBLEM, SCHEMA_EVENTS, Delete, Insert, KwsEngine, Params

PREFERRED_ENGINES = ("fullmesh", "forest", "oracle")
DATA = Path(__file__).resolve().parent.parent / "data" / "kws"


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
