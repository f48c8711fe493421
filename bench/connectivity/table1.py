"""Streams shaped like the BIC paper's ten datasets (Table 1) and Figures 7 and 8 redrawn on them.

BIC TR Section 7.1, Table 1 lists ten graphs with ``|V|``, ``|E|`` and, where
they are published, the average distance (AD) and diameter (D); every graph
without real timestamps is replayed at 100 edges per timestamp (SO and LK have
real timestamps; here every stream gets the synthetic rate).  Section 7.2's
Figures 7 (throughput) and 8 (P95/P99 window latency) run every approach on
them with windows of 3M edges sliding by 150K (K = 20).

**The streams (``DATASETS``).**  Each graph is a seeded Chung-Lu stream
(``chung_lu_endpoints``: both endpoints of every edge drawn i.i.d. with
probability ``~ w_i = (i + 1.5) ** (-1 / (beta - 1))`` over ``n`` ids, ids
scattered by a seeded permutation, self-loops redrawn), except GF, which is
Graph500 R-MAT as in the paper (``generators.rmat_endpoints``, Graph500's
quadrant probabilities, 2^25 ids at full size).  The parameters:

- ``n`` ids and ``|E|`` edges: the table's ``|V|`` and ``|E|`` (a Chung-Lu
  id of low weight may draw no edge, so the measured ``|V|`` is the number of
  ids that occur, reported next to the table's).
- ``beta`` (degree skew, the power-law tail exponent) is fitted to the table's
  AD where the table gives one (YG 5.2, PR 4.6, SO 3.9, OR 4.2): ``fit``
  bisects ``beta`` in ``[2.05, 4.5]`` on the generated graph itself (AD from
  BFS out of sampled sources; AD grows with ``beta`` at fixed ``|V|``, ``|E|``).
  Where the table gives no AD, ``beta`` = 2.5 (the project's default power
  law), not fitted.
- ``whisker`` fits the diameter where the table gives one (YG 31, WT 9, PR
  14, LJ 17, SO 11, OR 10, FS 32).  A Chung-Lu graph of these densities has a
  diameter near its AD's double; real graphs owe long diameters to a few long
  chains hanging off the core.  So two paths of ``whisker`` edges each are
  hung on two random vertices of the core (their ``2 * whisker`` edges
  overwrite random positions of the stream, so ``|E|`` is unchanged): the
  diameter becomes about ``2 * whisker`` + the distance of the two hooks.
  The hooks are random vertices, about the core's AD apart, so ``fit`` sets
  ``whisker = max(0, ceil((D - AD_core) / 2))``; ``stats`` measures the result.
- At ``scale < 1`` (the five graphs above 64M edges by default,
  ``--max-edges``): ``n``, ``|E|``, the window and the slide are all
  multiplied by ``scale`` (same average degree, same K = 20, a window the same
  share of the stream); AD and D then shift with ``log n``, and the fit is
  done at that scale.

**Statistics (``stats``).**  Measured on the whole stream as one graph: ids
that occur, edges, maximum degree, the share of edge endpoints on the top 1%
of vertices (degree skew), AD = mean BFS distance from ``--sources`` random
occurring vertices to every vertex they reach, D = double-sweep lower bound
(BFS from the highest-degree vertex, then from the farthest vertex found,
twice; the largest eccentricity seen).  ``table1-stats.csv``.

**Figures 7 and 8 (``run``).**  ``measure.run`` (through ``process()``,
``hold_back=False``, the triggering edge's call timed, CPU clock, GC frozen)
for every engine of ``ENGINES``, 100 queries from the top-1000-degree
vertices, one row per dataset and engine in ``table1-fig7-8.csv``.  A point
gets ``--budget`` CPU seconds plus its estimated fill: its rate is measured
on a calibration prefix first; an engine that cannot fill the window within
``FILL_FACTOR * budget`` is measured on a prefix of the stream that fits the
budget, reaches no window and so has no latency (the paper's X) and its
throughput is that of the fill (inserts only); the others stop once past
``budget`` + the estimated fill with a window answered, their numbers from
the windows reached.  Both are marked ``SAMPLED`` in ``method`` and hatched in
the plots.  An engine whose rate falls as its window fills (D-Tree) outruns
the estimate and is stopped after its first window, which has no expiry and
so says nothing of the steady windows: ``--windows N`` feeds it the window
plus ``N`` slides with no budget instead (``WINDOWS`` in ``method``,
throughput the steady rate from the first trigger on).

**Full-size prefixes (``--prefix-edges N``).**  A point is measured over a
prefix of its stream only (the first window plus the slides its budget
reaches), and ``_fill`` draws the edges i.i.d. chunk by chunk from one
generator, so the first ``N`` edges of the FULL-size stream can be drawn
without the rest: ``--prefix-edges N`` runs every dataset at scale 1 (Table 1's
``|V|`` as the id space, the paper's window of 3M edges and slide of 150K) and
generates only the first ``N`` edges, the same edges as the full stream's first
``N`` (each chunk is drawn at its full-stream size and cut).  Whiskers: their
positions and hooks are drawn over the full ``|E|`` as in the full stream and
only the whisker edges at positions below ``N`` are kept; their fresh ids start
at ``|V|`` (the full stream starts them at its largest id + 1, the same when the
id space's last id occurs); a path's first edge whose hook lies beyond the
prefix is left a core edge (counted in the echo).  ``beta`` is the fitted one
(fitted at the scaled size: no BFS fit on a prefix); ``stats`` describes the
prefix as a graph.  Rows go to ``table1-prefix-*`` files (``--tag``, default
``prefix`` with ``--prefix-edges``), ``prefix_edges`` column and ``PREFIX`` in
``method``.

Commands (``python -m streamspec.bench.connectivity.table1 ...``):
``generate``, ``fit``, ``stats``, ``run``, ``plot``, ``check``; ``all`` does
generate, stats, run, plot and check for the datasets named by ``--datasets``.
Streams are written in chunks as ``.npy`` files under ``--scratch`` (default
``$STREAMSPEC_SCRATCH`` or ``/tmp/streamspec-table1``), never in the checkout.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
import time
from pathlib import Path

import attrs
import numpy as np

from streamspec.spec._numba import njit

RESULTS = Path("bench", "results", "connectivity")   # relative to the checkout
RATE = 100                       # edges per timestamp (the paper's synthetic timestamps)
WINDOW_EDGES = 3_000_000         # the paper's Section 7.2 window
SLIDE_EDGES = 150_000            # and slide (K = 20)
MAX_EDGES = 64_000_000           # default cap: the five graphs up to SO's 63.4M run at full size
CHUNK = 1 << 22                  # edges generated per block
ENGINES = ("bic", "bic:build=inside,prereduce=false", "msf", "rwc", "dtree", "dfs", "ettree",
           "hdt")
FILL_FACTOR = 1.5                # an engine may spend up to this many budgets filling the window
QUERIES = 100


@attrs.frozen
class Dataset:
    key: str
    name: str
    vertices: int
    edges: int
    ad: float | None             # Table 1's average distance (None: '-')
    diameter: int | None         # Table 1's diameter
    model: str = "chunglu"       # or "rmat" (GF)
    beta: float = 2.5            # fitted where ad is given (``fit``)
    whisker: int = 0             # fitted where diameter is given (``fit``)


# beta and whisker: ``python -m streamspec.bench.connectivity.table1 fit`` (the values it
# printed are pasted here; see the README of bench/results/connectivity for the run)
DATASETS = {d.key: d for d in [
    Dataset("YG", "Youtube-growth", 3_200_000, 14_400_000, 5.2, 31),
    Dataset("WT", "Wiki-top", 1_700_000, 28_500_000, None, 9),
    Dataset("PR", "Pokec", 1_600_000, 30_600_000, 4.6, 14),
    Dataset("LJ", "LiveJournal", 3_900_000, 34_600_000, None, 17),
    Dataset("SO", "StackOverflow", 2_600_000, 63_400_000, 3.9, 11),
    Dataset("OR", "Orkut", 3_000_000, 117_100_000, 4.2, 10),
    Dataset("LK", "LDBC SNB Knows", 3_300_000, 187_200_000, None, None),
    Dataset("GF", "Graph-500", 17_000_000, 523_600_000, None, None, model="rmat"),
    Dataset("FS", "Friendster", 63_600_000, 1_800_000_000, None, 32),
    Dataset("SC", "Semantic Scholar", 65_000_000, 8_270_000_000, None, None),
]}
FITTED: dict = {}    # key -> {"beta": .., "whisker": ..} (filled from FITTED_JSON below)
FITTED_JSON = RESULTS / "table1-fit.json"


def scratch_dir(path: str | None = None) -> Path:
    return Path(path or os.environ.get("STREAMSPEC_SCRATCH") or "/tmp/streamspec-table1")


def scale_of(d: Dataset, max_edges: int = MAX_EDGES) -> float:
    return min(1.0, max_edges / d.edges)


def shape(d: Dataset, scale: float) -> dict:
    """Ids, edges, window and slide (timestamps) of ``d`` at ``scale``."""
    slide = max(1, round(SLIDE_EDGES * scale / RATE))
    return {"ids": max(2, round(d.vertices * scale)), "edges": max(1, round(d.edges * scale)),
            "s": slide, "r": 20 * slide}


def parameters(d: Dataset, fitted: dict | None = None) -> Dataset:
    """``d`` with the fitted ``beta``/``whisker`` of ``fitted`` (or ``table1-fit.json``)."""
    fitted = load_fit() if fitted is None else fitted
    got = fitted.get(d.key, {})
    return attrs.evolve(d, beta=got.get("beta", d.beta), whisker=got.get("whisker", d.whisker))


def load_fit(path: Path = FITTED_JSON) -> dict:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}


# ---------------------------------------------------------------- generation

def chung_lu_endpoints(rng: np.random.Generator, k: int, n: int, beta: float) -> np.ndarray:
    """``k`` ids in ``[0, n)`` drawn with probability ``~ (i + 1) ** (-1 / (beta - 1))``.

    Inverse of the continuous CDF of ``x ** -a`` on ``[1, n + 1)`` (``a = 1 / (beta - 1) < 1``),
    floored: id ``i`` has the mass of ``[i + 1, i + 2)``, about ``(i + 1.5) ** -a`` (one
    vectorised power per endpoint instead of a search in an ``n``-entry CDF).
    """
    if beta <= 2:
        raise ValueError(f"beta must be > 2, got {beta}")
    a = 1.0 / (beta - 1.0)
    top = (n + 1.0) ** (1.0 - a) - 1.0
    x = (1.0 + rng.random(k) * top) ** (1.0 / (1.0 - a))
    return np.minimum(x.astype(np.int64) - 1, n - 1)


def _fill(d: Dataset, sh: dict, seed: int, u: np.ndarray, v: np.ndarray) -> None:
    """Draw the core's endpoints into ``u``, ``v`` (chunk by chunk), self-loops redrawn.

    ``u`` may be shorter than ``sh["edges"]`` (a prefix): every chunk is still drawn at its
    size in the full stream and cut, so the prefix is the full stream's first ``len(u)``."""
    from streamspec.bench.connectivity.generators import GRAPH500, _scale, rmat_endpoints
    rng = np.random.default_rng(seed)
    n = sh["ids"]
    if d.model == "rmat":
        scale = _scale(n)
        permutation = rng.permutation(1 << scale).astype(np.int64)
    else:
        permutation = rng.permutation(n).astype(np.int64)
    for lo in range(0, len(u), CHUNK):
        k = min(CHUNK, sh["edges"] - lo)
        if d.model == "rmat":
            a, b = rmat_endpoints(rng, k, scale, GRAPH500, 0.1)
            a, b = permutation[a] % n, permutation[b] % n
        else:
            a = permutation[chung_lu_endpoints(rng, k, n, d.beta)]
            b = permutation[chung_lu_endpoints(rng, k, n, d.beta)]
        loops = np.flatnonzero(a == b)
        while loops.size:
            b[loops] = rng.integers(0, n, loops.size)
            loops = loops[a[loops] == b[loops]]
        take = min(k, len(u) - lo)
        u[lo:lo + take], v[lo:lo + take] = a[:take], b[:take]


