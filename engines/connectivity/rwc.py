"""RWC: recompute a union-find per window (the BIC paper's RWC baseline).

Zhang, Bonifati, Oezsu, BIC technical report Section 7.1 ("RWC ... recomputes
connectivity from scratch for each window"); the authors' Java keeps the window
edges in a FIFO and rebuilds a union-find at every query (BIC TR
Section 7.1).  Semantics: ``streamspec.spec.connectivity``.

Here the FIFO is three flat arrays with a moving head, compacted when the tail
reaches the end; the union-find (union by size, full path compression) lives in
flat arrays with an epoch stamp per vertex for presence, so a new window costs
only its edges.  One kernel call (``_rwc_kernels.rwc_run``) per ``_run``
applies all given edges and evaluates the due windows inside the loop.  The
union-find of the most recently evaluated window is kept for ``connected``.
"""
from __future__ import annotations

import numpy as np

from streamspec.engines.connectivity import _rwc_kernels as kernels
from streamspec.spec.connectivity import ConnectivityEngine

_MIN_CAPACITY = 64


class RwcEngine(ConnectivityEngine):
    """Union-find rebuilt from scratch over the window's edges at every window."""

    name = "rwc"
    exact = True
    description = "recompute a union-find per window over a FIFO of window edges (RWC baseline)"

    def _start(self) -> None:
        cap = _MIN_CAPACITY
        self._fifo_u = np.zeros(cap, dtype=np.int32)
        self._fifo_v = np.zeros(cap, dtype=np.int32)
        self._fifo_t = np.zeros(cap, dtype=np.int64)
        self._head = 0
        self._tail = 0
        self._parent = np.zeros(0, dtype=np.int32)
        self._size = np.zeros(0, dtype=np.int32)
        self._stamp = np.zeros(0, dtype=np.int64)   # == self._epoch <=> present in the last window
        self._epoch = 0

    # -- capacity -----------------------------------------------------------
    def _reserve_fifo(self, n: int) -> None:
        """Room for ``n`` more edges after the tail: compact, and double if needed."""
        if self._tail + n <= len(self._fifo_t):
            return
        live = self._tail - self._head
        cap = len(self._fifo_t)
        while live + n > cap // 2:
            cap *= 2
        if cap == len(self._fifo_t) and live + n <= cap:
            new_u, new_v, new_t = self._fifo_u, self._fifo_v, self._fifo_t   # compact in place
        else:
            new_u = np.zeros(cap, dtype=np.int32)
            new_v = np.zeros(cap, dtype=np.int32)
            new_t = np.zeros(cap, dtype=np.int64)
        sl = slice(self._head, self._tail)
        new_u[:live], new_v[:live], new_t[:live] = (self._fifo_u[sl].copy(), self._fifo_v[sl].copy(),
                                                    self._fifo_t[sl].copy())
        self._fifo_u, self._fifo_v, self._fifo_t = new_u, new_v, new_t
        self._head, self._tail = 0, live

    def _reserve_vertices(self, n: int) -> None:
        cap = len(self._stamp)
        if n <= cap:
            return
        cap = max(cap, _MIN_CAPACITY)
        while cap < n:
            cap *= 2
        grow = cap - len(self._stamp)
        self._parent = np.concatenate([self._parent, np.zeros(grow, np.int32)])
        self._size = np.concatenate([self._size, np.zeros(grow, np.int32)])
        # stamp -1 never equals an epoch (epochs start at 1)
        self._stamp = np.concatenate([self._stamp, np.full(grow, -1, np.int64)])

    # -- engine hooks ---------------------------------------------------------
    def _run(self, u, v, t, upto):
        self._reserve_vertices(self.n_vertices)
        self._reserve_fifo(len(t))
        out = np.zeros((max(upto - self.next_window, 0), len(self.queries)), dtype=bool)
        w = self.windows
        self._head, self._tail, self._epoch = kernels.rwc_run(
            self._fifo_u, self._fifo_v, self._fifo_t, self._head, self._tail,
            np.ascontiguousarray(u, dtype=np.int64), np.ascontiguousarray(v, dtype=np.int64),
            np.ascontiguousarray(t, dtype=np.int64), w.t0, w.r, w.s, self.next_window, upto,
            self._parent, self._size, self._stamp, self._epoch,
            np.ascontiguousarray(self.queries[:, 0]), np.ascontiguousarray(self.queries[:, 1]), out)
        return out

    def _connected(self, a, b):
        if a >= len(self._stamp) or b >= len(self._stamp):
            return False   # first seen after the last evaluated window
        return bool(kernels.uf_connected(self._parent, self._stamp, self._epoch, a, b))
