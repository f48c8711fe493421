"""Columnar, shuffle-free replay of one Parquet edge file by window ranges (issue 11).

The connectivity job's fast path for its common case: one Parquet file, no
``key`` column, lateness ``error``.  Measured design (``bench.pipeline_rangescan``):

- ``plan``: the footers give the types, the row count, the null counts and
  the first and last times (row-group statistics), so nothing is scanned
  before the replay.  No statistics, a null, a key, a time before
  ``--origin``, several files: ``plan`` says no and the job takes the
  validating reader (``pipeline.io.edges``), which names the offending row.
- ``replay``: window ranges as ``pipeline.replay.window_ranges``; range ``p``
  is one ``filter(start(lo) <= t < end(hi-1))`` of the scan (Parquet pushdown
  skips row groups outside it; the halo is the window length; the last range
  is open-ended), coalesced to one partition, and the ranges are unioned
  without a shuffle (``spark.sql.unionOutputPartitioning=false``: Spark 4
  would otherwise zip single-partition children into one partition).
- each task (``mapInArrow``) sorts its Arrow columns by row index (input
  order), checks its times never decrease, feeds one ``EdgeBatch`` to the
  engine at origin ``start(lo)`` and closes it with the watermark
  ``end(hi-1)`` (or ``flush`` for the last range): the same replay as
  ``jobs.connectivity.run_range``.  It also reports its core's row indexes
  (the rows no later range holds).
- the stream is in order iff every task saw non-decreasing times and the
  cores' row intervals increase with the range (a late row either breaks
  its own range's order or overlaps the next core).  The rows are kept
  (``localCheckpoint``) and checked before anything is written; an
  out-of-order input is then read by the validating reader for its located
  error.
"""
from __future__ import annotations

import attrs
import numpy as np

from streamspec.pipeline.io import is_parquet, parquet_files
from streamspec.pipeline.replay import window_ranges
from streamspec.spec.windows import SlidingWindows

OUTPUT = "window long, start long, end long, answers array<boolean>"
CHECKS = "part int, ordered boolean, core_lo long, core_hi long"


@attrs.frozen
class Plan:
    """What the footers tell of an eligible input."""

    path: str
    rows: int
    first_t: int | None
    last_t: int | None
    vertex_type: type


def plan(path: str, lateness: str, origin: int | None, r: int, s: int) -> Plan | None:
    """A ``Plan`` when the fast path applies to ``path`` (module docstring), else None.

    ``s > r`` is left to the validating reader too: edges between two windows
    would then fall in no range, and their order would go unchecked.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if lateness != "error" or s > r or not is_parquet(path) or "://" in path:
        return None
    files = parquet_files(path)             # typed errors for missing or non-Parquet files
    if len(files) != 1:
        return None
    meta = pq.ParquetFile(files[0]).metadata
    schema = meta.schema.to_arrow_schema()
    names = schema.names
    if sorted(names) != ["t", "u", "v"] or not pa.types.is_signed_integer(schema.field("t").type):
        return None
    kinds = {pa.types.is_signed_integer(schema.field(c).type) or
             ("str" if pa.types.is_string(schema.field(c).type) else None) for c in ("u", "v")}
    if kinds == {True}:
        vertex_type = int
    elif kinds == {"str"}:
        vertex_type = str
    else:
        return None
    lows, highs = [], []
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        if group.num_rows == 0:
            continue
        for c in ("u", "v", "t"):
            stats = group.column(names.index(c)).statistics
            if stats is None or stats.null_count is None or stats.null_count > 0:
                return None
        stats = group.column(names.index("t")).statistics
        if not stats.has_min_max:
            return None
        lows.append(int(stats.min))
        highs.append(int(stats.max))
    first = min(lows) if lows else None
    if origin is not None and first is not None and first < origin:
        return None                          # the validating reader locates the early edge
    return Plan(files[0], meta.num_rows, first, max(highs) if highs else None, vertex_type)


def replay(spark, source: Plan, engine_cls, params, partitions: int, as_text: bool = False):
    """The windows as a checkpointed DataFrame (``OUTPUT`` plus ``CHECKS`` columns), or None
    when the stream turns out not to be in time order."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    t0 = params.t0 if params.t0 is not None else source.first_t
    windows = SlidingWindows(params.r, params.s, t0)
    n_windows = windows.started_by(source.last_t)
    ranges = window_ranges(n_windows, partitions)
    scan = spark.read.parquet(source.path).select(
        "u", "v", "t", F.col("_metadata.row_index").alias("seq"))
    parts = []
    for p, (lo, hi) in enumerate(ranges):
        keep = F.col("t") >= windows.start(lo)
        if p < len(ranges) - 1:
            keep = keep & (F.col("t") < windows.end(hi - 1))
        parts.append(scan.filter(keep).coalesce(1))
    union = parts[0]
    for part in parts[1:]:
        union = union.union(part)
    cores = [windows.start(lo) for lo, _ in ranges[1:]] + [None]   # where each core ends
    task = _range_task(engine_cls, params, windows, n_windows, ranges, cores, as_text)
    previous = spark.conf.get("spark.sql.unionOutputPartitioning", None)
    spark.conf.set("spark.sql.unionOutputPartitioning", "false")
    try:
        kept = union.mapInArrow(task, f"{OUTPUT}, {CHECKS}").localCheckpoint(eager=True)
    finally:
        if previous is None:
            spark.conf.unset("spark.sql.unionOutputPartitioning")
        else:
            spark.conf.set("spark.sql.unionOutputPartitioning", previous)
    checks = sorted(kept.select("part", "ordered", "core_lo", "core_hi").distinct().collect())
    return kept if in_order(checks, len(ranges)) else None