def _whiskers(d: Dataset, sh: dict, seed: int, u: np.ndarray, v: np.ndarray) -> None:
    """Two paths of ``d.whisker`` edges on fresh ids, hooked to the endpoints of two random
    edges, written over ``2 * whisker`` random positions of the stream (``|E|`` unchanged).

    A prefix (``len(u) < sh["edges"]``): positions and hooks drawn over the full stream, the
    whisker edges below ``len(u)`` kept, fresh ids from ``sh["ids"]``, a hook edge whose hook
    is beyond the prefix left a core edge.  Returns the number of whisker edges written."""
    if d.whisker <= 0:
        return 0
    rng = np.random.default_rng(seed + 1)
    m, kept = sh["edges"], len(u)
    positions = np.sort(rng.choice(m, 2 * d.whisker, replace=False))
    hooks = [int(u[i]) if i < kept else -1 for i in rng.integers(0, m, 2)]
    fresh = int(max(u.max(), v.max())) + 1 if kept == m else sh["ids"]
    eu, ev = [], []
    for hook in hooks:
        prev = hook
        for _ in range(d.whisker):
            eu.append(prev)
            ev.append(fresh)
            prev, fresh = fresh, fresh + 1
    order = rng.permutation(len(eu))
    eu, ev = np.asarray(eu, np.int64)[order], np.asarray(ev, np.int64)[order]
    keep = (positions < kept) & (eu >= 0)
    u[positions[keep]] = eu[keep]
    v[positions[keep]] = ev[keep]
    return int(keep.sum())


