"""The "Static" competitor of SWOOP (Section 7.1): the one-time top-k set
similarity join of Xiao et al. (ICDE 2009, "Top-k set similarity joins") rerun
over the window's sets whenever the window changes.

One run: the global token order is SWOOP's token numbering (Section 5.6: dense
ids by first appearance, which Section 7.1 applies identically to every
algorithm, outside the set rate), descending (the token seen last first, a
frequency estimate); each set's tokens are put in that order once, when it
enters the window, not re-ordered per run.  Each set yields prefix events
``(x, p)`` with the positional upper bound ``ub(|x|, p+1)``; events are processed
in decreasing bound order (ties: the newest set first), each probing an
inverted index of the prefixes seen so far and verifying new pairs exactly; the
run stops once no unseen pair can precede the k-th best found: Xiao et al.'s
rule ``ub <= s_k``, with the ties the canonical order breaks by end time (a pair
tying the k-th score is still looked for while a queued set could end it later;
``_static_kernels._stop``).

``StaticEngine`` (registered as ``static``) runs the join compiled: one
``_static_kernels.run_ops`` call per batch over numpy arrays, the way SWOOP and
SCase run, so a benchmark against them compares algorithms, not Python against
machine code (the paper's four systems are all C++).  ``topk_join`` below is
the plain Python reference the kernel follows step for step; the option
``static:compiled=false`` runs it instead (same outputs, about 100x slower).

``static:batch=B`` (B > 1) is Section 7.2's *approximate* Static: the window
still moves set by set, but the join reruns only at every B-th change of the
window (counted across ``process`` calls, so the answers do not depend on how
the stream is cut into calls); between two reruns the last list stands, stale
(its pairs may have expired, a better pair may have arrived).  The paper
(Section 7.2) proves the error rate O(1 - 1/b) and measures 65% of the windows
with a wrong top-k list at b = 100 on ENRON (|W| = 1000, k = 10);
``python -m streamspec.bench.simjoin.static_batch`` measures it here.  Such a
variant is declared ``exact = False`` (``streamspec engines`` lists it as
``approx``); the conformance suite, which holds simjoin engines to the oracle
bit for bit, runs only its checks that compare an engine with itself (bad
records, through a never-offended twin) and reports the oracle checks as
skipped for it.  ``batch=1`` (the default) is the exact engine.
"""
from __future__ import annotations

import bisect

import numpy as np

from streamspec.engines.simjoin import _static_kernels as K
from streamspec.engines.simjoin._buffers import collect, compact_records, grow, grow_out, reserve_records
from streamspec.spec._simjoin_similarity import positional_upper_bound, similarity
from streamspec.spec.simjoin import SimJoinEngine, order_key


def topk_join(window, kind: int, k: int, w: float, two: bool) -> tuple:
    """Top-k pairs ``(seq_i, seq_j, score, e)`` of ``window`` = [(seq, tokens, ts, side)],
    each ``tokens`` a tuple of distinct dense token ids in the global order (descending)."""
    sets = {rec[0]: (rec[1], rec[2], rec[3]) for rec in window}
    events = []
    for seq, (toks, ts, _) in sets.items():
        for pos in range(len(toks)):
            events.append((-positional_upper_bound(kind, len(toks), pos + 1), -ts, -seq, pos))
    events.sort()
    index: dict = {}
    seen: set = set()
    best: list = []                       # sorted canonical keys, at most k
    for neg_ub, neg_ts, neg_seq, pos in events:
        ub, seq = -neg_ub, -neg_seq
        # no unseen pair can precede the k-th (the kernel's ``_stop`` says why)
        if len(best) == k and K._stop(kind, ub, -neg_ts + w, -best[-1][0], -best[-1][1]):
            break
        toks, ts, side = sets[seq]
        key_tok = (toks[pos], side) if not two else (toks[pos], 1 - side)
        for other in index.get(key_tok, ()):
            a, b = (seq, other) if seq > other else (other, seq)
            if (a, b) in seen:
                continue
            seen.add((a, b))
            ta, tb = sets[a][0], sets[b][0]
            o = len(set(ta).intersection(tb))
            score = float(similarity(kind, len(ta), len(tb), o))
            key = order_key(score, sets[b][1] + w, a, b)
            if len(best) < k or key < best[-1]:
                bisect.insort(best, key)
                del best[k:]
        index.setdefault((toks[pos], side), []).append(seq)
    return tuple((key[2], key[3], -key[0], -key[1]) for key in best)


RECORDS = ("r_seq", "r_side", "r_ts")     # the per-record arrays (``_buffers``)


def _grow(a: np.ndarray, need: int) -> np.ndarray:
    """``a`` with at least ``need`` rows (doubling; new rows hold zeros: counts start there)."""
    return grow(a, need, fill=0)


