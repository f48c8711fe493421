"""D-Tree: fully dynamic connectivity by balanced spanning trees, used as the BIC
paper's FDC baseline.

Paper: Qing Chen, Oded Lachish, Sven Helmer, Michael H. Boehlen, "Dynamic Spanning
Trees for Connectivity Queries on Fully-dynamic Undirected Graphs", PVLDB 15(11),
2022, 3263-3276 (reference [7] of the BIC technical report).
Usage as in Zhang, Bonifati, Oezsu (BIC technical report Section 7.1, as the
authors' Java runs it): every edge is inserted as it arrives; at each window
slide the expired edges are deleted one by one, oldest first, from a FIFO; the
workload is then answered by D-Tree connectivity queries.  Semantics:
``streamspec.spec.connectivity``.

The D-Tree operations (functions of ``_dtree_kernels``):

- The D-tree: a spanning forest of rooted trees with parent pointers and
  subtree sizes; non-tree edges in per-vertex adjacency lists.  A query
  (``connected``) walks both vertices to their roots and compares them; on the way it reroots
  at the root's child on the path when that child holds more than half of the
  tree (``find``: the centroid heuristic applied lazily).
- ``insert_tree_edge`` (edge between two trees): the smaller tree is rerooted at its
  endpoint (``reroot``) and linked under the other endpoint (small-to-large);
  ``link`` then reroots at the deepest path vertex holding more than half of
  the joined tree (centroid heuristic).
- ``insert_nontree_edge`` (edge inside one tree): if the endpoints' depths differ by 2
  or more, the new edge replaces the tree edge above the deep endpoint's
  ancestor at depth ``depth(shallow) + 2``, which becomes a non-tree edge (the
  BFS heuristic, threshold ``depth(u) - depth(v) - 2``); else it is a non-tree
  edge.
- ``delete_edge`` of a non-tree edge: unlink it from the adjacency lists;
  of a tree edge (``delete_tree_edge``): split
  the tree, search the smaller part breadth-first for a non-tree edge into the
  larger part (the replacement, linked as in ``insert_tree_edge``); without one, the
  smaller part is rerooted near its centroid.

The paper text was not available offline; the operations follow the authors'
algorithms as ported to C++ in a public dynamic-connectivity study
(``DTree.cpp``) and the ID-tree paper's description of the D-Tree thresholds,
written here over flat arrays.

Deviations and additions (the paper assumes a simple graph with known vertices):

- Multi-edges: every streamed edge is a separate edge with its own id (a pool
  slot), so a duplicate of a tree edge is a non-tree edge and replaces it when
  the older copy expires; deleting one copy never disconnects while another
  copy remains.
- Self-loops only count towards presence; they never enter the forest.
- Presence (``streamspec.spec.connectivity``): a live-degree count per vertex.
- The connectivity test after rebalancing finds re-reads the root without
  rebalancing, so a reroot done by the second find cannot make the first root
  stale.
"""
from __future__ import annotations

import numpy as np

from streamspec.engines.connectivity import _dtree_kernels as kernels
from streamspec.engines.connectivity._edge_pool import (MIN_CAPACITY, capacity, grow as _grow,
                                                        grow_free_ids, reserve_fifo)
from streamspec.spec.connectivity import ConnectivityEngine

# the order of the arrays in the kernels' tuple T
VERTEX_ARRAYS = ("parent", "size", "child_head", "sib_next", "sib_prev", "tree_eid", "nt_head")
EDGE_ARRAYS = ("eu", "ev", "ekind")
HALF_EDGE_ARRAYS = ("he_next", "he_prev")
TREE_ARRAYS = VERTEX_ARRAYS + EDGE_ARRAYS + HALF_EDGE_ARRAYS
_FILL = {"size": 1, "ekind": kernels.FREE}   # everything else starts at -1 (none)


class DTreeEngine(ConnectivityEngine):
    """D-Tree with expired edges deleted one by one at each slide (FDC baseline)."""

    name = "dtree"
    exact = True
    description = "D-Tree fully dynamic connectivity, expired edges deleted one by one (FDC baseline)"

    def _start(self) -> None:
        self._arrays = {name: np.zeros(0, dtype=np.int64) for name in TREE_ARRAYS}
        self._deg = np.zeros(0, dtype=np.int64)       # live window edges per vertex (presence)
        self._queue = np.zeros(0, dtype=np.int64)     # scratch of the replacement search
        self._free_ids = np.zeros(0, dtype=np.int64)  # stack of free edge ids
        self._n_free = 0
        self._fifo_eid = np.zeros(MIN_CAPACITY, dtype=np.int64)
        self._fifo_t = np.zeros(MIN_CAPACITY, dtype=np.int64)
        self._head = 0
        self._tail = 0

    # -- capacity -----------------------------------------------------------
    def _reserve_vertices(self, n: int) -> None:
        if n <= len(self._deg):
            return
        cap = capacity(len(self._deg), n)
        for name in VERTEX_ARRAYS:
            self._arrays[name] = _grow(self._arrays[name], cap, _FILL.get(name, -1))
        self._deg = _grow(self._deg, cap, 0)
        self._queue = np.zeros(cap, dtype=np.int64)

    def _reserve_edges(self, n: int) -> None:
        """``n`` free edge ids in the pool, room for ``n`` more FIFO entries."""
        if self._n_free < n:
            old = len(self._free_ids)
            cap = capacity(old, old - self._n_free + n)
            for name in EDGE_ARRAYS:
                self._arrays[name] = _grow(self._arrays[name], cap, _FILL.get(name, -1))
            for name in HALF_EDGE_ARRAYS:
                self._arrays[name] = _grow(self._arrays[name], 2 * cap, -1)
            self._free_ids, self._n_free = grow_free_ids(self._free_ids, self._n_free, old, cap)
        self._fifo_eid, self._fifo_t, self._head, self._tail = reserve_fifo(
            self._fifo_eid, self._fifo_t, self._head, self._tail, n)

    def _tree(self) -> tuple:
        return tuple(self._arrays[name] for name in TREE_ARRAYS)

    # -- engine hooks ---------------------------------------------------------
    def _run(self, u, v, t, upto):
        self._reserve_vertices(self.n_vertices)
        self._reserve_edges(len(t))
        out = np.zeros((max(upto - self.next_window, 0), len(self.queries)), dtype=bool)
        w = self.windows
        self._head, self._tail, self._n_free = kernels.dtree_run(
            self._tree(), self._deg, self._fifo_eid, self._fifo_t, self._head, self._tail,
            self._free_ids, self._n_free, self._queue,
            np.ascontiguousarray(u, dtype=np.int64), np.ascontiguousarray(v, dtype=np.int64),
            np.ascontiguousarray(t, dtype=np.int64), w.t0, w.r, w.s, self.next_window, upto,
            np.ascontiguousarray(self.queries[:, 0]), np.ascontiguousarray(self.queries[:, 1]), out)
        return out

    def _connected(self, a, b):
        if a >= len(self._deg) or b >= len(self._deg):
            return False   # first seen after the last evaluated window
        return bool(kernels.connected(self._tree(), self._deg, a, b))