def make_arrays(d: Dataset, scale: float = 1.0, seed: int = 0, out: Path | None = None,
                prefix: int | None = None):
    """``(u, v)`` of dataset ``d`` at ``scale``: in memory, or ``.npy`` files under ``out``;
    ``prefix``: only the first ``prefix`` edges of that stream (the same edges)."""
    sh = shape(d, scale)
    m = sh["edges"] if prefix is None else min(prefix, sh["edges"])
    if out is None:
        u = np.empty(m, np.int64)
        v = np.empty(m, np.int64)
    else:
        out.mkdir(parents=True, exist_ok=True)
        u = np.lib.format.open_memmap(out / "u.npy.tmp", "w+", np.int64, (m,))
        v = np.lib.format.open_memmap(out / "v.npy.tmp", "w+", np.int64, (m,))
    _fill(d, sh, seed, u, v)
    _whiskers(d, sh, seed, u, v)
    if out is not None:
        u.flush()
        v.flush()
        del u, v
        for col in "uv":
            os.replace(out / f"{col}.npy.tmp", out / f"{col}.npy")
        return load_arrays(out)
    return u, v


def stream_dir(d: Dataset, scale: float, seed: int, scratch: Path,
               prefix: int | None = None) -> Path:
    tail = "" if prefix is None else f"-prefix{prefix}"
    return scratch / f"{d.key}-beta{d.beta:g}-w{d.whisker}-x{scale:.6g}-seed{seed}{tail}"


def load_arrays(path: Path):
    return tuple(np.asarray(np.load(path / f"{c}.npy", mmap_mode="r")) for c in "uv")


def stream_of(d: Dataset, scale: float, seed: int, scratch: Path, echo=print,
              prefix: int | None = None):
    """The ``Stream`` of ``d`` (generated into ``scratch`` unless already there); ``prefix``:
    its first ``prefix`` edges only."""
    from streamspec.bench.connectivity.generators import Stream, timestamps
    where = stream_dir(d, scale, seed, scratch, prefix)
    if (where / "v.npy").exists():
        u, v = load_arrays(where)
    else:
        started = time.process_time()
        u, v = make_arrays(d, scale, seed, where, prefix)
        whiskers = ""
        if prefix is not None and d.whisker:
            whiskers = (f", whisker edges in the prefix "
                        f"{int(np.sum(np.maximum(u, v) >= shape(d, scale)['ids']))}")
        echo(f"  generated {d.key} x{scale:.4g}: {len(u):,} edges in "
             f"{time.process_time() - started:.1f} CPU s{whiskers} -> {where}")
    desc = (f"{d.key}-shaped {'R-MAT (Graph500)' if d.model == 'rmat' else 'Chung-Lu'} "
            f"beta={d.beta:g} whisker={d.whisker} scale={scale:.4g} seed={seed}"
            + ("" if prefix is None else f" prefix={len(u)}"))
    return Stream(u, v, timestamps(len(u), RATE), desc)


