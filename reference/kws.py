"""The S-KWS oracle: at every event time, build ``G(t)`` and enumerate all its
MTJNTs by brute force (``streamspec.spec.kws``; paper Section 3.1).

- ``data_graph`` builds the labelled edges of ``G(t)`` by comparing every pair
  of alive tuples for every join edge.
- ``results_at`` grows every tree of ``G(t)`` with at most ``t_max`` nodes one
  edge at a time (deduplicated as node set plus edge set) and keeps the total,
  minimal ones.
- ``evaluate(params, events)`` is the definition of the answer: after the
  events of each instant it compares ``R(t)`` with the results still open
  (window model: whose window end is after ``t``) and derives the Appear and
  End events.  It assumes a valid stream (the spec boundary,
  ``streamspec.spec.kws.KwsEngine``, validates).
``OracleEngine`` is the same computation behind the engine contract.
"""
from __future__ import annotations

from itertools import groupby

from streamspec.spec.kws import (AddEdge, AddRelation, Appear, Delete, End, Insert, KwsEngine,
                      RemoveEdge, RemoveRelation, Result, output_key)
from streamspec.spec.kws_schema import clean_value, keyword_bits


def data_graph(schema, rows: dict) -> list:
    """Labelled edges ``(edge_id, left_tid, right_tid)`` of the graph over ``rows``
    (tid -> (relation, values)); only relations in ``schema`` take part."""
    edges = []
    for e in schema.edges:
        for xt, (xr, xv) in rows.items():
            if xr != e.left or xv.get(e.left_attr) is None:
                continue
            for yt, (yr, yv) in rows.items():
                if yr == e.right and yt != xt and yv.get(e.right_attr) is not None \
                        and xv[e.left_attr] == yv[e.right_attr]:
                    edges.append((e.id, xt, yt))
    return edges


def is_mtjnt(nodes, edges, bits: dict, full: int) -> bool:
    """Total, and every leaf (degree <= 1) holds a keyword no other node holds."""
    union = 0
    for n in nodes:
        union |= bits[n]
    if union != full:
        return False
    degree = {n: 0 for n in nodes}
    for _, a, b in edges:
        degree[a] += 1
        degree[b] += 1
    for n in nodes:
        if degree[n] <= 1:
            others = 0
            for m in nodes:
                if m != n:
                    others |= bits[m]
            if bits[n] & ~others == 0:
                return False
    return True


def results_at(schema, rows: dict, keywords: tuple, t_max: int) -> set:
    """``R(t)``: every MTJNT (as ``Result``) of the graph over ``rows``
    (tid -> (relation, values)), restricted to relations of ``schema``."""
    rels = {r.name: r for r in schema.relations}
    rows = {tid: rv for tid, rv in rows.items() if rv[0] in rels}
    bits = {tid: keyword_bits(rels[r], v, keywords) for tid, (r, v) in rows.items()}
    full = (1 << len(keywords)) - 1
    graph = data_graph(schema, rows)
    incident = {tid: [] for tid in rows}
    for e in graph:
        incident[e[1]].append(e)
        incident[e[2]].append(e)
    seen = set()
    layer = [(frozenset([tid]), frozenset()) for tid in rows]
    seen.update(layer)
    found = set()
    while layer:
        nxt = []
        for nodes, edges in layer:
            if is_mtjnt(nodes, edges, bits, full):
                found.add(Result.of(nodes, edges))
            if len(nodes) == t_max:
                continue
            for n in nodes:
                for e in incident[n]:
                    other = e[2] if e[1] == n else e[1]
                    if other in nodes:
                        continue  # would close a cycle (or a second edge between two tuples)
                    tree = (nodes | {other}, edges | {e})
                    if tree not in seen:
                        seen.add(tree)
                        nxt.append(tree)
        layer = nxt
    return found


class _Graph:
    """The state the oracle needs: schema and the tuples not yet deleted."""

    def __init__(self, params):
        self.params = params
        self.schema = params.schema
        self.rows = {}   # tid -> (relation, values, t_start)

    def apply(self, ev) -> None:
        if isinstance(ev, Insert):
            values = {a: None for a in self.schema.relation(ev.relation).attributes}
            values.update((a, clean_value(v)) for a, v in ev.values)
            self.rows[ev.tid] = (ev.relation, values, ev.t)
        elif isinstance(ev, Delete):
            del self.rows[ev.tid]
        elif isinstance(ev, AddRelation):
            self.schema = self.schema.with_relation(ev.relation)
        elif isinstance(ev, RemoveRelation):
            self.schema = self.schema.without_relation(ev.name)
            self.rows = {k: v for k, v in self.rows.items() if v[0] != ev.name}
        elif isinstance(ev, AddEdge):
            self.schema = self.schema.with_edge(ev.edge)
        elif isinstance(ev, RemoveEdge):
            self.schema = self.schema.without_edge(ev.edge_id)

    def t_end(self, tid):
        w = self.params.window
        return None if w is None else self.rows[tid][2] + w

    def results(self, t: int) -> set:
        w = self.params.window
        alive = {tid: (r, v) for tid, (r, v, ts) in self.rows.items()
                 if ts <= t and (w is None or t < ts + w)}
        return results_at(self.schema, alive, self.params.keywords, self.params.t_max)

    def end_of(self, r: Result):
        if self.params.window is None:
            return None
        return min(self.t_end(tid) for tid in r.tids)


def _diff(graph: _Graph, open_: dict, t: int) -> tuple[list, list, dict]:
    """(ended, appeared, new open) at instant ``t``; open maps Result -> window end."""
    now = graph.results(t)
    still = {r for r, end in open_.items() if end is None or end > t}
    ended = [r for r in still if r not in now]
    appeared = [r for r in now if r not in still]
    return ended, appeared, {r: graph.end_of(r) for r in now}


def evaluate(params, events) -> list:
    """Every output event of the whole (valid) stream, in canonical order."""
    graph = _Graph(params)
    open_: dict = {}
    out = []
    for t, group in groupby(events, key=lambda ev: ev.t):
        for ev in group:
            graph.apply(ev)
        ended, appeared, nxt = _diff(graph, open_, t)
        step = [End(t, r.tids, r.edges) for r in ended]
        step += [Appear(t, r.tids, r.edges, nxt[r]) for r in appeared]
        out.extend(sorted(step, key=output_key))
        open_ = nxt
    return out


class OracleEngine(KwsEngine):
    """Brute-force enumeration of all MTJNTs of G(t) at every event time."""

    name = "oracle"
    description = "brute force: every tree of the data graph, at every event time"

    def _start(self) -> None:
        self._graph = _Graph(self.params)
        self._open: dict = {}

    def _insert(self, row, t):
        self._graph.apply(Insert(row.relation, row.tid, row.values, t))
        return ()

    def _delete(self, tid, t):
        self._graph.apply(Delete(tid, t))
        return ()

    def _schema_change(self, event, t):
        self._graph.apply(event)
        return (), ()

    def _close_instant(self, t):
        ended, appeared, self._open = _diff(self._graph, self._open, t)
        return ended, appeared
