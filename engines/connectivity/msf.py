"""MSF: sliding-window connectivity by a maximum spanning forest keyed by edge time.

Every streamed edge joins a spanning forest of all edges so far that keeps
the newest edges: an edge between two trees links them; an edge inside a tree
closes a cycle and replaces the oldest edge on it, so the forest is a maximum
spanning forest for edge time.  In such a forest the oldest edge on the path
between ``a`` and ``b`` is the bottleneck of every ``a``-``b`` path of the
graph (the cycle property), hence (the semantics of ``streamspec.spec.connectivity``)
``Q(a, b)`` on window ``[start, end)`` holds iff both are present and the
oldest edge on their forest path is at or after ``start`` (every applied edge
is before ``end`` when the window is answered).  Expiry needs no deletion: an
expired edge stays until a newer edge replaces it, so nothing is deferred.

The trees are an AM-tree (Anti-Monopoly tree; "New Algorithms for
Incremental Minimum Spanning Trees and Temporal Graph Applications", public
code at github.com/ucrparlay/AM-tree; the lazy variant with stitch linking;
issue 13 of the tracker), in ``_msf_kernels``: parent pointers with subtree sizes, which
hold the same bottlenecks as the maximum spanning forest (not necessarily its
edges), rebalanced lazily along the endpoints' root paths so that depth stays
O(log n) amortized, also on a ring or a chain (every spanning forest of
those is a long path).  The ancestor search steps up from the end with the
smaller subtree (no marks, no writes).  Presence is the last time each vertex
was an endpoint: present in window ``[start, end)`` iff at or after
``start``.  Edge times enter the trees floored to the slide grid
``t0 + k*s`` (every window start is on it, so the answers are the exact
times'; ``_msf_kernels.msf_run`` proves it), which makes an edge that closes a
cycle within one slide a no-op.  Each query caches the last path minimum it computed: the
bottleneck of a pair only grows as edges arrive, so a cached minimum at or
after ``start`` answers true without walking (exact).

Before the AM-tree the trees were plain parent pointers with small-to-large
links (as D-Tree, PVLDB 15(11) 2022): a ring of 10K vertices cost O(n) per
edge there, so the kernel watches the mean search length and, past
``st[SWITCH]`` (``SWITCH_STEPS``) per insert, moves the forest into link-cut
trees (Sleator-Tarjan, splay-based, O(log n) amortized; ``_msf_link_cut_kernels``)
and stays there.  With the AM-tree that guard does not fire on any stream we
know (the ring's searches are a few steps); it stays, tested with a lowered
threshold, as the worst-case bound the amortized one lacks.
"""
from __future__ import annotations

import numpy as np

from streamspec.engines.connectivity import _msf_kernels as kernels
from streamspec.engines.connectivity import _msf_layout as layout
from streamspec.engines.connectivity import _msf_link_cut_kernels as link_cut
from streamspec.spec._numba import entry_point
from streamspec.spec.connectivity import ConnectivityEngine

_MIN_CAPACITY = 64
_I64 = np.dtype(np.int64)
_ENTRY: list = []       # msf_run's compiled entry point for the engine's own argument types
_TRIGGER: list = []     # msf_trigger's (``MsfEngine._fuse_trigger``)


def _msf_entry():
    """``kernels.msf_run`` compiled for the arguments ``_run`` passes (``V``, ``st``
    and ``Q`` C-contiguous int64, any 1-d int64 edge columns, any bool rows), as
    the compiled function itself (``spec._numba.entry_point``): calling it skips
    numba's dispatcher, which types every argument and looks the signature up
    before each call, 4-5 us of a window's triggering call on the caches a
    slide has just evicted (issue 28; the kernel itself takes ~2 us there)."""
    if not _ENTRY:
        from numba import types
        i64 = types.int64
        _ENTRY.append(entry_point(kernels.msf_run, i64[:, ::1], i64[::1], i64[:], i64[:], i64[:],
                                  i64[:, ::1], types.boolean[:, :], i64, i64))
    return _ENTRY[0]


def _trigger_entry():
    """``kernels.msf_trigger`` compiled for the arguments the driver passes
    (``ConnectivityEngine._trigger_kernel``: the engine's C-contiguous arrays, the
    batch's 1-d int64 columns, the direct table and the driver's one-edge columns),
    as the compiled function itself."""
    if not _TRIGGER:
        from numba import types
        i64, own, col = types.int64, types.int64[::1], types.int64[:]
        _TRIGGER.append(entry_point(kernels.msf_trigger, i64[:, ::1], own, i64[:, ::1],
                                    types.boolean[:, ::1], col, col, col, i64, types.boolean,
                                    col, i64, i64, types.boolean))
    return _TRIGGER[0]


