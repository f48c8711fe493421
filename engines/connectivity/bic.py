"""BIC: bidirectional incremental computation for sliding-window connectivity.

Zhang, Bonifati, Oezsu, "Incremental Sliding Window Connectivity over
Streaming Graphs", PVLDB 17(10), 2024 (TR Sections 4-6); with three fixes of
our own over the authors' Java: time-driven ``gcd(r, s)`` slots (windows need
not be multiples of the slide, ``streamspec.spec.windows``), edge-label
registration and register-once in the BFBG.  The kernels are in
``streamspec.engines.connectivity._bic_kernels`` (``run``, ``settle``, ``answer_pair``; the
BFBG in ``_bic_bfbg``, the array layout in ``_bic_layout``);
this class owns their arrays, grows them, and holds back edges that no
evaluated window may see yet.

Where the backward build lands (TR Section 5.2).  The paper builds the
backward buffer of a completed chunk when the next chunk's first edge is
inserted; that edge triggers a window, so every ``K`` windows one window's
latency holds a whole-chunk build.  Two things here change that, each an
engine option (``streamspec.spec.registry``) whose other value is the paper's:

- ``build`` (``"deferred"`` by default; ``bic:build=inside`` is the paper's
  placement): deferred, the build waits until the next chunk holds
  ``build_defer`` edges (``lay.BUILD_DEFER`` = 1024), or a call that answers
  no window ends (``_run``: the next call may be a trigger, and a slide
  shorter than ``build_defer`` edges would otherwise hold the build in the
  next window's triggering call), or a slot closes (``kern.rollover``,
  ``kern.settle``): the same work, moved out of the triggering call into a
  call that answers no window.  ``inside`` builds on the next chunk's first
  edge, in the triggering call.  Deferred, the call that built B (or
  pre-reduced the last slot) also asks the driver for a pre-warm
  (``_warm_due``; ``ConnectivityEngine._prewarm``): the next window answered
  dry through ``process`` (``_answer_dry``, ``kern.warm``), since that
  chunk-scale work evicted what the next trigger reads (the driver's own
  steps as much as the query rows).  Deferred also builds a window's
  BFBG union-find before its trigger when the last window needed one (see
  "Window queries" below); ``inside`` answers every window in its
  triggering call, as the paper does.
- ``prereduce`` (true by default; ``bic:prereduce=false`` is the paper's full
  reverse scan): on chunks whose slots ``0 .. K-2`` hold at least
  ``prereduce_min`` edges (``lay.PREREDUCE_MIN`` = 16384), the build's reverse
  scan over slots ``K-2 .. 1`` is pre-reduced while the last slot's edges
  arrive (a few edges of it per insert; ``_bic_build``), so whichever call
  builds B scans the last slot and a spanning forest of the rest: on the
  10M-edge stream about 290K edges instead of 950K, with the paper's
  placement too.  Once that is done, the last slot's own edges are linked in
  the build's union-find as they arrive, so the build enters their vertices
  and scans only the survivors (about 245K edges).  The forest answers every
  snapshot as the full scan's does (``_bic_build``), though its shape may
  differ.  A pre-reduction that has kept more than 7/8 of the first 3/8 of
  what it reads stops there, and the build scans the rest in full: on the
  Table 1 streams, whose chunks keep 77-83% of their edges, it cost more
  than the build it saved.

Window queries (TR Section 6, query processing).  A query the two buffers
leave open is decided in the BFBG at the window's index ``j``; one union-find
over every BFBG edge of the chunk (hundreds of thousands on a 400K-edge
window, milliseconds of the triggering call) is built only for the queries
that a bounded breadth-first search from either node leaves undecided
(``search_reads`` = 4096 edges a search, through per-F-root and per-B-node
edge lists and the pair index; all of a window's searches at most an eighth
of its BFBG edges; none below 32K BFBG edges, where the union-find is
cheaper).  On the Orkut-shaped stream the searches decide nearly all open
queries, reading tens to hundreds of edges.  With the build deferred, when a
window left queries to that union-find (on a BFBG of 32K edges or more:
``lay.KEEP_STREAK`` = 3 windows in a row did), a call of at least
``lay.KEEP_MIN_EDGES`` (1024) inserts that answers no window builds the next
window's (``kern.keep_window_uf``: the same scan, out of the triggering call)
and the inserts until its trigger keep it up to date (each registration and
F-root move applied to it), so that trigger answers its open queries with two
finds each and runs no search.  On the Friendster-shaped stream most queries
are false and searches rarely decide them: at 26K-edge windows (no searches)
the scan was most of the triggering call, at 426K-edge windows the failed
searches and then the scan (P50 3.7 ms); on the Orkut-shaped one 2% of the
windows need the union-find, never three in a row.  A window's triggering
call is one compiled call (``kern.trigger``, the driver's fused one-edge
call) when nothing is pending and no array may grow.

``bic:build=inside,prereduce=false`` is BIC as the paper's Section 5 describes
it.  Both options change where work is done, never an answer: every spelling
passes the conformance suite (``tests/connectivity/test_bic_options.py``).
"""
from __future__ import annotations

