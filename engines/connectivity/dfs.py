"""DFS: a depth-first search per query per window (the BIC paper's DFS baseline).

Zhang, Bonifati, Oezsu, BIC technical report Section 7.1 ("DFS corresponds to
executing a depth-first search for each query in each window instance") and
Section 7.4 (Figure 11, where DFS is compared over workloads of 1 to 10^4
queries).  The authors' Java runs it behind the FDC driver of D-Tree, ET-Tree
and HDT: every edge enters an adjacency structure
on arrival, the expired edges are deleted one by one at each slide, and each
window answers its workload with one search per query.  Semantics:
``streamspec.spec.connectivity``.

Unlike the oracle (``reference.connectivity``), which rebuilds each window's
graph from scratch, this keeps one incrementally maintained adjacency
(``_dfs_kernels``: O(1) insert and delete of an edge, doubly linked half-edge
lists over a pool of edge slots), so a window costs its deletions plus one
search per query: cheap for one query, hopeless for many, which is the
trade-off Figure 11 shows.  Self-loops and repeated edges are separate edges
of the multigraph; presence is "an endpoint of a stored window edge".
"""
from __future__ import annotations

import numpy as np

from streamspec.engines.connectivity import _dfs_kernels as kernels
from streamspec.engines.connectivity._edge_pool import (MIN_CAPACITY, capacity, grow as _grow,
                                                        grow_free_ids, reserve_fifo)
from streamspec.spec.connectivity import ConnectivityEngine


class DfsEngine(ConnectivityEngine):
    """An adjacency of the window's edges, one depth-first search per query per window."""

    name = "dfs"
    exact = True
    description = ("depth-first search per query per window over an adjacency kept by "
                   "inserting and deleting edges (the paper's DFS baseline)")

    def _start(self) -> None:
        self._adj_head = np.zeros(0, dtype=np.int64)   # first half-edge of each vertex, -1 none
        self._stamp = np.zeros(0, dtype=np.int64)      # visited <=> == the query's mark
        self._stack = np.zeros(0, dtype=np.int64)
        self._mark = 0
        self._eu = np.zeros(0, dtype=np.int64)
        self._ev = np.zeros(0, dtype=np.int64)
        self._et = np.zeros(0, dtype=np.int64)
        self._he_next = np.zeros(0, dtype=np.int64)
        self._he_prev = np.zeros(0, dtype=np.int64)
        self._free_ids = np.zeros(0, dtype=np.int64)   # stack of free edge slots
        self._n_free = 0
        self._fifo_slot = np.zeros(MIN_CAPACITY, dtype=np.int64)
        self._fifo_t = np.zeros(MIN_CAPACITY, dtype=np.int64)
        self._head = 0
        self._tail = 0

    # -- capacity -----------------------------------------------------------
    def _reserve_vertices(self, n: int) -> None:
        if n <= len(self._adj_head):
            return
        cap = capacity(len(self._adj_head), n)
        self._adj_head = _grow(self._adj_head, cap, -1)
        self._stamp = _grow(self._stamp, cap, 0)        # marks start at 1
        self._stack = np.zeros(cap, dtype=np.int64)

    def _reserve_edges(self, n: int) -> None:
        """``n`` free edge slots in the pool, room for ``n`` more FIFO entries."""
        if self._n_free < n:
            old = len(self._eu)
            cap = capacity(old, old - self._n_free + n)
            self._eu, self._ev, self._et = (_grow(a, cap, -1) for a in (self._eu, self._ev,
                                                                       self._et))
            self._he_next = _grow(self._he_next, 2 * cap, -1)
            self._he_prev = _grow(self._he_prev, 2 * cap, -1)
            self._free_ids, self._n_free = grow_free_ids(self._free_ids, self._n_free, old, cap)
        self._fifo_slot, self._fifo_t, self._head, self._tail = reserve_fifo(
            self._fifo_slot, self._fifo_t, self._head, self._tail, n)

    # -- engine hooks ---------------------------------------------------------
    def _run(self, u, v, t, upto):
        self._reserve_vertices(self.n_vertices)
        self._reserve_edges(len(t))
        out = np.zeros((max(upto - self.next_window, 0), len(self.queries)), dtype=bool)
        w = self.windows
        self._head, self._tail, self._n_free, self._mark = kernels.dfs_run(
            self._adj_head, self._he_next, self._he_prev, self._eu, self._ev, self._et,
            self._fifo_slot, self._fifo_t, self._head, self._tail, self._free_ids, self._n_free,
            self._stamp, self._stack, self._mark,
            np.ascontiguousarray(u, dtype=np.int64), np.ascontiguousarray(v, dtype=np.int64),
            np.ascontiguousarray(t, dtype=np.int64), w.t0, w.r, w.s, self.next_window, upto,
            np.ascontiguousarray(self.queries[:, 0]), np.ascontiguousarray(self.queries[:, 1]), out)
        return out

    def _connected(self, a, b):
        if a >= len(self._adj_head) or b >= len(self._adj_head):
            return False   # first seen after the last evaluated window
        # the search keeps to the last evaluated window's time range, whatever is stored
        n = self.next_window - 1
        self._mark += 1
        return bool(kernels.dfs_connected(
            self._adj_head, self._he_next, self._eu, self._ev, self._et, self._mark,
            self._stamp, self._stack, a, b, self.windows.start(n), self.windows.end(n)))