def point(d: Dataset, scale: float, seed: int, scratch: Path, echo=print,
          prefix: int | None = None, edges: int | None = None, queries: int = QUERIES):
    """The stream of one point of Figures 7/8 and its ``Params`` as ``run_dataset`` runs
    them: the window and slide of ``shape``, ``queries`` query pairs among the 1000
    highest-degree vertices; ``edges``: only the stream's first ``edges`` edges (the
    queries drawn from them)."""
    from streamspec.bench.connectivity.generators import workload
    from streamspec.spec.connectivity import Params
    stream = stream_of(d, scale, seed, scratch, echo, prefix)
    if edges is not None:
        stream = stream.prefix(min(edges, len(stream)))
    sh = shape(d, scale)
    return stream, Params(r=sh["r"], s=sh["s"], workload=workload(stream, queries, seed=seed, top=1000))


def scratch_point(key: str, edges: int | None = None, max_edges: int = 16_000_000,
                  prefix: int | None = None, queries: int = QUERIES, echo=print):
    """``point`` of dataset ``key`` as the results scripts replay it: scaled to
    ``max_edges`` (or, with ``prefix``, full size and its first ``prefix`` edges), the
    fitted beta, seed 0, the default scratch directory.  Returns (stream, params, scale)."""
    d = parameters(DATASETS[key], load_fit())
    scale = 1.0 if prefix else scale_of(d, max_edges)
    stream, params = point(d, scale, 0, scratch_dir(), echo, prefix, edges, queries)
    return stream, params, scale


# ---------------------------------------------------------------- statistics

@njit(cache=True)
def _csr(u, v, n):
    """Adjacency of the undirected multigraph ``u``-``v`` over ids ``< n`` (CSR, int32 ids)."""
    deg = np.zeros(n + 1, np.int64)
    for i in range(len(u)):
        deg[u[i] + 1] += 1
        deg[v[i] + 1] += 1
    for i in range(n):
        deg[i + 1] += deg[i]
    fill = deg[:-1].copy()
    nbr = np.empty(deg[n], np.int32)
    for i in range(len(u)):
        a, b = u[i], v[i]
        nbr[fill[a]] = b
        fill[a] += 1
        nbr[fill[b]] = a
        fill[b] += 1
    return deg, nbr


@njit(cache=True)
def _bfs(ptr, nbr, src, dist, queue):
    """BFS from ``src``: (sum of distances, vertices reached, farthest vertex, its distance)."""
    dist[:] = -1
    dist[src] = 0
    queue[0] = src
    head, tail = 0, 1
    total = 0
    far = src
    while head < tail:
        x = queue[head]
        head += 1
        dx = dist[x]
        total += dx
        far = x
        for k in range(ptr[x], ptr[x + 1]):
            y = nbr[k]
            if dist[y] < 0:
                dist[y] = dx + 1
                queue[tail] = y
                tail += 1
    return total, tail, far, dist[far]