def in_order(checks, n_ranges: int) -> bool:
    """Every range reported, each in order, and the cores' row intervals increasing."""
    if [c.part for c in checks] != list(range(n_ranges)) or not all(c.ordered for c in checks):
        return False
    cores = [(c.core_lo, c.core_hi) for c in checks if c.core_lo is not None]
    return all(a[1] < b[0] for a, b in zip(cores, cores[1:]))


def _range_task(engine_cls, params, windows, n_windows, ranges, cores, as_text):
    """The ``mapInArrow`` function of the ranges (module docstring); a plain closure, pickled."""
    def run(batches):
        import pyarrow as pa
        from pyspark import TaskContext

        from streamspec.spec.connectivity import EdgeBatch

        p = TaskContext.get().partitionId()
        lo, hi = ranges[p]
        batches = list(batches)          # a range with no edges (a gap) gets none
        table = pa.Table.from_batches(batches) if batches else None
        seq = table.column("seq").to_numpy() if table is not None else np.empty(0, np.int64)
        order = np.argsort(seq, kind="stable")
        seq = seq[order]
        cols = [_ids(table, c, as_text)[order] if table is not None else np.empty(0, np.int64)
                for c in ("u", "v")]
        t = table.column("t").to_numpy()[order] if table is not None else np.empty(0, np.int64)
        ordered = bool(np.all(t[1:] >= t[:-1]))
        core = seq if cores[p] is None else seq[t < cores[p]]
        core_lo, core_hi = (int(core.min()), int(core.max())) if core.size else (None, None)
        results = []
        if ordered:
            engine = engine_cls(attrs.evolve(params, t0=windows.start(lo)))
            results = list(engine.process(EdgeBatch(cols[0], cols[1], t)))
            results += engine.flush() if hi == n_windows else engine.advance_to(windows.end(hi - 1))
            results = [r for r in results if r.index < hi - lo]
        rows = max(len(results), 1)      # a range out of order still reports its checks
        yield pa.RecordBatch.from_pydict({
            "window": [r.index + lo for r in results] or [None],
            "start": [r.start for r in results] or [None],
            "end": [r.end for r in results] or [None],
            "answers": [list(r.answers) for r in results] or [None],
            "part": [p] * rows, "ordered": [ordered] * rows,
            "core_lo": [core_lo] * rows, "core_hi": [core_hi] * rows,
        }, schema=pa.schema([("window", pa.int64()), ("start", pa.int64()), ("end", pa.int64()),
                             ("answers", pa.list_(pa.bool_())), ("part", pa.int32()),
                             ("ordered", pa.bool_()), ("core_lo", pa.int64()),
                             ("core_hi", pa.int64())]))
    return run


def _ids(table, column: str, as_text: bool) -> np.ndarray:
    """A vertex column as the engine's ids: int64, or Python str (text ids, or int ids
    read as text because a query id is not an int)."""
    values = table.column(column)
    if as_text or not __import__("pyarrow").types.is_integer(values.type):
        return np.asarray([str(x) for x in values.to_pylist()], dtype=object)
    return values.to_numpy().astype(np.int64, copy=False)