class MsfEngine(ConnectivityEngine):
    """Maximum spanning forest on edge time (AM-tree); oldest-edge-on-path queries."""

    name = "msf"
    exact = True
    retains_columns = False         # the kernel reads the edges into the records, keeps none
    description = ("maximum spanning forest keyed by edge time, Q(a, b) iff the oldest edge "
                   "on their forest path is in the window (numba)")

    def _start(self) -> None:
        self._V = np.zeros((0, layout.N_V), dtype=np.int64)
        self._cap = 0
        self._lct = False           # st[MODE] == 1, as a Python bool for _run
        self._st = np.zeros(layout.N_ST, dtype=np.int64)
        self._st[layout.LAST_T] = layout.NEVER
        self._st[layout.SWITCH] = kernels.SWITCH_STEPS
        w = self.windows
        self._st[layout.T0], self._st[layout.R], self._st[layout.S] = w.t0, w.r, w.s
        q = self.queries
        self._nq = len(q)
        # the pairs' ends and the bottleneck each last found (``kernels.answer``)
        self._Q = np.empty((layout.N_Q, len(q)), dtype=np.int64)
        self._Q[layout.QA] = q[:, 0]
        self._Q[layout.QB] = q[:, 1]
        self._Q[layout.QCACHE] = layout.NEVER
        self._Q[layout.QLAST] = 2
        self._one = np.full(1, layout.NEVER, dtype=np.int64)
        self._one_row = np.zeros((1, len(q)), dtype=bool)
        # the fused one-edge triggering call's row (``_fuse_trigger``)
        self._trigger_answers = np.zeros((1, len(q)), dtype=bool)
        # the link-cut trees: empty until the forest moves there (_to_link_cut)
        self._LT = np.zeros((8, 0), np.int32)
        self._ET = np.zeros(0, np.int64)
        self._no_rows = np.zeros((0, len(q)), dtype=bool)
        self._reserve(max(self.n_vertices, _MIN_CAPACITY))

    def _reserve(self, n: int) -> None:
        """Room for ``n`` vertex records (doubling); a new vertex is a one-vertex tree."""
        old = self._V.shape[0]
        if n <= old:
            return
        cap = max(old, _MIN_CAPACITY)
        while cap < n:
            cap *= 2
        # 64-byte aligned, so that no record straddles two cache lines
        raw = np.empty(cap * layout.N_V + 8, dtype=np.int64)
        skip = (-raw.ctypes.data % 64) // 8
        V = raw[skip:skip + cap * layout.N_V].reshape(cap, layout.N_V)
        V[:old] = self._V
        V[old:, layout.PARENT] = -1
        V[old:, layout.PTIME] = layout.NEVER     # a root hangs by an edge older than all
        V[old:, layout.SIZE] = 1
        V[old:, layout.SEEN] = layout.NEVER
        self._V = V
        self._cap = cap
        self._fuse_trigger()
        if self._st[layout.MODE] == 1:
            self._grow_link_cut(old, cap)

    def _grow_link_cut(self, old: int, cap: int) -> None:
        """Link-cut arrays for vertices ``old..cap-1`` (isolated vertices, unused slots)."""
        LT = np.zeros((8, 2 * cap), np.int32)
        LT[:, :2 * old] = self._LT
        LT[:3, 2 * old:] = -1                                          # L, R, P: none
        LT[3, 2 * old:] = np.arange(2 * old, 2 * cap, dtype=np.int32)  # AGG: itself
        LT[6, old:cap] = np.arange(old, cap, dtype=np.int32)           # UF: its own tree
        self._LT = LT
        ET = np.full(cap, layout.INF, np.int64)
        ET[:old] = self._ET
        self._ET = ET

    def _to_link_cut(self) -> None:
        """Move the forest into link-cut trees, for good: the AM-tree's searches
        grew past ``st[SWITCH]`` steps per insert on average, where link-cut
        trees take O(log n) amortized."""
        cap = self._V.shape[0]
        # rows L, R, P, AGG, REV, STACK over 2 * cap nodes; UF, FREE over cap (padded)
        self._LT = np.zeros((8, 2 * cap), np.int32)
        self._ET = np.zeros(cap, np.int64)
        link_cut.to_link_cut(self._V, self._LT, self._ET, self._st, cap)
        self._st[layout.MODE] = 1
        self._lct = True
        self._trigger_args = None   # (the fused one-edge call is the AM-tree's)

    @property
    def link_cut(self) -> bool:
        """Whether the forest lives in link-cut trees (see ``_to_link_cut``)."""
        return bool(self._st[layout.MODE] == 1)

    # -- engine hooks -------------------------------------------------------------
    def _run(self, u, v, t, upto):
        # a window's triggering call runs on caches a slide of inserts has just
        # evicted, where every Python or numpy step costs microseconds: keep
        # them few (the driver hands over contiguous int64 columns; the kernel
        # writes every cell of every row it evaluates or skips, so the output
        # needs no zeroing, and a one-window call reuses one row, which the
        # driver copies out before the next call)
        nw = self.next_window
        if upto == nw + 1:
            out = self._one_row
        elif upto > nw:
            out = np.empty((upto - nw, self._nq), dtype=bool)
        else:
            out = self._no_rows
        ids = self.vertices
        if ids is not None and ids.size > self._cap:
            self._reserve(ids.size)
        if self._lct:
            kernels.msf_run_link_cut(self._V, self._st, self._LT, self._ET, u, v, t, self._Q,
                                     out, nw, upto)
            return out
        if u.dtype is _I64 and v.dtype is _I64 and t.dtype is _I64:
            # the driver's int64 columns: the compiled function, not the dispatcher
            done = (_ENTRY[0] if _ENTRY else _msf_entry())(self._V, self._st, u, v, t, self._Q,
                                                           out, nw, upto)
        else:
            done = kernels.msf_run(self._V, self._st, u, v, t, self._Q, out, nw, upto)
        if done >= 0:
            return out
        # the searches grew long: go on from edge ``stop`` in link-cut trees
        done = -1 - done
        stop = int(self._st[layout.RESUME])
        self._to_link_cut()
        kernels.msf_run_link_cut(self._V, self._st, self._LT, self._ET, u[stop:], v[stop:],
                                 t[stop:], self._Q, out[done - nw:], done, upto)
        return out

    def _trigger_rest(self, lo):
        # msf_trigger answered window lo and then asked for link-cut trees before
        # the edge (answered == 3; the edge in st[EDGE:EDGE + 3]): move there, insert it
        self._to_link_cut()
        e = self._st[layout.EDGE:layout.EDGE + 3].copy()
        kernels.msf_run_link_cut(self._V, self._st, self._LT, self._ET, e[0:1], e[1:2], e[2:3],
                                 self._Q, self._no_rows, lo + 1, lo + 1)

    def _fuse_trigger(self) -> None:
        """Hand the driver the fused one-edge call (``ConnectivityEngine._trigger_kernel``
        and its leading arguments), for an eager engine on the AM-tree; after every
        growth of ``V``."""
        if self._one_edge is None or self._lct:
            self._trigger_args = None
            return
        if MsfEngine._trigger_kernel is None:
            # (static: under NUMBA_DISABLE_JIT the entry point is a plain function,
            # which a class attribute would bind to the engine)
            MsfEngine._trigger_kernel = staticmethod(_trigger_entry())
        self._trigger_args = (self._V, self._st, self._Q, self._trigger_answers)

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if "_V" in state:
            st, Q = self._st, self._Q
            if st.shape[0] < layout.N_ST:       # pickled before the fused call
                self._st = np.zeros(layout.N_ST, dtype=np.int64)
                self._st[:st.shape[0]] = st
            if Q.shape[0] < layout.N_Q:
                self._Q = np.full((layout.N_Q, Q.shape[1]), 2, dtype=np.int64)
                self._Q[:Q.shape[0]] = Q
            if "_trigger_answers" not in state:
                self._trigger_answers = np.zeros((1, self._nq), dtype=bool)
            self._fuse_trigger()

    def _connected(self, a, b):
        if a >= self._V.shape[0] or b >= self._V.shape[0]:
            return False            # first seen in an edge not applied yet
        self._one[0] = layout.NEVER
        start = self.windows.start(self.next_window - 1)
        if self.link_cut:
            return bool(link_cut.lct_answer(self._LT, self._ET, self._V, a, b, start, self._one, 0))
        return bool(kernels.answer(self._V.reshape(-1), a, b, start, self._one, 0))

    # -- inspection (tests) ---------------------------------------------------------
    def forest(self) -> list[tuple[int, int, int]]:
        """The trees' edges as ``(dense id, dense id, time)``, smaller id first, sorted:
        a forest with the bottlenecks of the maximum spanning forest of the
        applied edges, their times floored to the slide grid ``t0 + k*s``
        (``_msf_kernels.msf_run``: exact for every window); its edges need not
        be stream edges: the AM-tree's rotations and stitches move edge times
        between vertex pairs."""
        n = min(self.n_vertices, self._V.shape[0])
        if self.link_cut:
            free = set(self._LT[7][:int(self._st[layout.FREE_TOP])].tolist())
            rows = []
            for k in range(int(self._st[layout.FRESH])):
                if k not in free:
                    a, b = link_cut.lct_edge_ends(self._LT, self._ET, 2 * k + 1, n).tolist()
                    rows.append((min(a, b), max(a, b), int(self._ET[k])))
            return sorted(rows)
        V = self._V[:n]
        child = np.flatnonzero(V[:, layout.PARENT] != -1)
        par, ptime = V[child, layout.PARENT], V[child, layout.PTIME]
        return sorted((min(a, b), max(a, b), c)
                      for a, b, c in zip(child.tolist(), par.tolist(), ptime.tolist()))
