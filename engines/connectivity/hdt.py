"""HDT: the Holm-de Lichtenberg-Thorup fully dynamic connectivity structure,
the BIC paper's HDT baseline.

Paper: Holm, de Lichtenberg, Thorup, "Poly-Logarithmic Deterministic
Fully-Dynamic Algorithms for Connectivity, Minimum Spanning Tree, 2-Edge, and
Biconnectivity", J. ACM 48(4), 2001, Section 2 (connectivity); used as in
Zhang, Bonifati, Oezsu, BIC technical report Section 7.1 (edges inserted on
arrival, expired edges deleted one by one at each slide; ``FdcWindowEngine``).
Semantics: ``streamspec.spec.connectivity``.

- Every edge ``e`` has a level ``l(e)`` (0 on insertion, never above log2 n).
  ``F_i`` is the forest of tree edges of level ``>= i``, kept as Euler-tour
  trees (``ett.EulerTourTrees``, one node pool for all levels); ``F_0`` is
  the spanning forest and answers queries.
- Invariant 1: the trees of ``F_i`` have at most ``n / 2^i`` vertices.
  Invariant 2: ``F_0`` is a maximum spanning forest for the levels (a
  non-tree edge of level ``i`` has both ends in one tree of ``F_i``).
- The non-tree edges of level ``i`` are kept per vertex; a vertex with some
  carries the ``NT`` flag in its level-``i`` tour node, the arc of a tree edge
  of level exactly ``i`` carries ``TE`` in ``F_i`` (found from a tour's root
  in O(log n)).
- Deleting a tree edge of level ``l``: cut it from ``F_0..F_l``; then for
  ``i = l .. 0`` (``replace``): in ``F_i`` take the smaller side ``T_v``,
  raise its level-``i`` tree edges to ``i + 1`` (allowed by invariant 1),
  then scan its level-``i`` non-tree edges: one leading out of ``T_v`` is the
  replacement (linked into ``F_0..F_i``); one inside ``T_v`` is raised to
  ``i + 1``, which pays for its scan.  Amortised O(log^2 n) per update.

Multi-edges are separate edges (a parallel copy is a non-tree edge that
replaces the tree copy when it expires); self-loops only count for presence.
"""
from __future__ import annotations

from streamspec.engines.connectivity.ett import (FREE, NONTREE, NT, TE, TREE, EulerTourTrees,
                                                 FdcWindowEngine)


