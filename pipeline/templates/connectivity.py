"""A minimal connectivity engine: a union-find built afresh for every window.

The base class ``ConnectivityEngine`` validates every edge, maps vertex ids to dense
ints (the workload's vertices first), decides which windows are due and, with
``hold_back=True`` (the default), holds back the edges past the last due window.
This engine only keeps the edges that can still fall in a window and, when window
``n`` is evaluated, unions the endpoints of its edges and answers the workload.
"""
from __future__ import annotations

import numpy as np

from streamspec.spec.connectivity import ConnectivityEngine


class UnionFindEngine(ConnectivityEngine):
    """The window's edges kept in a list; one union-find per evaluated window."""

    name = "mine"
    exact = True
    description = "union-find rebuilt from the window's edges at every window (minimal engine)"

    def _start(self) -> None:
        # self.windows (with its origin t0) is known from here on
        self._edges: list[tuple[int, int, int]] = []   # (u, v, t) in time order, dense ids
        self._root: dict[int, int] = {}                # last evaluated window: vertex -> root

    def _run(self, u: np.ndarray, v: np.ndarray, t: np.ndarray, upto: int) -> np.ndarray:
        """Apply the edges in order, evaluating window ``n`` before the first edge with
        ``t >= end(n)``, then the windows left below ``upto``; one row per window."""
        rows = []
        n = self.next_window
        for a, b, time in zip(u.tolist(), v.tolist(), t.tolist()):
            while n < upto and time >= self.windows.end(n):
                rows.append(self._evaluate_window(n))
                n += 1
            self._edges.append((a, b, time))
        while n < upto:
            rows.append(self._evaluate_window(n))
            n += 1
        return np.array(rows, dtype=bool).reshape(len(rows), len(self.queries))

    def _evaluate_window(self, n: int) -> list[bool]:
        start, end = self.windows.start(n), self.windows.end(n)
        self._edges = [e for e in self._edges if e[2] >= start]   # expired for later windows too
        parent: dict[int, int] = {}

        def find(x: int) -> int:
            parent.setdefault(x, x)
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for a, b, time in self._edges:
            if time < end:
                parent[find(a)] = find(b)
        self._root = {x: find(x) for x in parent}
        return [self._connected(a, b) for a, b in self.queries.tolist()]

    def _connected(self, a: int, b: int) -> bool:
        """``Q(a, b)`` on the last evaluated window: both present and in one component."""
        root = self._root
        return a in root and b in root and root[a] == root[b]
