"""The paper's baseline (SWOOP Section 3, "Baseline"): every new set is paired
with every valid set of the window; each pair with overlap > 0 goes into the
stock S, a binary search tree (``SortedList``) ordered by the canonical key, so
S holds all valid pairs, O(|W|^2).  ``topk`` reads the first k of S.  Expired
pairs are removed when their older set leaves the window (the pairs ending
then were listed with it), instead of the paper's full scan of S.

``BaseEngine`` (registered as ``base``) runs compiled: one
``_base_kernels.run_ops`` call per batch over numpy arrays (S as a sorted list of
blocks, the pairs of each set in an arena), the way SWOOP and SCase run, so a
benchmark compares algorithms.  The option ``base:compiled=false`` runs the plain
Python version below (``_apply_plain``), the readable reference: same outputs.
"""
from __future__ import annotations

from collections import deque

import numpy as np
from sortedcontainers import SortedList

from streamspec.engines.simjoin import _base_kernels as K
from streamspec.engines.simjoin._buffers import collect, compact_records, grow_out, reserve_records
from streamspec.engines.simjoin.static import _grow

from streamspec.spec._simjoin_similarity import similarity
from streamspec.spec.simjoin import SimJoinEngine, order_key


RECORDS = ("r_seq", "r_side", "r_head", "r_ts")     # the per-record arrays (``_buffers``)