import numpy as np

from streamspec.engines.connectivity import _bic_bfbg as bfbg
from streamspec.engines.connectivity import _bic_kernels as kern
from streamspec.engines.connectivity import _bic_layout as lay
from streamspec.spec._numba import entry_point
from streamspec.spec.connectivity import ConnectivityEngine

_RUN: list = []         # kern.run's compiled entry point (``_run_entry``)
_TRIGGER: list = []     # kern.trigger's (``_trigger_entry``)


def _state_types():
    """numba types of the engine's arrays as both compiled entry points take them
    first (``st, V, U, J, A, W, C, E, M, H, BH, Q, qa, qb``)."""
    from numba import types
    i32c, i64c = types.int32[:, ::1], types.int64[::1]
    return (i64c, i32c, i32c, i32c, i32c, types.int32[::1], i32c, i32c, types.uint64[:, ::1],
            types.int64[:, ::1], i64c, i64c, i64c, i64c)


def _run_entry():
    """``kern.run`` compiled for the arguments ``_run`` passes (the engine's
    C-contiguous arrays, any 1-d int64 edge columns, any bool rows), as the
    compiled function itself (``spec._numba.entry_point``): numba's dispatcher
    types all 26 arguments before each call, ~2.2 us against 0.9 us on warm
    caches and more on the ones a slide has just evicted (a window's
    triggering call; the MSF engine's fix, ``msf._msf_entry``)."""
    if not _RUN:
        from numba import types
        i64, col = types.int64, types.int64[:]
        _RUN.append(entry_point(kern.run, *_state_types(), col, col, col, i64, i64, i64, i64, i64, i64,
                                i64, types.boolean[:, :], types.int64[:, ::1]))
    return _RUN[0]


def _trigger_entry():
    """``kern.trigger`` compiled for the arguments the driver passes
    (``ConnectivityEngine._trigger_kernel``: the engine's C-contiguous arrays,
    the batch's 1-d int64 columns, the direct table), as the compiled function itself."""
    if not _TRIGGER:
        from numba import types
        i64, i64c, col = types.int64, types.int64[::1], types.int64[:]
        _TRIGGER.append(entry_point(kern.trigger, *_state_types(), types.int64[:, ::1],
                                    types.boolean[:, ::1], i64c, i64c, col, col, col, i64, types.boolean,
                                    col, i64, i64, types.boolean))
    return _TRIGGER[0]



