"""Euler-tour trees and the ET-Tree baseline of the BIC paper.

Paper: Zhang, Bonifati, Oezsu, BIC technical report Section 7.1 ("ET-Tree"
row of the experiments, reference [48]: Tarjan and Vishkin 1985; Henzinger
and King 1995 for the Euler-tour tree) and Section 2 (the spanning-tree
framework of fully dynamic connectivity).  Semantics: ``streamspec.spec.connectivity``.

``EulerTourTrees`` keeps a spanning forest as Euler tours, each tour a treap
ordered by position (implicit keys) over one flat int64 array, its operations
numba kernels (``_ett_kernels``); the engines around it are plain Python.  The tour of a
tree holds one node per vertex and one node per arc (each tree edge gives two
arcs, ``u->v`` and ``v->u``), so a tour is a cyclic sequence and:

- ``reroot(v)``: rotate the tour so that ``v``'s node comes first (one split,
  one merge);
- ``link``: ``tour(u) + [u->v] + tour(v) + [v->u]`` after rerooting both;
- ``cut``: the two arcs split the tour into ``X a Y b Z``; ``Y`` is one side,
  ``X + Z`` the other;
- ``root``: the treap root identifies the tree (``connected`` in O(log n)).

Each node carries two flag bits (``own``) aggregated over its subtree
(``agg``) and the count of vertex nodes under it (``vcnt``, the tree size):
HDT (``hdt.py``) marks vertices with non-tree edges and arcs of tree edges of
a level, and finds them by descending from the root.

``EtTreeEngine`` is the FDC usage of the paper's experiments: every edge is
inserted as it arrives, at each slide the expired edges are deleted one by one,
oldest first, then the workload is answered on the forest.  Deleting a tree
edge cuts its tour and searches the smaller side's non-tree edges for one
that reconnects the two sides (the replacement edge), without HDT's levels:
O(size of the smaller side + its non-tree edges) per tree-edge deletion.
"""
from __future__ import annotations

import random
from collections import deque

import numpy as np

from streamspec.engines.connectivity import _ett_kernels as kernels
from streamspec.spec.connectivity import ConnectivityEngine

FREE, TREE, NONTREE, LOOP = 0, 1, 2, 3
NT, TE = 1, 2       # flag bits: vertex with non-tree edges, arc of a tree edge (of a level)
_MIN_NODES = 64


