"""SWOOP (Mann, Augsten, Jensen, PVLDB; Sections 5-6): candidate index plus a
minimal stock.  The work happens in ``engines.simjoin._swoop_kernels.run_ops``;
this class keeps the numpy state, grows and compacts it between calls, and
turns the kernel's output buffers into top-k lists.

``SwoopNoIndex`` and ``SwoopNoIncrement`` are the ablations of Figure 13
(no candidate index: scan the whole window; no incremental stock: the skyband
is recomputed per insert), ``SwoopNoHeap`` the token-order ablation of Section
5.6, ``SCaseEngine`` is the SCase competitor (every
window set is a pre-candidate, linear-time lower bound, stock skyband
recomputed from scratch per insert).
"""
from __future__ import annotations

import numpy as np

from engines.simjoin import _swoop_kernels as K
from spec.simjoin import SimJoinEngine

_I8 = np.int64


def _grow(a: np.ndarray, need: int, fill=None) -> np.ndarray:
    if need <= a.size:
        return a
    size = max(need, 2 * a.size, 16)
    out = np.empty(size, a.dtype) if fill is None else np.full(size, fill, a.dtype)
    out[:a.size] = a
    return out


class SwoopEngine(SimJoinEngine):
    """Candidate index with cropped expiry-ordered lists and a minimal stock."""

    name = "swoop"
    exact = True
    description = "SWOOP: candidate index, positional/skyband bounds, minimal stock (numba)"
    use_index, crop, incremental, lb_linear, shortest_first = True, True, True, False, True

    def _start(self):
        self.meta = np.zeros(K.META, _I8)
        self.r_ts = np.empty(64, np.float64)
        self.r_side, self.r_ptr, self.r_len, self.mark = (np.zeros(64, _I8) for _ in range(4))
        self.p_tok, self.p_rec, self.p_prev = (np.zeros(256, _I8) for _ in range(3))
        self.l_tail = np.full(64, -1, _I8)
        self.l_count = np.zeros(64, _I8)
        self.s = [np.empty(64, np.float64), np.empty(64, np.float64), np.empty(64, _I8), np.empty(64, _I8)]
        self.e = [a.copy() for a in self.s]
        self.top_i = np.empty(self.params.k, _I8)
        self.top_j = np.empty(self.params.k, _I8)
        self.pc, self.pclb = np.empty(64, _I8), np.empty(64, np.float64)
        self.c = [np.empty(64, np.float64), np.empty(64, np.float64), np.empty(64, _I8), np.empty(64, _I8)]
        self.out_pos, self.out_ptr = np.empty(64, _I8), np.empty(64, _I8)
        self.out_i, self.out_j = np.empty(64, _I8), np.empty(64, _I8)
        self.out_sc, self.out_e = np.empty(64, np.float64), np.empty(64, np.float64)

    # -- state housekeeping ----------------------------------------------------
    def _compact(self) -> None:
        """Drop expired records and their postings once they are half the arrays."""
        m = self.meta
        d = int(m[K.OLDEST] - m[K.REC_BASE])
        if d <= 0 or 2 * d < m[K.N_REC] - m[K.REC_BASE]:
            return
        live = int(m[K.N_REC] - m[K.OLDEST])
        for name in ("r_ts", "r_side", "r_ptr", "r_len", "mark"):
            a = getattr(self, name)
            a[:live] = a[d:d + live].copy()
        new_post = int(self.r_ptr[0]) if live else int(m[K.N_POST])
        dp = new_post - int(m[K.POST_BASE])
        n_live_post = int(m[K.N_POST]) - new_post
        for name in ("p_tok", "p_rec", "p_prev"):
            a = getattr(self, name)
            a[:n_live_post] = a[dp:dp + n_live_post].copy()
        m[K.REC_BASE] = m[K.OLDEST]
        m[K.POST_BASE] = new_post

    def _reserve(self, prep) -> None:
        m = self.meta
        n_ins = int((prep.op == 0).sum())
        need_r = int(m[K.N_REC] - m[K.REC_BASE]) + n_ins
        for name in ("r_ts", "r_side", "r_ptr", "r_len", "mark"):
            setattr(self, name, _grow(getattr(self, name), need_r))
        need_p = int(m[K.N_POST] - m[K.POST_BASE]) + int(prep.tok.size)
        for name in ("p_tok", "p_rec", "p_prev"):
            setattr(self, name, _grow(getattr(self, name), need_p))
        keys = 2 * self.tokens.size
        self.l_tail = _grow(self.l_tail, keys, fill=-1)
        self.l_count = _grow(self.l_count, keys, fill=0)

    def _grow_stock(self) -> None:
        m = self.meta
        window = int(m[K.N_REC] - m[K.OLDEST]) + 1
        need = int(m[K.NS]) + window
        self.s = [_grow(a, need) for a in self.s]
        self.e = [_grow(a, need) for a in self.e]
        self.pc, self.pclb = _grow(self.pc, window), _grow(self.pclb, window)
        self.c = [_grow(a, window) for a in self.c]

    def _grow_out(self) -> None:
        k = self.params.k
        ev = int(self.meta[K.OUT_EV]) + 1
        rows = int(self.meta[K.OUT_ROW]) + k
        self.out_pos, self.out_ptr = _grow(self.out_pos, ev), _grow(self.out_ptr, ev)
        self.out_i, self.out_j = _grow(self.out_i, rows), _grow(self.out_j, rows)
        self.out_sc, self.out_e = _grow(self.out_sc, rows), _grow(self.out_e, rows)

    # -- the hook ----------------------------------------------------------------
    def _apply(self, prep):
        self._compact()
        self._reserve(prep)
        p, k = self.params, self.params.k
        start = 0
        while True:
            start, status = K.run_ops(
                start, prep.op, prep.ts, prep.side, prep.tok_ptr, prep.tok, p.kind, k, p.wf,
                p.join == "rs", self.meta, self.r_ts, self.r_side, self.r_ptr, self.r_len,
                self.p_tok, self.p_rec, self.p_prev, self.l_tail, self.l_count, self.mark,
                *self.s, *self.e, self.top_i, self.top_j, self.pc, self.pclb, *self.c,
                self.out_pos, self.out_ptr, self.out_i, self.out_j, self.out_sc, self.out_e,
                self.use_index, self.crop, self.incremental, self.lb_linear, self.shortest_first)
            if status == 0:
                break
            if status == K.NEED_STOCK:
                self._grow_stock()
            else:
                self._grow_out()
        return self._collect()

    def _collect(self) -> list:
        m = self.meta
        n_ev, n_rows = int(m[K.OUT_EV]), int(m[K.OUT_ROW])
        pos = self.out_pos[:n_ev].tolist()
        ptr = self.out_ptr[:n_ev].tolist() + [n_rows]
        i, j = self.out_i[:n_rows].tolist(), self.out_j[:n_rows].tolist()
        sc, e = self.out_sc[:n_rows].tolist(), self.out_e[:n_rows].tolist()
        m[K.OUT_EV] = m[K.OUT_ROW] = 0
        return [(pos[x], tuple(zip(i[ptr[x]:ptr[x + 1]], j[ptr[x]:ptr[x + 1]],
                                   sc[ptr[x]:ptr[x + 1]], e[ptr[x]:ptr[x + 1]])))
                for x in range(n_ev)]

    # -- introspection (tests, benchmarks) -----------------------------------------
    def stock(self) -> set[tuple[int, int]]:
        """``{(seq_i, seq_j)}`` of the pairs in the stock S (must equal those in E)."""
        ns = int(self.meta[K.NS])
        return set(zip(self.s[2][:ns].tolist(), self.s[3][:ns].tolist()))

    def end_index(self) -> set[tuple[int, int]]:
        ns = int(self.meta[K.NS])
        return set(zip(self.e[2][:ns].tolist(), self.e[3][:ns].tolist()))

    @property
    def stats(self) -> dict:
        m = self.meta
        return {"precandidates": int(m[K.PRECAND]), "candidates": int(m[K.CAND]),
                "stock": int(m[K.NS]), "max_stock": int(m[K.MAX_STOCK]),
                "stock_sum": int(m[K.SUM_STOCK]), "scanned": int(m[K.SCANNED])}


class SwoopNoIndex(SwoopEngine):
    """Ablation (Figure 13): no candidate index; the whole window is scanned newest first."""

    name = "swoop-noindex"
    description = "SWOOP without the candidate index (ablation, Figure 13)"
    use_index = False


class SwoopNoIncrement(SwoopEngine):
    """Ablation (Figure 13): the stock's skyband is recomputed per insert."""

    name = "swoop-noincrement"
    description = "SWOOP without the incremental stock (ablation, Figure 13)"
    incremental = False


class SwoopNoHeap(SwoopEngine):
    """Ablation (Section 5.6): lists looked up in first-appearance token order, no heap."""

    name = "swoop-noheap"
    description = "SWOOP without the shortest-list-first heap (token-order ablation, Section 5.6)"
    shortest_first = False


class SCaseEngine(SwoopEngine):
    """SCase (Shen et al.): every window set is a pre-candidate, lower bound by a
    linear scan of the stock, skyband recomputed from scratch per insert."""

    name = "scase"
    description = "SCase: all window sets paired, stock skyband recomputed per insert (numba)"
    use_index, crop, incremental, lb_linear = False, False, False, True
