"""Replaying streams through engines on Spark (docs/pipeline.md, "Partitions and halos").

Two ways to spread a replay, both generic over the problem: the caller passes
a function that runs one engine over a pandas frame of events and returns a
pandas frame of output rows.

- ``keyed``: a ``key`` column holds independent streams;
  ``groupBy(key).applyInPandas`` runs one engine per key, its events in time
  order (a stable sort by ``t`` then ``seq``, the input order, so equal times
  keep their input order).  Output rows carry the key.
- ``time_partitioned``: one stream cut by window index.  ``window_ranges``
  splits windows ``0..N-1`` into contiguous ranges ``[lo, hi)``; the task of a
  range replays the events with ``start(lo) <= t < end(hi-1)`` (every edge of
  its windows: the halo is the window length) with the origin moved to
  ``start(lo)``, so window ``lo`` is the task's local window 0, and closes
  its last window with the watermark.  The final range takes every edge from
  ``start(lo)`` on and flushes, as the single-process run does.
  Windows depend only on their own events, so the union over ranges equals
  the single-process run; ``tests/pipeline/test_replay.py`` checks it on
  random streams and partitionings.  Ranges are not aligned to BIC chunks:
  correctness does not need it (a task's first chunk is just shorter).

A range with no events (a gap in time) still gets a task: one marker row per
range travels with the events, so its windows are emitted (all false).
"""
from __future__ import annotations

from typing import Callable

import pandas as pd

from streamspec.spec.windows import SlidingWindows

EVENT_ORDER = ("t", "seq")


def window_ranges(n_windows: int, partitions: int) -> list[tuple[int, int]]:
    """``partitions`` contiguous, nearly equal, non-empty ranges covering ``0..n_windows-1``."""
    if n_windows <= 0:
        return []
    parts = max(1, min(int(partitions), n_windows))
    bounds = [n_windows * p // parts for p in range(parts + 1)]
    return [(lo, hi) for lo, hi in zip(bounds, bounds[1:]) if hi > lo]


def in_event_order(pdf: pd.DataFrame) -> pd.DataFrame:
    """A group's events in stream order (shuffles do not keep it)."""
    return pdf.sort_values(list(EVENT_ORDER), kind="stable").reset_index(drop=True)


def keyed(df, run_stream: Callable[[pd.DataFrame], pd.DataFrame], schema: str,
          order: tuple = EVENT_ORDER, rows_by: tuple = ("window",)):
    """One engine per key: ``run_stream(events) -> output rows``; rows get the key prepended.

    ``schema`` is the output schema without the key (a DDL string).  A key's events
    reach ``run_stream`` stably sorted by the ``order`` columns (a shuffle does not keep
    their order; default: time, then input order); each Spark partition's rows come
    back sorted by key and the ``rows_by`` columns.
    """
    key_type = df.schema["key"].dataType.simpleString()

    def per_key(pdf: pd.DataFrame) -> pd.DataFrame:
        key = pdf["key"].iloc[0]
        events = pdf.sort_values(list(order), kind="stable").reset_index(drop=True)
        out = run_stream(events)
        out.insert(0, "key", pd.Series([key] * len(out), dtype=object if isinstance(key, str)
                                       else pdf["key"].dtype))
        return out

    return (df.groupBy("key").applyInPandas(per_key, f"key {key_type}, {schema}")
            .sortWithinPartitions("key", *rows_by))


def time_partitioned(df, windows: SlidingWindows, n_windows: int, partitions: int,
                     run_range: Callable[[pd.DataFrame, int, int], pd.DataFrame], schema: str):
    """One stream cut into window ranges, replayed in parallel (module docstring).

    ``run_range(events, lo, hi) -> rows`` replays ``events`` (in order, all with
    ``start(lo) <= t < end(hi-1)``; for the final range every edge from
    ``start(lo)`` on) and returns the rows of windows ``lo..hi-1`` numbered
    globally.  ``df`` has columns ``seq, u, v, t``.
    """
    from pyspark.sql import functions as F

    spark = df.sparkSession
    ranges = window_ranges(n_windows, partitions)
    if not ranges:
        return spark.createDataFrame([], schema)
    # the final range also takes the edges after its last window's end (when s > r the
    # last edge can lie between windows): flush counts windows from the last edge
    last = len(ranges) - 1
    bounds = spark.createDataFrame(
        [(p, lo, hi, windows.start(lo), windows.end(hi - 1) if p < last else None)
         for p, (lo, hi) in enumerate(ranges)],
        "part int, lo long, hi long, t_lo long, t_hi long")
    events = df.withColumn("_event", F.lit(True))
    joined = events.join(F.broadcast(bounds),
                         (events["t"] >= bounds["t_lo"])
                         & ((events["t"] < bounds["t_hi"]) | bounds["t_hi"].isNull()))
    # one marker per range (typed like the events, never replayed) so empty ranges run too
    fill = {c: F.lit(0).cast(df.schema[c].dataType) for c in df.columns}
    markers = bounds.select(*[fill[c].alias(c) for c in df.columns], F.lit(False).alias("_event"),
                            *bounds.columns)
    tasks = joined.select(*markers.columns).unionByName(markers)

    def per_range(pdf: pd.DataFrame) -> pd.DataFrame:
        lo, hi = int(pdf["lo"].iloc[0]), int(pdf["hi"].iloc[0])
        replayed = run_range(in_event_order(pdf[pdf["_event"]]), lo, hi)
        if len(replayed) != hi - lo or not (replayed["window"] == range(lo, hi)).all():
            raise AssertionError(f"range [{lo}, {hi}) replayed windows "
                                 f"{replayed['window'].tolist()[:5]}...")
        return replayed

    # rows come back grouped by range, each Spark partition sorted by window; a
    # global sort (repartitionByRange) would sample, i.e. run the engines twice
    return (tasks.repartition(len(ranges), "part").groupBy("part")
            .applyInPandas(per_range, schema).sortWithinPartitions("window"))