class BicEngine(ConnectivityEngine):
    """Forward/backward buffers per chunk of ``K = r/g`` slots, bridged by the BFBG."""

    name = "bic"
    exact = True
    description = "BIC: forward/backward union-find buffers per chunk bridged by the BFBG (numba)"
    # engine options (``bic:build=inside``, ``bic:prereduce=false``): the
    # paper's placement and scan are the second values (see the module docstring)
    options = {"build": ("deferred", "inside"), "prereduce": (True, False)}
    build = "deferred"
    prereduce = True
    # with build="deferred": edges of a new chunk that may arrive before the
    # completed chunk's backward buffer is built (0 builds on the first one, as
    # build="inside" does)
    build_defer = lay.BUILD_DEFER
    # with prereduce: chunks whose slots 0..K-2 hold at least this many edges have
    # their backward build pre-reduced while the last slot arrives (``_bic_build``)
    prereduce_min = lay.PREREDUCE_MIN
    # ... and may stop once it has kept more than 7/8 of the first 3/8 it reads
    # (False: always finishes; tests of the finished pre-reduction)
    prereduce_stop = True
    # BFBG edges a window query's search reads from each side before the
    # window's union-find over every BFBG edge decides it (``_bic_kernels``)
    search_reads = lay.SEARCH_READS
    # ... and all of a window's searches at most ``E_CNT >> search_shift``
    # (-1: no bound but ``search_reads`` each; tests)
    search_shift = lay.SEARCH_SHIFT_DEFAULT
    # window answers without applying anything (the driver's pre-warm, ``_answer_dry``)
    _answers_dry = True
    # ``kern.run`` copies each edge into the chunk buffer C and keeps no column:
    # a triggering call then gets the driver's reused one-edge columns (no
    # np.empty and slicing on the caches the slide evicted)
    retains_columns = False

    def _start(self) -> None:
        w = self.windows
        self._K = w.slots_per_window
        self._m = w.slots_per_slide
        self._t0, self._g = int(w.t0), int(w.g)     # (``w.g`` computes a gcd: not in a trigger)
        words = (self._K + 63) // 64
        self._st = np.zeros(lay.N_ST, dtype=np.int64)
        for ep in (lay.F_EP, lay.B_EP):
            self._st[ep] = 1            # stamps start at 0 = absent
        self._st[lay.C_OLD] = -1       # no backward build pending
        self._st[lay.REPLAY] = -1
        self._st[lay.DEFER] = 0 if self.build == "inside" else self.build_defer
        self._st[lay.PRE_HI] = -1
        self._st[lay.PRE_POS] = -1
        # no pre-reduction: no chunk is ever that large
        self._st[lay.PRE_MIN] = self.prereduce_min if self.prereduce else lay.NO_PREREDUCE
        self._st[lay.L_POS] = -1
        self._st[lay.PRE_STOP] = 1 if self.prereduce_stop else 0
        self._st[lay.SEARCH] = self.search_reads
        self._st[lay.SEARCH_SHIFT] = self.search_shift
        # the workload is fixed once the vertex index exists (before _start)
        q = self.queries
        self._nq = len(q)
        self._qa = np.ascontiguousarray(q[:, 0], dtype=np.int64)
        self._qb = np.ascontiguousarray(q[:, 1], dtype=np.int64)
        self._no_answers = np.zeros((0, self._nq), dtype=bool)
        self._one_answer = np.zeros((1, self._nq), dtype=bool)
        # the fused triggering call (``_fuse_trigger``): its row, the last real row
        # answered (0/1, 2 before any), the window's scalars
        self._trigger_answers = self._one_answer
        self._last = np.full(self._nq, 2, dtype=np.int64)
        self._win = self._window_scalars()
        self._pend = np.empty((3, max(self._nq, 1)), dtype=np.int64)   # run's scratch
        self._V = np.zeros((0, lay.N_V), dtype=np.int32)
        self._A = np.zeros((0, lay.N_A), dtype=np.int32)
        self._W = np.zeros(0, dtype=np.int32)
        self._U = np.zeros((0, 2), dtype=np.int32)
        self._J = np.zeros((0, 2), dtype=np.int32)
        self._C = np.zeros((3, 1024), dtype=np.int32)
        # bitsets are ceil(K/64) words per BFBG edge: start small when K is huge
        ecap = max(16, min(1024, (1 << 17) // words))
        self._E = np.zeros((ecap, lay.N_E), dtype=np.int32)
        self._M = np.zeros((ecap, words), dtype=np.uint64)
        self._H = np.full((4096, 2), -1, dtype=np.int64)
        self._BH = np.zeros(0, dtype=np.int64)
        self._Q = np.empty(self.search_reads + 1, dtype=np.int64)    # a query search's queue
        self._grow_vertices(self.n_vertices)
        self._fuse_trigger()

    def __setstate__(self, state: dict) -> None:
        """Unpickling; a state pickled before ``st[PRE_REST]`` and ``st[PRE_STOP]``
        existed (25 scalars) gets them: no stopped pre-reduction pending, stops allowed;
        one pickled before the kept union-find (27 scalars, no ``J``) gets none kept."""
        self.__dict__.update(state)
        st = state.get("_st")
        if st is not None and st.shape[0] < lay.N_ST:
            new = np.zeros(lay.N_ST, dtype=np.int64)
            new[:st.shape[0]] = st
            if st.shape[0] <= lay.PRE_STOP:
                new[lay.PRE_STOP] = 1 if self.prereduce_stop else 0
            new[lay.J_AT] = -1
            self._st = new
        if st is not None and "_J" not in state:
            self._J = np.zeros_like(self._U)
        if st is not None and "_t0" not in state:
            self._t0, self._g = int(self.windows.t0), int(self.windows.g)
        if st is not None and "_win" not in state:          # pickled before the fused call
            self._trigger_answers = self._one_answer
            self._last = np.full(self._nq, 2, dtype=np.int64)
            self._win = self._window_scalars()
        if st is not None:
            self._fuse_trigger()

    def _window_scalars(self) -> np.ndarray:
        """The fused call's window scalars (``lay.W_T0 .. W_S``)."""
        w = self.windows
        return np.array([w.t0, w.g, self._K, self._m, w.t0 + w.r, w.s], dtype=np.int64)

    def _fuse_trigger(self) -> None:
        """Hand the driver the fused one-edge call (``ConnectivityEngine._trigger_kernel``,
        ``kern.trigger``) and its leading arguments, for an eager engine; after every
        growth (the arguments are the arrays themselves)."""
        if self._one_edge is None:
            self._trigger_args = None
            return
        if BicEngine._trigger_kernel is None:
            # (static: under NUMBA_DISABLE_JIT the entry point is a plain function,
            # which a class attribute would bind to the engine)
            BicEngine._trigger_kernel = staticmethod(_trigger_entry())
        self._trigger_args = (self._st, self._V, self._U, self._J, self._A, self._W, self._C, self._E,
                              self._M, self._H, self._BH, self._Q, self._qa, self._qb, self._pend,
                              self._one_answer, self._last, self._win)

    def _trigger_rest(self, lo):
        # kern.trigger fed the edge (st[EDGE:EDGE + 3]) and stopped for an array to
        # grow (st[EDGE_STATUS]): grow it and resume, as _run does
        st = self._st
        e = st[lay.EDGE:lay.EDGE + 3].copy()
        self._resume(int(st[lay.EDGE_STATUS]), e[2:3], e[0:1], e[1:2], lo * self._m + self._K, lo,
                     self._one_answer)
        self._last[:] = self._one_answer[0]

    def _resume(self, status, t, u, v, target, nw0, out) -> None:
        """``kern.run`` stopped with ``status`` (an array to grow first): grow it and
        resume at ``st[RESUME]``, until the call is done."""
        st = self._st
        run = _RUN[0] if _RUN else _run_entry()
        while status:
            i0 = int(st[lay.RESUME])
            self._grow(status)
            status = run(st, self._V, self._U, self._J, self._A, self._W, self._C, self._E, self._M,
                         self._H, self._BH, self._Q, self._qa, self._qb, t, u, v, self._t0, self._g, i0,
                         target, self._K, self._m, nw0, out, self._pend)

    # -- array growth (doubling) -------------------------------------------------
    def _grow_vertices(self, n: int) -> None:
        cap = old = self._V.shape[0]
        if n <= cap:
            return
        cap = max(n, 2 * cap, 1024)
        # 64-byte aligned, so that no 32-byte record straddles two cache lines
        # (numpy's large arrays start 16 bytes into a page: every other
        # record did)
        raw = np.zeros(cap * lay.N_V + 16, dtype=np.int32)
        skip = (-raw.ctypes.data % 64) // 4
        V = raw[skip:skip + cap * lay.N_V].reshape(cap, lay.N_V)
        V[:self._V.shape[0]] = self._V
        self._V = V
        A = np.zeros((cap, lay.N_A), dtype=np.int32)        # stamps 0: absent (epochs start at 1)
        A[:self._A.shape[0]] = self._A                      # a pre-reduction may be under way
        self._A = A
        W = np.zeros(cap, dtype=np.int32)                   # absent: 0
        W[:self._W.shape[0]] = self._W                      # last-slot edges may be linked in it
        self._W = W
        BH = np.zeros(cap, dtype=np.int64)                  # B-side list heads (epoch 0: none)
        BH[:self._BH.shape[0]] = self._BH
        self._BH = BH
        self._U = np.zeros((2 * cap, 2), dtype=np.int32)   # per-window scratch
        self._st[lay.U_EP] = 0
        self._J = np.zeros((2 * cap, 2), dtype=np.int32)   # the kept union-find: rebuilt when next wanted
        self._st[lay.J_AT] = -1
        self._st[lay.J_EP] = 0
        # written once here, in the call that grows (a large insert call, as a rule):
        # numpy maps large zeroed arrays lazily (2 MB pages where the kernel grants
        # them), and the first write to each page, 1-1.5 ms here, would otherwise
        # land in the window queries (U) and the pre-reduction's first step (A, W)
        # of later triggering calls (FS: 20-24 faults, ~25 ms of system time in one)
        self._U.fill(0)
        self._J.fill(0)
        A[old:] = 0
        W[old:] = 0
        if self._trigger_args is not None:
            self._fuse_trigger()

    def _grow(self, status: int) -> None:
        st = self._st
        if status == 1:
            C = np.zeros((3, 2 * self._C.shape[1]), dtype=np.int32)
            C[:, :self._C.shape[1]] = self._C
            self._C = C
            self._fuse_trigger()
            return
        need = int(st[lay.E_CNT]) + lay.EDGE_HEADROOM
        if need > self._E.shape[0]:
            cap = max(2 * self._E.shape[0], need)
            E = np.zeros((cap, lay.N_E), dtype=np.int32)
            E[:self._E.shape[0]] = self._E
            M = np.zeros((cap, self._M.shape[1]), dtype=np.uint64)
            M[:self._M.shape[0]] = self._M
            self._E, self._M = E, M
            self._fuse_trigger()
        if 2 * (int(st[lay.H_USED]) + lay.H_HEADROOM) <= self._H.shape[0]:
            return
        cap = self._H.shape[0]
        while cap < 4 * (int(st[lay.E_CNT]) + lay.H_HEADROOM):
            cap *= 2
        self._H = np.full((cap, 2), -1, dtype=np.int64)
        st[lay.H_USED] = bfbg.rehash(self._E, st[lay.E_CNT], self._H)
        self._fuse_trigger()

    def _settle(self) -> None:
        """Finish a deferred backward build (``kern.settle``) before B is read."""
        while kern.settle(self._st, self._V, self._U, self._A, self._W, self._C, self._E, self._M, self._H,
                          self._BH, self._K):
            self._grow(2)

    # -- hooks -------------------------------------------------------------------
    def _run(self, u, v, t, upto):
        # a window's triggering call runs on caches a slide of inserts has just
        # evicted, where every Python or numpy step costs microseconds: keep
        # them few (slots are computed in the kernel; the kernel writes every
        # answer of every window it evaluates, so the output needs no zeroing)
        nw0 = self.next_window
        if upto == nw0 + 1:
            # the one-window call (a window's trigger): one reused row, which
            # the driver copies out before the next call
            out, target = self._one_answer, nw0 * self._m + self._K
        elif upto > nw0:
            out = np.empty((upto - nw0, self._nq), dtype=bool)
            target = (upto - 1) * self._m + self._K
        elif len(t):
            out, target = self._no_answers, -1
        else:
            return self._no_answers                          # nothing to apply or answer
        # no vertices yet: a watermark before the first edge of an empty workload
        if self.vertices is not None and self.vertices.size > self._V.shape[0]:
            self._grow_vertices(self.vertices.size)
        st = self._st
        built = st[lay.B_EP] if target < 0 else 0
        run = _RUN[0] if _RUN else _run_entry()
        status = run(st, self._V, self._U, self._J, self._A, self._W, self._C, self._E, self._M,
                     self._H, self._BH, self._Q, self._qa, self._qb, t, u, v, self._t0, self._g, 0,
                     target, self._K, self._m, nw0, out, self._pend)
        if status:
            self._resume(status, t, u, v, target, nw0, out)
        if target >= 0:
            assert st[lay.NW] == upto
            return out
        # a call that answers no window: work for the next trigger to find done
        if st[lay.DEFER] > 0 and (st[lay.C_OLD] >= 0 or st[lay.REPLAY] >= 0):
            # a deferred build still pending at the end of a call that answers no
            # window: finish it here, since the next call may be a trigger (slides
            # shorter than build_defer edges would otherwise close a slot, and build,
            # in the next window's triggering call)
            self._settle()
        if (st[lay.DEFER] > 0 and st[lay.J_WANT] and len(t) >= lay.KEEP_MIN_EDGES
                and kern.keep_window_uf(st, self._V, self._J, self._E, self._M, self._K, self._m)
                and not self.hold_back):
            # the last window left queries to a union-find: after a call of
            # lay.KEEP_MIN_EDGES inserts or more the next window's is built now, out of
            # its triggering call, and kept up to date by the inserts until then; the
            # call and the build evicted the query rows and J's rows the trigger reads,
            # and the driver's pre-warm brings them back (as after a backward build)
            self._warm_due = True
        if (st[lay.DEFER] > 0 and not self.hold_back
                and (st[lay.B_EP] != built or st[lay.PRE_HI] >= 0)):
            # this call built B, or pre-reduced the last slot: chunk-scale work that
            # evicts what the next trigger reads (its query rows, and the driver's
            # own steps): the driver pre-warms now (``_answer_dry``), out of that
            # trigger, as it moved the build out of it
            self._warm_due = True
        return out

    def _answer_dry(self, lo):
        # the next window's answers on the state as it is (``kern.warm``: only
        # when its trigger closes the current slot and nothing is pending)
        if kern.warm(self._st, self._V, self._U, self._J, self._E, self._M, self._H, self._BH, self._Q,
                     self._qa, self._qb, self._K, self._m, self._one_answer, self._pend):
            return self._one_answer
        return None

    def _connected(self, a, b):
        cap = self._V.shape[0]
        if a >= cap or b >= cap:
            return False            # never applied: absent from every window so far
        self._settle()
        j = ((self.next_window - 1) * self._m) % self._K
        return bool(kern.answer_pair(self._st, self._V, self._U, self._J, self._E, self._M, self._H, self._BH, self._Q, a, b, j))

    # -- inspection (tests of the worked example, tests/connectivity/test_bic.py) -------
    def backward_buffer(self) -> dict:
        """The live B: dense id -> (parent or -1, edge label or None, vertex label)."""
        self._settle()
        V, ep = self._V, self._st[lay.B_EP]
        out = {}
        for x in np.flatnonzero(V[:, lay.B_STAMP] == ep).tolist():
            par = int(V[x, lay.B_PARENT])
            out[x] = (par, None if par == -1 else int(V[x, lay.B_ELABEL]), int(V[x, lay.B_VLABEL]))
        return out

    def bridging_graph(self) -> dict:
        """The live BFBG: (B-side dense id, F-side dense id) -> sorted index set
        (the union over duplicate pairs left by moves)."""
        self._settle()
        E, M = self._E, self._M
        out = {}
        for e in range(int(self._st[lay.E_CNT])):
            pair = (int(E[e, lay.EB]), int(E[e, lay.EF]))
            bits = {k * 64 + b for k in range(M.shape[1]) for b in range(64) if (int(M[e, k]) >> b) & 1}
            out[pair] = sorted(bits | set(out.get(pair, ())))
        return out
