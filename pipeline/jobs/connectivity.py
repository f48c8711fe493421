"""Sliding-window connectivity over an edge file: one Parquet row per window.

``streamspec run connectivity --input EDGES --window R --slide S --queries Q
--output DIR`` (``-r``/``-s``: the paper's names) reads the edges
(``streamspec.pipeline.io.edges``: SNAP text, CSV or Parquet, optionally with
a ``key`` column of independent streams), answers every query of ``Q`` on
every window with ``--engine`` and writes a Parquet dataset with columns
``window, start, end, answers`` (list of bools in query file order) plus
``key`` for keyed input (notes/connectivity.md).  Shared flags:
``streamspec.pipeline.flags``.

One stream is replayed in ``--partitions`` window ranges in parallel, a keyed
input one engine per key (``streamspec.pipeline.replay``); both equal the
single-process run.  An unkeyed Parquet file or directory with lateness
``error`` takes the columnar, shuffle-free path of ``streamspec.pipeline.range_scan``
(footer statistics; each range task reads its row groups with pyarrow straight
into the engine); any
other input, and any input that path finds out of order, goes through the
validating reader.  Bad input is reported as ``file:line: message`` (or
``file:row N``) with exit code 2 before anything is written.
"""
from __future__ import annotations

import argparse
import functools
import os
import sys
import time

import attrs
import numpy as np
import pandas as pd

from streamspec.pipeline import flags, range_scan
from streamspec.pipeline.summary import counted, sentence
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


def replay(stream, engine_cls, params: Params, partitions: int | None = None):
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


def main(args) -> int:
    from streamspec.pipeline.io import (InputError, check_output, check_output_path, is_parquet,
                                        parquet_files, write_parquet_atomic)
    from streamspec.pipeline.io import edges as edge_io
    from streamspec.pipeline.progress import SparkProgress
    from streamspec.pipeline.spark import session
    from streamspec.spec.registry import Registry

    began = time.monotonic()
    # everything that can fail on the driver fails before Spark starts
    base = Params(args.window, args.slide, (), args.origin, args.lateness)
    engine_cls = Registry.get(PROBLEM, args.engine or flags.default_engine(PROBLEM, PREFERRED_ENGINES))
    pairs, query_lines = edge_io.read_query_file(args.queries)
    parquet = is_parquet(args.input)
    if parquet:
        parquet_files(args.input)
    elif not os.path.exists(args.input):
        raise InputError(f"{args.input}: no such file")
    text = None if parquet else edge_io.load_text_edges(args.input, args.lateness, args.origin)
    if text is not None:        # query ids typed against the edges', before Spark
        edge_io.typed_workload(pairs, int if text[0]["u"].dtype.kind in "iu" else str, query_lines)
    check_output_path(args.output, args.overwrite)

    fast = range_scan.plan(args.input, args.lateness, args.origin, base.r, base.s) \
        if parquet else None
    if fast is not None:        # query ids typed against the footers' id type, before Spark
        workload, kind = edge_io.typed_workload(pairs, fast.vertex_type, query_lines)

    spark = session(args.master, app_name=f"streamspec connectivity {engine_cls.name}")
    check_output(spark, args.output, args.overwrite)
    if fast is not None and fast.rows:
        params = attrs.evolve(base, workload=workload)
        partitions = args.partitions or spark.sparkContext.defaultParallelism
        with SparkProgress(spark, enabled=args.progress, label="connectivity"):
            kept = range_scan.replay(spark, fast, engine_cls, params, partitions,
                                     as_text=kind is str and fast.vertex_type is int)
        if kept is not None:    # in order: write what the ranges computed
            windows = kept.select("window", "start", "end", "answers")
            with SparkProgress(spark, enabled=args.progress, label="connectivity"):
                write_parquet_atomic(windows, args.output, overwrite=args.overwrite)
            stream = edge_io.EdgeStream(None, args.input, False, fast.vertex_type, fast.rows, 0,
                                        fast.first_t, fast.last_t)
            print_summary(spark, args, stream, engine_cls, params, time.monotonic() - began,
                          result=windows)
            return 0
        # out of order somewhere: the validating reader below names the first late row
    stream = (edge_io.read_parquet_edges(spark, args.input, args.lateness, args.origin)
              if parquet else edge_io.frame_stream(spark, args.input, *text))
    workload, stream = edge_io.workload(pairs, stream, query_lines)
    params = attrs.evolve(base, workload=workload)
    windows = replay(stream, engine_cls, params, args.partitions)
    with SparkProgress(spark, enabled=args.progress, label="connectivity"):
        write_parquet_atomic(windows, args.output, overwrite=args.overwrite)
    print_summary(spark, args, stream, engine_cls, params, time.monotonic() - began)
    return 0


def print_summary(spark, args, stream, engine_cls, params, elapsed, out=None,
                  result=None) -> None:
    """The run's sentence, then each query's share of connected windows, from ``result``
    (the windows the job computed) or else read back from the output."""
    from pyspark.sql import functions as F

    from streamspec.pipeline.io import read_parquet

    out = out or sys.stdout
    result = read_parquet(spark, args.output) if result is None else result
    n_windows = result.count()
    per_query = dict(result.select(F.posexplode("answers").alias("q", "answer"))
                     .groupBy("q").agg(F.avg(F.col("answer").cast("double")))
                     .collect())
    keys = (f" for {counted(result.select('key').distinct().count(), 'key')}"
            if stream.keyed else "")
    dropped = f" ({counted(stream.dropped, 'late edge')} dropped)" if stream.dropped else ""
    print(sentence("connectivity", f"{counted(n_windows, 'window')}{keys}",
                   f"{counted(stream.edges, 'edge')}{dropped}",
                   f"r={params.r}, s={params.s}, {counted(len(params.workload), 'query', 'queries')}",
                   engine_cls.name, args.output, elapsed), file=out)
    for q, (a, b) in enumerate(params.workload[:SHOWN_QUERIES]):
        share = per_query.get(q)
        text = "no windows" if share is None else f"{100 * share:.1f}% of windows connected"
        print(f"  Q{q} ({a}, {b}): {text}", file=out)
    if len(params.workload) > SHOWN_QUERIES:
        print(f"  ... {len(params.workload) - SHOWN_QUERIES} more queries", file=out)