class HdtEngine(FdcWindowEngine):
    """HDT with expired edges deleted one by one at each slide (FDC baseline)."""

    name = "hdt"
    exact = True
    description = "Holm-de Lichtenberg-Thorup FDC (levels of Euler-tour forests), expired edges deleted one by one"

    def _start(self) -> None:
        super()._start()
        self.ett = EulerTourTrees()
        self._n = 0
        self._vnode: list[list[int]] = []        # level -> vertex -> tour node (-1: none yet)
        self._nontree: list[dict] = []           # level -> vertex -> ids of its non-tree edges
        self._kind: list[int] = []
        self._level: list[int] = []
        self._arcs: list[list] = []              # tree edge -> [(a1, a2) of F_0, F_1, .., F_l]

    # -- levels and nodes ---------------------------------------------------------
    def _grow(self, n):
        self._n = n
        for nodes in self._vnode:
            nodes.extend([-1] * (n - len(nodes)))

    def _node(self, i: int, x: int) -> int:
        while len(self._vnode) <= i:
            self._vnode.append([-1] * self._n)
            self._nontree.append({})
        nodes = self._vnode[i]
        if nodes[x] == -1:
            nodes[x] = self.ett.node(x, True)
        return nodes[x]

    def _set_kind(self, e: int, kind: int) -> None:
        if e >= len(self._kind):    # (ids of self-loops never reach here)
            k = e + 1 - len(self._kind)
            self._kind.extend([FREE] * k)
            self._level.extend([0] * k)
            self._arcs.extend([None] * k)
        self._kind[e] = kind

    def _flag(self, x: int, bit: int, on: bool) -> None:
        own = self.ett.own[x]
        new = own | bit if on else own & ~bit
        if new != own:
            self.ett.set_own(x, new)

    # -- non-tree edges of a level ----------------------------------------------------
    def _nt_add(self, e: int, i: int) -> None:
        self._level[e] = i
        for x in (self._eu[e], self._ev[e]):
            xn = self._node(i, x)
            edges = self._nontree[i].get(x)
            if edges is None:
                edges = self._nontree[i][x] = set()
            if not edges:
                self._flag(xn, NT, True)
            edges.add(e)

    def _nt_remove(self, e: int) -> None:
        i = self._level[e]
        for x in (self._eu[e], self._ev[e]):
            edges = self._nontree[i][x]
            edges.discard(e)
            if not edges:
                self._flag(self._vnode[i][x], NT, False)

    # -- tree edges -------------------------------------------------------------
    def _link(self, e: int, i: int) -> None:
        """Add tree edge ``e`` to ``F_i`` (its arcs at level ``i`` appended)."""
        ett = self.ett
        a1, a2 = ett.node(e, False), ett.node(e, False)
        ett.link(self._node(i, self._eu[e]), self._node(i, self._ev[e]), a1, a2)
        self._arcs[e].append((a1, a2))
        if i == self._level[e]:
            self._flag(a1, TE, True)

    def _make_tree(self, e: int, i: int) -> None:
        """``e`` becomes a tree edge of level ``i``: linked into ``F_0..F_i``."""
        self._kind[e] = TREE
        self._level[e] = i
        self._arcs[e] = []
        for j in range(i + 1):
            self._link(e, j)

    def _raise_tree_edge(self, e: int) -> None:
        i = self._level[e]
        self._flag(self._arcs[e][i][0], TE, False)
        self._level[e] = i + 1
        self._link(e, i + 1)

    # -- the FDC operations ----------------------------------------------------------
    def _insert(self, e, u, v):
        self._set_kind(e, NONTREE)
        ett = self.ett
        if ett.root(self._node(0, u)) != ett.root(self._node(0, v)):
            self._make_tree(e, 0)
        else:
            self._nt_add(e, 0)

    def _delete(self, e):
        if self._kind[e] == NONTREE:
            self._nt_remove(e)
        else:
            arcs = self._arcs[e]
            for a1, a2 in arcs:
                self.ett.cut(a1, a2)
            self._arcs[e] = None
            u, v = self._eu[e], self._ev[e]
            for i in range(len(arcs) - 1, -1, -1):
                if self._replace(u, v, i):
                    break
        self._kind[e] = FREE

    def _replace(self, u: int, v: int, i: int) -> bool:
        """HDT's Replace(u, v, i): look for a level-``i`` replacement edge of the
        cut between ``u`` and ``v`` in ``F_i``; raise what is scanned in vain."""
        ett = self.ett
        tu, tv = ett.root(self._vnode[i][u]), ett.root(self._vnode[i][v])
        small = tu if ett.vcnt[tu] <= ett.vcnt[tv] else tv
        # the smaller side's level-i tree edges go up (its size is at most n / 2^(i+1))
        x = ett.find_flag(small, TE)
        while x != -1:
            self._raise_tree_edge(ett.label[x])
            x = ett.find_flag(small, TE)
        nodes, level_edges = self._vnode[i], self._nontree[i]
        eu, ev = self._eu, self._ev
        x = ett.find_flag(small, NT)
        while x != -1:
            w = ett.label[x]
            for f in list(level_edges[w]):
                y = ev[f] if eu[f] == w else eu[f]
                self._nt_remove(f)
                if ett.root(nodes[y]) != small:
                    self._make_tree(f, i)
                    return True
                self._nt_add(f, i + 1)      # both ends inside: pays for its scan
            x = ett.find_flag(small, NT)
        return False

    def _linked(self, a, b):
        if not self._vnode:
            return False
        xa, xb = self._vnode[0][a], self._vnode[0][b]
        return xa != -1 and xb != -1 and self.ett.root(xa) == self.ett.root(xb)
