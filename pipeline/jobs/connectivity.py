"""Sliding-window connectivity over an edge file: one Parquet row per window.

``streamspec run connectivity --input EDGES --window R --slide S --queries Q
--output DIR`` (``-r``/``-s``: the paper's names) reads the edges
(``streamspec.pipeline.io.edges``: SNAP text, CSV or Parquet, optionally with
a ``key`` column of independent streams), answers every query of ``Q`` on
every window with ``--engine`` and writes a Parquet dataset with columns
``window, start, end, answers`` (list of bools in query file order) plus
``key`` for keyed input (``streamspec.spec.connectivity``).  Shared flags:
``streamspec.pipeline.flags``.

One stream is replayed in ``--partitions`` window ranges in parallel, a keyed
input one engine per key (``streamspec.pipeline.replay``); both equal the
single-process run.  An unkeyed Parquet file or directory with lateness
``error`` takes the columnar, shuffle-free path of ``streamspec.pipeline.range_scan``
(footer statistics; each range task reads its row groups with pyarrow straight
into the engine).  A local text input of at least 16 MB (lateness ``error``,
or ``drop`` without a key) is parsed by Spark tasks into staged Parquet files
beside the output, which the range scan (or, keyed, one engine per key) then
replays (``streamspec.pipeline.text_scan``).  Any
other input, and any input those paths refuse or find out of order, goes
through the validating reader on the driver.  Bad input is reported as ``file:line: message`` (or
``file:row N``) with exit code 2 before anything is written.
"""
from __future__ import annotations

import argparse
import functools
import os

import attrs
import numpy as np
import pandas as pd

from streamspec.pipeline import flags, fs, range_scan, text_scan
from streamspec.pipeline.job import Summary, materialised
from streamspec.pipeline.summary import counted
from streamspec.spec.connectivity import PROBLEM, EdgeBatch, Params
from streamspec.spec.windows import SlidingWindows

SCHEMA = "window long, start long, end long, answers array<boolean>"
PREFERRED_ENGINES = ("bic", "rwc", "oracle")
SHOWN_QUERIES = 10


# -- the engine inside a Spark task ------------------------------------------------------
def edge_batch(pdf: pd.DataFrame) -> EdgeBatch:
    """Spark rows (``u, v, t``) as the engine's columns; str ids stay Python str."""
    def ids(col):
        return col.to_numpy(np.int64) if col.dtype.kind in "iu" else np.asarray(col, dtype=object)
    return EdgeBatch(ids(pdf["u"]), ids(pdf["v"]), pdf["t"].to_numpy(np.int64))


def result_rows(results) -> pd.DataFrame:
    return pd.DataFrame({
        "window": pd.Series([r.index for r in results], dtype=np.int64),
        "start": pd.Series([r.start for r in results], dtype=np.int64),
        "end": pd.Series([r.end for r in results], dtype=np.int64),
        "answers": pd.Series([list(r.answers) for r in results], dtype=object),
    })


def run_stream(engine_cls, params: Params, events: pd.DataFrame) -> pd.DataFrame:
    """A whole stream through one engine (keyed replay: one key)."""
    engine = engine_cls(params)
    results = list(engine.process(edge_batch(events)))
    results += engine.flush()
    return result_rows(results)


def run_range(engine_cls, params: Params, windows: SlidingWindows, n_windows: int,
              events: pd.DataFrame, lo: int, hi: int) -> pd.DataFrame:
    """Windows ``lo..hi-1`` of the stream from the events of that time range.

    The origin moves to ``start(lo)``; the local window ``k`` is window
    ``lo + k``.  The watermark ``end(hi-1)`` closes the range's last window
    even when no later edge is in the range; the final range flushes.
    """
    engine = engine_cls(attrs.evolve(params, t0=windows.start(lo)))
    results = list(engine.process(edge_batch(events)))
    results += engine.flush() if hi == n_windows else engine.advance_to(windows.end(hi - 1))
    kept = [attrs.evolve(r, index=r.index + lo) for r in results if r.index < hi - lo]
    return result_rows(kept)


def replay_stream(stream, engine_cls, params: Params, partitions: int | None = None):
    """The windows of an ``EdgeStream`` as a Spark DataFrame (keyed or time-partitioned)."""
    from streamspec.pipeline import replay as spread

    spark = stream.df.sparkSession
    partitions = partitions or spark.sparkContext.defaultParallelism
    if stream.keyed:
        df = stream.df.repartition(partitions, "key")
        return spread.keyed(df, functools.partial(run_stream, engine_cls, params), SCHEMA)
    if stream.edges == 0:
        return spark.createDataFrame([], SCHEMA)
    t0 = params.t0 if params.t0 is not None else stream.first_t
    windows = SlidingWindows(params.r, params.s, t0)
    n_windows = windows.started_by(stream.last_t)
    task = functools.partial(run_range, engine_cls, params, windows, n_windows)
    return spread.time_partitioned(stream.df, windows, n_windows, partitions, task, SCHEMA)


