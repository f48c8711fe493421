"""Partial-Mesh S-KWS (paper Section 4.2): the mesh grown and shrunk at run time.

At first only the sources exist (here: the level-0 operator of each cluster
root).  An operator creates its parents when its output buffer receives its
first composite, and destroys them (recursively up the mesh) when its buffer
runs dry, so a join exists iff its left input has output.  TreeGen: an
operator's tree is its CN prefix (the trees CNGen grew, in pre-order), and
its parents are the one-node expansions of that prefix that lead to CNs,
taken from the blueprint CNGen computed once (a prefix trie, no operators).

A newly created parent starts with an empty buffer, which is exact: its left
input was empty until the composites that created it, and those travel up
as usual.  A buffer counts as dry when lazy purging (or a deletion) leaves it
empty.  Every materialised join runs (no demand-driven sleeping): PM trades
CPU for memory.  Processing otherwise as ``engines.kws.mesh``.
"""
from __future__ import annotations

from engines.kws.cngen import cngen
from engines.kws.mesh import MeshEngine
from engines.kws.operators import Op, join_condition


class PartialMeshEngine(MeshEngine):
    name = "partialmesh"
    description = "operator mesh grown at run time from the sources and shrunk when input dries up"
    shared = True
    demand_driven = False
    purge = "lazy"

    def _build(self) -> None:
        schema, m = self.schema, len(self.keywords)
        self.cns = cngen(schema, m, self.params.t_max)
        self._children: dict = {}      # prefix -> one-node expansions (the blueprint)
        self._is_cn: set = set()
        for cn in self.cns:
            for i in range(1, len(cn)):
                kids = self._children.setdefault(cn[:i], [])
                if cn[: i + 1] not in kids:
                    kids.append(cn[: i + 1])
            self._is_cn.add(cn)
        self._mat: dict = {}           # prefix -> materialised Op
        self._sources = {(r.name, k): {} for r in schema.relations for k in range(1 << m)}
        self._roots, self._by_right, self._index = {}, {}, {}
        for e in schema.edges:  # every possible right input gets an index up front (cheap)
            for rel, attr in ((e.left, e.left_attr), (e.right, e.right_attr)):
                for k in range(1 << m):
                    self._index.setdefault(((rel, k), attr), {})
        for cn in self.cns:
            key = cn[:1]
            if key not in self._mat:
                rel, kbits, _, _ = cn[0]
                op = Op(0, (rel, kbits), -1, None, None)
                op.key, op.cn = key, key in self._is_cn
                self._mat[key] = op
                self._roots.setdefault(op.node, []).append(op)

    @property
    def ops(self) -> list:
        """The materialised operators."""
        return list(self._mat.values())

    def _emit(self, op, new, results) -> None:
        if not op.out and not op.parents:
            self._grow(op)
        super()._emit(op, new, results)

    def _grow(self, op) -> None:
        """TreeGen plus one CNGen step: create the parents of ``op``."""
        for key in self._children.get(op.key, ()):
            rel, kbits, parent_pos, label = key[-1]
            q = Op(op.pos + 1, (rel, kbits), parent_pos, label, op)
            q.key, q.cn = key, key in self._is_cn
            q.cond = join_condition(self.schema, label)
            op.add_parent(q)
            self._mat[key] = q
            self._by_right.setdefault(q.node, []).append(q)

    def _shrink(self, op) -> None:
        """Destroy the parents of a dry operator, recursively up the mesh."""
        for q in op.parents:
            self._shrink(q)
            del self._mat[q.key]
            self._by_right[q.node].remove(q)
        op.parents = ()

    def _live(self, op) -> list:
        alive = super()._live(op)
        if not alive and op.parents:
            self._shrink(op)
        return alive

    def _delete(self, tid, t):
        results = super()._delete(tid, t)
        self._prune_dry()
        return results

    def _advance(self, t) -> None:
        super()._advance(t)
        if self.purge == "eager":
            self._prune_dry()

    def _prune_dry(self) -> None:
        for op in [op for op in self._mat.values() if not op.out and op.parents]:
            if op.key in self._mat and not op.out:
                self._shrink(op)