class EulerTourTrees:
    """A pool of treap nodes holding any number of Euler tours (one per tree):
    the fields are rows of one int64 array, the operations ``_ett_kernels``."""

    def __init__(self, seed: int = 0x5EED):
        self.N = np.full((kernels.FIELDS, _MIN_NODES), -1, dtype=np.int64)
        self.size = 0
        self._free: list[int] = []
        self._rng = random.Random(seed)   # seeded: runs are reproducible
        self._out = np.empty(_MIN_NODES, dtype=np.int64)

    # field rows (views: re-read after ``node`` may have grown the pool)
    left = property(lambda self: self.N[kernels.LEFT])
    right = property(lambda self: self.N[kernels.RIGHT])
    parent = property(lambda self: self.N[kernels.PARENT])
    prio = property(lambda self: self.N[kernels.PRIO])
    cnt = property(lambda self: self.N[kernels.CNT])
    vcnt = property(lambda self: self.N[kernels.VCNT])
    isv = property(lambda self: self.N[kernels.ISV])
    own = property(lambda self: self.N[kernels.OWN])
    agg = property(lambda self: self.N[kernels.AGG])
    label = property(lambda self: self.N[kernels.LABEL])

    # -- nodes ----------------------------------------------------------------
    def node(self, label: int, is_vertex: bool) -> int:
        """A new one-node tour (a vertex alone, or an arc before ``link``)."""
        if self._free:
            x = self._free.pop()
        else:
            x = self.size
            self.size += 1
            if x == self.N.shape[1]:
                grown = np.full((kernels.FIELDS, 2 * x), -1, dtype=np.int64)
                grown[:, :x] = self.N
                self.N = grown
        kernels.init_node(self.N, x, self._rng.getrandbits(62), 1 if is_vertex else 0, label)
        return x

    def release(self, x: int) -> None:
        self._free.append(x)

    # -- sequence and tree operations (kernels) ------------------------------------
    def merge(self, a: int, b: int) -> int:
        return kernels.merge(self.N, a, b)

    def split(self, t: int, k: int) -> tuple[int, int]:
        """The first ``k`` positions of ``t``, the rest."""
        return kernels.split(self.N, t, k)

    def position(self, x: int) -> tuple[int, int]:
        """(index of ``x`` in its tour, the tour's root)."""
        return kernels.position(self.N, x)

    def root(self, x: int) -> int:
        return kernels.root(self.N, x)

    def reroot(self, x: int) -> int:
        """Rotate ``x``'s tour so that it starts at ``x``; returns the root."""
        return kernels.reroot(self.N, x)

    def link(self, xu: int, xv: int, a1: int, a2: int) -> int:
        """Join the trees of vertex nodes ``xu``, ``xv`` (different trees) by the
        arcs ``a1`` (u->v) and ``a2`` (v->u)."""
        return kernels.link(self.N, xu, xv, a1, a2)

    def cut(self, a1: int, a2: int) -> tuple[int, int]:
        """Remove the tree edge whose arcs are ``a1``, ``a2`` (both released);
        returns the roots of the two tours."""
        t1, t2 = kernels.cut(self.N, a1, a2)
        self._free.append(a1)
        self._free.append(a2)
        return t1, t2

    # -- flags ----------------------------------------------------------------
    def set_own(self, x: int, bits: int) -> None:
        """Set ``x``'s flag bits and refresh the aggregates up to the root."""
        kernels.set_own(self.N, x, bits)

    def find_flag(self, t: int, bit: int) -> int:
        """A node under ``t`` whose own flags hold ``bit`` (-1 if none)."""
        return kernels.find_flag(self.N, t, bit)

    def vertices(self, t: int) -> list[int]:
        """The vertices of the tour rooted at ``t``."""
        if len(self._out) < self.size:
            self._out = np.empty(self.N.shape[1], dtype=np.int64)
        k = kernels.tour_vertices(self.N, t, self._out)
        return self._out[:k].tolist()


