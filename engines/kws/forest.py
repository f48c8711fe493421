"""The forest baseline (paper Section 3.3, evaluated in Section 5, Figure 5.1).

``ForestEngine`` (``kws.forest``) is the paper's forest: one left-deep operator
tree per CN, the trees executed independently as a traditional DSMS would:

- every tree has its own source selections: an arriving tuple is offered to
  every leaf of every tree on its relation, and the leaf keeps it if its
  keyword set is the leaf's node;
- every join ``j_i`` (position ``i`` of the tree) has two private input
  buffers, ``left[i]`` (the composites of positions ``0..i-1``: the output of
  ``j_{i-1}``, or of the leaf at position 0) and ``right[i]`` (the tuples of
  the leaf at position ``i``), as in Section 3.3 before state sharing;
- probes are nested loops over the opposite buffer (Section 4.3: "looping over
  the buffer and inspecting each tuple for join-ability");
- purging is eager, Figure 4.5 as written: source buffers are purged at once
  (Section 4.3, they are ordered by ``t_end``), and the leaf of an expired
  tuple calls ``Eager`` on its parent join, which scans its whole output buffer
  (the parent's left input) and, if it dropped anything, calls its own
  parent.  No bound on a buffer's earliest expiry lets a scan be skipped.
  ``purge="lazy"`` (the ablation): dead composites are dropped when a probe
  loops over them.

Deletions (positive-negative model) travel up as negative tuples: every
composite holding the tuple is expunged, and the MTJNTs it ends are the ones
the tuple would form if it arrived now.  Schema changes rebuild the trees from
the new CNs and replay the alive tuples (``streamspec.engines.kws.mesh.rebuild_and_replay``):
Section 4.4's migration describes the meshes, which migrate instead
(``streamspec.engines.kws.migration``); the forests, the paper's baseline, keep the
rebuild, and so does ``forest-shared``.

``ForestSharedEngine`` (``kws.forest-shared``) is this project's stronger
forest: the trees on ``streamspec.engines.kws.mesh`` (sources shared per
expanded-schema node and hash-indexed once, joins reading their children's
output buffers instead of private input buffers, hash-indexed probes, and an
eager pass that skips buffers whose earliest expiry is later, ``Op.end``).
"""
from __future__ import annotations

from collections import deque

from streamspec.engines.kws.cngen import cngen, collector_off
from streamspec.engines.kws.mesh import MeshEngine, rebuild_and_replay
from streamspec.engines.kws.operators import INF, join_condition
from streamspec.spec.kws import KwsEngine, Result


class ForestSharedEngine(MeshEngine):
    name = "forest-shared"
    description = ("one operator tree per candidate network on shared, hash-indexed sources "
                   "and output buffers (stronger than the paper's forest)")
    options = {"purge": ("eager", "lazy"), "index_buffers": (True, False)}
    shared = False
    demand_driven = False
    purge = "eager"


def _holds(rows, row) -> bool:
    for r in rows:
        if r is row:
            return True
    return False


class OperatorTree:
    """The left-deep operator tree of one CN (Figure 3.6) with its buffers.

    ``nodes[i]`` is the expanded-schema node of position ``i``; for ``i >= 1``
    ``parent[i]`` is the position it joins with and ``cond[i]`` the join
    condition ``(attribute of the parent position, attribute of position i)``.
    ``left[i]`` / ``right[i]`` are the input buffers of join ``j_i``; a one-node
    CN has only its leaf's buffer, ``single``."""

    __slots__ = ("nodes", "parent", "labels", "cond", "left", "right", "single")

    def __init__(self, cn, conds):
        self.nodes = tuple((e[0], e[1]) for e in cn)
        self.parent = tuple(e[2] for e in cn)
        self.labels = tuple(e[3] for e in cn)
        self.cond = (None,) + tuple(conds[e[3]] for e in cn[1:])
        n = len(cn)
        self.left = [None] + [[] for _ in range(1, n)]
        self.right = [None] + [[] for _ in range(1, n)]
        self.single = [] if n == 1 else None

    def result(self, rows) -> Result:
        edges = []
        for i in range(1, len(rows)):
            p, (eid, parent_left) = self.parent[i], self.labels[i]
            edges.append((eid, rows[p].tid, rows[i].tid) if parent_left
                         else (eid, rows[i].tid, rows[p].tid))
        return Result.of([r.tid for r in rows], edges)

    def __getstate__(self):
        return {k: getattr(self, k) for k in self.__slots__}

    def __setstate__(self, state):
        for k, v in state.items():
            setattr(self, k, v)


