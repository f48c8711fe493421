"""The paper's baseline (SWOOP Section 3, "Baseline"): every new set is paired
with every valid set of the window; each pair with overlap > 0 goes into the
stock S, a binary search tree (``SortedList``) ordered by the canonical key, so
S holds all valid pairs, O(|W|^2).  ``topk`` reads the first k of S.  Expired
pairs are removed when their older set leaves the window (the pairs ending
then were listed with it), instead of the paper's full scan of S.
"""
from __future__ import annotations

from collections import deque

from sortedcontainers import SortedList

from streamspec.spec._simjoin_similarity import similarity
from streamspec.spec.simjoin import SimJoinEngine, order_key


class BaseEngine(SimJoinEngine):
    """All pairs with overlap > 0 kept in a sorted stock."""

    name = "base"
    exact = True
    description = "baseline of the paper: all window pairs with overlap > 0 in a sorted stock"

    def _start(self):
        self._window: deque = deque()       # (seq, tokens, ts + w, side, keys ending with it)
        self._stock = SortedList()
        self._last: tuple = ()

    def _apply(self, prep):
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
