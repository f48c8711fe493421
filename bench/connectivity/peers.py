"""Per-window recomputation with the libraries a user would otherwise reach for.

Without a sliding-window algorithm, the obvious program rebuilds the window's
graph at every slide and runs a connected-components routine on it: scipy's
``scipy.sparse.csgraph.connected_components`` over a CSR matrix, or networkx's
``connected_components`` over a ``Graph``.  These are the peer baselines of
the benchmarks (BIC TR Section 7 compares with RWC, its own per-window
recomputation; these are the same idea with off-the-shelf tools).

Both run behind the engine contract (``streamspec.spec.connectivity.ConnectivityEngine``),
so they see exactly the same validated, remapped input as the engines, and
their answers are checked against the oracle in ``tests/bench``.
"""
from __future__ import annotations

import numpy as np

from streamspec.spec.connectivity import ConnectivityEngine


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
    """Keeps the edges not yet expired; at each due window, slices them by time
    and recomputes.  Built with ``hold_back=False``, edges are kept as they
    arrive and a window's latency is its recomputation."""

    exact = True

    def _start(self):
        # a FIFO of (u, v, t) columns with a moving head: appends are amortised O(1)
        self._fifo = np.empty((3, 1024), np.int64)
        self._head = self._tail = 0

    def _append(self, u, v, t) -> None:
        n = len(t)
        if self._tail + n > self._fifo.shape[1]:
            live = self._fifo[:, self._head:self._tail].copy()
            cap = self._fifo.shape[1]
            while live.shape[1] + n > cap // 2:
                cap *= 2
            if cap != self._fifo.shape[1]:
                self._fifo = np.empty((3, cap), np.int64)
            self._fifo[:, :live.shape[1]] = live
            self._head, self._tail = 0, live.shape[1]
        self._fifo[0, self._tail:self._tail + n] = u
        self._fifo[1, self._tail:self._tail + n] = v
        self._fifo[2, self._tail:self._tail + n] = t
        self._tail += n

    def _run(self, u, v, t, upto):
        # the hook evaluates window w before the first edge with t >= end(w): the
        # edges before end(upto - 1) go in first and each window takes its time slice
        n_windows = max(upto - self.next_window, 0)
        out = np.zeros((n_windows, len(self.queries)), dtype=bool)
        first = int(np.searchsorted(t, self.windows.end(upto - 1), side="left")) if n_windows \
            else 0
        self._append(u[:first], v[:first], t[:first])
        live = self._fifo[:, self._head:self._tail]
        for row, n in enumerate(range(self.next_window, upto)):
            lo = int(np.searchsorted(live[2], self.windows.start(n), side="left"))
            hi = int(np.searchsorted(live[2], self.windows.end(n), side="left"))
            out[row] = self._window(live[0, lo:hi], live[1, lo:hi])
        if n_windows:
            # drop what the next window can no longer see
            self._head += int(np.searchsorted(live[2], self.windows.start(upto), side="left"))
        self._append(u[first:], v[first:], t[first:])
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


def create(name: str, params, hold_back: bool = True):
    """An engine by name: a peer of this module, else a registered engine (``Registry``)."""
    if name in PEERS:
        return PEERS[name](params, hold_back=hold_back)
    from streamspec.spec.registry import Registry
    return Registry.create("connectivity", name, params, hold_back=hold_back)
