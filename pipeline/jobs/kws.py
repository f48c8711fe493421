"""Keyword search over relational data streams: one Parquet row per output event.

``streamspec run kws --schema SCHEMA --input REL=FILE [REL=FILE ...] --keywords k1,k2
--tmax T (--window W | --deletions FILE) --engine NAME --output DIR [--partitions P]``
(shared flags: ``streamspec.pipeline.flags``; the spec has no lateness policy: the
inputs are merged in time order, so there is no ``--lateness``) reads the schema and the tuples (``streamspec.pipeline.io.kws``), runs the engine and
writes every output event (notes/kws.md): ``kind`` ("appear" or "end"),
``time``, ``end`` (null unless known), ``tids`` (sorted tids as strings),
``edges`` (sorted ``edge_id:left_tid:right_tid``).

Exact time-partitioned replay (sliding window): time is cut into ``P``
ranges ``[lo, hi)``; the task of a range replays the events from ``lo - w``
on (the halo of one window: every tuple alive at some instant of the range),
closes its last instant with the watermark ``hi`` and keeps the outputs with
``lo <= time < hi``; schema changes before the halo are replayed too.  An output at ``tau`` depends only on the tuples alive
at ``tau``, so the union equals the single-process run.  Deletions of tuples
before the halo are left out (their tuples are not replayed).  In the
positive-negative model a tuple may live forever, so the stream is replayed
in one task.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import attrs
import pandas as pd

from streamspec.pipeline import flags
from streamspec.pipeline.job import Summary
from streamspec.pipeline.summary import counted
from streamspec.spec.kws import PROBLEM, SCHEMA_EVENTS, Appear, Delete, Insert, KwsEngine, Params

PREFERRED_ENGINES = ("fullmesh", "forest", "oracle")
OUTPUT_SCHEMA = "kind string, time long, end long, tids array<string>, edges array<string>"
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


def replay_events(spark, engine_cls, params: Params, events: list, partitions: int):
    """The output rows as a Spark DataFrame, in canonical order within each range."""
    if params.window is None or partitions <= 1 or not events:
        tasks = [(None, None)]
    else:
        tasks = time_ranges(events, partitions)
    shared = spark.sparkContext.broadcast(events)
    w = params.window

    def per_task(items):
        for lo, hi in items:
            evs = shared.value if lo is None else range_events(shared.value, lo, hi, w)
            frame = output_rows(run_range(engine_cls, params, evs, lo, hi))
            yield from frame.astype(object).where(frame.notna(), None).itertuples(index=False, name=None)

    rdd = spark.sparkContext.parallelize(tasks, len(tasks)).mapPartitions(per_task)
    return spark.createDataFrame(rdd, OUTPUT_SCHEMA)


def validate(params: Params, events: list, wheres: list) -> None:
    """The spec's checks on the driver, before Spark starts; errors name ``file:line``."""
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
                                        "an integer column t; one REL=FILE per relation", nargs="+")
    parser.add_argument("--keywords", required=True, help="comma-separated query keywords (required)")
    parser.add_argument("--tmax", type=flags.int64, required=True, metavar="T",
                        help="max tuples per result (required)")
    model = parser.add_mutually_exclusive_group(required=True)
    flags.add_window(parser, kind=flags.int64, aliases=("-w",), required=False, target=model,
                     note="(the sliding-window model; one of --window and --deletions is required)")
    model.add_argument("--deletions", metavar="FILE",
                       help="negative tuples (columns tid, t): the positive-negative model instead "
                            "of a window (one of --window and --deletions is required)")
    flags.add_engine(parser, PROBLEM, PREFERRED_ENGINES)
    flags.add_run_options(parser, unit="time ranges (window model only)")


def demo_argv(output_dir: str) -> list[str]:
    inputs = [f"{r}={DATA / (r + '.csv')}" for r in ("director", "movie", "plays", "actor")]
    return ["--schema", str(DATA / "schema.json"), "--input", *inputs, "--keywords",
            "tarantino,travolta", "--tmax", "5", "--window", "1000", "--output", output_dir,
            "--overwrite"]


@attrs.frozen
class Plan:
    params: Params
    events: list


def prepare(args) -> Plan:
    """The schema, the tuples and the spec's checks, on the driver before Spark."""
    from streamspec.pipeline.io.kws import read_events, read_schema
    from streamspec.spec.errors import InvalidParameter

    schema = read_schema(args.schema)
    inputs = []
    for item in args.input:
        rel, eq, path = item.partition("=")
        if not eq or not rel or not path:
            raise InvalidParameter(f"--input expects REL=FILE, got {item!r}")
        inputs.append((rel, path))
    params = Params(schema, args.keywords, args.tmax, args.window)
    events, wheres = read_events(inputs, args.deletions)
    validate(params, events, wheres)
    return Plan(params, events)


def replay(spark, plan: Plan, engine_cls, partitions: int):
    return replay_events(spark, engine_cls, plan.params, plan.events, partitions)


def summarize(plan: Plan, rows) -> Summary:
    params = plan.params
    n = rows.count()
    appear = rows.filter("kind = 'appear'").count()
    return Summary(f"{counted(appear, 'result')} that appeared and {n - appear} that ended early",
                   counted(len(plan.events), "event"),
                   f"keywords {','.join(params.keywords)}, t_max={params.t_max}, "
                   + (f"w={params.window}" if params.window else "negative tuples"))
