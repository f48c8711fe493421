"""Columnar, shuffle-free replay of one Parquet edge file by window ranges (issue 11).

The connectivity job's fast path for its common case: a local Parquet file or
directory (files in name order, as the validating reader takes them), no
``key`` column, lateness ``error``, ``s <= r``.  Measured design
(``bench.pipeline``, ``bench.pipeline_rangescan``):

- ``plan``: the footers give the types, the row count, the null counts and
  each row group's first and last time (statistics), so nothing is scanned
  before the replay.  No statistics, a null, a key, files whose columns
  differ, a time before ``--origin``, row groups whose time spans overlap out
  of order, a remote path: ``plan`` says no and the job takes the validating
  reader (``pipeline.io.edges``), which names the offending row.
- ``replay``: window ranges as ``pipeline.replay.window_ranges``.  Spark runs
  one task per range (``mapInArrow`` over the range numbers); the task reads
  with pyarrow the row groups whose time span meets its range
  ``[start(lo), end(hi-1))`` (the halo is the window length; the last range
  is open-ended), checks their times never decrease, cuts the range out by
  binary search, feeds one ``EdgeBatch`` to the engine at origin
  ``start(lo)`` and closes it with the watermark ``end(hi-1)`` (or ``flush``
  for the last range): the same replay as ``jobs.connectivity.run_range``.
  Columns go from the file to the engine without Spark's row format, a
  shuffle or a pandas frame.
- The file is in time order iff every row group is (each one meets some range,
  as the ranges cover every time from the origin on) and the footers' spans do
  not overlap out of order (``plan``).  The windows are kept
  (``spark.materialise``) and the tasks' checks read before anything is written;
  an out-of-order input is then read by the validating reader for its
  located error.

The tasks read the file themselves, so the path must be readable where the
executors run: local mode, or a file system the cluster shares.
"""
from __future__ import annotations

import attrs
import numpy as np

from streamspec.pipeline.fs import parquet_source   # a local path, or an open s3://... file
from streamspec.pipeline.io import is_parquet, parquet_files
from streamspec.pipeline.replay import window_ranges
from streamspec.pipeline.spark import materialise
from streamspec.spec.windows import SlidingWindows

OUTPUT = "window long, start long, end long, answers array<boolean>"
CHECKS = "part int, ordered boolean"


CHUNK = 65536          # windows per output batch (Arrow list offsets are int32)


def _arrow_schema():
    import pyarrow as pa
    return pa.schema([("window", pa.int64()), ("start", pa.int64()), ("end", pa.int64()),
                      ("answers", pa.list_(pa.bool_())), ("part", pa.int32()),
                      ("ordered", pa.bool_())])


@attrs.frozen
class Plan:
    """What the footers tell of an eligible input."""

    files: tuple               # the data files, in input order
    rows: int
    first_t: int | None
    last_t: int | None
    vertex_type: type
    group_lows: tuple = ()      # each non-empty row group's first and last time
    group_highs: tuple = ()
    groups: tuple = ()          # each one's (file number, row group in that file)
    dropped: int = 0            # late edges removed before these files were written
                                # (``pipeline.text_scan`` under lateness ``drop``)


def plan(path: str, lateness: str, origin: int | None, r: int, s: int) -> Plan | None:
    """A ``Plan`` when the fast path applies to ``path`` (module docstring), else None.

    ``s > r`` is left to the validating reader too: edges between two windows
    would then fall in no range, and their order would go unchecked.
    """
    import pyarrow.parquet as pq

    if lateness != "error" or s > r or not is_parquet(path):
        return None
    files = parquet_files(path)             # typed errors for missing or non-Parquet files
    schema, lows, highs, groups, rows = None, [], [], [], 0
    for number, name in enumerate(files):
        meta = pq.ParquetFile(parquet_source(name)).metadata
        this = meta.schema.to_arrow_schema()
        if schema is not None and not this.equals(schema):
            return None                      # the tasks concatenate files: one schema
        schema, rows = this, rows + meta.num_rows
        names = this.names
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
            groups.append((number, g))
    if any(high > low for high, low in zip(highs, lows[1:])):
        return None                          # row groups out of order: the reader locates it
    vertex_type = _vertex_type(schema)
    if vertex_type is None:
        return None
    first = lows[0] if lows else None
    if origin is not None and first is not None and first < origin:
        return None                          # the validating reader locates the early edge
    return Plan(tuple(files), rows, first, highs[-1] if highs else None, vertex_type,
                tuple(lows), tuple(highs), tuple(groups))


def _vertex_type(schema) -> type | None:
    """int or str for a ``u, v, t`` schema with integer times, else None."""
    import pyarrow as pa

    if sorted(schema.names) != ["t", "u", "v"] or \
            not pa.types.is_signed_integer(schema.field("t").type):
        return None
    u, v = (schema.field(c).type for c in ("u", "v"))
    if pa.types.is_signed_integer(u) and pa.types.is_signed_integer(v):
        return int
    if pa.types.is_string(u) and pa.types.is_string(v):
        return str
    return None


