"""Redraw the BIC paper's scalability figures (TR Section 7.3; setup of TR Section 7.1).

Two experiments on one seeded R-MAT stream (the paper's GF is Graph500 R-MAT):

- ``window``: fixed slide, window = 10, 20, 40, 80 slides (the paper: slide
  ~1M edges, windows ~10/20/40/80M edges);
- ``slide``: fixed window, slide = window / 80, / 40, / 20, / 10 (the paper:
  window ~80M edges, slides ~1/2/4/8M edges).

For each setting and engine: throughput (edges/s) and the P95 and P99 of the
paper's per-window latency (TR Section 7.1; ``streamspec.bench.connectivity.
measure``): engines built with ``hold_back=False``, each window's latency is
the ``process`` call with its triggering edge (queries and that edge's
insert), the rest of the slide goes in a second call.  Where BIC's backward
build lands is chosen by ``--build``, which sets BIC's engine option of that
name on each engine that has it: ``deferred`` (``bic``, as it ships, the build
in a later call that answers no window), ``inside`` (``bic:build=inside``, the
paper's placement: the build in the triggering call), or
``both`` (default: engines with a deferrable build get one row per
placement, the others one row; the ``build`` column says which).  ``--engine-alone`` measures the same calls without the spec
boundary (``measure.run_engine``: ids remapped up front, as the paper's
in-memory replay).  Engines that would take too long are stopped after
``--budget`` seconds per setting; their row says ``truncated`` and the
method ``SAMPLED`` (numbers from the first windows reached).

Output: ``bench/results/connectivity/experiment[-quick].csv`` and ``.png``
(rows: the two experiments; columns: throughput, P95, P99; log scales, as in
the paper's figures).

``--quick`` (about a minute or two): 300K edges, 30K vertices, 100 edges per
timestamp, slide 10 / window 400 timestamps, budget 3 s.  Full (the lead's
run on a quiet machine, about 12 minutes with the default engines: 7 settings,
BIC a few seconds each, RWC, D-Tree and scipy cut by the 30 s budget on the
large windows): 10M edges, 1M vertices, 1000 edges
per timestamp, slide 50 / window 2000 timestamps (slides of 50K edges,
windows up to 4M edges).  ``--edge-list FILE`` replays a SNAP edge list
instead (``streamspec.bench.connectivity.loaders``; ``--rate`` edges per synthetic
timestamp when the file has no times, ``--edges`` as a line limit).
"""
from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from pathlib import Path

from streamspec.spec.connectivity import Params
from streamspec.spec.registry import Registry

from streamspec.bench.connectivity.generators import rmat_stream, workload
from streamspec.bench.connectivity.loaders import load_edge_list
from streamspec.bench.connectivity.measure import has_build, run, run_engine, warm_up
from streamspec.bench.connectivity.peers import PEERS

RESULTS = Path("bench", "results", "connectivity")   # relative to the working directory (the checkout)
SLIDES_PER_WINDOW = (10, 20, 40, 80)
QUICK = dict(edges=300_000, vertices=30_000, rate=100, slide=10, window=400, budget=3.0)
FULL = dict(edges=10_000_000, vertices=1_000_000, rate=1000, slide=50, window=2000, budget=30.0)
FIELDS = ["mode", "experiment", "engine", "build", "r", "s", "slides_per_window",
          "window_edges", "slide_edges", "stream_edges", "edges_fed", "windows", "total_s",
          "throughput_eps", "p50_ms", "p95_ms", "p99_ms", "truncated", "gc_passes_in_triggers",
          "gc_ms_in_triggers", "load1", "method"]


def settings(window: int, slide: int):
    """``(experiment, r, s)`` of both experiments (K = r / s in ``SLIDES_PER_WINDOW``)."""
    for k in SLIDES_PER_WINDOW:
        yield "window", slide * k, slide
    for k in sorted(SLIDES_PER_WINDOW, reverse=True):
        if window % k == 0:
            yield "slide", window, window // k


def arguments(argv=None):
    p = argparse.ArgumentParser(prog="python -m streamspec.bench.connectivity.experiment",
                                description="throughput and P95/P99 latency vs window and slide")
    p.add_argument("--quick", action="store_true", help="small stream, about a minute or two")
    p.add_argument("--engines", default="bic,rwc,dtree,scipy",
                   help="comma-separated (registered engines, scipy, networkx)")
    for key in FULL:
        p.add_argument(f"--{key}", type=(float if key == "budget" else int),
                       help=f"default: quick {QUICK[key]}, full {FULL[key]}")
    p.add_argument("--edge-list", help="SNAP edge list to replay instead of the R-MAT stream")
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                   help="wall (perf_counter, the paper's metric; default) or cpu (process_time, "
                        "robust on a busy shared machine)")
    p.add_argument("--build", choices=["deferred", "inside", "both"], default="both",
                   help="where BIC's backward build lands, its engine option build=: deferred "
                        "(as shipped), inside the triggering call (the paper's, bic:build=inside), "
                        "or both (default; one row each)")
    p.add_argument("--engine-alone", action="store_true",
                   help="leave the spec boundary out (ids remapped up front, measure.run_engine)")
    p.add_argument("--out", help="CSV path (default bench/results/connectivity/experiment[-quick].csv)")
    args = p.parse_args(argv)
    base = QUICK if args.quick else FULL
    for key, value in base.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.mode = "quick" if args.quick else "full"
    stem = "experiment-quick" if args.quick else "experiment"
    args.out = Path(args.out) if args.out else RESULTS / f"{stem}.csv"
    return args