def _grow2(a: np.ndarray, rows: int) -> np.ndarray:
    """The block pool ``a`` (rows of ``BLOCK`` keys) with at least ``rows`` rows, grown by a
    quarter, not doubled: at |W| = 1e4 the pool holds ~1e5 blocks (16 KB each per column)."""
    if rows <= a.shape[0]:
        return a
    out = np.zeros((max(rows, a.shape[0] + a.shape[0] // 4, 4),) + a.shape[1:], a.dtype)
    out[:a.shape[0]] = a
    return out


class BaseEngine(SimJoinEngine):
    """All pairs with overlap > 0 kept in a sorted stock (compiled; ``compiled=false``:
    the plain Python reference)."""

    name = "base"
    exact = True
    description = "baseline of the paper: all window pairs with overlap > 0 in a sorted stock (numba)"
    options = {"compiled": (True, False)}
    compiled = True

    def _start(self):
        if not self.compiled:
            self._window: deque = deque()       # (seq, tokens, ts + w, side, keys ending with it)
            self._stock = SortedList()
            self._last: tuple = ()
            return
        k, i8, f8 = self.params.k, np.int64, np.float64
        self.meta = np.zeros(K.META, i8)
        self.meta[K.A_FREE] = -1
        self.r_seq, self.r_side, self.r_head = np.zeros(64, i8), np.zeros(64, i8), np.zeros(64, i8)
        self.r_ts = np.zeros(64, f8)
        self.r_ptr = np.zeros(65, i8)
        self.p_tok = np.zeros(256, i8)
        self.blk, self.s_len, self.free_blk = np.zeros(0, i8), np.zeros(0, i8), np.zeros(0, i8)
        self.s_sc, self.s_e = np.zeros((0, K.BLOCK), f8), np.zeros((0, K.BLOCK), f8)
        self.s_i, self.s_j = np.zeros((0, K.BLOCK), i8), np.zeros((0, K.BLOCK), i8)
        self.a_sc, self.a_i, self.a_next = np.zeros(64, f8), np.zeros(64, i8), np.zeros(64, i8)
        self.last_i, self.last_j = np.zeros(k, i8), np.zeros(k, i8)
        self.last_sc, self.last_e = np.zeros(k, f8), np.zeros(k, f8)
        self.out_pos, self.out_ptr = np.zeros(64, i8), np.zeros(64, i8)
        self.out_i, self.out_j = np.zeros(64, i8), np.zeros(64, i8)
        self.out_sc, self.out_e = np.zeros(64, f8), np.zeros(64, f8)

    # -- state housekeeping (compiled) -----------------------------------------------
    def __getstate__(self) -> dict:
        """The state without spare capacity (Spark pickles the engine after every
        micro-batch, the conformance checks after most operations): the rows, tokens,
        blocks and arena entries in use; the output buffers empty.  Every array is grown
        on demand again (``_reserve``, ``NEED_ROOM``, ``NEED_OUT``) and no result
        depends on capacity."""
        state = self.__dict__.copy()
        if not self.compiled:
            return state
        m = self.meta
        n_rec, n_blk, n_arena = int(m[K.N_REC]), int(m[K.BLK_TOP]), int(m[K.A_TOP])
        for name in ("r_seq", "r_side", "r_head", "r_ts"):
            state[name] = state[name][:n_rec].copy()
        state["r_ptr"] = self.r_ptr[:n_rec + 1].copy()
        state["p_tok"] = self.p_tok[:int(m[K.N_POST])].copy()
        for name in ("blk", "s_len", "free_blk", "s_sc", "s_e", "s_i", "s_j"):
            state[name] = state[name][:n_blk].copy()
        for name in ("a_sc", "a_i", "a_next"):
            state[name] = state[name][:n_arena].copy()
        for name in ("out_pos", "out_ptr", "out_i", "out_j", "out_sc", "out_e"):
            state[name] = state[name][:0].copy()
        return state

    def _compact(self) -> None:
        """Drop the expired rows and their tokens once they are half the arrays (their
        pairs left S and the arena when they expired)."""
        compact_records(self, K, RECORDS)

    def _reserve(self, prep) -> None:
        reserve_records(self, K, RECORDS, prep)

    def _grow_room(self) -> None:
        """Room for one more insert: an arena entry per window set, and blocks for every
        split it may cause (``_base_kernels.blocks_needed``)."""
        m = self.meta
        window = int(m[K.N_REC] - m[K.OLDEST])
        self.a_sc, self.a_i, self.a_next = (_grow(a, int(m[K.A_TOP]) + window)
                                            for a in (self.a_sc, self.a_i, self.a_next))
        blocks = int(K.blocks_needed(m, window))
        self.blk, self.s_len, self.free_blk = (_grow(a, blocks) for a in (self.blk, self.s_len, self.free_blk))
        self.s_sc, self.s_e, self.s_i, self.s_j = (_grow2(a, blocks) for a in (self.s_sc, self.s_e, self.s_i, self.s_j))

    def _grow_out(self) -> None:
        grow_out(self, K)

    def _apply(self, prep):
        if not self.compiled:
            return self._apply_plain(prep)
        self._compact()
        self._reserve(prep)
        p = self.params
        start = 0
        while True:
            start, status = K.run_ops(
                start, prep.op, prep.ts, prep.side, prep.seq, prep.tok_ptr, prep.tok, p.kind, p.k, p.wf,
                p.join == "rs", self.meta, self.r_seq, self.r_ts, self.r_side, self.r_ptr, self.r_head,
                self.p_tok, self.blk, self.s_len, self.s_sc, self.s_e, self.s_i, self.s_j, self.free_blk,
                self.a_sc, self.a_i, self.a_next, self.last_i, self.last_j, self.last_sc, self.last_e,
                self.out_pos, self.out_ptr, self.out_i, self.out_j, self.out_sc, self.out_e)
            if status == 0:
                break
            if status == K.NEED_OUT:
                self._grow_out()
            else:
                self._grow_room()
        return collect(self, K)

    @property
    def stats(self) -> dict:
        """Pairs in S now and at most, pairs inserted (the paper's candidates of Base),
        window sets a new set was paired with (its pre-candidates, Section 7.1) and pairs
        whose overlap was computed (``verified``: Base merges every pre-candidate's tokens
        in full, so the same count)."""
        if not self.compiled:
            return {}
        m = self.meta
        return {"stock": int(m[K.NS]), "max_stock": int(m[K.MAX_STOCK]), "candidates": int(m[K.INSERTED]),
                "precandidates": int(m[K.PRECAND]), "verified": int(m[K.PRECAND])}

    def _apply_plain(self, prep):
        p = self.params
        w, kind, two, k = p.wf, p.kind, p.join == "rs", p.k
        changes = []
        for pos in range(len(prep.op)):
            t = float(prep.ts[pos])
            while self._window and not (t < self._window[0][2]):
                for key in self._window.popleft()[4]:
                    self._stock.remove(key)
            if prep.op[pos] == 0:
                seq, side = int(prep.seq[pos]), int(prep.side[pos])
                mine = frozenset(prep.tok[prep.tok_ptr[pos]:prep.tok_ptr[pos + 1]].tolist())
                lr = len(mine)
                if lr:
                    for sj, toks, end, side_j, keys in self._window:
                        if two and side_j == side:
                            continue
                        o = len(mine & toks)
                        if o:
                            key = order_key(float(similarity(kind, lr, len(toks), o)), end, seq, sj)
                            self._stock.add(key)
                            keys.append(key)
                self._window.append((seq, mine, t + w, side, []))
            current = tuple((key[2], key[3], -key[0], -key[1]) for key in self._stock.islice(0, k))
            if current != self._last:
                changes.append((pos, current))
                self._last = current
        return changes
