"""Numba kernels of an open-addressing hash table over a column of int64 ids.

Plain ``@njit`` functions over numpy arrays and scalars (no validation, no
Python objects).  Two indexes use them: ``engines/topkjoin/key_index.KeyIndex``
(the AcquaTop engines' join keys; paper Section 5: at a slide of a few hundred
items the index's cost per batch bounds the items per CPU second, issue 15) and
``spec.vertices.IdIndex`` for the int ids its direct table does not cover (a
sparse id space: there a sorted array took each fresh id by ``np.insert``, a
copy of millions of entries per call).  A batch is looked up and numbered in one
pass instead of numpy's sort/search/insert calls.

The table ``slots`` (a power of two, at most half full) holds positions in the
column (``-1``: free): the id at position ``d`` is ``column[d]``, so a slot
costs 4 or 8 bytes, not a key and a value.  Linear probing; Fibonacci hashing
(the top bits of ``key * 2**64 / phi``, as ``spec/_simjoin_tokens``).  Entries
are never deleted one by one: a compaction renumbers the column and rebuilds
the table (``rebuild``).
"""
from __future__ import annotations

import numpy as np
from numba import config

from streamspec.spec._numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, inline="always")
def _slot(key, shift):
    return np.int64((np.uint64(key) * _GOLDEN) >> np.uint64(shift))


if config.DISABLE_JIT:          # the NUMBA_DISABLE_JIT lane: the same slot with Python ints
    def _slot(key, shift):      # noqa: F811
        return ((int(key) * int(_GOLDEN)) & 0xFFFFFFFFFFFFFFFF) >> int(shift)


@njit(cache=True)
def add(keys, column, size, slots, shift, dense, fresh_slot):
    """Dense ids of ``keys`` into ``dense``, numbering the unseen ones ``size, size + 1, ...``
    in first-appearance order and appending them to ``column`` (their slots in
    ``fresh_slot``); returns how many were new.  The caller made room: ``column`` holds
    ``size + keys.size`` ids and ``slots`` stays at most half full with them; it then
    renumbers the new ones by increasing key (``renumber_fresh``: numpy sorts them
    several times faster than numba's ``argsort`` does)."""
    mask = slots.size - 1
    nf = 0
    for i in range(keys.size):
        k = keys[i]
        h = _slot(k, shift)
        while True:
            d = slots[h]
            if d < 0:
                d = size + nf
                slots[h] = d
                column[d] = k
                fresh_slot[nf] = h
                nf += 1
                break
            if column[d] == k:
                break
            h = (h + 1) & mask
        dense[i] = d
    return nf


@njit(cache=True)
def renumber_fresh(order, column, size, slots, fresh_slot, dense):
    """The ``nf = order.size`` ids ``add`` numbered ``size..`` in first-appearance order get
    the numbers of their rank in ``order`` (their keys sorted): ``IdIndex``'s numbering."""
    nf = order.size
    rank = np.empty(nf, np.int64)
    for r in range(nf):
        rank[order[r]] = r
    ordered = column[size:size + nf][order]
    column[size:size + nf] = ordered
    for j in range(nf):
        slots[fresh_slot[j]] = size + rank[j]
    for i in range(dense.size):
        d = dense[i]
        if d >= size:
            dense[i] = size + rank[d - size]


@njit(cache=True)
def lookup(keys, column, slots, shift, out):
    """Dense ids of ``keys`` into ``out`` (``-1``: never seen); changes nothing."""
    mask = slots.size - 1
    for i in range(keys.size):
        k = keys[i]
        h = _slot(k, shift)
        out[i] = -1
        while True:
            d = slots[h]
            if d < 0:
                break
            if column[d] == k:
                out[i] = d
                break
            h = (h + 1) & mask


@njit(cache=True)
def rebuild(column, n, slots, shift):
    """The table of dense ids ``0..n-1`` (``column[:n]`` distinct), from scratch."""
    mask = slots.size - 1
    for h in range(slots.size):
        slots[h] = -1
    for d in range(n):
        h = _slot(column[d], shift)
        while slots[h] >= 0:
            h = (h + 1) & mask
        slots[h] = d
