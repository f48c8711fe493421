"""Seeded streaming-graph generators shaped like the BIC paper's data.

BIC TR Section 7.1: the synthetic graph GF is a
Graph500 (R-MAT) graph, and every dataset without real timestamps is replayed
at a fixed rate, the same number of edges per timestamp.  ``rmat_stream``
reproduces that shape at any size; ``powerlaw_stream`` (Chung-Lu endpoints) is
a second heavy-tailed model with an explicit exponent.

Parameters (all documented on ``rmat_stream``) fully determine the stream:
the same ``seed`` gives the same arrays on every machine (numpy ``PCG64``).
Vertex ids are ints in ``[0, n_vertices)``; a vertex no edge touches simply
never appears.  Timestamps are ``t0 + i // edges_per_timestamp``, so every
timestamp holds exactly ``edges_per_timestamp`` edges (the last may hold fewer)
and a window of ``r`` time units holds ``r * edges_per_timestamp`` edges.
"""
from __future__ import annotations

import attrs
import numpy as np

from streamspec.spec.connectivity import EdgeBatch

GRAPH500 = (0.57, 0.19, 0.19, 0.05)   # R-MAT quadrant probabilities of the Graph500 generator
_CHUNK = 1 << 20                        # edges drawn per block (bounds the temporary memory)


@attrs.frozen(eq=False)
class Stream:
    """A generated (or loaded) edge stream: int64 columns sorted by ``t``."""

    u: np.ndarray
    v: np.ndarray
    t: np.ndarray
    description: str = ""

    def __len__(self) -> int:
        return len(self.t)

    def batch(self, lo: int = 0, hi: int | None = None) -> EdgeBatch:
        """Edges ``lo:hi`` as the contract's fast-path ``EdgeBatch`` (views, no copy)."""
        return EdgeBatch(self.u[lo:hi], self.v[lo:hi], self.t[lo:hi])

    def slide_bounds(self, s: int, t0: int | None = None) -> np.ndarray:
        """Edge offsets cutting the stream into slides ``[t0 + k*s, t0 + (k+1)*s)``.

        Feeding slide ``k`` to an engine makes exactly the window that ends at
        the slide's start due (the continuous model), so one ``process`` call
        per slide is one window evaluation (plus one slide of inserts).
        """
        if len(self) == 0:
            return np.zeros(1, dtype=np.int64)
        t0 = int(self.t[0]) if t0 is None else t0
        n_slides = (int(self.t[-1]) - t0) // s + 1
        cuts = t0 + s * np.arange(n_slides + 1, dtype=np.int64)
        return np.searchsorted(self.t, cuts, side="left").astype(np.int64)

    def slides(self, s: int, t0: int | None = None):
        """The stream as one ``EdgeBatch`` per slide (empty slides are skipped)."""
        bounds = self.slide_bounds(s, t0)
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            if hi > lo:
                yield self.batch(lo, hi)

    def prefix(self, n_edges: int) -> "Stream":
        return Stream(self.u[:n_edges], self.v[:n_edges], self.t[:n_edges],
                      f"{self.description} (first {n_edges} edges)")


def timestamps(n_edges: int, edges_per_timestamp: int, t0: int = 0) -> np.ndarray:
    """``t0 + i // edges_per_timestamp``: a fixed arrival rate (the paper's synthetic timestamps)."""
    if edges_per_timestamp <= 0:
        raise ValueError(f"edges_per_timestamp must be > 0, got {edges_per_timestamp}")
    return t0 + np.arange(n_edges, dtype=np.int64) // edges_per_timestamp


def _scale(n_vertices: int) -> int:
    return max(1, int(np.ceil(np.log2(max(n_vertices, 2)))))


