"""SWOOP (Mann, Augsten, Jensen, PVLDB; Sections 5-6): candidate index plus a
minimal stock.  The work happens in ``streamspec.engines.simjoin._swoop_kernels.run_ops``,
one call per batch; this class keeps the numpy state, grows and compacts it
between calls, and hands the kernel's output buffers over as ``Changes`` columns.

``SwoopNoIndex`` and ``SwoopNoIncrement`` are the ablations of Figure 13
(no candidate index: scan the whole window; no incremental stock: the skyband
is recomputed per insert), ``SwoopNoHeap`` the token-order ablation of Section
5.6, ``SCaseEngine`` is the SCase competitor (every
window set is a pre-candidate, linear-time lower bound, stock skyband
recomputed from scratch per insert).
"""
from __future__ import annotations

import bisect

import numpy as np

from streamspec.engines.simjoin import _remap, _swoop_index_kernels as IK
from streamspec.engines.simjoin._buffers import collect, grow as _grow, grow_out
from streamspec.engines.simjoin import _swoop_kernels as K
from streamspec.engines.simjoin._swoop_batch import batch_shape
from streamspec.spec.simjoin import Changes, SimJoinEngine

_I8 = np.int64
_F8 = np.float64
_SCRATCH = ("keys", "lens", "order")


def _pow2(n: int) -> int:
    return 1 << max(int(n) - 1, 1).bit_length()


def _relayout(m, r_ts, rec, p_tok, n_rec: int, n_tok: int):
    """The live records' rows and tokens in fresh rings of ``n_rec`` rows and ``n_tok``
    token slots (powers of two), tokens packed from slot 0; ``meta`` rebased.  The
    index entries name sets by number, so they stay as they are."""
    if n_rec > K.SEQ_MASK + 1:
        raise MemoryError(f"SWOOP window of {n_rec} sets exceeds the 2**30 set numbers")
    seqs = np.arange(int(m[K.OLDEST]), int(m[K.N_REC]), dtype=_I8)
    old, new = seqs & (rec.shape[0] - 1), seqs & (n_rec - 1)
    rows = rec[old]
    lens = (rows[:, K.LS] >> 1).astype(_I8)
    starts = np.zeros(seqs.size + 1, _I8)
    np.cumsum(lens, out=starts[1:])
    total = int(starts[-1])
    if total >= n_tok:
        raise AssertionError("token ring too small for the live sets")
    src = np.repeat(rows[:, K.PTR].astype(_I8) - starts[:-1], lens) + np.arange(total, dtype=_I8)
    b_tok = np.zeros(n_tok, _I8)
    b_tok[:total] = p_tok[src]
    rows[:, K.PTR] = starts[:-1]
    b_rec = np.zeros((n_rec, K.REC_COLS), np.int32)
    b_rec[new] = rows
    b_ts = np.zeros(n_rec, _F8)
    b_ts[new] = r_ts[old]
    m[K.POST_BASE], m[K.N_POST] = 0, total
    return b_ts, b_rec, b_tok


