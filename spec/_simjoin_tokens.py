"""Token numbering by first appearance (SWOOP Section 5.6).

A stream cannot count token frequencies up front, so SWOOP numbers each token
when it first appears and processes a set's tokens in descending number
(later first appearance first, a guess at "rarer").  Int tokens use sorted
arrays (one ``searchsorted`` per batch, no per-token Python work); str tokens
a dict.  Within one batch new tokens are numbered in order of first occurrence.
"""
from __future__ import annotations

import numpy as np


class TokenNumbering:
    def __init__(self):
        self.size = 0
        self._keys = np.empty(0, np.int64)     # sorted int tokens
        self._ids = np.empty(0, np.int64)
        self._strs: dict[str, int] = {}

    def add_ints(self, tok: np.ndarray) -> np.ndarray:
        tok = np.asarray(tok, dtype=np.int64)
        if tok.size == 0:
            return tok
        uniq, first, inverse = np.unique(tok, return_index=True, return_inverse=True)
        pos = np.searchsorted(self._keys, uniq)
        hit = pos < self._keys.size
        hit[hit] = self._keys[pos[hit]] == uniq[hit]
        out = np.full(uniq.size, -1, np.int64)
        out[hit] = self._ids[pos[hit]]
        new = np.flatnonzero(~hit)
        if new.size:
            order = new[np.argsort(first[new], kind="stable")]
            out[order] = np.arange(self.size, self.size + order.size, dtype=np.int64)
            self.size += int(order.size)
            at = np.searchsorted(self._keys, uniq[new])
            self._keys = np.insert(self._keys, at, uniq[new])
            self._ids = np.insert(self._ids, at, out[new])
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
