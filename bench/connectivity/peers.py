"""Per-window recomputation with the libraries a user would otherwise reach for.

Without a sliding-window algorithm, the obvious program rebuilds the window's
graph at every slide and runs a connected-components routine on it: scipy's
``scipy.sparse.csgraph.connected_components`` over a CSR matrix, or networkx's
``connected_components`` over a ``Graph``.  These are the peer baselines of
the benchmarks (BIC TR Section 7 compares with RWC, its own per-window
recomputation; these are the same idea with off-the-shelf tools).

Both run behind the engine contract (``spec.connectivity.ConnectivityEngine``),
so they see exactly the same validated, remapped input as the engines, and
their answers are checked against the oracle in ``tests/bench``.
"""
from __future__ import annotations

import numpy as np

from spec.connectivity import ConnectivityEngine


def scipy_window_answers(u: np.ndarray, v: np.ndarray, n_vertices: int,
                         queries: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One window with scipy: ``(answers, labels, present)`` over dense ids ``< n_vertices``."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    n = max(int(n_vertices), 1)
    graph = csr_matrix((np.ones(len(u), dtype=np.int8), (u, v)), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    present = np.zeros(n, dtype=bool)
    present[u] = True
    present[v] = True
    return _answer(labels, present, queries), labels, present


def networkx_window_answers(u: np.ndarray, v: np.ndarray,
                            queries: np.ndarray) -> tuple[np.ndarray, dict]:
    """One window with networkx: ``(answers, component id of each present vertex)``."""
    import networkx as nx

    graph = nx.Graph()
    graph.add_edges_from(zip(u.tolist(), v.tolist()))
    component = {}
    for i, members in enumerate(nx.connected_components(graph)):
        for x in members:
            component[x] = i
    answers = np.array([a in component and b in component and component[a] == component[b]
                        for a, b in queries.tolist()], dtype=bool)
    return answers, component


def _answer(labels, present, queries) -> np.ndarray:
    if len(queries) == 0:
        return np.zeros(0, dtype=bool)
    a, b = queries[:, 0], queries[:, 1]
    ok = (a >= 0) & (b >= 0) & (a < len(labels)) & (b < len(labels))
    a, b = np.where(ok, a, 0), np.where(ok, b, 0)
    return ok & present[a] & present[b] & (labels[a] == labels[b])


class _PerWindow(ConnectivityEngine):
    """Keeps the edges not yet expired; at each window, slices them and recomputes."""

    exact = True

    def _start(self):
        self._u = np.empty(0, np.int64)
        self._v = np.empty(0, np.int64)
        self._t = np.empty(0, np.int64)

    def _run(self, u, v, t, upto):
        # every edge handed over has t < end(upto - 1); windows slice by time
        self._u = np.concatenate([self._u, u])
        self._v = np.concatenate([self._v, v])
        self._t = np.concatenate([self._t, t])
        n_windows = upto - self.next_window
        out = np.zeros((n_windows, len(self.queries)), dtype=bool)
        for row, n in enumerate(range(self.next_window, upto)):
            lo = int(np.searchsorted(self._t, self.windows.start(n), side="left"))
            hi = int(np.searchsorted(self._t, self.windows.end(n), side="left"))
            out[row] = self._window(self._u[lo:hi], self._v[lo:hi])
        if n_windows:
            # keep what the next window can still see
            cut = int(np.searchsorted(self._t, self.windows.start(upto), side="left"))
            self._u, self._v, self._t = self._u[cut:], self._v[cut:], self._t[cut:]
        return out

    def _window(self, u, v) -> np.ndarray:
        raise NotImplementedError


class ScipyPerWindow(_PerWindow):
    name = "scipy"
    description = "scipy.sparse.csgraph.connected_components recomputed on every window"

    def _start(self):
        super()._start()
        self._labels = np.zeros(0, np.int64)
        self._present = np.zeros(0, bool)

    def _window(self, u, v):
        answers, self._labels, self._present = scipy_window_answers(
            u, v, self.n_vertices, self.queries)
        return answers

    def _connected(self, a, b):
        return bool(_answer(self._labels, self._present, np.array([[a, b]]))[0])


class NetworkxPerWindow(_PerWindow):
    name = "networkx"
    description = "networkx.connected_components recomputed on every window"

    def _start(self):
        super()._start()
        self._component: dict = {}

    def _window(self, u, v):
        answers, self._component = networkx_window_answers(u, v, self.queries)
        return answers

    def _connected(self, a, b):
        c = self._component
        return a in c and b in c and c[a] == c[b]


PEERS = {"scipy": ScipyPerWindow, "networkx": NetworkxPerWindow}


def create(name: str, params):
    """An engine by name: a peer of this module, else a registered engine (``Registry``)."""
    if name in PEERS:
        return PEERS[name](params)
    from spec.registry import Registry
    return Registry.create("connectivity", name, params)