def graph_stats(u: np.ndarray, v: np.ndarray, sources: int = 8, seed: int = 0,
                sweeps: int = 2) -> dict:
    """Ids occurring, edges, degree skew, sampled AD and a double-sweep diameter lower bound."""
    # small graphs (the tests) run the kernels' Python source: no compile
    csr, bfs = (_csr.py_func, _bfs.py_func) if len(u) < 100_000 else (_csr, _bfs)
    n = int(max(u.max(), v.max())) + 1
    ptr, nbr = csr(u, v, n)
    degree = np.diff(ptr)
    present = np.flatnonzero(degree)
    top = np.sort(degree[present])[::-1]
    dist = np.empty(n, np.int32)
    queue = np.empty(n, np.int32)
    rng = np.random.default_rng(seed)
    total = reached = 0
    for src in rng.choice(present, min(sources, present.size), replace=False):
        s, r, _, _ = bfs(ptr, nbr, int(src), dist, queue)
        total += s
        reached += r - 1
    diameter = 0
    start = int(np.argmax(degree))
    largest = 0
    for i in range(sweeps):
        _, r, far, ecc = bfs(ptr, nbr, start, dist, queue)
        if i == 0:
            largest = r
        _, _, far2, ecc2 = bfs(ptr, nbr, int(far), dist, queue)
        diameter = max(diameter, int(ecc), int(ecc2))
        start = int(far2)
    return {"vertices": int(present.size), "edges": int(len(u)),
            "avg_degree": round(2 * len(u) / max(present.size, 1), 2),
            "max_degree": int(top[0]) if top.size else 0,
            "top1pct_share": round(float(top[:max(1, top.size // 100)].sum() / top.sum()), 4),
            "largest_cc_share": round(largest / max(present.size, 1), 4),
            "avg_distance": round(total / max(reached, 1), 3), "diameter_lb": diameter,
            "ad_sources": int(min(sources, present.size))}


# ---------------------------------------------------------------- fitting

def fit(d: Dataset, scale: float, seed: int = 0, sources: int = 4, steps: int = 6,
        echo=print) -> dict:
    """``beta`` bisected to the table's AD, then ``whisker`` to its diameter (in memory)."""
    out = {"beta": d.beta, "whisker": 0, "scale": scale, "sources": sources}
    if d.model == "chunglu" and d.ad is not None:
        lo, hi = 2.05, 4.5
        for _ in range(steps):
            mid = round((lo + hi) / 2, 4)
            u, v = make_arrays(attrs.evolve(d, beta=mid, whisker=0), scale, seed)
            st = graph_stats(u, v, sources, seed, sweeps=0)
            echo(f"  fit {d.key}: beta={mid} AD={st['avg_distance']} (target {d.ad})")
            if st["avg_distance"] < d.ad:
                lo = mid
            else:
                hi = mid
        out["beta"] = round((lo + hi) / 2, 4)
    if d.diameter is not None:
        u, v = make_arrays(attrs.evolve(d, beta=out["beta"], whisker=0), scale, seed)
        st = graph_stats(u, v, sources, seed, sweeps=2)
        out["core_diameter_lb"] = st["diameter_lb"]
        out["core_avg_distance"] = st["avg_distance"]
        out["whisker"] = max(0, math.ceil((d.diameter - st["avg_distance"]) / 2))
        echo(f"  fit {d.key}: core D={st['diameter_lb']} AD={st['avg_distance']} -> "
             f"whisker={out['whisker']} (target D {d.diameter})")
    return out


# ---------------------------------------------------------------- Figures 7 and 8

def _calibrate(name: str, stream, params, edges: int) -> float:
    """Edges per CPU second of ``name`` on the first ``edges`` edges (no window reached)."""
    from streamspec.bench.connectivity.measure import run
    m = run(name, stream.prefix(edges), params, warm=False, clock="cpu")
    return m.n_edges / max(m.seconds, 1e-9)


def measure_point(name: str, stream, params, window_edges: int, budget: float, echo=print,
                  windows: int = 0, slide_edges: int = 0):
    """One (engine, stream) point under the budget: ``(Measurement, note)``.

    ``windows`` > 0: the engine is instead fed the first ``window_edges + windows *
    slide_edges`` edges with no budget (``windows`` windows, each trigger's piece whole), for
    an engine whose fill the calibration prefix underestimates (its rate falls as the window
    fills), which the budget would stop after its first window: a first window has no
    expiry, so it says nothing about the latency of the steady windows after it."""
    from streamspec.bench.connectivity.measure import run
    if windows > 0 and window_edges + windows * slide_edges < len(stream):
        n = window_edges + windows * slide_edges
        m = run(name, stream.prefix(n), params, warm=False, clock="cpu")
        return m, (f"WINDOWS: prefix of {n} edges (the window + {windows} slides), no budget; "
                   f"throughput = steady-state edges/s from the first trigger on")
    probe = min(len(stream), max(20_000, window_edges // 100))
    rate = _calibrate(name, stream, params, probe)
    fill_s = window_edges / rate
    if fill_s > FILL_FACTOR * budget and window_edges < len(stream):
        n = max(probe, int(rate * FILL_FACTOR * budget))
        n = min(n, window_edges)             # never a window: the point is the fill's rate
        m = run(name, stream.prefix(n), params, warm=False, clock="cpu")
        again = m.n_edges / max(m.seconds, 1e-9)
        if window_edges / again > FILL_FACTOR * budget:
            return m, (f"SAMPLED: prefix of {n} edges (window fill estimated {fill_s:.0f} CPU s "
                       f"> {FILL_FACTOR:g} x budget at {rate:,.0f} edges/s): no window (X), "
                       f"throughput = inserts of the fill")
        # the calibration prefix was slowed by a one-time cost (a collection, a neighbour's
        # burst): the longer prefix says the window fits, so the point is measured in full
        fill_s = window_edges / again
    m = run(name, stream, params, budget=budget + fill_s, warm=False, clock="cpu")
    return m, ""


PREFIX_FIELDS = ["prefix_edges", "table_edges"]
FIELDS = ["dataset", "engine", "build", "scale", "beta", "whisker", "stream_edges", "ids", "window_edges",
          "slide_edges", "r", "s", "queries", "edges_fed", "windows", "total_s",
          "throughput_eps", "p50_ms", "p95_ms", "p99_ms", "sampled", "budget_s", "commit",
          "load1_before", "load1_after", "cpu_mhz", "method"]


def cpu_mhz() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            vals = [float(line.split(":")[1]) for line in handle if line.startswith("cpu MHz")]
        return f"{sum(vals) / len(vals):.0f}" if vals else ""
    except OSError:
        return ""


def run_dataset(d: Dataset, scale: float, engines, budget: float, seed: int, scratch: Path,
                out: Path, echo=print, windows: int = 0, prefix: int | None = None) -> list[dict]:
    from streamspec.bench import pipeline_util
    from streamspec.bench.connectivity.measure import warm_up
    stream, params = point(d, scale, seed, scratch, echo, prefix)
    sh = shape(d, scale)
    window_edges = sh["r"] * RATE
    code = pipeline_util.commit()
    rows = []
    for name in engines:
        warm_up(name)
        before = os.getloadavg()[0]
        m, note = measure_point(name, stream, params, window_edges, budget, echo, windows,
                                sh["s"] * RATE)
        after = os.getloadavg()[0]
        row = m.row()
        if note.startswith("WINDOWS"):       # a prefix run to its end: the steady rate, as budgeted rows
            row["throughput_eps"] = round(m.steady_throughput, 1)
        sampled = bool(note) or m.truncated
        row = {"dataset": d.key, "engine": name, "build": row["build"], "scale": f"{scale:.6g}",
               "beta": d.beta, "whisker": d.whisker,
               "stream_edges": len(stream), "ids": sh["ids"], "window_edges": window_edges,
               "slide_edges": sh["s"] * RATE, "r": sh["r"], "s": sh["s"], "queries": QUERIES,
               "edges_fed": row["edges_fed"], "windows": row["windows"],
               "total_s": row["total_s"], "throughput_eps": row["throughput_eps"],
               "p50_ms": row["p50_ms"], "p95_ms": row["p95_ms"], "p99_ms": row["p99_ms"],
               "sampled": sampled, "budget_s": budget, "commit": code,
               "load1_before": round(before, 2), "load1_after": round(after, 2),
               "cpu_mhz": cpu_mhz(), "method": f"{note + '; ' if note else ''}{m.method}"}
        if prefix is not None:
            row["prefix_edges"] = len(stream)
            row["table_edges"] = d.edges
            row["method"] = (f"PREFIX: the first {len(stream):,} edges of the full-size "
                             f"{d.edges:,}-edge stream (|V| {sh['ids']:,}); {row['method']}")
        rows.append(row)
        echo(f"  {d.key} {name:34s} {row['throughput_eps']:14,.0f} edges/CPU-s P95 {row['p95_ms']:10.3f} "
             f"P99 {row['p99_ms']:10.3f} ms ({row['windows']} windows{', SAMPLED' if sampled else ''}"
             f", load {before:.1f}-{after:.1f})")
        append(out, rows[-1:], FIELDS + PREFIX_FIELDS if prefix is not None else FIELDS)
    return rows


def append(path: Path, rows: list[dict], fields=FIELDS) -> None:
    """Add ``rows`` to ``path``, replacing older rows of the same dataset and engine (under a
    lock: two datasets may run at once)."""
    import fcntl
    path.parent.mkdir(parents=True, exist_ok=True)
    import tempfile
    with open(Path(tempfile.gettempdir(), f"streamspec-{path.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _append(path, rows, fields)


def _append(path: Path, rows: list[dict], fields) -> None:
    old = []
    if path.exists():
        with open(path, newline="") as handle:
            old = list(csv.DictReader(handle))
    keys = {(r["dataset"], r["engine"]) if "engine" in fields else r["dataset"] for r in rows}
    old = [r for r in old
           if ((r["dataset"], r["engine"]) if "engine" in fields else r["dataset"]) not in keys]
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    with open(tmp, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows({k: r.get(k, "") for k in fields} for r in old + rows)
    tmp.replace(path)


def _f(x) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return float("nan")


def label(engine: str) -> str:
    return {"bic": "bic (deferred)", "bic:build=inside,prereduce=false": "bic (paper's: inside)",
            "ettree": "ET-tree", "hdt": "HDT", "dtree": "D-Tree", "rwc": "RWC", "dfs": "DFS",
            "msf": "msf"}.get(engine, engine)


def plot(rows: list[dict], path: Path, metrics, title: str) -> None:
    """Bars per dataset (x) and engine, log scale; hatched = sampled; 'X' = no value."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = [k for k in DATASETS if any(r["dataset"] == k for r in rows)]
    engines = [e for e in ENGINES if any(r["engine"] == e for r in rows)]
    fig, axes = plt.subplots(len(metrics), 1, figsize=(max(12, 1.6 * len(order) + 4),
                                                       3.8 * len(metrics)), squeeze=False)
    width = 0.85 / max(len(engines), 1)
    for ax, (metric, ylabel) in zip(axes[:, 0], metrics):
        for j, engine in enumerate(engines):
            color = f"C{j}"
            for i, key in enumerate(order):
                row = next((r for r in rows if r["dataset"] == key and r["engine"] == engine), None)
                x = i + j * width
                value = _f(row[metric]) if row else float("nan")
                if not np.isfinite(value):
                    if row is not None:
                        ax.text(x, 0.02, "X", ha="center", va="bottom", color=color,
                                fontsize=8, transform=ax.get_xaxis_transform())
                    continue
                sampled = str(row["sampled"]) == "True"
                ax.bar(x, value, width, color="none" if sampled else color, edgecolor=color,
                       hatch="//" if sampled else None,
                       label=label(engine) if i == 0 or not ax.get_legend_handles_labels()[1]
                       .count(label(engine)) else None)
        ax.set_xticks(np.arange(len(order)) + 0.425 - width / 2,
                      [f"{k}\nx{_f(next(r for r in rows if r['dataset'] == k)['scale']):.3g}"
                       for k in order])
        ax.set_yscale("log")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", axis="y", alpha=0.3)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    seen = dict(zip(labels, handles))
    axes[0, 0].legend(seen.values(), seen.keys(), fontsize=7, ncol=4)
    import textwrap
    note = ("hatched: sampled (budget; prefix or the windows reached); X / missing: no window "
            "within the budget; xN under a graph: its scale")
    width_chars = int(fig.get_figwidth() * 14)
    fig.suptitle(textwrap.fill(title, width_chars) + "\n" + note, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plots(csv_path: Path) -> list[Path]:
    with open(csv_path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    loads = sorted(_f(r["load1_before"]) for r in rows) + sorted(_f(r["load1_after"]) for r in rows)
    prefixed = any(r.get("prefix_edges") for r in rows)
    what = (f"{'First edges of full-size ' if prefixed else ''}"
            f"Table 1-shaped streams, window 3M x scale edges, slide 150K x scale, 100 queries "
            f"(top-1000 degree), CPU clock, through process(); commit "
            f"{', '.join(sorted({r['commit'] for r in rows}))}; load {min(loads):g}-{max(loads):g}")
    fig7 = csv_path.with_name(csv_path.name.replace("fig7-8.csv", "fig7.png"))
    fig8 = csv_path.with_name(csv_path.name.replace("fig7-8.csv", "fig8.png"))
    plot(rows, fig7, [("throughput_eps", "throughput (edges/CPU-s)")], "Figure 7: " + what)
    plot(rows, fig8, [("p95_ms", "P95 window latency (ms)"), ("p99_ms", "P99 window latency (ms)")],
         "Figure 8: " + what)
    return [fig7, fig8]


def check(rows: list[dict]) -> list[dict]:
    """The paper's headline per dataset: BIC >= 7x RWC's throughput, >= 100x lower P95 than D-Tree."""
    out = []
    for key in DATASETS:
        got = {r["engine"]: r for r in rows if r["dataset"] == key}
        if not got:
            continue
        for bic in ("bic", "bic:build=inside,prereduce=false"):
            if bic not in got:
                continue
            b = got[bic]
            for other, metric, need in (("rwc", "throughput", 7.0), ("dtree", "p95", 100.0)):
                if other not in got:
                    continue
                o = got[other]
                if metric == "throughput":
                    ratio = _f(b["throughput_eps"]) / _f(o["throughput_eps"])
                else:
                    ratio = _f(o["p95_ms"]) / _f(b["p95_ms"])
                out.append({"dataset": key, "bic": bic, "against": other, "metric": metric,
                            "ratio": round(ratio, 2) if np.isfinite(ratio) else "",
                            "required": need, "met": bool(np.isfinite(ratio) and ratio >= need),
                            "bic_value": b["throughput_eps" if metric == "throughput" else "p95_ms"],
                            "other_value": o["throughput_eps" if metric == "throughput" else "p95_ms"],
                            "other_sampled": o["sampled"]})
    return out


def markdown(out: Path) -> str:
    """The stats and the Figure 7/8 rows as two markdown tables (for the README)."""
    lines = []
    if (out / "table1-stats.csv").exists():
        with open(out / "table1-stats.csv", newline="") as handle:
            stats = {r["dataset"]: r for r in csv.DictReader(handle)}
        lines += ["| graph | scale | beta / whisker | V (table x scale) | E | max degree | "
                  "top-1% share | AD (table) | D >= (table) |", "| --- " * 9 + "|"]
        for key in (k for k in DATASETS if k in stats):
            r = stats[key]
            sc = _f(r["scale"])
            lines.append(f"| {key} | {sc:.3g} | {r['beta']} / {r['whisker']} | "
                         f"{int(r['vertices']) / 1e6:.2f}M ({int(r['table_vertices']) * sc / 1e6:.2f}M)"
                         f" | {int(r['edges']) / 1e6:.1f}M | {int(r['max_degree']):,} | "
                         f"{r['top1pct_share']} | {r['avg_distance']} ({r['table_ad'] or '-'}) | "
                         f"{r['diameter_lb']} ({r['table_diameter'] or '-'}) |")
    if (out / "table1-fig7-8.csv").exists():
        with open(out / "table1-fig7-8.csv", newline="") as handle:
            rows = list(csv.DictReader(handle))
        engines = [e for e in ENGINES if any(r["engine"] == e for r in rows)]
        lines += ["", "| graph | " + " | ".join(label(e) for e in engines) + " |",
                  "| --- " * (len(engines) + 1) + "|"]
        for key in (k for k in DATASETS if any(r["dataset"] == k for r in rows)):
            cells = []
            for e in engines:
                r = next((r for r in rows if r["dataset"] == key and r["engine"] == e), None)
                if r is None:
                    cells.append("")
                    continue
                p95, p99 = _f(r["p95_ms"]), _f(r["p99_ms"])
                lat = f"{p95:.3g} / {p99:.3g}" if np.isfinite(p95) else "X"
                star = "*" if r["sampled"] == "True" else ""
                cells.append(f"{_f(r['throughput_eps']) / 1e6:.3g}M, {lat}{star}")
            lines.append(f"| {key} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------- command line

STATS_FIELDS = ["dataset", "name", "model", "beta", "whisker", "scale", "ids", "table_vertices",
                "vertices", "table_edges", "edges", "avg_degree", "max_degree", "top1pct_share",
                "largest_cc_share", "table_ad", "avg_distance", "ad_sources", "table_diameter",
                "diameter_lb", "cpu_s", "load1", "commit"]
PREFIX_STATS_FIELDS = STATS_FIELDS + ["prefix_edges"]
CHECK_FIELDS = ["dataset", "bic", "against", "metric", "ratio", "required", "met", "bic_value",
                "other_value", "other_sampled"]


def stats_row(d: Dataset, scale: float, seed: int, scratch: Path, sources: int, echo=print,
              prefix: int | None = None):
    from streamspec.bench import pipeline_util
    stream = stream_of(d, scale, seed, scratch, echo, prefix)
    started = time.process_time()
    st = graph_stats(stream.u, stream.v, sources, seed)
    sh = shape(d, scale)
    row = {"dataset": d.key, "name": d.name, "model": d.model, "beta": d.beta,
           "whisker": d.whisker, "scale": f"{scale:.6g}", "ids": sh["ids"],
           "table_vertices": d.vertices, "table_edges": d.edges,
           "table_ad": "" if d.ad is None else d.ad,
           "table_diameter": "" if d.diameter is None else d.diameter,
           "cpu_s": round(time.process_time() - started, 1), "load1": pipeline_util.load(),
           "commit": pipeline_util.commit(), **st}
    if prefix is not None:      # the statistics are the prefix's, as a graph of its own
        row["prefix_edges"] = len(stream)
    echo(f"  stats {d.key} x{scale:.4g}: |V| {st['vertices']:,} (table {d.vertices * scale:,.0f}) "
         f"|E| {st['edges']:,} AD {st['avg_distance']} (table {d.ad or '-'}) D>={st['diameter_lb']} "
         f"(table {d.diameter or '-'}) max deg {st['max_degree']:,} top-1% share "
         f"{st['top1pct_share']}")
    return row


def split_engines(text: str) -> list[str]:
    """``"bic,bic:build=inside,prereduce=false,msf"`` -> three names: a piece with ``=`` and
    no ``:`` is one more option of the name before it."""
    names: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if piece and "=" in piece and ":" not in piece and names:
            names[-1] += "," + piece
        elif piece:
            names.append(piece)
    return names


def arguments(argv=None):
    p = argparse.ArgumentParser(prog="python -m streamspec.bench.connectivity.table1",
                                description=__doc__.splitlines()[0])
    p.add_argument("command", choices=["generate", "fit", "stats", "run", "plot", "check", "all",
                                       "table"])
    p.add_argument("--datasets", default=",".join(DATASETS),
                   help="comma-separated keys of Table 1 (default: all ten, smallest first)")
    p.add_argument("--engines", default=",".join(ENGINES))
    p.add_argument("--max-edges", type=int, default=MAX_EDGES,
                   help="graphs above this many edges are scaled down to it (default 64M)")
    p.add_argument("--budget", type=float, default=10.0,
                   help="CPU seconds per point after the window is full (default 10)")
    p.add_argument("--windows", type=int, default=0,
                   help="feed each engine the window + this many slides with no budget (for an "
                        "engine the budget stops after its first window; default 0: the budget)")
    p.add_argument("--fit-steps", type=int, default=6, help="bisection steps of fit's beta")
    p.add_argument("--sources", type=int, default=8, help="BFS sources for the sampled AD")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--scratch", help="where streams are written (default $STREAMSPEC_SCRATCH or "
                                     "/tmp/streamspec-table1)")
    p.add_argument("--out-dir", default=str(RESULTS))
    p.add_argument("--keep", action="store_true", help="keep generated streams after the run")
    p.add_argument("--prefix-edges", type=int, default=None,
                   help="full-size streams (scale 1, the paper's window and slide), only their "
                        "first N edges generated and run")
    p.add_argument("--tag", default=None,
                   help="results files table1-TAG-*.csv/png (default: 'prefix' with "
                        "--prefix-edges, none otherwise)")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = arguments(argv)
    out = Path(args.out_dir)
    scratch = scratch_dir(args.scratch)
    keys = [k.strip().upper() for k in args.datasets.split(",") if k.strip()]
    fitted = load_fit(out / "table1-fit.json")
    echo = lambda s: print(s, flush=True)   # noqa: E731
    tag = args.tag if args.tag is not None else ("prefix" if args.prefix_edges else "")
    base = f"table1-{tag}-" if tag else "table1-"
    fig_csv = out / f"{base}fig7-8.csv"
    prefix = args.prefix_edges
    if args.command == "table":
        echo(markdown(out))
        return 0
    for key in keys:
        d = parameters(DATASETS[key], fitted)
        scale = 1.0 if prefix else scale_of(d, args.max_edges)
        if args.command == "fit":
            if prefix:
                raise SystemExit("fit runs on whole streams, not with --prefix-edges")
            got = fit(d, scale, args.seed, steps=args.fit_steps, echo=echo)
            fitted[key] = got
            (out / "table1-fit.json").write_text(json.dumps(fitted, indent=1) + "\n")
            continue
        if args.command in ("generate", "all"):
            stream_of(d, scale, args.seed, scratch, echo, prefix)
        if args.command in ("stats", "all"):
            append(out / f"{base}stats.csv", [stats_row(d, scale, args.seed, scratch,
                                                        args.sources, echo, prefix)],
                   PREFIX_STATS_FIELDS if prefix else STATS_FIELDS)
        if args.command in ("run", "all"):
            run_dataset(d, scale, split_engines(args.engines), args.budget,
                        args.seed, scratch, fig_csv, echo, args.windows, prefix)
            if not args.keep:
                where = stream_dir(d, scale, args.seed, scratch, prefix)
                for f in where.glob("*.npy"):
                    f.unlink()
    if args.command in ("plot", "all", "run") and fig_csv.exists():
        for png in plots(fig_csv):
            echo(f"wrote {png}")
    if args.command in ("check", "all", "run") and fig_csv.exists():
        with open(fig_csv, newline="") as handle:
            verdicts = check(list(csv.DictReader(handle)))
        path = out / f"{base}headline.csv"
        with open(path, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=CHECK_FIELDS)
            writer.writeheader()
            writer.writerows(verdicts)
        for v in verdicts:
            echo(f"  {v['dataset']} {v['bic']:34s} vs {v['against']:5s} {v['metric']:10s} "
                 f"{v['ratio']}x (need {v['required']:g}x): {'met' if v['met'] else 'NOT met'}")
        echo(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
