"""The "Static" competitor of SWOOP (Section 7.1): the one-time top-k set
similarity join of Xiao et al. (ICDE 2009, "Top-k set similarity joins") rerun
over the window's sets whenever the window changes.

One run: tokens are ordered by their frequency in the window (rare first, the
static global order a one-time join can afford); each set yields prefix events
``(x, p)`` with the positional upper bound ``ub(|x|, p+1)``; events are processed
in decreasing bound order, each probing an inverted index of the prefixes seen
so far and verifying new pairs exactly; the run stops once the next bound is
below the k-th best score found (ties are broken by the canonical order, so a
pair with the k-th score is still looked for).
"""
from __future__ import annotations

import bisect
from collections import Counter

from streamspec.spec._simjoin_similarity import positional_upper_bound, similarity
from streamspec.spec.simjoin import SimJoinEngine, order_key


def topk_join(window, kind: int, k: int, w: float, two: bool) -> tuple:
    """Top-k pairs ``(seq_i, seq_j, score, e)`` of ``window`` = [(seq, tokens, ts, side)]."""
    freq = Counter(tok for rec in window for tok in rec[1])
    sets = {rec[0]: (sorted(rec[1], key=lambda x: (freq[x], x)), rec[2], rec[3]) for rec in window}
    events = []
    for seq, (toks, _, _) in sets.items():
        for pos in range(len(toks)):
            events.append((-positional_upper_bound(kind, len(toks), pos + 1), seq, pos))
    events.sort()
    index: dict = {}
    seen: set = set()
    best: list = []                       # sorted canonical keys, at most k
    for neg_ub, seq, pos in events:
        ub = -neg_ub
        # the margin keeps a rounding of ub from stopping before a pair it bounds
        if len(best) == k and ub + 1e-9 * max(1.0, abs(ub)) < -best[-1][0]:
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


class StaticEngine(SimJoinEngine):
    """Xiao et al.'s static top-k join rerun on every window change."""

    name = "static"
    exact = True
    description = "Xiao et al. one-time top-k join (prefix events, bound stop) rerun per window change"

    def _start(self):
        self._window: list = []
        self._last: tuple = ()

    def _apply(self, prep):
        p = self.params
        changes = []
        for pos in range(len(prep.op)):
            t = float(prep.ts[pos])
            alive = [r for r in self._window if t < r[2] + p.wf]
            changed = len(alive) != len(self._window)
            self._window = alive
            if prep.op[pos] == 0:
                toks = frozenset(prep.tok[prep.tok_ptr[pos]:prep.tok_ptr[pos + 1]].tolist())
                self._window.append((int(prep.seq[pos]), toks, t, int(prep.side[pos])))
                changed = changed or bool(toks)
            if not changed:
                continue
            current = topk_join(self._window, p.kind, p.k, p.wf, p.join == "rs")
            if current != self._last:
                changes.append((pos, current))
                self._last = current
        return changes