class ForestEngine(KwsEngine):
    name = "forest"
    description = ("the paper's forest: one operator tree per candidate network, executed "
                   "independently (private selections and input buffers, nested loops, eager purging)")
    options = {"purge": ("eager", "lazy")}
    purge = "eager"
    refuses = staticmethod(_holds)   # the join's refusal test (Figure 3.7)

    # -- construction ------------------------------------------------------------
    def _start(self) -> None:
        self.now = None
        self._rows: dict = {}            # tid -> Row, alive tuples
        self._expiry: deque = deque()    # rows in arrival order (window model)
        self._build()

    def _build(self) -> None:
        schema, m, t_max = self.schema, len(self.keywords), self.params.t_max
        conds = {(e.id, left): join_condition(schema, (e.id, left)) for e in schema.edges for left in (True, False)}
        with collector_off():
            self.trees = [OperatorTree(cn, conds) for cn in cngen(schema, m, t_max)]
            # relation -> (tree, position) of every leaf on it: the per-tree selections
            self._leaves: dict = {}
            for tree in self.trees:
                for i, node in enumerate(tree.nodes):
                    self._leaves.setdefault(node[0], []).append((tree, i))

    def _selecting(self, row):
        """The leaves whose selection keeps ``row`` (every tree tests it on its own)."""
        node = (row.relation, row.kbits)
        return [(tree, i) for tree, i in self._leaves.get(row.relation, ()) if tree.nodes[i] == node]

    # -- hooks ---------------------------------------------------------------------
    def _insert(self, row, t):
        self._advance(t)
        results = []
        self._route(row, results)
        return results

    def _delete(self, tid, t):
        """The negative tuple: expunge every composite holding it, then the MTJNTs
        it ends are those it would form with what is left (nothing is stored)."""
        self._advance(t)
        row = self._rows[tid]
        self._remove(row)
        for tree, i in self._selecting(row):
            for level in range(i + 1, len(tree.nodes)):
                buf = tree.left[level]
                if buf:
                    tree.left[level] = [c for c in buf if not _holds(c[1], row)]
        results = []
        self._join(row, results, store=False)
        return results

    def _schema_change(self, event, t):
        return rebuild_and_replay(self, t)

    # -- processing ----------------------------------------------------------------
    def _advance(self, t: int) -> None:
        if self.now == t:
            return
        self.now = t
        q, expired = self._expiry, []
        while q and q[0].t_end <= t:
            row = q.popleft()
            if self._rows.get(row.tid) is row:
                self._remove(row)
                expired.append(row)
        if self.purge == "eager":
            for row in expired:
                self._eager(row, t)

    def _eager(self, row, t: int) -> None:
        """Figure 4.5 from the leaves of an expired tuple (already out of their
        source buffers): each parent join scans its output buffer, the left
        input of its own parent, and goes on up only if it dropped something."""
        for tree, i in self._selecting(row):
            left = tree.left
            for level in range(max(i, 1) + 1, len(left)):
                buf = left[level]
                alive = [c for c in buf if c[0] > t]
                if len(alive) == len(buf):
                    break
                left[level] = alive

    def _route(self, row, results) -> None:
        """Process an arriving tuple; new results go to ``results`` (None: discard)."""
        self._join(row, results, store=True)
        self._rows[row.tid] = row
        if row.t_end is not None:
            self._expiry.append(row)

    def _join(self, row, results, store: bool) -> None:
        """Every composite holding ``row`` built once, tree by tree: at a leaf of
        position ``i`` it joins ``left[i]`` (position 0: it starts a composite),
        and the new composites go up through ``left``/``right`` of the joins
        above.  ``store``: the tuple and the composites enter the buffers."""
        t_end = INF if row.t_end is None else row.t_end
        for tree, i in self._selecting(row):
            n = len(tree.nodes)
            if n == 1:
                if results is not None:
                    results.append(tree.result((row,)))
                if store:
                    tree.single.append(row)
                continue
            if i == 0:
                first = (t_end, (row,))
                if store:
                    tree.left[1].append(first)
                new, level = self._probe_right(tree, 1, [first]), 1
            else:
                new, level = self._probe_left(tree, i, row, t_end), i
                if store:
                    tree.right[i].append(row)
            while new and level < n - 1:
                level += 1
                if store:
                    tree.left[level].extend(new)
                new = self._probe_right(tree, level, new)
            if new and results is not None:
                results.extend(tree.result(c[1]) for c in new)

    def _probe_left(self, tree, i: int, row, t_end) -> list:
        """A tuple arriving at the right input of ``j_i``: nested loop over ``left[i]``."""
        pa, xa = tree.cond[i]
        xv = row.values[xa]
        if xv is None:
            return []
        pp, now, refuses = tree.parent[i], self.now, self.refuses
        buf, new, dead = tree.left[i], [], False
        for c in buf:
            if c[0] <= now:
                dead = True
            elif c[1][pp].values[pa] == xv and not refuses(c[1], row):
                new.append((min(c[0], t_end), c[1] + (row,)))
        if dead and self.purge == "lazy":
            tree.left[i] = [c for c in buf if c[0] > now]
        return new

    def _probe_right(self, tree, i: int, composites: list) -> list:
        """New composites at the left input of ``j_i``: nested loop over ``right[i]``."""
        pa, xa = tree.cond[i]
        pp, now, refuses, out = tree.parent[i], self.now, self.refuses, []
        right = tree.right[i]
        for c in composites:
            v = c[1][pp].values[pa]
            if v is None:
                continue
            for y in right:
                if y.values[xa] == v and not refuses(c[1], y):
                    te = INF if y.t_end is None else y.t_end
                    end = c[0] if c[0] < te else te
                    if end > now:
                        out.append((end, c[1] + (y,)))
        return out

    def _remove(self, row) -> None:
        """The tuple leaves the source buffers of its leaves (they are ordered by
        ``t_end``: an expired tuple is at the front)."""
        del self._rows[row.tid]
        for tree, i in self._selecting(row):
            if tree.single is not None:
                _drop(tree.single, row)
            elif i == 0:
                buf = tree.left[1]
                for k, c in enumerate(buf):
                    if c[1][0] is row:
                        del buf[k]
                        break
            else:
                _drop(tree.right[i], row)

    # -- results -------------------------------------------------------------------
    def _current(self, t) -> set:
        out = set()
        for tree in self.trees:
            if tree.single is not None:
                out.update(tree.result((r,)) for r in tree.single)
                continue
            top = len(tree.nodes) - 1
            alive = [c for c in tree.left[top] if c[0] > t]
            out.update(tree.result(c[1]) for c in self._probe_right(tree, top, alive))
        return out


def _drop(buf: list, row) -> None:
    for k, y in enumerate(buf):
        if y is row:
            del buf[k]
            return
