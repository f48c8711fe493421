"""A minimal simjoin engine: an inverted index over the window and every valid pair sorted.

The base class ``SimJoinEngine`` validates every record and advance, numbers records
(``seq``) and tokens (dense ids), and turns this engine's answers back into ``TopK``
outputs.  This engine keeps the window's records in arrival order, an inverted index
from token to the records holding it (to find the records a new one overlaps), and
every valid pair with overlap > 0 in a sorted list by the spec's order; the top-k
list is the first ``k`` of it.  A pair ends when its older record leaves the window.
"""
from __future__ import annotations

from collections import Counter, deque

from sortedcontainers import SortedList

from streamspec.spec._simjoin_similarity import similarity   # the scores the oracle computes
from streamspec.spec.simjoin import Prepared, SimJoinEngine, order_key


class InvertedIndexEngine(SimJoinEngine):
    """Candidates from an inverted index; all valid pairs in a ``SortedList``."""

    name = "mine"
    exact = True
    description = "inverted index over the window, every valid pair kept sorted (minimal engine)"

    def _start(self) -> None:
        self._window: deque = deque()        # (seq, tokens, end, side, pair keys ending with it)
        self._records: dict = {}             # seq -> that same tuple, while in the window
        self._index: dict[int, set] = {}     # token -> seqs in the window holding it
        self._pairs = SortedList()           # order_key(score, end, seq_i, seq_j), best first
        self._last: tuple = ()               # the last top-k list reported

    def _apply(self, prepared: Prepared) -> list:
        """For each operation whose top-k list changed: ``(position, new list)``."""
        changes = []
        for pos in range(len(prepared.op)):
            t = float(prepared.ts[pos])
            self._expire(t)
            if prepared.op[pos] == 0:        # 0: insert a record, 1: advance the index time
                lo, hi = prepared.tok_ptr[pos], prepared.tok_ptr[pos + 1]
                self._insert(int(prepared.seq[pos]), set(prepared.tok[lo:hi].tolist()), t,
                             int(prepared.side[pos]))
            top = tuple((seq_i, seq_j, -neg_score, -neg_end)
                        for neg_score, neg_end, seq_i, seq_j in self._pairs.islice(0, self.params.k))
            if top != self._last:
                changes.append((pos, top))
                self._last = top
        return changes

    def _expire(self, t: float) -> None:
        """Records with ``t >= ts + w`` leave the window, with every pair they end."""
        while self._window and t >= self._window[0][2]:
            seq, tokens, _, _, keys = self._window.popleft()
            del self._records[seq]
            for tok in tokens:
                holders = self._index[tok]
                holders.discard(seq)
                if not holders:
                    del self._index[tok]
            for key in keys:
                self._pairs.remove(key)

    def _insert(self, seq: int, tokens: set, t: float, side: int) -> None:
        overlap = Counter(other for tok in tokens for other in self._index.get(tok, ()))
        for other, o in overlap.items():
            seq_j, tokens_j, end, side_j, keys = self._records[other]
            if self.params.join == "rs" and side_j == side:
                continue                     # the two-stream join pairs R with S only
            score = float(similarity(self.params.kind, len(tokens), len(tokens_j), o))
            key = order_key(score, end, seq, seq_j)
            self._pairs.add(key)
            keys.append(key)                 # the pair ends with the older record
        record = (seq, tokens, t + self.params.wf, side, [])
        self._window.append(record)
        self._records[seq] = record
        for tok in tokens:
            self._index.setdefault(tok, set()).add(seq)