# -- the command line ---------------------------------------------------------------------
SAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")


def demo_argv(output_dir: str) -> list[str]:
    """``streamspec demo``: the bundled sample (pipeline/data), 5 slides per window."""
    return ["--input", os.path.join(SAMPLE, "connectivity-edges.txt"),
            "--queries", os.path.join(SAMPLE, "connectivity-queries.txt"),
            "--window", "500", "--slide", "100", "--output", output_dir, "--overwrite"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    flags.add_input(parser, "EDGES", "edges: text 'u v t' (SNAP, '#' comments), CSV with header "
                                     "u,v,t[,key], or Parquet (.parquet file or directory)")
    flags.add_window(parser, kind=flags.int64, aliases=("-r",), slide_aliases=("-s",))
    parser.add_argument("--queries", required=True, metavar="QFILE",
                        help="query pairs, one 'a b' per line (required)")
    flags.add_engine(parser, PROBLEM, PREFERRED_ENGINES)
    parser.add_argument("--origin", type=flags.int64, default=None, metavar="T0",
                        help="window origin t0 (default: the first edge's time, per key)")
    flags.add_lateness(parser, "edges")
    flags.add_run_options(parser, unit="window ranges (or key partitions)")


@attrs.define
class Plan:
    """What ``prepare`` checked on the driver; ``replay`` adds what it learns of the stream."""

    args: argparse.Namespace
    base: Params                        # the windows; the workload is typed against the edges
    pairs: list
    query_lines: list
    parquet: bool
    text: tuple | None = None           # (frame, dropped) of a text input, read on the driver
    staged: text_scan.TextPlan | None = None    # a text input the Spark tasks parse
    fast: range_scan.Plan | None = None
    id_kind: type = int                 # the query ids' type (the footers' or str)
    params: Params | None = None        # with the typed workload, once known
    stream: object = None               # the EdgeStream replayed (edges, dropped, keyed)
    partitions: int = 1                 # what replay was asked to spread over


def prepare(args) -> Plan:
    """Everything that can fail on the driver fails here, before Spark starts."""
    from streamspec.pipeline.io import InputError, check_window_room, is_parquet
    from streamspec.pipeline.io import edges as edge_io

    base = Params(args.window, args.slide, (), args.origin, args.lateness)
    pairs, query_lines = edge_io.read_query_file(args.queries)
    plan = Plan(args, base, pairs, query_lines, is_parquet(args.input))
    if plan.parquet:
        edge_io.check_parquet_edges(args.input)     # files, columns and types, before Spark
        plan.fast = range_scan.plan(args.input, args.lateness, args.origin, base.r, base.s)
        if plan.fast is not None and plan.fast.last_t is not None:  # the footers' last time
            check_window_room([plan.fast.last_t], args.window,
                              lambda i: f"{args.input} (its latest edge)", "edge time")
        if plan.fast is not None:   # query ids typed against the footers' id type
            workload, plan.id_kind = edge_io.typed_workload(pairs, plan.fast.vertex_type,
                                                            query_lines)
            plan.params = attrs.evolve(base, workload=workload)
    elif not fs.exists(args.input):
        raise InputError(f"{args.input}: no such file")
    else:
        beside = text_scan.staging_dir(args.output)    # None: the output is not a local path
        plan.staged = text_scan.plan(args.input, args.lateness, base.r, base.s) \
            if beside else None
        if plan.staged is None:
            if beside is None and fs.getsize(args.input) >= text_scan.MIN_BYTES:
                from streamspec.pipeline.spark import on_driver
                on_driver(PROBLEM, f"the tasks stage a large text input beside the output, and "
                                   f"{args.output} is not a local path")
            read_text(plan)
    return plan


def read_text(plan: Plan) -> None:
    """The validating reader over a text input, on the driver (the located errors)."""
    from streamspec.pipeline.io import edges as edge_io

    args = plan.args
    plan.text = edge_io.load_text_edges(args.input, args.lateness, args.origin, args.window)
    # query ids typed against the edges', before Spark
    edge_io.typed_workload(plan.pairs, int if plan.text[0]["u"].dtype.kind in "iu" else str,
                           plan.query_lines)


def replay_staged(spark, plan: Plan, engine_cls, partitions: int):
    """A text input parsed by the Spark tasks (``pipeline.text_scan``) and replayed by the
    range scan; None when the tasks or the scan refused it (the validating reader judges)."""
    from streamspec.pipeline.io import edges as edge_io

    args = plan.args
    staging = text_scan.staging_dir(args.output)
    try:
        if "key" in plan.staged.columns:
            return replay_staged_keys(spark, plan, engine_cls, partitions, staging)
        fast = text_scan.staged_plan(spark, plan.staged, staging, partitions, args.origin,
                                     plan.base.r, plan.base.s)
        if fast is None or fast.last_t is not None and fast.last_t > 2**63 - 1 - plan.base.r:
            return None     # (a window end beyond 64 bits: the reader names the edge's line)
        workload, plan.id_kind = edge_io.typed_workload(plan.pairs, int, plan.query_lines)
        plan.params = attrs.evolve(plan.base, workload=workload)
        kept = range_scan.replay(spark, fast, engine_cls, plan.params, partitions,
                                 as_text=plan.id_kind is str)
        if kept is None:
            return None
        plan.stream = edge_io.EdgeStream(None, args.input, False, int, fast.rows, fast.dropped,
                                         fast.first_t, fast.last_t)
        return materialised(kept.select("window", "start", "end", "answers"))
    finally:    # the windows are checkpointed: the staged edges are no longer needed
        text_scan.remove(staging)


def replay_staged_keys(spark, plan: Plan, engine_cls, partitions: int, staging: str):
    """A keyed text input parsed by the Spark tasks: one engine per key over the staged
    edges (``seq, u, v, t, key``), each key's edges checked in file order by its task
    (``run_checked_stream``); None when the tasks refused the text or a key's edges are out
    of order or before the origin (the validating reader names the line)."""
    from streamspec.pipeline import replay as spread
    from streamspec.pipeline.io import edges as edge_io
    from streamspec.pipeline.spark import checkpointed_unless_rejected

    staged = text_scan.stage(spark, plan.staged, staging, partitions)
    if staged is None or not staged.edges:
        return None
    if staged.last_t is not None and staged.last_t > 2**63 - 1 - plan.base.r:
        return None     # (a window end beyond 64 bits: the reader names the edge's line)
    stream = edge_io.EdgeStream(spark.read.parquet(staging), plan.args.input, True, int,
                                staged.edges, 0, staged.first_t, staged.last_t)
    workload, plan.stream = edge_io.workload(plan.pairs, stream, plan.query_lines)
    plan.params = attrs.evolve(plan.base, workload=workload)
    df = plan.stream.df.repartition(partitions, "key")
    rows = spread.keyed(df, functools.partial(run_checked_stream, engine_cls, plan.params), SCHEMA)
    kept = checkpointed_unless_rejected(rows, PROBLEM)   # a key out of order: the reader locates it
    return materialised(kept) if kept is not None else None


def run_checked_stream(engine_cls, params: Params, events: pd.DataFrame) -> pd.DataFrame:
    """``run_stream`` for a key of a staged text input, whose order nobody checked yet:
    ``events`` come sorted by ``(t, seq)`` (``pipeline.replay.in_event_order``), so their
    ``seq`` increases iff the key's times never decrease in file order."""
    from streamspec.spec.errors import OutOfOrder

    if not np.all(np.diff(events["seq"].to_numpy()) > 0):
        raise OutOfOrder("a key's edges are out of time order (located by the reader)")
    if params.t0 is not None and len(events) and int(events["t"].iloc[0]) < params.t0:
        raise OutOfOrder("an edge is before the origin (located by the reader)")
    return run_stream(engine_cls, params, events)


def replay(spark, plan: Plan, engine_cls, partitions: int):
    """The windows: the columnar range scan when it applies, else the validating reader."""
    from streamspec.pipeline.io import edges as edge_io

    args, fast = plan.args, plan.fast
    plan.partitions = partitions
    if plan.staged is not None:
        rows = replay_staged(spark, plan, engine_cls, partitions)
        if rows is not None:
            return rows
        read_text(plan)         # refused: the driver's reader names the bad line or takes it
    if fast is not None and fast.rows:
        kept = range_scan.replay(spark, fast, engine_cls, plan.params, partitions,
                                 as_text=plan.id_kind is str and fast.vertex_type is int)
        if kept is not None:    # in order: the ranges computed every window
            plan.stream = edge_io.EdgeStream(None, args.input, False, fast.vertex_type, fast.rows,
                                             0, fast.first_t, fast.last_t)
            return materialised(kept.select("window", "start", "end", "answers"))
        # out of order somewhere: the validating reader below names the first late row
    stream = (edge_io.read_parquet_edges(spark, args.input, args.lateness, args.origin,
                                         args.window)
              if plan.parquet else edge_io.frame_stream(spark, args.input, *plan.text))
    workload, plan.stream = edge_io.workload(plan.pairs, stream, plan.query_lines)
    plan.params = attrs.evolve(plan.base, workload=workload)
    return replay_stream(plan.stream, engine_cls, plan.params, partitions)


def summarize(plan: Plan, rows) -> Summary:
    """The sentence's parts and each query's share of connected windows, from ``rows``."""
    from pyspark.sql import functions as F

    stream, params = plan.stream, plan.params
    n_windows = rows.count()
    per_query = dict(rows.select(F.posexplode("answers").alias("q", "answer"))
                     .groupBy("q").agg(F.avg(F.col("answer").cast("double")))
                     .collect())
    keys = (f" for {counted(rows.select('key').distinct().count(), 'key')}"
            if stream.keyed else "")
    dropped = f" ({counted(stream.dropped, 'late edge')} dropped)" if stream.dropped else ""
    details = []
    for q, (a, b) in enumerate(params.workload[:SHOWN_QUERIES]):
        share = per_query.get(q)
        text = "no windows" if share is None else f"{100 * share:.1f}% of windows connected"
        details.append(f"  Q{q} ({a}, {b}): {text}")
    if len(params.workload) > SHOWN_QUERIES:
        details.append(f"  ... {len(params.workload) - SHOWN_QUERIES} more queries")
    if not stream.keyed and n_windows:
        details.append(halo_line(params, stream, n_windows, plan.partitions))
    return Summary(f"{counted(n_windows, 'window')}{keys}",
                   f"{counted(stream.edges, 'edge')}{dropped}",
                   f"r={params.r}, s={params.s}, {counted(len(params.workload), 'query', 'queries')}",
                   tuple(details))


def halo_line(params: Params, stream, n_windows: int, partitions: int) -> str:
    """How many window ranges replayed the stream and how much of it they read twice
    (README, "The Spark pipeline": adjacent ranges overlap by ``r - s`` time units)."""
    from streamspec.pipeline.replay import window_ranges

    ranges = len(window_ranges(n_windows, partitions))
    span = max(1, stream.last_t - stream.first_t + 1)
    overlap = (ranges - 1) * max(0, params.r - params.s)
    return (f"  replayed in {counted(ranges, 'window range')}; the ranges overlap by "
            f"{overlap} time units, {100 * overlap / span:.1f}% of the stream's span")


# -- streamspec stream connectivity (streamspec.pipeline.streaming) -----------------------
def add_stream_arguments(parser: argparse.ArgumentParser) -> None:
    flags.add_window(parser, kind=flags.int64, aliases=("-r",), slide_aliases=("-s",))
    parser.add_argument("--queries", required=True, metavar="QFILE",
                        help="query pairs, one 'a b' per line (required)")
    parser.add_argument("--id-type", choices=("long", "string"), default="long",
                        help="type of the vertex ids u, v in the files (default: long)")
    flags.add_engine(parser, PROBLEM, PREFERRED_ENGINES)
    parser.add_argument("--origin", type=flags.int64, default=None, metavar="T0",
                        help="window origin t0 (default: the first edge's time, per key)")
    flags.add_lateness(parser, "edges")


def source_schema(args) -> str:
    """One edge: ``u, v, t`` (``streamspec.pipeline.streaming`` adds ``key``)."""
    return f"u {args.id_type}, v {args.id_type}, t long"


def stream_params(args) -> Params:
    from streamspec.pipeline.io import edges as edge_io

    pairs, lines = edge_io.read_query_file(args.queries)
    workload, kind = edge_io.typed_workload(pairs, int if args.id_type == "long" else str, lines)
    if args.id_type == "long" and kind is not int:
        # the edges' ids are longs (Spark reads them so): a text query id could never match,
        # and the engine would only say so at the first edge, after a checkpoint was made
        from streamspec.pipeline.io import int64_or_none
        from streamspec.spec.errors import MalformedRecord

        i = next(i for i, x in enumerate(x for p in pairs for x in p) if int64_or_none(x) is None)
        raise MalformedRecord(f"query id {pairs[i // 2][i % 2]!r} is not an integer, but "
                              "--id-type is long (use --id-type string for text ids)"
                              ).at(lines[i // 2])
    return Params(args.window, args.slide, workload, args.origin, args.lateness)


def stream_events(pdf: pd.DataFrame, params: Params) -> EdgeBatch:
    from streamspec.pipeline.io import check_window_room
    from streamspec.spec.errors import MalformedRecord

    for column in ("u", "v", "t"):
        missing = np.flatnonzero(pdf[column].isna().to_numpy())
        if missing.size:
            # ``index`` is the row's position here: the streaming step names its file and line
            raise MalformedRecord(f"edge {column} is missing (null or absent)",
                                  index=int(missing[0]))
    check_window_room(pdf["t"].to_numpy(), params.r, None, "edge time")
    return edge_batch(pdf)


def stream_rows(outputs, first: int) -> pd.DataFrame:
    return result_rows(outputs)


def stream_schema(args) -> str:
    return SCHEMA
