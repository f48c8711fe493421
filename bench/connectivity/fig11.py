"""The BIC paper's Figure 11: throughput, P95 and P99 window latency against workload size.

BIC TR Section 7.4 (Figure 11): workloads of 1, 10, 100, 1000 and 10000
queries, windows of ~20M edges sliding by ~1M (K = 20 slides per window),
every approach compared, DFS included (it times out on the large workloads:
the paper's 'X').

Here (``FULL``): one seeded R-MAT stream (the paper's GF is Graph500 R-MAT) of
2M edges on 200K vertices at 1000 edges per timestamp, window ``r = 200`` and
slide ``s = 10`` timestamps: windows of 200K edges sliding by 10K, the paper's
K = 20 at 1/100 of its window; 2M edges give 180 windows, enough for a P99,
and one pass of every engine and workload fits a 2-core machine shared by
other sessions.  Query pairs: ``generators.workload`` with ``top=1000``,
distinct non-adjacent pairs drawn from the 1000 highest-degree vertices (the
paper "randomly generates workloads"; its code draws from the top-100/500/1000
degree vertices or uniformly), one seed, so each
workload is a prefix of the next larger one (``--uniform``: uniformly over all
vertices instead).

Latency is the paper's, measured by ``measure.run`` (TR Section
7.1): ``hold_back=False``, the ``process`` call with each window's triggering
edge, CPU clock (``time.process_time``: the machine is shared), GC frozen after
warm-up.  BIC gets two rows, its backward build deferred as shipped and inside
the triggering call (``bic:build=inside``, the paper's placement), as
``experiment.py`` does.
Engines that would take too long stop after ``budget`` CPU seconds per
setting: the row says ``truncated`` and its method ``SAMPLED`` (numbers from
the windows reached; the plot's hollow rings, where the paper draws 'X').
"""
from __future__ import annotations

from pathlib import Path

from streamspec.spec.connectivity import Params

from streamspec.bench import pipeline_util
from streamspec.bench.connectivity.experiment import label
from streamspec.bench.connectivity.generators import rmat_stream, workload
from streamspec.bench.connectivity.measure import has_build, run, warm_up

WORKLOAD_SIZES = (1, 10, 100, 1000, 10000)
FULL = dict(edges=2_000_000, vertices=200_000, rate=1000, r=200, s=10, budget=20.0)
QUICK = dict(edges=200_000, vertices=20_000, rate=100, r=200, s=10, budget=3.0)
FIELDS = ["figure", "mode", "commit", "load1", "engine", "build", "setting", "queries",
          "workload", "r", "s", "window_edges", "slide_edges", "stream_edges", "edges_fed",
          "windows", "total_s", "throughput_eps", "p50_ms", "p95_ms", "p99_ms", "truncated",
          "gc_passes_in_triggers", "gc_ms_in_triggers", "method"]


def stream_of(size: dict, seed: int = 0):
    return rmat_stream(size["vertices"], size["edges"], size["rate"], seed=seed)


def measure_all(engines, size: dict, sizes=None, *, mode: str = "full",
                uniform: bool = False, seed: int = 0, clock: str = "cpu", echo=print) -> list:
    """One row per engine (BIC: per build placement) and workload size (``WORKLOAD_SIZES``)."""
    sizes = WORKLOAD_SIZES if sizes is None else sizes
    stream = stream_of(size, seed)
    top = None if uniform else 1000
    largest = workload(stream, max(sizes), seed=seed, top=top)
    commit = pipeline_util.commit()
    for name in engines:
        warm_up(name)
    defers = {name: has_build(name) for name in engines}
    rows = []
    for n in sizes:
        params = Params(r=size["r"], s=size["s"], workload=largest[:n])
        for name in engines:
            for build in (["deferred", "inside"] if defers[name] else ["deferred"]):
                m = run(name, stream, params, budget=size["budget"], warm=False, clock=clock,
                        build=build)
                row = {"figure": "11", "mode": mode, "commit": commit,
                       "load1": pipeline_util.load(), "setting": f"queries={n}", "queries": n,
                       "workload": "uniform" if uniform else "top-1000 degree",
                       "r": size["r"], "s": size["s"], "window_edges": size["r"] * size["rate"],
                       "slide_edges": size["s"] * size["rate"], "stream_edges": len(stream)}
                row.update(m.row())
                rows.append({k: row[k] for k in FIELDS})
                echo(f"  fig11 {n:>6} queries {label(row):14} {m.throughput:14,.0f} edges/s "
                     f"P95 {row['p95_ms']:10.3f} ms P99 {row['p99_ms']:10.3f} ms "
                     f"load {row['load1']}{'  (sampled)' if m.truncated else ''}")
    return rows


def plot(rows, path: Path, title: str) -> None:
    """Three panels like the paper's Figure 11: throughput, P95, P99 against workload size."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = [("throughput_eps", "throughput (edges/s)"), ("p95_ms", "P95 window latency (ms)"),
               ("p99_ms", "P99 window latency (ms)")]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8), squeeze=False)
    for ax, (metric, ylabel) in zip(axes[0], metrics):
        for engine in dict.fromkeys(label(r) for r in rows):
            pts = sorted((int(r["queries"]), float(r[metric]), str(r["truncated"]) == "True")
                         for r in rows if label(r) == engine)
            line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=engine)
            cut = [p for p in pts if p[2]]
            if cut:     # hollow rings: sampled (budget reached), the paper's timeouts
                ax.plot([p[0] for p in cut], [p[1] for p in cut], linestyle="none", marker="o",
                        markersize=11, markerfacecolor="none", color=line.get_color())
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("workload size (queries)")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle(title + "\nhollow ring: sampled (CPU budget reached; the paper's X); "
                 "bic (inside): backward build in the triggering call, the paper's", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
