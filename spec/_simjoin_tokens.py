"""Token numbering by first appearance (SWOOP Section 5.6).

A stream cannot count token frequencies up front, so SWOOP numbers each token
when it first appears and processes a set's tokens in descending number
(later first appearance first, a guess at "rarer").  Small non-negative int
tokens live in a direct-address table (one gather per batch; only the tokens
never seen are sorted), other ints in sorted arrays (one ``searchsorted`` per
batch); str tokens in a dict.  Within one batch new tokens are numbered in
order of first occurrence.
"""
from __future__ import annotations

import numpy as np


# the direct table may be this many times larger than the tokens it serves
DENSITY = 4
MIN_DIRECT = 1 << 16


class TokenNumbering:
    def __init__(self):
        self.size = 0
        self._direct = np.full(0, -1, np.int64)  # token -> dense id, or -1
        self._keys = np.empty(0, np.int64)     # sorted int tokens outside the table
        self._ids = np.empty(0, np.int64)
        self._strs: dict[str, int] = {}

    def add_ints(self, tok: np.ndarray) -> np.ndarray:
        tok = np.asarray(tok, dtype=np.int64)
        if tok.size == 0:
            return tok
        lo, hi = int(tok.min()), int(tok.max())
        if lo >= 0:
            self._maybe_grow(hi, tok.size)
        if lo >= 0 and hi < self._direct.size:
            return self._add_direct(tok)
        return self._add_sorted(tok)

    def _add_direct(self, tok: np.ndarray) -> np.ndarray:
        table = self._direct
        dense = table[tok]
        fresh = dense < 0
        if fresh.any():
            where = np.flatnonzero(fresh)
            uniq, first = np.unique(tok[where], return_index=True)
            order = uniq[np.argsort(where[first], kind="stable")]   # first occurrence
            table[order] = np.arange(self.size, self.size + order.size, dtype=np.int64)
            self.size += int(order.size)
            dense[where] = table[tok[where]]
        return dense

    def _maybe_grow(self, max_tok: int, batch: int) -> None:
        cap = self._direct.size
        if max_tok < cap or max_tok >= max(MIN_DIRECT, DENSITY * (self.size + batch)):
            return
        table = np.full(max(max_tok + 1, 2 * cap, MIN_DIRECT), -1, np.int64)
        table[:cap] = self._direct
        # move the sorted tokens the larger table now covers: each token lives in one place
        moved = (self._keys >= 0) & (self._keys < table.size)
        table[self._keys[moved]] = self._ids[moved]
        self._keys, self._ids = self._keys[~moved], self._ids[~moved]
        self._direct = table

    def _add_sorted(self, tok: np.ndarray) -> np.ndarray:
        """Tokens not all in the table: one ``searchsorted`` against the sorted
        arrays after a lookup in the table for those it covers."""
        uniq, first, inverse = np.unique(tok, return_index=True, return_inverse=True)
        out = np.full(uniq.size, -1, np.int64)
        direct = (uniq >= 0) & (uniq < self._direct.size)
        out[direct] = self._direct[uniq[direct]]
        pos = np.searchsorted(self._keys, uniq)
        hit = pos < self._keys.size
        hit[hit] = self._keys[pos[hit]] == uniq[hit]
        out[hit] = self._ids[pos[hit]]
        hit |= out >= 0
        new = np.flatnonzero(~hit)
        if new.size:
            order = new[np.argsort(first[new], kind="stable")]
            out[order] = np.arange(self.size, self.size + order.size, dtype=np.int64)
            self.size += int(order.size)
            in_table = direct[new]
            self._direct[uniq[new[in_table]]] = out[new[in_table]]
            rest = new[~in_table]
            at = np.searchsorted(self._keys, uniq[rest])
            self._keys = np.insert(self._keys, at, uniq[rest])
            self._ids = np.insert(self._ids, at, out[rest])
        return out[inverse.reshape(-1)]

    def add_strs(self, tok: list[str]) -> np.ndarray:
        out = np.empty(len(tok), np.int64)
        m = self._strs
        for n, x in enumerate(tok):
            d = m.get(x)
            if d is None:
                d = m[x] = self.size
                self.size += 1
            out[n] = d
        return out
