"""Experiment for issue 11: range replay over Spark's own Parquet scan, outside the pipeline.

``python -m streamspec.bench.pipeline_rangescan --work DIR [--partitions 1,2]``

Not the pipeline: the first shuffle-free design measured (results in
``bench/results/pipeline/rangescan.csv``), kept to compare with.  The pipeline
(``pipeline/range_scan.py``) went one step further: its tasks read their row
groups with pyarrow, skipping Spark's scan, row format and Arrow transfer
(CLI ``--partitions 1`` on 10M edges: 27.6 s with Spark scans in the pipeline, 24.9-25.3 s
with pyarrow).  Note that the second partition count below runs in the warm
JVM and Python workers the first one left, so its replay time flatters it.
On the same stream as ``streamspec.bench.pipeline`` (kept in ``--work``), per
partition count ``P``, in one Spark session:

- the first and last times come from the Parquet footers (row-group
  statistics), so nothing is scanned before the replay;
- window ranges as in ``pipeline.replay.window_ranges``; range ``p`` is one
  ``filter(start(lo) <= t < end(hi-1))`` of the scan (Parquet pushdown skips
  the row groups outside it; the halo is the window length), coalesced to one
  partition; the ``P`` filters are unioned (with
  ``spark.sql.unionOutputPartitioning=false``, else Spark 4 zips the
  single-partition children into one partition), so there is no shuffle;
- ``mapInArrow``: the task sorts its Arrow columns by ``_metadata.row_index``
  (input order), checks times are non-decreasing, and feeds one ``EdgeBatch``
  to the engine, which the watermark ``end(hi-1)`` or ``flush`` closes;
- the windows are collected and compared with the engine run in this process.

It prints and appends to ``bench/results/pipeline/rangescan.csv``: the
session's start, the replay (its one Spark job), and each task's read, sort and
engine seconds.  Single-file input only (the order key is the row index).
"""
from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import time
from pathlib import Path

from streamspec.bench.pipeline import RESULTS, engine_alone, make_inputs


