"""A minimal S-KWS engine: the joining trees through a tuple, grown when it comes or goes.

The base class ``KwsEngine`` validates every event, keeps the schema and the tuples'
lifespans, nets the changes of each instant and emits ``Appear``/``End`` in the
canonical order.  This engine keeps the alive tuples by relation.  An inserted tuple's
new results are the minimal total joining networks of tuples (MTJNTs) through it, found
by growing trees from it one data-graph edge at a time (at most ``t_max`` tuples); a
deleted tuple's are found the same way just before it goes.  A schema change compares
every result before and after it.
"""
from __future__ import annotations

from collections import deque

from streamspec.spec.kws import KwsEngine, RemoveRelation, Result, Row


class TreeGrowthEngine(KwsEngine):
    """Trees grown from the changed tuple over the alive tuples."""

    name = "mine"
    exact = True
    description = "joining trees grown from each inserted or deleted tuple (minimal engine)"

    def _start(self) -> None:
        self._schema = self.schema           # the schema the alive tuples are joined under
        self._rows: dict = {}                # tid -> Row, every alive tuple
        self._by_relation: dict = {}         # relation -> {tid: Row}
        self._expiry: deque = deque()        # (t_end, tid) by insertion (window model)

    # -- the hooks ------------------------------------------------------------
    def _insert(self, row: Row, t: int) -> set:
        """The results that contain the new tuple (every one of them is new)."""
        self._expire(t)
        self._rows[row.tid] = row
        self._by_relation.setdefault(row.relation, {})[row.tid] = row
        if row.t_end is not None:
            self._expiry.append((row.t_end, row.tid))
        return self._trees_through(row.tid)

    def _delete(self, tid, t: int) -> set:
        """The results of the graph before the deletion that contain the tuple."""
        self._expire(t)
        ended = self._trees_through(tid)
        self._remove(tid)
        return ended

    def _schema_change(self, event, t: int) -> tuple[set, set]:
        """``self.schema`` is already the new schema: (results ended, results appeared)."""
        self._expire(t)
        before = self._all_results()
        if isinstance(event, RemoveRelation):            # its tuples end with it
            for tid in list(self._by_relation.get(event.name, {})):
                self._remove(tid)
        self._schema = self.schema
        after = self._all_results()
        return before - after, after - before

    # -- the engine -----------------------------------------------------------
    def _expire(self, t: int) -> None:
        """Window model: tuples with ``t_end <= t`` are no longer alive."""
        while self._expiry and self._expiry[0][0] <= t:
            _, tid = self._expiry.popleft()
            if tid in self._rows:                         # (not deleted before it expired)
                self._remove(tid)

    def _remove(self, tid) -> None:
        row = self._rows.pop(tid)
        del self._by_relation[row.relation][tid]

    def _all_results(self) -> set:
        found = set()
        for tid in self._rows:
            found |= self._trees_through(tid)
        return found

    def _trees_through(self, tid) -> set:
        """Every MTJNT of the alive tuples that contains ``tid``."""
        found, seen = set(), set()
        layer = [(frozenset([tid]), frozenset())]
        while layer:
            grown = []
            for nodes, edges in layer:
                if self._is_result(nodes, edges):
                    found.add(Result.of(nodes, edges))
                if len(nodes) == self.params.t_max:
                    continue
                for x in nodes:
                    for edge in self._edges_of(x):
                        other = edge[2] if edge[1] == x else edge[1]
                        if other in nodes:                # a tree never closes a cycle
                            continue
                        tree = (nodes | {other}, edges | {edge})
                        if tree not in seen:
                            seen.add(tree)
                            grown.append(tree)
            layer = grown
        return found

    def _edges_of(self, tid) -> list:
        """Labelled data-graph edges ``(edge_id, left_tid, right_tid)`` at tuple ``tid``."""
        row, out = self._rows[tid], []
        for e in self._schema.edges:
            if row.relation == e.left and row.values[e.left_attr] is not None:
                key = row.values[e.left_attr]
                out += [(e.id, tid, y.tid) for y in self._by_relation.get(e.right, {}).values()
                        if y.tid != tid and y.values[e.right_attr] == key]
            if row.relation == e.right and row.values[e.right_attr] is not None:
                key = row.values[e.right_attr]
                out += [(e.id, y.tid, tid) for y in self._by_relation.get(e.left, {}).values()
                        if y.tid != tid and y.values[e.left_attr] == key]
        return out

    def _is_result(self, nodes: frozenset, edges: frozenset) -> bool:
        """Total (every keyword) and minimal (each leaf holds a keyword no other tuple holds)."""
        bits = {tid: self._rows[tid].kbits for tid in nodes}
        union = 0
        for b in bits.values():
            union |= b
        if union != (1 << len(self.keywords)) - 1:
            return False
        degree = dict.fromkeys(nodes, 0)
        for _, left, right in edges:
            degree[left] += 1
            degree[right] += 1
        for tid in nodes:
            if degree[tid] <= 1:
                others = 0
                for other in nodes:
                    if other != tid:
                        others |= bits[other]
                if bits[tid] & ~others == 0:
                    return False
        return True
