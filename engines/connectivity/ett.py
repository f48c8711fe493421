"""Euler-tour trees and the ET-Tree baseline of the BIC paper.

Paper: Zhang, Bonifati, Oezsu, BIC technical report Section 7.1 ("ET-Tree"
row of the experiments, reference [48]: Tarjan and Vishkin 1985; Henzinger
and King 1995 for the Euler-tour tree) and Section 2 (the spanning-tree
framework of fully dynamic connectivity).  Semantics: notes/connectivity.md.

``EulerTourTrees`` keeps a spanning forest as Euler tours, each tour a treap
ordered by position (implicit keys) over flat Python lists.  The tour of a
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

from streamspec.spec.connectivity import ConnectivityEngine

FREE, TREE, NONTREE, LOOP = 0, 1, 2, 3
NT, TE = 1, 2       # flag bits: vertex with non-tree edges, arc of a tree edge (of a level)


class EulerTourTrees:
    """A pool of treap nodes holding any number of Euler tours (one per tree)."""

    def __init__(self, seed: int = 0x5EED):
        self.left: list[int] = []
        self.right: list[int] = []
        self.parent: list[int] = []
        self.prio: list[float] = []
        self.cnt: list[int] = []       # nodes in the subtree (tour positions)
        self.vcnt: list[int] = []      # vertex nodes in the subtree (tree size at a root)
        self.isv: list[int] = []       # 1 for a vertex node, 0 for an arc
        self.own: list[int] = []       # this node's flag bits
        self.agg: list[int] = []       # OR of the flag bits in the subtree
        self.label: list[int] = []     # the vertex of a vertex node, the edge id of an arc
        self._free: list[int] = []
        self._rng = random.Random(seed)   # seeded: runs are reproducible

    # -- nodes ----------------------------------------------------------------
    def node(self, label: int, is_vertex: bool) -> int:
        """A new one-node tour (a vertex alone, or an arc before ``link``)."""
        v = 1 if is_vertex else 0
        p = self._rng.random()
        if self._free:
            x = self._free.pop()
            self.left[x] = self.right[x] = self.parent[x] = -1
            self.prio[x], self.cnt[x], self.vcnt[x], self.isv[x] = p, 1, v, v
            self.own[x] = self.agg[x] = 0
            self.label[x] = label
            return x
        self.left.append(-1), self.right.append(-1), self.parent.append(-1)
        self.prio.append(p), self.cnt.append(1), self.vcnt.append(v), self.isv.append(v)
        self.own.append(0), self.agg.append(0), self.label.append(label)
        return len(self.left) - 1

    def release(self, x: int) -> None:
        self._free.append(x)

    def _pull(self, x: int) -> None:
        left, right = self.left, self.right
        c, vc, a = 1, self.isv[x], self.own[x]
        y = left[x]
        if y != -1:
            c += self.cnt[y]
            vc += self.vcnt[y]
            a |= self.agg[y]
        y = right[x]
        if y != -1:
            c += self.cnt[y]
            vc += self.vcnt[y]
            a |= self.agg[y]
        self.cnt[x], self.vcnt[x], self.agg[x] = c, vc, a

    # -- sequence operations (treap with implicit keys) -------------------------------
    def _merge(self, a: int, b: int) -> int:
        if a == -1:
            return b
        if b == -1:
            return a
        if self.prio[a] > self.prio[b]:
            r = self._merge(self.right[a], b)
            self.right[a] = r
            self.parent[r] = a
            self._pull(a)
            return a
        l_ = self._merge(a, self.left[b])
        self.left[b] = l_
        self.parent[l_] = b
        self._pull(b)
        return b

    def merge(self, a: int, b: int) -> int:
        t = self._merge(a, b)
        if t != -1:
            self.parent[t] = -1
        return t

    def _split(self, t: int, k: int) -> tuple[int, int]:
        # the first k positions of t, the rest
        if t == -1:
            return -1, -1
        y = self.left[t]
        lc = self.cnt[y] if y != -1 else 0
        if k <= lc:
            a, b = self._split(y, k)
            self.left[t] = b
            if b != -1:
                self.parent[b] = t
            self._pull(t)
            return a, t
        a, b = self._split(self.right[t], k - lc - 1)
        self.right[t] = a
        if a != -1:
            self.parent[a] = t
        self._pull(t)
        return t, b

    def split(self, t: int, k: int) -> tuple[int, int]:
        a, b = self._split(t, k)
        if a != -1:
            self.parent[a] = -1
        if b != -1:
            self.parent[b] = -1
        return a, b

    def position(self, x: int) -> tuple[int, int]:
        """(index of ``x`` in its tour, the tour's root)."""
        left, parent = self.left, self.parent
        y = left[x]
        i = self.cnt[y] if y != -1 else 0
        p = parent[x]
        while p != -1:
            if self.right[p] == x:
                y = left[p]
                i += (self.cnt[y] if y != -1 else 0) + 1
            x, p = p, parent[p]
        return i, x

    def root(self, x: int) -> int:
        parent = self.parent
        p = parent[x]
        while p != -1:
            x, p = p, parent[p]
        return x

    # -- tree operations ------------------------------------------------------------
    def reroot(self, x: int) -> int:
        """Rotate ``x``'s tour so that it starts at ``x``; returns the root."""
        i, t = self.position(x)
        if i == 0:
            return t
        a, b = self.split(t, i)
        return self.merge(b, a)

    def link(self, xu: int, xv: int, a1: int, a2: int) -> int:
        """Join the trees of vertex nodes ``xu``, ``xv`` (different trees) by the
        arcs ``a1`` (u->v) and ``a2`` (v->u)."""
        tu = self.reroot(xu)
        tv = self.reroot(xv)
        return self.merge(self.merge(self.merge(tu, a1), tv), a2)

    def cut(self, a1: int, a2: int) -> tuple[int, int]:
        """Remove the tree edge whose arcs are ``a1``, ``a2`` (both released);
        returns the roots of the two tours."""
        i1, t = self.position(a1)
        i2, _ = self.position(a2)
        if i1 > i2:
            i1, i2 = i2, i1
        x, rest = self.split(t, i1)
        _, rest = self.split(rest, 1)
        y, rest = self.split(rest, i2 - i1 - 1)
        _, z = self.split(rest, 1)
        self.release(a1)
        self.release(a2)
        return self.merge(x, z), y

    # -- flags ----------------------------------------------------------------
    def set_own(self, x: int, bits: int) -> None:
        """Set ``x``'s flag bits and refresh the aggregates up to the root."""
        self.own[x] = bits
        parent = self.parent
        while x != -1:
            self._pull(x)
            x = parent[x]

    def find_flag(self, t: int, bit: int) -> int:
        """A node under ``t`` whose own flags hold ``bit`` (-1 if none)."""
        if t == -1 or not self.agg[t] & bit:
            return -1
        left, right, agg = self.left, self.right, self.agg
        while True:
            y = left[t]
            if y != -1 and agg[y] & bit:
                t = y
            elif self.own[t] & bit:
                return t
            else:
                t = right[t]

    def vertices(self, t: int) -> list[int]:
        """The vertices of the tour rooted at ``t``."""
        out, stack = [], [t] if t != -1 else []
        left, right, isv, label = self.left, self.right, self.isv, self.label
        while stack:
            x = stack.pop()
            if isv[x]:
                out.append(label[x])
            if left[x] != -1:
                stack.append(left[x])
            if right[x] != -1:
                stack.append(right[x])
        return out


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
