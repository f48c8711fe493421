"""The BIC paper's two missing competitors, ET-Tree and HDT, measured next to BIC.

BIC technical report Section 7.1 compares BIC with ET-Tree and HDT (fully dynamic
connectivity used on sliding windows: every edge inserted on arrival, the
expired edges deleted one by one at each slide) in Figures 7 (throughput) and 8
(P95/P99 latency).  ``ettree`` and ``hdt`` (``engines/connectivity/ett.py``,
``hdt.py``) are plain Python over lists, so the streams here are small.

Series (rows of ``bench/results/connectivity/competitors.csv``, one per engine
and setting; ``series`` column):

- ``table``: R-MAT, ``--edges`` edges (default 200K) over a tenth as many ids,
  1000 edges per timestamp, the targets' derivation of the window (a tenth of
  the stream, 20 slides per window: r = 20, s = 1 at 200K), 100 queries from
  the top-1000-degree vertices; ``ettree``, ``hdt``, ``bic`` as shipped and
  ``bic`` with the backward build inside the triggering call.  The answers of
  every row are checked equal to BIC's (``answers_equal_bic``).
- ``length``: the same window (r = 20, s = 1: 20K edges) on growing streams
  (50K..400K edges, 20K ids): CPU time per edge must stay flat (no work that
  grows with the stream).
- ``window``: a 100K-edge stream, s = 1 (1000 edges per slide), r = 5..40:
  CPU time per edge grows like a polylog of the window for a polylog
  structure, linearly for a per-slide rebuild (the "not quadratic" check).

Each run is ``measure.run_engine`` (ids remapped up front, the engine alone) on
the CPU clock (``time.process_time``; the machine is shared with other jobs:
the 1-minute load before and after each run is in the row), the GC frozen
after warm-up.  Latency is the triggering edge's call (the window's queries,
the deletion of the expired edges, the edge's insert).
Run: ``python -m streamspec.bench.connectivity.competitors [--edges N] [--series table,length,window]``.
"""
from __future__ import annotations

import argparse
import csv
import os
import sys
from pathlib import Path

from streamspec.spec.connectivity import Params

from streamspec.bench.connectivity.generators import rmat_stream, workload
from streamspec.bench.connectivity.measure import run_engine
from streamspec.bench.pipeline_util import commit

RESULTS = Path("bench", "results", "connectivity")   # relative to the checkout
FIELDS = ["commit", "series", "engine", "build", "stream", "edges", "r", "s", "queries",
          "windows", "cpu_s", "throughput_eps", "cpu_us_per_edge", "p50_ms", "p95_ms", "p99_ms",
          "answers_equal_bic", "load1_before", "load1_after", "method", "command"]


def settings(series: str, edges: int):
    """``(stream, params)`` of each run of a series."""
    if series == "table":
        r = max(1, edges // 10 // 1000)
        s = rmat_stream(edges // 10, edges, 1000, seed=0)
        yield s, Params(r=r, s=max(1, r // 20), workload=workload(s, 100, seed=0))
    elif series == "length":
        for n in (50_000, 100_000, 200_000, 400_000):
            s = rmat_stream(20_000, n, 1000, seed=0)
            yield s, Params(r=20, s=1, workload=workload(s, 100, seed=0))
    elif series == "window":
        s = rmat_stream(20_000, 100_000, 1000, seed=0)
        for r in (5, 10, 20, 40):
            yield s, Params(r=r, s=1, workload=workload(s, 100, seed=0))
    else:
        raise ValueError(f"unknown series {series!r}")


def runs(series: str):
    if series == "table":
        return [("bic", "deferred"), ("bic", "inside"), ("ettree", "deferred"), ("hdt", "deferred")]
    return [("ettree", "deferred"), ("hdt", "deferred")]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--edges", type=int, default=200_000, help="stream length of the table series")
    p.add_argument("--series", default="table,length,window")
    p.add_argument("--out", default=str(RESULTS / "competitors.csv"))
    args = p.parse_args(argv)
    command = "python -m streamspec.bench.connectivity.competitors " + " ".join(
        sys.argv[1:] if argv is None else argv)
    code = commit()
    rows: list[dict] = []
    for series in args.series.split(","):
        for stream, params in settings(series, args.edges):
            reference = None
            for name, build in runs(series):
                record: list = []
                before = os.getloadavg()[0]
                m = run_engine(name, stream, params, clock="cpu", build=build, record=record)
                after = os.getloadavg()[0]
                if name == "bic" and reference is None:
                    reference = record
                row = m.row()
                rows.append(dict(
                    commit=code, series=series, engine=name, build=row["build"],
                    stream=stream.description, edges=len(stream), r=params.r, s=params.s,
                    queries=len(params.workload), windows=row["windows"],
                    cpu_s=row["total_s"], throughput_eps=row["throughput_eps"],
                    cpu_us_per_edge=round(m.seconds / m.n_edges * 1e6, 3),
                    p50_ms=row["p50_ms"], p95_ms=row["p95_ms"], p99_ms=row["p99_ms"],
                    answers_equal_bic="" if reference is None else record == reference,
                    load1_before=round(before, 2), load1_after=round(after, 2),
                    method=row["method"], command=command))
                print(f"{series:7s} {name:7s} {build:8s} edges={len(stream)} r={params.r} "
                      f"s={params.s}: {m.throughput:,.0f} edges/CPU-s, P50/P95/P99 "
                      f"{m.percentile(50) * 1e3:.3f}/{m.percentile(95) * 1e3:.3f}/"
                      f"{m.percentile(99) * 1e3:.3f} ms, load {before:.2f}-{after:.2f}", flush=True)
                _write(Path(args.out), rows)     # after every run: a killed job keeps its rows
    return 0


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    tmp.replace(path)


if __name__ == "__main__":
    sys.exit(main())
