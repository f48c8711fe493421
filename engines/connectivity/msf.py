"""MSF: sliding-window connectivity by a maximum spanning forest keyed by edge time.

Every streamed edge joins a spanning forest of all edges so far that keeps
the newest edges: an edge between two trees links them; an edge inside a tree
closes a cycle and replaces the oldest edge on it (the path between its
endpoints), so the forest is a maximum spanning forest for edge time.  In
such a forest the oldest edge on the path between ``a`` and ``b`` is the
bottleneck of every ``a``-``b`` path of the graph, hence (notes/connectivity.md
semantics) ``Q(a, b)`` on window ``[start, end)`` holds iff both are present
and the oldest edge on their forest path is at or after ``start`` (every edge
applied is before ``end`` when the window is answered).  Expiry needs no
deletion at all: an expired edge stays in the forest until a newer edge
replaces it, so the work per edge and per window is a few link-cut tree
operations, O(log n) amortized, and nothing is deferred.

This is the incremental-MSF view of sliding-window connectivity used by the
AM-tree line of work (issue 13 of the tracker); the dynamic trees are
Sleator-Tarjan link-cut trees (splay-based, JACM 32(3) 1985) with edges as
nodes, in ``_msf_kernels``.  Presence is the last time each vertex was an
endpoint (present in window ``[start, end)`` iff at or after ``start``: no
applied edge is at or after ``end``).  Two shortcuts, both exact:

- a union-find of forest components (components only merge: the forest never
  loses a connection) answers "different trees" without touching the tree;
- each query caches the last path minimum it computed: the bottleneck of a
  pair only grows as edges arrive, so a cached minimum at or after ``start``
  answers true without a path query.
"""
from __future__ import annotations

import numpy as np

from streamspec.engines.connectivity import _msf_kernels as kernels
from streamspec.spec.connectivity import ConnectivityEngine

_MIN_CAPACITY = 64


class MsfEngine(ConnectivityEngine):
    """Maximum spanning forest on edge time in link-cut trees; path-min queries."""

    name = "msf"
    exact = True
    description = ("maximum spanning forest keyed by edge time in link-cut trees, "
                   "oldest-edge-on-path queries (numba)")

    def _start(self) -> None:
        self._cap = 0
        self._L = self._R = self._P = self._AGG = self._STACK = np.zeros(0, np.int32)
        self._REV = np.zeros(0, np.uint8)
        self._ET = self._SEEN = np.zeros(0, np.int64)
        self._UF = self._FREE = np.zeros(0, np.int32)
        self._st = np.zeros(kernels.N_ST, dtype=np.int64)
        self._st[kernels.LAST_T] = kernels.NEVER
        q = self.queries
        self._qa = np.ascontiguousarray(q[:, 0], dtype=np.int64)
        self._qb = np.ascontiguousarray(q[:, 1], dtype=np.int64)
        self._cache = np.full(len(q), kernels.NEVER, dtype=np.int64)
        self._one = np.full(1, kernels.NEVER, dtype=np.int64)
        self._reserve(max(self.n_vertices, _MIN_CAPACITY))

    def _reserve(self, n: int) -> None:
        """Capacity for ``n`` vertices: nodes 2x (vertex) and 2k+1 (edge slot k < n)."""
        old = self._cap
        if n <= old:
            return
        cap = max(old, _MIN_CAPACITY)
        while cap < n:
            cap *= 2

        def grown(arr, size, fill, dtype):
            out = np.empty(size, dtype=dtype)
            out[:len(arr)] = arr
            out[len(arr):] = fill
            return out
        self._L = grown(self._L, 2 * cap, -1, np.int32)
        self._R = grown(self._R, 2 * cap, -1, np.int32)
        self._P = grown(self._P, 2 * cap, -1, np.int32)
        self._REV = grown(self._REV, 2 * cap, 0, np.uint8)
        agg = grown(self._AGG, 2 * cap, 0, np.int32)
        agg[2 * old:] = np.arange(2 * old, 2 * cap, dtype=np.int32)   # a lone node is its own min
        self._AGG = agg
        self._ET = grown(self._ET, cap, kernels.INF, np.int64)
        self._SEEN = grown(self._SEEN, cap, kernels.NEVER, np.int64)
        uf = grown(self._UF, cap, 0, np.int32)
        uf[old:] = np.arange(old, cap, dtype=np.int32)
        self._UF = uf
        self._FREE = grown(self._FREE, cap, 0, np.int32)
        self._STACK = np.zeros(2 * cap, np.int32)   # scratch: a splay path is at most every node
        self._cap = cap

    def _arrays(self):
        return (self._L, self._R, self._P, self._REV, self._AGG, self._ET, self._STACK)

    # -- engine hooks -------------------------------------------------------------
    def _run(self, u, v, t, upto):
        self._reserve(self.n_vertices)
        nw = self.next_window
        out = np.zeros((max(upto - nw, 0), len(self._qa)), dtype=bool)
        w = self.windows
        kernels.msf_run(*self._arrays(), self._UF, self._FREE, self._SEEN, self._st,
                        np.ascontiguousarray(u, dtype=np.int64),
                        np.ascontiguousarray(v, dtype=np.int64),
                        np.ascontiguousarray(t, dtype=np.int64), w.t0, w.r, w.s, nw, upto,
                        self._qa, self._qb, self._cache, out)
        return out

    def _connected(self, a, b):
        if a >= self._cap or b >= self._cap:
            return False            # first seen in an edge not applied yet
        self._one[0] = kernels.NEVER
        start = self.windows.start(self.next_window - 1)
        return bool(kernels.answer(*self._arrays(), self._UF, self._SEEN, a, b, start,
                                   self._one, 0))

    # -- inspection (tests) ---------------------------------------------------------
    def forest(self) -> list[tuple[int, int, int]]:
        """The forest's edges as ``(dense id, dense id, time)`` with the smaller id first."""
        n = min(self.n_vertices, self._cap)
        rows = kernels.forest_edges(*self._arrays(), self._UF, n)
        return sorted((min(a, b), max(a, b), c) for a, b, c in rows.tolist())
