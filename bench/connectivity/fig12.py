"""The BIC paper's Figure 12: memory of every engine, per graph, window size and slide size.

BIC TR Section 7.5 (Figure 12): (a) memory on each graph; (b)-(d) window
sizes at a fixed slide; (e)-(g) slide sizes at a fixed window.  The paper
gauges an index-based method by "the median index size across window
instances" (and RWC by its per-window union-find, median too).

**Method (the paper's, measured the same way for every engine).**  The index
is everything the engine object holds.  ``tracemalloc`` (which sees Python
objects and numpy buffers alike; none of the engines keeps numba-allocated
state) is started after warm-up and stream generation, just before the engine
is built; after each window's triggering ``process`` call (``hold_back=False``,
the cut of ``measure.pieces``) the traced memory still allocated is one
sample; ``index_mb`` is the median over the window instances, ``peak_mb``
the traced peak of the whole run (the method of ``memory.py --tracemalloc``:
transient buffers included).  The spec boundary's id index (external id ->
dense id, the same for every engine on a graph) is part of every engine's
number; ``ids_mb`` gives its size once all of the stream's vertices are in it,
so the engines' own share can be read off.  BIC's backward-build placement
moves work, not state, so BIC has one row (as shipped).  Engines stop after
``budget`` CPU seconds per setting: the median is then over the windows
reached (``truncated``, method ``SAMPLED``), and a run that reaches no window
in time has no value (the paper's 'X').

Graphs (``FULL``): a Graph500 R-MAT stream (the paper's GF) and a Chung-Lu
power-law stream (exponent 2.5), 500K edges on 60K vertices each at 250 edges
per timestamp, plus any SNAP edge list given with ``--edge-list`` (the
project's loader; ``/work/shared/data`` holds none for connectivity).  Window
sizes: ``r`` = 100, 200, 400, 800 timestamps (25K-200K edges) at slide 10
(2.5K edges), K = 10..80 as the paper's; slide sizes: 80, 40, 20, 10 at
``r = 800``.  Panel (a) is the paper's default setting, r = 200 and s = 10
(K = 20).  The sizes are small because the Python-object engines (ET-tree,
HDT) fill a window slowly under tracemalloc; for the same reason the full
run's budget is 8 CPU seconds per setting (about 15-20 minutes on the busy
2-core machine): the slow engines' medians then come from the first windows,
and HDT has no value where it cannot fill a window within the budget.
"""
from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import numpy as np

from streamspec.spec.connectivity import Params
from streamspec.spec.vertices import IdIndex

from streamspec.bench import pipeline_util
from streamspec.bench.connectivity.experiment import settings
from streamspec.bench.connectivity.generators import powerlaw_stream, rmat_stream, workload
from streamspec.bench.connectivity.measure import pieces, warm_up
from streamspec.bench.connectivity.peers import create

FULL = dict(edges=500_000, vertices=60_000, rate=250, slide=10, window=800, budget=8.0)
QUICK = dict(edges=60_000, vertices=8_000, rate=50, slide=10, window=800, budget=3.0)
DEFAULT = (200, 10)          # panel (a): K = 20, the paper's Section 7.4/7.5 setting (full size)
MB = 1 << 20
FIELDS = ["figure", "mode", "commit", "load1", "graph", "engine", "experiment", "setting", "r",
          "s", "window_edges", "slide_edges", "stream_edges", "queries", "windows", "index_mb",
          "index_min_mb", "index_max_mb", "peak_mb", "ids_mb", "cpu_s", "truncated", "method"]
METHOD = ("tracemalloc: memory still allocated after each window's triggering call, minus "
          "before the engine was built; median over window instances (the paper's index size); "
          "peak = traced peak of the run; includes the spec boundary's id index (ids_mb)")


def graphs(size: dict, edge_list: str | None = None, seed: int = 0) -> dict:
    out = {"rmat": rmat_stream(size["vertices"], size["edges"], size["rate"], seed=seed),
           "powerlaw": powerlaw_stream(size["vertices"], size["edges"], size["rate"], seed=seed)}
    if edge_list:
        from streamspec.bench.connectivity.loaders import load_edge_list
        out[Path(edge_list).name] = load_edge_list(edge_list, edges_per_timestamp=size["rate"],
                                                   limit=size["edges"])
    return out


def id_index_mb(stream) -> float:
    """Traced size of the spec boundary's id index holding every vertex of ``stream``."""
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    ids = IdIndex(int)
    for lo in range(0, len(stream), 65536):
        ids.add(np.concatenate([stream.u[lo:lo + 65536], stream.v[lo:lo + 65536]]))
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    del ids
    return used / MB


def index_size(name: str, stream, params: Params, budget: float | None) -> dict:
    """Median (min, max) traced index size over the window instances, and the traced peak.

    No ``gc.collect()`` around it: garbage made before ``tracemalloc.start`` is
    not traced, and a full pass costs ~0.1 s in a process holding numba and
    matplotlib.
    """
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    engine = create(name, params, hold_back=False)
    samples = []
    truncated = False
    started = time.process_time()
    for lo, hi in pieces(stream, params):
        trigger = stream.batch(lo, lo + 1)
        if list(engine.process(trigger)):             # a window instance: sample its index
            samples.append(tracemalloc.get_traced_memory()[0] - base)
        if hi > lo + 1:
            for _ in engine.process(stream.batch(lo + 1, hi)):
                pass
        if budget is not None and time.process_time() - started > budget and hi < len(stream):
            truncated = True
            break
    peak = tracemalloc.get_traced_memory()[1] - base
    cpu = time.process_time() - started
    tracemalloc.stop()
    del engine
    mb = np.asarray(samples, dtype=np.float64) / MB
    return {"windows": len(samples), "truncated": truncated, "cpu_s": round(cpu, 3),
            "index_mb": round(float(np.median(mb)), 4) if len(mb) else "",
            "index_min_mb": round(float(mb.min()), 4) if len(mb) else "",
            "index_max_mb": round(float(mb.max()), 4) if len(mb) else "",
            "peak_mb": round(peak / MB, 4),
            "method": METHOD + (f"; SAMPLED: CPU budget reached after {len(samples)} windows"
                                if truncated else f"; {len(samples)} windows")}