def replay(spark, parquet: Path, params, engine_name: str, partitions: int):
    import attrs
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    from streamspec.pipeline.replay import window_ranges
    from streamspec.spec.connectivity import EdgeBatch
    from streamspec.spec.registry import Registry
    from streamspec.spec.windows import SlidingWindows

    meta = pq.ParquetFile(parquet).metadata
    col = meta.schema.names.index("t")
    stats = [meta.row_group(i).column(col).statistics for i in range(meta.num_row_groups)]
    windows = SlidingWindows(params.r, params.s, min(s.min for s in stats))
    n_windows = windows.started_by(max(s.max for s in stats))
    ranges = window_ranges(n_windows, partitions)
    scan = spark.read.parquet(str(parquet)).select(
        "u", "v", "t", F.col("_metadata.row_index").alias("seq"))
    parts = []
    for p, (lo, hi) in enumerate(ranges):
        keep = F.col("t") >= windows.start(lo)
        if p < len(ranges) - 1:
            keep = keep & (F.col("t") < windows.end(hi - 1))
        parts.append(scan.filter(keep).coalesce(1))
    df = parts[0]
    for part in parts[1:]:
        df = df.union(part)
    engine_cls = Registry.get("connectivity", engine_name)
    out_schema = pa.schema([("window", pa.int64()), ("answers", pa.list_(pa.bool_())),
                            ("ordered", pa.bool_()), ("timing", pa.list_(pa.float64()))])

    def task(batches):
        from pyspark import TaskContext
        marks = [time.perf_counter()]
        lo, hi = ranges[TaskContext.get().partitionId()]
        batches = list(batches)     # a range with no edges (a gap) gets none
        table = pa.Table.from_batches(batches) if batches else pa.table(
            {c: np.empty(0, np.int64) for c in ("u", "v", "t", "seq")})
        marks.append(time.perf_counter())
        order = np.argsort(table.column("seq").to_numpy(), kind="stable")
        u, v, t = (table.column(c).to_numpy()[order] for c in ("u", "v", "t"))
        ordered = bool(np.all(t[1:] >= t[:-1]))
        marks.append(time.perf_counter())
        engine = engine_cls(attrs.evolve(params, t0=windows.start(lo)))
        results = list(engine.process(EdgeBatch(u, v, t)))
        results += engine.flush() if hi == n_windows else engine.advance_to(windows.end(hi - 1))
        results = [r for r in results if r.index < hi - lo]
        marks.append(time.perf_counter())
        timing = [round(b - a, 3) for a, b in zip(marks, marks[1:])]
        yield pa.RecordBatch.from_pydict(
            {"window": [r.index + lo for r in results], "answers": [list(r.answers) for r in results],
             "ordered": [ordered] * len(results), "timing": [timing] * len(results)}, schema=out_schema)

    rows = df.mapInArrow(task, "window long, answers array<boolean>, ordered boolean, "
                               "timing array<double>").collect()
    return rows, df.rdd.getNumPartitions()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m streamspec.bench.pipeline_rangescan",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--work", required=True, help="where bench.pipeline keeps the stream (required)")
    p.add_argument("--edges", type=int, default=10_000_000, help="stream length (default: 10000000)")
    p.add_argument("--vertices", type=int, default=1_000_000, help="id space (default: 1000000)")
    p.add_argument("--per-timestamp", type=int, default=1000, help="edges per time unit (default: 1000)")
    p.add_argument("--window", type=int, default=1000, help="window r (default: 1000)")
    p.add_argument("--slide", type=int, default=50, help="slide s (default: 50)")
    p.add_argument("--queries", type=int, default=100, help="workload size (default: 100)")
    p.add_argument("--engine", default="bic", help="engine (default: bic)")
    p.add_argument("--partitions", default="1,2", help="partition counts (default: 1,2)")
    args = p.parse_args(argv)
    from streamspec.pipeline.spark import session
    from streamspec.spec.connectivity import Params
    from streamspec.spec.registry import Registry

    stream, pairs, parquet, _ = make_inputs(args, Path(args.work))
    params = Params(args.window, args.slide, tuple(pairs))
    alone, _windows = engine_alone(args, stream, pairs)
    engine = Registry.create("connectivity", args.engine, params)
    want = [(r.index, tuple(r.answers)) for r in [*engine.process(stream.batch()), *engine.flush()]]
    out = RESULTS / "rangescan.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    new = not out.exists()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    with out.open("a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(["when", "commit", "edges", "partitions", "spark_partitions", "session_s",
                        "replay_s", "engine_alone_s", "task_read_sort_engine_s", "equal"])
        for n in [int(x) for x in args.partitions.split(",")]:
            started = time.perf_counter()
            spark = session(None, app_name=f"rangescan p{n}",
                            conf={"spark.sql.unionOutputPartitioning": "false"})
            began = time.perf_counter()
            rows, got_parts = replay(spark, parquet, params, args.engine, n)
            done = time.perf_counter()
            spark.stop()
            got = sorted((r.window, tuple(r.answers)) for r in rows)
            equal = got == want and all(r.ordered for r in rows)
            tasks = sorted({tuple(r.timing) for r in rows})
            print(f"--partitions {n} ({got_parts} Spark partitions): session {began - started:.1f} s, "
                  f"replay {done - began:.1f} s, tasks (read, sort, engine) {tasks}, "
                  f"engine alone {alone:.1f} s, equal to the engine: {equal}", flush=True)
            w.writerow([time.strftime("%Y-%m-%dT%H:%M:%S"), commit, args.edges, n, got_parts,
                        round(began - started, 3), round(done - began, 3), round(alone, 3),
                        " ".join("/".join(map(str, t)) for t in tasks), equal])
            if not equal:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