def rmat_endpoints(rng: np.random.Generator, n_edges: int, scale: int,
                   probabilities=GRAPH500, noise: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """R-MAT endpoints in ``[0, 2**scale)``: at each of ``scale`` levels pick a quadrant.

    ``noise`` perturbs the quadrant probabilities per level as Graph500 does
    (uniformly by up to +-noise, renormalised), which smooths the degree
    staircase of plain R-MAT.
    """
    a, b, c, d = probabilities
    if min(a, b, c, d) < 0 or abs(a + b + c + d - 1.0) > 1e-9:
        raise ValueError(f"R-MAT probabilities must be >= 0 and sum to 1, got {probabilities}")
    u = np.zeros(n_edges, dtype=np.int64)
    v = np.zeros(n_edges, dtype=np.int64)
    for level in range(scale):
        jitter = 1.0 + noise * (2.0 * rng.random(4) - 1.0) if noise else np.ones(4)
        pa, pb, pc, pd = np.array([a, b, c, d]) * jitter
        total = pa + pb + pc + pd
        pa, pb, pc = pa / total, pb / total, pc / total
        x = rng.random(n_edges)
        # quadrant a = (0, 0), b = (0, 1), c = (1, 0), d = (1, 1)
        right = ((x >= pa) & (x < pa + pb)) | (x >= pa + pb + pc)
        down = x >= pa + pb
        bit = np.int64(1) << (scale - 1 - level)
        u += down * bit
        v += right * bit
    return u, v


def rmat_stream(n_vertices: int, n_edges: int, edges_per_timestamp: int, *, seed: int = 0,
                probabilities=GRAPH500, noise: float = 0.1, self_loops: bool = False,
                t0: int = 0) -> Stream:
    """A Graph500-style R-MAT streaming graph.

    - ``n_vertices``: size of the id space ``[0, n_vertices)``.  Endpoints are
      drawn on ``2**ceil(log2 n_vertices)`` ids, scattered by a seeded random
      permutation (so high-degree vertices are not the small ids, as in
      Graph500) and folded into range with ``% n_vertices``.
    - ``n_edges``: stream length; ``edges_per_timestamp``: arrival rate
      (timestamps ``t0, t0+1, ...``, each with exactly that many edges).
    - ``seed``: everything is drawn from ``numpy.random.default_rng(seed)``.
    - ``probabilities``: R-MAT quadrant probabilities ``(a, b, c, d)``
      (default Graph500's ``0.57, 0.19, 0.19, 0.05``); ``noise``: per-level
      jitter of those probabilities (0 = plain R-MAT).
    - ``self_loops``: keep ``u == v`` edges (the contract allows them; the
      paper's loader drops them).  When False, a self-loop's ``v`` is redrawn
      uniformly until it differs (a tiny, documented deviation from R-MAT).
    - Duplicate edges are kept: on a stream they are re-arrivals of a pair.
    """
    if n_vertices < 2 and not self_loops:
        raise ValueError("without self-loops a stream needs at least 2 vertices")
    rng = np.random.default_rng(seed)
    scale = _scale(n_vertices)
    permutation = rng.permutation(1 << scale).astype(np.int64)
    us, vs = [], []
    for lo in range(0, n_edges, _CHUNK):
        u, v = rmat_endpoints(rng, min(_CHUNK, n_edges - lo), scale, probabilities, noise)
        us.append(permutation[u] % n_vertices)
        vs.append(permutation[v] % n_vertices)
    u = np.concatenate(us) if us else np.empty(0, np.int64)
    v = np.concatenate(vs) if vs else np.empty(0, np.int64)
    if not self_loops:
        _redraw_self_loops(rng, u, v, n_vertices)
    desc = (f"R-MAT n_vertices={n_vertices} n_edges={n_edges} "
            f"edges_per_timestamp={edges_per_timestamp} seed={seed} p={tuple(probabilities)} "
            f"noise={noise}")
    return Stream(u, v, timestamps(n_edges, edges_per_timestamp, t0), desc)


def powerlaw_stream(n_vertices: int, n_edges: int, edges_per_timestamp: int, *, seed: int = 0,
                    exponent: float = 2.5, self_loops: bool = False, t0: int = 0) -> Stream:
    """A Chung-Lu streaming graph: both endpoints drawn with probability ``~ w_i``.

    ``w_i = (i + 1) ** (-1 / (exponent - 1))`` gives a degree distribution with
    tail exponent ``exponent`` (> 2); ids are scattered by a seeded permutation.
    Other parameters as in ``rmat_stream``.
    """
    if exponent <= 2:
        raise ValueError(f"power-law exponent must be > 2, got {exponent}")
    if n_vertices < 2 and not self_loops:
        raise ValueError("without self-loops a stream needs at least 2 vertices")
    rng = np.random.default_rng(seed)
    weights = np.arange(1, n_vertices + 1, dtype=np.float64) ** (-1.0 / (exponent - 1.0))
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    permutation = rng.permutation(n_vertices).astype(np.int64)

    def draw(k):
        return permutation[np.minimum(np.searchsorted(cdf, rng.random(k), side="right"),
                                      n_vertices - 1)]

    u, v = draw(n_edges), draw(n_edges)
    if not self_loops:
        _redraw_self_loops(rng, u, v, n_vertices)
    desc = (f"Chung-Lu n_vertices={n_vertices} n_edges={n_edges} "
            f"edges_per_timestamp={edges_per_timestamp} seed={seed} exponent={exponent}")
    return Stream(u, v, timestamps(n_edges, edges_per_timestamp, t0), desc)


def _redraw_self_loops(rng, u, v, n_vertices) -> None:
    loops = np.flatnonzero(u == v)
    while loops.size:
        v[loops] = rng.integers(0, n_vertices, loops.size)
        loops = loops[u[loops] == v[loops]]


def workload(stream: Stream, n_queries: int, *, seed: int = 0, top: int | None = 1000) -> list:
    """Query pairs like the paper's (TR Section 7.1): distinct, non-adjacent vertices.

    ``top``: draw both ends from the ``top`` highest-degree vertices (the
    paper's top-100/500/1000 workloads); ``None``: uniformly from all vertices
    of the stream.  Pairs that are an edge of the stream are redrawn (up to a
    bounded number of tries, so tiny graphs still get a workload).
    """
    rng = np.random.default_rng(seed)
    if len(stream) == 0:
        raise ValueError("the stream has no edges")
    span = int(max(stream.u.max(), stream.v.max())) + 1
    if min(stream.u.min(), stream.v.min()) < 0:
        raise ValueError("workload() needs non-negative integer vertex ids")
    if span <= 4 * len(stream) + (1 << 20):      # dense enough for counting arrays
        degree = np.bincount(stream.u, minlength=span) + np.bincount(stream.v, minlength=span)
        ids = np.flatnonzero(degree)
        degree = degree[ids]
    else:                                        # sparse ids (raw SNAP files): sort instead
        ids, degree = np.unique(np.concatenate([stream.u, stream.v]), return_counts=True)
    if ids.size < 2:
        raise ValueError("the stream has fewer than two vertices")
    pool = ids[np.argsort(-degree, kind="stable")[:top]] if top else ids
    if pool.size < 2:
        pool = ids
    # the stream's pairs among pool vertices only, as sorted keys lo * span + hi
    among = np.isin(stream.u, pool) & np.isin(stream.v, pool)
    lo = np.minimum(stream.u[among], stream.v[among])
    hi = np.maximum(stream.u[among], stream.v[among])
    keys = np.unique(lo * span + hi)
    queries = []
    for _ in range(n_queries):
        for _attempt in range(100):
            a, b = rng.choice(pool, 2, replace=False).tolist()
            key = min(a, b) * span + max(a, b)
            at = int(np.searchsorted(keys, key))
            if at == keys.size or keys[at] != key:
                break
        queries.append((int(a), int(b)))
    return queries