def measure_all(engines, size: dict, *, mode: str = "full", edge_list: str | None = None,
                queries: int = 100, seed: int = 0, echo=print) -> list:
    """One row per graph, setting and engine; panel (a) reuses the ``DEFAULT`` rows."""
    commit = pipeline_util.commit()
    for name in engines:
        warm_up(name)
    rows = []
    for graph, stream in graphs(size, edge_list, seed).items():
        wl = workload(stream, queries, seed=seed, top=1000)
        ids = round(id_index_mb(stream), 4)
        done = set()
        for experiment, r, s in settings(size["window"], size["slide"]):
            if (r, s) in done:         # r = window, s = slide is in both experiments: measure once
                rows.extend(dict(row, experiment=experiment) for row in list(rows)
                            if row["graph"] == graph and (row["r"], row["s"]) == (r, s)
                            and row["experiment"] != experiment)
                continue
            done.add((r, s))
            params = Params(r=r, s=s, workload=wl)
            for name in engines:
                row = {"figure": "12", "mode": mode, "commit": commit, "graph": graph,
                       "engine": name, "experiment": experiment, "setting": f"r={r},s={s}",
                       "r": r, "s": s, "window_edges": r * size["rate"],
                       "slide_edges": s * size["rate"], "stream_edges": len(stream),
                       "queries": len(wl), "ids_mb": ids}
                row.update(index_size(name, stream, params, size["budget"]))
                row["load1"] = pipeline_util.load()
                rows.append({k: row[k] for k in FIELDS})
                echo(f"  fig12 {graph:9} {experiment:6} r={r:<4} s={s:<3} {name:8} "
                     f"index {row['index_mb']!s:>9} MB peak {row['peak_mb']:9.3f} MB "
                     f"({row['windows']} windows, {row['cpu_s']} s, load {row['load1']})"
                     f"{'  (sampled)' if row['truncated'] else ''}")
    return rows


def _value(row) -> float:
    return float(row["index_mb"]) if row["index_mb"] not in ("", None) else float("nan")


def plot(rows, path: Path, title: str) -> None:
    """Panels like the paper's Figure 12: (a) per graph, then window and slide panels per graph."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(r["graph"] for r in rows))
    engines = list(dict.fromkeys(r["engine"] for r in rows))
    fig, axes = plt.subplots(1, 1 + 2 * len(names), figsize=(4.2 * (1 + 2 * len(names)), 4.6),
                             squeeze=False)
    axes = axes[0]
    # (a): the window experiment's K = 20 setting (r = 200, s = 10 at full size), the paper's
    k20 = [r for r in rows if r["experiment"] == "window" and int(r["r"]) == 20 * int(r["s"])]
    r0, s0 = (int(k20[0]["r"]), int(k20[0]["s"])) if k20 else DEFAULT
    width = 0.8 / max(len(engines), 1)
    for i, engine in enumerate(engines):      # (a): bars per graph, the default setting
        vals = [next((_value(r) for r in rows if r["graph"] == g and r["engine"] == engine
                      and (int(r["r"]), int(r["s"])) == (r0, s0)), float("nan")) for g in names]
        axes[0].bar(np.arange(len(names)) + i * width, vals, width, label=engine)
    axes[0].set_xticks(np.arange(len(names)) + 0.4 - width / 2, names)
    if any(np.isfinite(_value(r)) for r in k20):
        axes[0].set_yscale("log")
    axes[0].set_ylabel("median index size (MB)")
    axes[0].set_title(f"(a) per graph, r={r0}, s={s0}", fontsize=9)
    axes[0].legend(fontsize=7)
    axes[0].grid(True, which="both", axis="y", alpha=0.3)
    panels = [(g, e) for e in ("window", "slide") for g in names]
    for k, (ax, (graph, experiment)) in enumerate(zip(axes[1:], panels)):
        xkey = "window_edges" if experiment == "window" else "slide_edges"
        for engine in engines:
            pts = sorted((int(r[xkey]), _value(r), str(r["truncated"]) == "True") for r in rows
                         if r["graph"] == graph and r["engine"] == engine
                         and r["experiment"] == experiment)
            line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=engine)
            cut = [p for p in pts if p[2]]
            if cut:
                ax.plot([p[0] for p in cut], [p[1] for p in cut], linestyle="none", marker="o",
                        markersize=11, markerfacecolor="none", color=line.get_color())
        ids = [float(r["ids_mb"]) for r in rows if r["graph"] == graph]
        if ids:     # the spec boundary's id index, inside every engine's number
            ax.axhline(ids[0], color="gray", linestyle=":", label="id index (in each)")
        if any(np.isfinite(_value(r)) for r in rows if r["graph"] == graph
               and r["experiment"] == experiment):     # an all-X panel stays linear
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
        ax.set_xlabel(f"{experiment} size (edges), {'slide' if experiment == 'window' else 'window'}"
                      " fixed")
        ax.set_title(f"({chr(ord('b') + k)}) {graph}: {experiment} size", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle(title + "\nmedian traced index size over window instances; hollow ring: "
                 "sampled (CPU budget); missing point: no window within the budget (the paper's X)",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
