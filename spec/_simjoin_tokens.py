"""Token numbering by first appearance (SWOOP Section 5.6).

A stream cannot count token frequencies up front, so SWOOP numbers each token
when it first appears and processes a set's tokens in descending number
(later first appearance first, a guess at "rarer").  Small non-negative int
tokens live in a direct-address table, other ints in an open-addressing hash
table (numpy arrays, so the state pickles); one numba pass over a batch looks
every token up and numbers the fresh ones in order of first occurrence, so a
batch costs O(tokens) with no sort.  str tokens live in a dict.

The direct table holds int32 ids (int64 once the ids could pass 2**31): the
same bytes per id as the vertex tables' int64 ones at twice the entries per id,
so a Zipf stream over a vocabulary of 1e6 (the TWEET-like benchmark) is numbered
in a 4 MB direct table from its first batch, where int64 entries left its first
~130K distinct tokens hashed.
"""
from __future__ import annotations

import numpy as np

from streamspec.spec._hash_kernels import _slot    # Fibonacci hashing, as the id hash tables
from streamspec.spec._numba import njit
from streamspec.spec._prefetch import prefetch   # llvm.prefetch, as the engines' kernels

from streamspec.spec.vertices import (DENSITY, MIN_DIRECT, grown_direct, packed_direct,  # as for vertex ids
                                      unpacked_direct)

MIN_HASH = 1 << 10
NARROW = np.int32       # the direct table's ids while they fit (half the cache lines of int64)
WIDE_FROM = 1 << 31     # ids from here on need the int64 table
# the direct entry of the token AHEAD positions on is asked for before it is needed: a batch's
# rare tokens each miss the cache, and the misses then overlap (the loop's branches on fresh
# tokens otherwise keep few of them in flight)
AHEAD = 32
HEADROOM = 8        # a grown direct table covers tokens up to max * (1 + 1/HEADROOM)


@njit(cache=True)
def _number(tok, start, out, direct, h_key, h_id, shift, used, size):
    """Number ``tok[start:]`` into ``out``: the direct table for ``0 <= t <
    direct.size``, else the hash (``h_id < 0``: free slot).  Stops before a
    fresh hashed token would fill the hash beyond one half; returns
    ``(next, used, size)``.  ``direct`` is int32 or int64."""
    nd = direct.size
    mask = h_key.size - 1
    m = tok.size
    for n in range(start, min(start + AHEAD, m)):
        if 0 <= tok[n] < nd:
            prefetch(direct, tok[n])
    for n in range(start, m):
        if n + AHEAD < m:
            u = tok[n + AHEAD]
            if 0 <= u < nd:
                prefetch(direct, u)
        t = tok[n]
        if 0 <= t < nd:
            d = direct[t]
            if d < 0:
                d = size
                direct[t] = d
                size += 1
        else:
            h = _slot(t, shift)
            while True:
                d = h_id[h]
                if d < 0:
                    if 2 * (used + 1) > h_key.size:
                        return n, used, size
                    d = size
                    h_key[h] = t
                    h_id[h] = d
                    used += 1
                    size += 1
                    break
                if h_key[h] == t:
                    break
                h = (h + 1) & mask
        out[n] = d
    return tok.size, used, size


@njit(cache=True)
def _largest(tok):
    """``tok.max()`` of a non-empty int64 array."""
    hi = tok[0]
    for n in range(1, tok.size):
        if tok[n] > hi:
            hi = tok[n]
    return hi


@njit(cache=True)
def _rehash(h_key, h_id, direct, b_key, b_id, shift):
    """Move the hash into the fresh hash ``b_*``; entries the direct table now
    covers go there instead (each token lives in one place).  Returns #hashed."""
    nd = direct.size
    mask = b_key.size - 1
    used = 0
    for x in range(h_key.size):
        d = h_id[x]
        if d < 0:
            continue
        t = h_key[x]
        if 0 <= t < nd:
            direct[t] = d
            continue
        h = _slot(t, shift)
        while b_id[h] >= 0:
            h = (h + 1) & mask
        b_key[h] = t
        b_id[h] = d
        used += 1
    return used


class TokenNumbering:
    def __init__(self):
        self.size = 0
        self._direct = np.full(0, -1, NARROW)     # token -> dense id, or -1
        self._h_key = np.zeros(MIN_HASH, np.int64)  # hashed int tokens (open addressing)
        self._h_id = np.full(MIN_HASH, -1, np.int64)
        self._h_used = 0
        self._strs: dict[str, int] = {}

    def __getstate__(self) -> dict:
        """The direct table without its unused capacity (``packed_direct``)."""
        return {**self.__dict__, "_direct": packed_direct(self._direct)}

    def __setstate__(self, state: dict) -> None:
        direct = unpacked_direct(state["_direct"])
        if direct.dtype != NARROW and state["size"] < WIDE_FROM:   # pickled with an int64 table
            direct = direct.astype(NARROW)
        self.__dict__.update(state, _direct=direct)

    def add_ints(self, tok: np.ndarray) -> np.ndarray:
        tok = np.ascontiguousarray(tok, dtype=np.int64)
        if tok.size == 0:
            return tok
        if self._direct.dtype == NARROW and self.size + tok.size >= WIDE_FROM:
            self._direct = self._direct.astype(np.int64)    # ids past int32: the wide table
        hi = _largest(tok)         # (a compiled loop: numpy's max costs more on a small batch)
        if hi >= 0:
            self._maybe_grow(hi, tok.size)
        out = np.empty(tok.size, np.int64)
        n = 0
        while True:
            n, self._h_used, self.size = _number(tok, n, out, self._direct, self._h_key, self._h_id,
                                                 self._shift(), self._h_used, self.size)
            if n == tok.size:
                return out
            self._rehash(2 * self._h_key.size)

    def _shift(self) -> int:
        return 64 - (self._h_key.size.bit_length() - 1)

    def _rehash(self, cap: int) -> None:
        b_key, b_id = np.zeros(cap, np.int64), np.full(cap, -1, np.int64)
        self._h_key, self._h_id, self._h_used = b_key, b_id, _rehash(
            self._h_key, self._h_id, self._direct, b_key, b_id, 64 - (cap.bit_length() - 1))

    def _maybe_grow(self, max_tok: int, batch: int) -> None:
        if max_tok < self._direct.size:
            return
        # grown_direct bounds the entries per id for int64 tables: int32 ones may have twice as many
        wide = self._direct.dtype.itemsize // 4      # 1 for int32, 2 for int64 entries
        ids = (self.size + batch) * 2 // wide
        # room for tokens up to an eighth above the largest seen, as far as the density bound
        # allows: a vocabulary's largest tokens arrive one by one (on the TWEET-like stream the
        # first batch's largest is 999,991 of 999,999), and the first past the table doubled it
        ahead = min(max_tok + max_tok // HEADROOM, max(MIN_DIRECT, DENSITY * ids) - 1)
        table = grown_direct(self._direct, max(max_tok, ahead), ids)
        if table is None:
            return
        self._direct = table
        if self._h_used:          # the hashed tokens the larger table now covers move there
            self._rehash(self._h_key.size)

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