class SwoopEngine(SimJoinEngine):
    """Candidate index with cropped expiry-ordered lists and a minimal stock."""

    name = "swoop"
    exact = True
    description = "SWOOP: candidate index, positional/skyband bounds, minimal stock (numba)"
    use_index, crop, incremental, lb_linear, shortest_first = True, True, True, False, True
    arena_slack = 1 << 20      # free index entries above the arena top after it grows (at least)

    def _start(self):
        self.meta = np.zeros(K.META, _I8)
        self.meta[K.A_FREE_LISTS:] = -1
        self.r_ts = np.empty(64, _F8)            # rings: sizes are powers of two
        self.rec = np.zeros((64, K.REC_COLS), np.int32)
        self.p_tok = np.zeros(256, _I8)
        self.lists = np.zeros((64, 4), np.int32)
        self.a_rec, self.a_e = np.empty(0, np.int32), np.empty(0, _F8)
        self.faulted = 0                         # arena entries touched (below: faulted in)
        # S: score, end, seq_i, seq_j, dominance count; E: the stock's end times (sorted)
        self.s = [np.empty(64, _F8), np.empty(64, _F8), np.empty(64, _I8), np.empty(64, _I8),
                  np.empty(64, _I8)]
        self.e = [np.empty(64, _F8)]
        self.s_dead = np.zeros(64, _F8)          # insert scratch: the dropped pairs' end times
        self.top_i = np.empty(self.params.k, _I8)
        self.top_j = np.empty(self.params.k, _I8)
        self.pc, self.pce, self.pclb = np.empty(64, _I8), np.empty(64, _F8), np.empty(64, _F8)
        self.c = [np.empty(64, _F8), np.empty(64, _F8), np.empty(64, _I8), np.empty(64, _I8)]
        self.c_ord = np.empty(64, _I8)
        self.keys, self.lens, self.order = (np.empty(64, _I8) for _ in range(3))
        self.thr = np.empty(64, _F8)
        self.out_pos, self.out_ptr = np.empty(64, _I8), np.empty(64, _I8)
        self.out_i, self.out_j = np.empty(64, _I8), np.empty(64, _I8)
        self.out_sc, self.out_e = np.empty(64, _F8), np.empty(64, _F8)

    # -- state housekeeping ----------------------------------------------------
    # Nothing here runs in proportion to the window while its size is stable: expired
    # records' ring rows and tokens are overwritten in place, free index segments are
    # reused by the kernel.  What remains grows a buffer (doubling), rarely: the rings
    # (_grow_rings, relaid out), the arena (_grow_arena, copied), the stock, the output.
    def _grow_rings(self, n_ins: int, n_tok: int) -> None:
        """Room in the record and token rings for ``n_ins`` more live sets of ``n_tok``
        tokens in all (each at most ``longest``), whatever expires meanwhile."""
        m = self.meta
        live = int(m[K.N_REC] - m[K.OLDEST])
        n_rec = self.rec.shape[0]
        if live + n_ins > n_rec:
            n_rec = _pow2(2 * (live + n_ins))
        if live + n_ins > n_rec or int(m[K.N_POST] - m[K.POST_BASE]) + n_tok >= self.p_tok.size \
                or n_rec != self.rec.shape[0]:
            live_tok = int((self.rec[(np.arange(int(m[K.OLDEST]), int(m[K.N_REC]))
                                      & (self.rec.shape[0] - 1)), K.LS] >> 1).sum())
            size = self.p_tok.size
            if live_tok + n_tok >= size:
                size = _pow2(2 * (live_tok + n_tok) + 1)
            self.r_ts, self.rec, self.p_tok = _relayout(m, self.r_ts, self.rec, self.p_tok, n_rec, size)

    def _reserve(self, prep) -> None:
        # one compiled pass (_swoop_batch.batch_shape): numpy calls cost microseconds each
        # whatever the batch's length, and at 80% load batches are a few hundred sets
        n_ins, longest, live, posts = batch_shape(prep.op, prep.tok_ptr, self.meta)
        # padding: a set that would straddle the token ring's end starts at 0 (once per lap)
        n_tok = int(prep.tok.size) + 2 * longest + 1
        # (_grow_rings' own test, on the ints batch_shape read: grows when it would)
        if live + n_ins > self.rec.shape[0] or posts + n_tok >= self.p_tok.size:
            self._grow_rings(n_ins, n_tok)
        rows = self.tokens.size * (2 if self.params.join == "rs" else 1)
        if rows > self.lists.shape[0]:       # doubled; a mremap on Linux (no copy)
            self.lists = _remap.grow(self.lists, max(rows, 2 * self.lists.shape[0]), self.lists.shape[0],
                                     zero=True)
        if longest > min(self.keys.shape[0], self.lens.shape[0], self.order.shape[0], self.thr.shape[0]):
            for name in _SCRATCH:
                setattr(self, name, _grow(getattr(self, name), longest))
            self.thr = _grow(self.thr, longest)

    def _grow_stock(self) -> None:
        m = self.meta
        window = int(m[K.N_REC] - m[K.OLDEST]) + 1
        need = int(m[K.NS]) + window
        self.s = [_grow(a, need) for a in self.s]
        self.e = [_grow(a, need) for a in self.e]
        self.s_dead = _grow(self.s_dead, need)
        self.pc, self.pce, self.pclb = (_grow(a, window) for a in (self.pc, self.pce, self.pclb))
        self.c = [_grow(a, window) for a in self.c]
        self.c_ord = _grow(self.c_ord, window)

    def _grow_arena(self) -> None:
        """A larger index arena (at least doubled), the segments where they were
        (``_remap.grow``)."""
        m = self.meta
        top = int(m[K.A_TOP])
        size = max(2 * self.a_rec.size, top + int(m[K.A_NEED]) + self.arena_slack)
        if size >= 2 ** 31:        # list rows are int32
            raise MemoryError(f"SWOOP index arena of {size} entries exceeds int32 positions")
        # on Linux a mremap of the arena's mapping: no copy, pages faulted in as the top reaches them
        self.a_rec = _remap.grow(self.a_rec, size, top)
        self.a_e = _remap.grow(self.a_e, size, top)
        self.faulted = top

    def _prefault(self, n_ops: int) -> None:
        """Touch the arena above its top, a slice a call (64K entries plus 64 per operation),
        until ``max(arena_slack, top / 4)`` entries above the top are faulted in: a list that
        moves to a fresh segment twice its size (at |W| = 1e6 the most frequent token's list
        holds ~1e6 entries) then lands on memory that is already there instead of faulting
        in tens of MB at once.  Above the top the arena is unused: the zeros change nothing."""
        top, size = self.meta.item(K.A_TOP), self.a_rec.size
        want = min(size, top + max(self.arena_slack, top // 4))
        f = max(self.faulted, top)
        if f < want:
            g = min(want, f + (1 << 16) + 64 * n_ops)
            self.a_rec[f:g] = 0
            self.a_e[f:g] = 0
            f = g
        self.faulted = f

    def _grow_out(self) -> None:
        grow_out(self, K)

    # -- pickling ------------------------------------------------------------------
    def __getstate__(self) -> dict:
        """The state without spare capacity, for Spark's group state (``streamspec stream``
        pickles the engine after every micro-batch, docs/pipeline.md).

        Live engines keep room to grow: the index arena has at least
        ``arena_slack`` (1M) free entries, 12 MB whatever the window holds, the
        rings at least twice the window's records and tokens, and
        the per-insert and output buffers keep the size of the largest batch
        so far.  The pickle keeps only what the kernel reads before it writes:
        the arena compacted to its live lists (``compact_arena`` on copies, so
        this engine is untouched; no free segments), the rows of the records
        still in the window and their tokens, in rings just large enough,
        the stock and end time index up to ``NS``, the index list rows of the
        known tokens.  The scratch buffers (candidates, per-insert keys, the
        kernel's output) go empty.  Every buffer is grown on demand by the
        same paths a live engine takes (``_reserve``, ``NEED_STOCK``,
        ``NEED_ARENA``, ``NEED_RING``, ``NEED_OUT``), and no result depends on
        capacity, on ring slots or on where a list's segment sits in the arena,
        so the copy goes on exactly
        as the original (``conformance.contracts.check_pickling``).
        """
        state = self.__dict__.copy()
        m = self.meta.copy()
        rows = int(self.tokens.size) * (2 if self.params.join == "rs" else 1)
        lists = self.lists[:rows].copy()
        size = int(IK.compacted_size(lists))
        a_rec, a_e = np.empty(size, np.int32), np.empty(size, _F8)
        m[K.A_TOP] = IK.compact_arena(lists, self.a_rec, self.a_e, a_rec, a_e)
        m[K.A_FREE], m[K.A_FREE_LISTS:] = 0, -1
        live = int(m[K.N_REC] - m[K.OLDEST])
        live_tok = int((self.rec[np.arange(int(m[K.OLDEST]), int(m[K.N_REC])) & (self.rec.shape[0] - 1),
                                 K.LS] >> 1).sum())
        r_ts, rec, p_tok = _relayout(m, self.r_ts, self.rec, self.p_tok, _pow2(live + 1),
                                     _pow2(live_tok + 1))
        ns = int(m[K.NS])
        state.update(meta=m, lists=lists, a_rec=a_rec, a_e=a_e, r_ts=r_ts, rec=rec, p_tok=p_tok, faulted=size,
                     s=[a[:ns].copy() for a in self.s], e=[a[:ns].copy() for a in self.e],
                     s_dead=self.s_dead[:ns].copy())
        for name in ("pc", "pce", "pclb", "c_ord", "thr", *_SCRATCH, "out_pos", "out_ptr",
                     "out_i", "out_j", "out_sc", "out_e"):
            state[name] = state[name][:0].copy()
        state["c"] = [a[:0].copy() for a in self.c]
        return state

    def __setstate__(self, state: dict) -> None:
        """Unpickling; a state pickled before the stock kept dominance counts
        (``s`` of four columns, ``e`` the whole pairs in end time order: a
        ``streamspec stream`` checkpoint of an earlier release) gets them: the
        count of each pair is the number of pairs before it in S ending no
        earlier (expiry never changes it: expired pairs end before every pair
        left), and E keeps the sorted end times only."""
        if len(state.get("s", ())) == 4:
            s_sc, s_e, s_i, s_j = state["s"]
            ends = s_e.tolist()
            seen: list[float] = []                  # the ends before pair x, ascending
            counts = np.empty(len(ends), _I8)
            for x, e in enumerate(ends):
                counts[x] = len(seen) - bisect.bisect_left(seen, e)
                bisect.insort(seen, e)
            state = dict(state, s=[s_sc, s_e, s_i, s_j, counts], e=[np.sort(s_e)],
                         s_dead=np.zeros(len(ends), _F8))
        self.__dict__.update(state)

    # -- the hook ----------------------------------------------------------------
    def _apply(self, prep):
        self._reserve(prep)
        p, k = self.params, self.params.k
        start = 0
        while True:
            start, status = K.run_ops(
                start, prep.op, prep.ts, prep.side, prep.tok_ptr, prep.tok, p.kind, k, p.wf,
                p.join == "rs", self.meta, self.r_ts, self.rec, self.p_tok, self.lists,
                self.a_rec, self.a_e, *self.s, *self.e, self.s_dead, self.top_i, self.top_j,
                self.pc, self.pce, self.pclb, *self.c, self.c_ord, self.keys, self.lens, self.order, self.thr,
                self.out_pos, self.out_ptr, self.out_i, self.out_j, self.out_sc, self.out_e,
                self.use_index, self.crop, self.incremental, self.lb_linear, self.shortest_first)
            if status == 0:
                break
            if status == K.NEED_STOCK:
                self._grow_stock()
            elif status == K.NEED_ARENA:
                self._grow_arena()
            elif status == K.NEED_RING:      # not after _reserve; kept for safety
                self._grow_rings(1, int(np.diff(prep.tok_ptr).max()) * 3 + 1)
            else:
                self._grow_out()
        self._prefault(len(prep.op))
        return self._collect()

    def _collect(self) -> Changes:
        return collect(self, K)

    # -- introspection (tests, benchmarks) -----------------------------------------
    def stock(self) -> set[tuple[int, int]]:
        """``{(seq_i, seq_j)}`` of the pairs in the stock S."""
        ns = int(self.meta[K.NS])
        return set(zip(self.s[2][:ns].tolist(), self.s[3][:ns].tolist()))

    def end_index(self) -> list[float]:
        """The end time index E: the stock's end times, ascending (must equal S's)."""
        return self.e[0][:int(self.meta[K.NS])].tolist()

    def dominance(self) -> list[int]:
        """Per pair of S (in S order) the number of stock pairs that dominate it."""
        return self.s[4][:int(self.meta[K.NS])].tolist()

    @property
    def stats(self) -> dict:
        m = self.meta
        return {"precandidates": int(m[K.PRECAND]), "candidates": int(m[K.CAND]),
                "stock": int(m[K.NS]), "max_stock": int(m[K.MAX_STOCK]),
                "stock_sum": int(m[K.SUM_STOCK]), "scanned": int(m[K.SCANNED]),
                "verified": int(m[K.VERIFIED])}


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