class StaticEngine(SimJoinEngine):
    """Xiao et al.'s static top-k join rerun on every window change (compiled;
    ``compiled=false``: the plain Python reference ``topk_join``)."""

    name = "static"
    exact = True
    description = "Xiao et al. one-time top-k join (prefix events, bound stop) rerun per window change (numba)"
    # batch: rerun the join at every b-th window change only (approximate for b > 1; the
    # registry takes listed values only)
    options = {"compiled": (True, False), "batch": (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)}
    compiled = True
    batch = 1

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.exact = cls.batch == 1        # a configured ``static:batch=B`` (the registry's subclass)

    def _start(self):
        if not self.compiled:
            self._window: list = []
            self._last: tuple = ()
            self._changes = 0
            return
        k = self.params.k
        self.meta = np.zeros(K.META, np.int64)
        self.r_seq, self.r_side = np.zeros(64, np.int64), np.zeros(64, np.int64)
        self.r_ts = np.zeros(64, np.float64)
        self.r_ptr = np.zeros(65, np.int64)
        self.p_tok = np.zeros(256, np.int64)
        self.head, self.tail = np.zeros(128, np.int64), np.zeros(128, np.int64)
        self.last_i, self.last_j = np.zeros(k, np.int64), np.zeros(k, np.int64)
        self.last_sc, self.last_e = np.zeros(k, np.float64), np.zeros(k, np.float64)
        self.b_i, self.b_j = np.zeros(k, np.int64), np.zeros(k, np.int64)
        self.b_sc, self.b_e = np.zeros(k, np.float64), np.zeros(k, np.float64)
        self.out_pos, self.out_ptr = np.zeros(64, np.int64), np.zeros(64, np.int64)
        self.out_i, self.out_j = np.zeros(64, np.int64), np.zeros(64, np.int64)
        self.out_sc, self.out_e = np.zeros(64, np.float64), np.zeros(64, np.float64)

    def __setstate__(self, state: dict) -> None:
        """Unpickling; a Static pickled before issue 27's token order (its per-run
        frequency scratch ``freq``/``bfill``, its sets' tokens ascending, the plain
        one's as frozensets) is brought to the global order (descending dense id)."""
        super().__setstate__(state)
        if "freq" in state:                 # compiled, older layout
            del self.freq, self.bfill
            n = int(self.meta[K.N_REC])
            for r in range(n):
                a, b = int(self.r_ptr[r]), int(self.r_ptr[r + 1])
                self.p_tok[a:b] = self.p_tok[a:b][::-1].copy()
            held = self.p_tok[:int(self.r_ptr[n])]
            n_tok = max(int(self.tokens.size), int(held.max()) + 1 if held.size else 0)
            self.head, self.tail = np.zeros(2 * n_tok + 2, np.int64), np.zeros(2 * n_tok + 2, np.int64)
        if getattr(self, "_window", None) and isinstance(self._window[0][1], frozenset):
            self._window = [(q, tuple(sorted(t, reverse=True)), ts, side) for q, t, ts, side in self._window]

    # -- state housekeeping (compiled) -----------------------------------------------
    def _compact(self) -> None:
        compact_records(self, K, RECORDS)

    def _reserve(self, prep) -> None:
        reserve_records(self, K, RECORDS, prep)
        n_tok = max(int(self.tokens.size), int(prep.tok.max()) + 1 if prep.tok.size else 0)
        self.head, self.tail = _grow(self.head, 2 * n_tok), _grow(self.tail, 2 * n_tok)

    def _grow_out(self) -> None:
        grow_out(self, K)

    # -- the hook ---------------------------------------------------------------------
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
                p.join == "rs", self.batch, self.meta, self.r_seq, self.r_ts, self.r_side, self.r_ptr, self.p_tok,
                self.head, self.tail, self.last_i, self.last_j, self.last_sc, self.last_e,
                self.b_i, self.b_j, self.b_sc, self.b_e, self.out_pos, self.out_ptr,
                self.out_i, self.out_j, self.out_sc, self.out_e)
            if status == 0:
                break
            self._grow_out()
        return collect(self, K)

    @property
    def stats(self) -> dict:
        """Counters of the compiled runs: ``precandidates`` are the inverted-list items
        met (the paper's pre-candidates of Static, Section 7.2), ``verified`` the pairs
        whose overlap was computed, ``candidates`` those that entered a run's top list."""
        if not self.compiled:
            return {}
        m = self.meta
        return {"runs": int(m[K.RUNS]), "events": int(m[K.EVENTS]), "precandidates": int(m[K.PRECAND]),
                "verified": int(m[K.VERIFIED]), "candidates": int(m[K.CAND]), "changes": int(m[K.CHANGES])}

    def _apply_plain(self, prep):
        p = self.params
        changes = []
        for pos in range(len(prep.op)):
            t = float(prep.ts[pos])
            alive = [r for r in self._window if t < r[2] + p.wf]
            changed = len(alive) != len(self._window)
            self._window = alive
            if prep.op[pos] == 0:
                # the global order, once per set: descending dense id (Section 5.6)
                toks = tuple(sorted(set(prep.tok[prep.tok_ptr[pos]:prep.tok_ptr[pos + 1]].tolist()),
                                    reverse=True))
                self._window.append((int(prep.seq[pos]), toks, t, int(prep.side[pos])))
                changed = changed or bool(toks)
            if not changed:
                continue
            self._changes += 1
            if self._changes % self.batch:
                continue
            current = topk_join(self._window, p.kind, p.k, p.wf, p.join == "rs")
            if current != self._last:
                changes.append((pos, current))
                self._last = current
        return changes