def replay(spark, source: Plan, engine_cls, params, partitions: int, as_text: bool = False):
    """The windows as a checkpointed DataFrame (``OUTPUT`` plus ``CHECKS`` columns), or None
    when the stream turns out not to be in time order."""
    t0 = params.t0 if params.t0 is not None else source.first_t
    windows = SlidingWindows(params.r, params.s, t0)
    n_windows = windows.started_by(source.last_t)
    ranges = window_ranges(n_windows, partitions)
    spans = [(windows.start(lo), windows.end(hi - 1) if p < len(ranges) - 1 else None)
             for p, (lo, hi) in enumerate(ranges)]
    task = _range_task(source, engine_cls, params, windows, n_windows, ranges, spans, as_text)
    numbers = spark.sparkContext.parallelize([(p,) for p in range(len(ranges))], len(ranges))
    kept = materialise(spark.createDataFrame(numbers, "part int")
                       .mapInArrow(task, f"{OUTPUT}, {CHECKS}"))
    checks = sorted(kept.select("part", "ordered").distinct().collect())
    return kept if in_order(checks, len(ranges)) else None


def in_order(checks, n_ranges: int) -> bool:
    """Every range reported, and every row group a range read was in time order."""
    return [c.part for c in checks] == list(range(n_ranges)) and all(c.ordered for c in checks)


def _range_task(source, engine_cls, params, windows, n_windows, ranges, spans, as_text):
    """The ``mapInArrow`` function over range numbers (module docstring); a plain closure."""
    def run(batches):
        import pyarrow as pa

        from streamspec.spec.connectivity import EdgeBatch

        for batch in batches:
            for p in batch.column(0).to_pylist():
                lo, hi = ranges[p]
                first, end = spans[p]
                table = _read(source, first, end)
                t = table.column("t").to_numpy()
                ordered = bool(np.all(t[1:] >= t[:-1]))
                results = []
                if ordered:
                    a = int(np.searchsorted(t, first, "left"))
                    b = len(t) if end is None else int(np.searchsorted(t, end, "left"))
                    part = table.slice(a, b - a)
                    engine = engine_cls(attrs.evolve(params, t0=windows.start(lo)))
                    results = list(engine.process(EdgeBatch(
                        _ids(part, "u", as_text), _ids(part, "v", as_text), t[a:b])))
                    results += engine.flush() if hi == n_windows \
                        else engine.advance_to(windows.end(hi - 1))
                    results = [r for r in results if r.index < hi - lo]
                # a range out of order still reports its check, in a row without a window
                for c in range(0, max(len(results), 1), CHUNK):
                    chunk = results[c:c + CHUNK]
                    rows = max(len(chunk), 1)
                    yield pa.RecordBatch.from_pydict({
                        "window": [r.index + lo for r in chunk] or [None],
                        "start": [r.start for r in chunk] or [None],
                        "end": [r.end for r in chunk] or [None],
                        "answers": _answers(chunk, len(params.workload)),
                        "part": [p] * rows, "ordered": [ordered] * rows,
                    }, schema=_arrow_schema())
    return run


def _answers(results, queries: int):
    """The windows' answers as one Arrow list column, built from a flat bool array and
    offsets: a Python list per window costs ~4x as much at 100 queries."""
    import itertools

    import pyarrow as pa

    if not results:
        return pa.array([None], type=pa.list_(pa.bool_()))
    flat = np.fromiter(itertools.chain.from_iterable(r.answers for r in results), dtype=bool,
                       count=len(results) * queries)
    offsets = np.arange(0, (len(results) + 1) * queries, max(queries, 1), dtype=np.int32)
    if queries == 0:
        offsets = np.zeros(len(results) + 1, dtype=np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat, type=pa.bool_()))


def _read(source: Plan, first: int, end: int | None):
    """The row groups whose time span meets ``[first, end)``, in input order, as one table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    wanted: dict[int, list[int]] = {}
    for (number, g), low, high in zip(source.groups, source.group_lows, source.group_highs):
        if high >= first and (end is None or low < end):
            wanted.setdefault(number, []).append(g)
    tables = [pq.ParquetFile(parquet_source(source.files[n])).read_row_groups(
                  gs, columns=["u", "v", "t"])
              for n, gs in sorted(wanted.items())]
    if not tables:                  # a range inside a gap of the stream
        return pq.read_schema(parquet_source(source.files[0])).empty_table().select(["u", "v", "t"])
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]


def _ids(table, column: str, as_text: bool) -> np.ndarray:
    """A vertex column as the engine's ids: int64, or Python str (text ids, or int ids
    read as text because a query id is not an int)."""
    values = table.column(column)
    if as_text or not __import__("pyarrow").types.is_integer(values.type):
        return np.asarray([str(x) for x in values.to_pylist()], dtype=object)
    return values.to_numpy().astype(np.int64, copy=False)