class FdcWindowEngine(ConnectivityEngine):
    """A fully dynamic connectivity structure used on sliding windows (BIC TR
    Section 7.1): insert every edge on arrival; at each slide delete the
    expired edges oldest first (a FIFO), then answer the workload.

    Subclasses implement ``_insert(e, u, v)``, ``_delete(e)`` and
    ``_linked(a, b)`` (a != b, both present).  Every streamed edge has its own
    id, so parallel edges are separate edges; self-loops count for presence
    only (``_insert`` is not called for them)."""

    def _start(self) -> None:
        self._deg: list[int] = []         # live window edges per vertex (presence)
        self._eu: list[int] = []
        self._ev: list[int] = []
        self._free_ids: list[int] = []
        self._fifo: deque = deque()       # (edge id, t) in arrival order

    def _new_edge(self, u: int, v: int) -> int:
        if self._free_ids:
            e = self._free_ids.pop()
            self._eu[e], self._ev[e] = u, v
            return e
        self._eu.append(u)
        self._ev.append(v)
        return len(self._eu) - 1

    def _expire(self, start: int) -> None:
        fifo, deg = self._fifo, self._deg
        while fifo and fifo[0][1] < start:
            e, _ = fifo.popleft()
            u, v = self._eu[e], self._ev[e]
            deg[u] -= 1
            deg[v] -= 1
            if u != v:
                self._delete(e)
            self._free_ids.append(e)

    def _answer(self, row: np.ndarray, queries: list) -> None:
        deg = self._deg
        for q, (a, b) in enumerate(queries):
            if deg[a] > 0 and deg[b] > 0:
                row[q] = a == b or self._linked(a, b)

    def _run(self, u, v, t, upto):
        grow = self.n_vertices - len(self._deg)
        if grow > 0:
            self._deg.extend([0] * grow)
            self._grow(self.n_vertices)
        first = self.next_window
        out = np.zeros((max(upto - first, 0), len(self.queries)), dtype=bool)
        queries = [tuple(q) for q in self.queries.tolist()]
        w, (t0, r, s) = first, (self.windows.t0, self.windows.r, self.windows.s)
        fifo, deg = self._fifo, self._deg
        for a, b, ti in zip(u.tolist(), v.tolist(), t.tolist()):
            while w < upto and ti >= t0 + w * s + r:
                self._expire(t0 + w * s)
                if not fifo:
                    # the graph is empty: every window ending by ti is empty (rows stay false)
                    w = min(upto, (ti - t0 - r) // s + 1)
                    continue
                self._answer(out[w - first], queries)
                w += 1
            e = self._new_edge(a, b)
            fifo.append((e, ti))
            deg[a] += 1
            deg[b] += 1
            if a != b:
                self._insert(e, a, b)
        while w < upto:
            self._expire(t0 + w * s)
            if not fifo:
                break   # empty graph: the remaining rows stay false
            self._answer(out[w - first], queries)
            w += 1
        return out

    def _connected(self, a, b):
        if a >= len(self._deg) or b >= len(self._deg):
            return False   # first seen after the last evaluated window
        if self._deg[a] <= 0 or self._deg[b] <= 0:
            return False
        return a == b or bool(self._linked(a, b))

    # -- hooks ----------------------------------------------------------------
    def _grow(self, n: int) -> None:
        """Room for vertices ``0..n-1``."""

    def _insert(self, e: int, u: int, v: int) -> None:
        raise NotImplementedError

    def _delete(self, e: int) -> None:
        raise NotImplementedError

    def _linked(self, a: int, b: int) -> bool:
        raise NotImplementedError


class EtTreeEngine(FdcWindowEngine):
    """ET-Tree (BIC TR Section 7.1): one Euler-tour forest; a deleted tree
    edge is replaced by scanning the smaller side's non-tree edges."""

    name = "ettree"
    exact = True
    description = "Euler-tour tree FDC, expired edges deleted one by one, replacement by scanning the smaller side"

    def _start(self) -> None:
        super()._start()
        self.ett = EulerTourTrees()
        self._vnode: list[int] = []          # vertex -> its tour node (-1: never in an edge)
        self._nontree: list[set] = []        # vertex -> ids of its non-tree edges
        self._kind: list[int] = []
        self._arcs: list[tuple[int, int]] = []

    def _grow(self, n):
        k = n - len(self._vnode)
        self._vnode.extend([-1] * k)
        self._nontree.extend(set() for _ in range(k))

    def _node(self, x: int) -> int:
        if self._vnode[x] == -1:
            self._vnode[x] = self.ett.node(x, True)
        return self._vnode[x]

    def _set_kind(self, e: int, kind: int) -> None:
        if e >= len(self._kind):    # (ids of self-loops never reach here)
            k = e + 1 - len(self._kind)
            self._kind.extend([FREE] * k)
            self._arcs.extend([(-1, -1)] * k)
        self._kind[e] = kind

    def _link(self, e: int, u: int, v: int) -> None:
        ett = self.ett
        a1, a2 = ett.node(e, False), ett.node(e, False)
        ett.link(self._node(u), self._node(v), a1, a2)
        self._arcs[e] = (a1, a2)
        self._kind[e] = TREE

    def _insert(self, e, u, v):
        self._set_kind(e, NONTREE)
        xu, xv = self._node(u), self._node(v)
        if self.ett.root(xu) != self.ett.root(xv):
            self._link(e, u, v)
        else:
            self._nontree[u].add(e)
            self._nontree[v].add(e)

    def _delete(self, e):
        u, v = self._eu[e], self._ev[e]
        if self._kind[e] == NONTREE:
            self._nontree[u].discard(e)
            self._nontree[v].discard(e)
        else:
            self._replace(*self.ett.cut(*self._arcs[e]))
        self._kind[e] = FREE

    def _replace(self, t1: int, t2: int) -> None:
        """Reconnect the two sides of a cut by a non-tree edge, if one exists:
        scan the smaller side's vertices and their non-tree edges."""
        ett = self.ett
        small = t1 if ett.vcnt[t1] <= ett.vcnt[t2] else t2
        side = ett.vertices(small)
        inside = set(side)
        eu, ev = self._eu, self._ev
        for x in side:
            for f in self._nontree[x]:
                y = ev[f] if eu[f] == x else eu[f]
                if y not in inside:
                    self._nontree[x].discard(f)
                    self._nontree[y].discard(f)
                    self._link(f, eu[f], ev[f])
                    return

    def _linked(self, a, b):
        xa, xb = self._vnode[a], self._vnode[b]
        return xa != -1 and xb != -1 and self.ett.root(xa) == self.ett.root(xb)