def available(names):
    registered = {n for _, n in Registry.names("connectivity")}
    for name in names:
        if name in PEERS or name in registered:
            yield name
        else:
            print(f"skipped {name}: not registered (entry point connectivity.{name})", flush=True)


def label(row) -> str:
    return f"{row['engine']} (inside)" if row["build"] == "inside" else row["engine"]


def plot(rows, path: Path, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = [("throughput_eps", "throughput (edges/s)"), ("p95_ms", "P95 window latency (ms)"),
               ("p99_ms", "P99 window latency (ms)")]
    axes_x = {"window": ("window_edges", "window size (edges), slide fixed"),
              "slide": ("slide_edges", "slide size (edges), window fixed")}
    fig, axes = plt.subplots(2, 3, figsize=(14, 8), squeeze=False)
    for i, (experiment, (xkey, xlabel)) in enumerate(axes_x.items()):
        for j, (metric, ylabel) in enumerate(metrics):
            ax = axes[i][j]
            for engine in dict.fromkeys(label(r) for r in rows):
                pts = sorted((r[xkey], r[metric], r["truncated"]) for r in rows
                             if r["experiment"] == experiment and label(r) == engine)
                if not pts:
                    continue
                line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                                label=engine)
                cut = [p for p in pts if p[2]]
                if cut:   # hollow markers: truncated by the budget
                    ax.plot([p[0] for p in cut], [p[1] for p in cut], linestyle="none", marker="o",
                            markersize=10, markerfacecolor="none", color=line.get_color())
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend()
    fig.suptitle(title + "\nlatency = the call with the window's triggering edge (queries + that "
                 "insert); bic (inside): its backward build in that call, the paper's; bic: "
                 "deferred, as shipped; hollow ring: run sampled (time budget)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    args = arguments(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    started = time.time()
    if args.edge_list:
        stream = load_edge_list(args.edge_list, edges_per_timestamp=args.rate, limit=args.edges)
        source = stream.description
    else:
        stream = rmat_stream(args.vertices, args.edges, args.rate, seed=args.seed)
        source = f"R-MAT {args.vertices} vertices, {args.edges} edges"
    queries = workload(stream, args.queries, seed=args.seed)
    engines = list(available(args.engines.split(",")))
    for name in engines:
        warm_up(name)
    how = "engine alone" if args.engine_alone else "through process()"
    title = (f"{args.mode.upper()} run: {source}, "
             f"{args.rate} edges/timestamp, {args.queries} queries, budget {args.budget:g} s "
             f"per run, {args.clock} clock, {how}")
    measure = run_engine if args.engine_alone else run
    builds = ["deferred", "inside"] if args.build == "both" else [args.build]
    defers = {name: has_build(name) for name in engines}
    print(title, flush=True)
    rows = []
    for experiment, r, s in settings(args.window, args.slide):
        params = Params(r=r, s=s, workload=queries)
        for name in engines:
            for build in builds:
                if build == "inside" and len(builds) > 1 and not defers[name]:
                    continue                  # nothing deferred: the deferred row is the same
                m = measure(name, stream, params, budget=args.budget, warm=False,
                            clock=args.clock, build=build)
                row = {"mode": args.mode, "experiment": experiment, "r": r, "s": s,
                       "slides_per_window": r // s, "window_edges": r * args.rate,
                       "slide_edges": s * args.rate, "stream_edges": len(stream),
                       "load1": f"{os.getloadavg()[0]:.2f}"}
                row.update(m.row())
                rows.append(row)
                print(f"  {experiment:6} r={r:<6} s={s:<5} {label(row):14} "
                      f"{m.throughput:14,.0f} edges/s P95 {row['p95_ms']:10.3f} ms "
                      f"P99 {row['p99_ms']:10.3f} ms{'  (sampled)' if m.truncated else ''}",
                      flush=True)
    with open(args.out, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows({k: row[k] for k in FIELDS} for row in rows)
    png = args.out.with_suffix(".png")
    plot(rows, png, title)
    print(f"wrote {args.out} and {png} in {time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
