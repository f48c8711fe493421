"""The connectivity oracle: per window, build the window graph from scratch and
search it depth-first for each query (the semantics of ``streamspec.spec.connectivity``).

``evaluate(edges, params)`` is the definition itself, with no driver: it is what
the conformance runner compares every engine with, window by window.
``OracleEngine`` is the same search behind the engine contract, so the
pipeline can run it (``--engine oracle``).
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from streamspec.spec.connectivity import ConnectivityEngine, Edge, Params, WindowResult
from streamspec.spec.windows import SlidingWindows


def window_answers(window_edges, workload) -> tuple[bool, ...]:
    """Answers of one window: present and connected (``Q(x, x)``: present)."""
    adjacency = defaultdict(list)
    for u, v in window_edges:
        adjacency[u].append(v)
        adjacency[v].append(u)
    return tuple(_reachable(adjacency, a, b) for a, b in workload)


def _reachable(adjacency, a, b) -> bool:
    if a not in adjacency or b not in adjacency:
        return False
    seen, stack = {a}, [a]
    while stack:
        x = stack.pop()
        if x == b:
            return True
        for y in adjacency[x]:
            if y not in seen:
                seen.add(y)
                stack.append(y)
    return False


def on_time(edges) -> list[Edge]:
    """The edges that are not late: each at or after every edge before it.  Under
    ``lateness="error"`` a valid stream has no other; under ``"drop"`` the others
    are dropped (they lie in no window)."""
    kept, latest = [], None
    for e in edges:
        if latest is None or e.t >= latest:
            kept.append(e)
            latest = e.t
    return kept


def evaluate(edges, params: Params) -> list[WindowResult]:
    """Every window of the whole stream ``edges`` (a list of ``Edge`` or ``(u, v, t)``)."""
    edges = on_time(e if isinstance(e, Edge) else Edge(*e) for e in edges)
    if not edges:
        return []
    t0 = params.t0 if params.t0 is not None else edges[0].t
    w = SlidingWindows(params.r, params.s, t0)
    results = []
    for n in range(w.started_by(edges[-1].t)):
        lo, hi = w.start(n), w.end(n)
        inside = [(e.u, e.v) for e in edges if lo <= e.t < hi]
        results.append(WindowResult(n, lo, hi, window_answers(inside, params.workload)))
    return results


class OracleEngine(ConnectivityEngine):
    """Depth-first search per query per window over the window's edges."""

    name = "oracle"
    exact = True
    description = "DFS per query on each window graph, rebuilt from scratch (the oracle)"

    def _start(self):
        self._edges: list[tuple[int, int, int]] = []   # edges not yet expired, dense ids
        self._last: list[tuple[int, int]] = []         # edges of the last evaluated window

    def _run(self, u, v, t, upto):
        rows = []
        queries = [tuple(q) for q in self.queries.tolist()]
        n = self.next_window
        for a, b, tt in zip(u.tolist(), v.tolist(), t.tolist()):
            while n < upto and tt >= self.windows.end(n):
                rows.append(self._evaluate_window(n, queries))
                n += 1
            self._edges.append((a, b, tt))
        while n < upto:
            rows.append(self._evaluate_window(n, queries))
            n += 1
        return np.array(rows, dtype=bool).reshape(len(rows), len(queries))

    def _evaluate_window(self, n, queries):
        lo, hi = self.windows.start(n), self.windows.end(n)
        self._edges = [e for e in self._edges if e[2] >= lo]
        self._last = [(a, b) for a, b, tt in self._edges if tt < hi]
        return window_answers(self._last, queries)

    def _connected(self, a, b):
        return window_answers(self._last, [(a, b)])[0]
