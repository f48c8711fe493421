"""The rows of the simjoin outputs, each built once per batch (SWOOP Section 3's
``topk`` as a stream of lists).

An engine reports a batch's top-k lists as ``Changes`` columns: consecutive
lists of one batch mostly hold the same pairs (a new pair enters at some rank
and the last one leaves, or an expired pair leaves the top and the rest move
up a rank), so on the TWEET-like stream only ~11% of a batch's rows are new.
``shared_rows`` finds, for each row, an earlier row it equals in all four
columns (bit for bit, so ``-0.0`` and ``0.0`` stay apart, as do NaNs of other
payloads), looked for in the previous list at the same rank and one rank up
or down; the base class then builds one ``(id_i, id_j, score, end)`` tuple per
distinct row and shares it between the lists, which equal what a tuple per
row would have built.
"""
from __future__ import annotations

import numpy as np

from streamspec.spec._numba import njit


@njit(cache=True)
def _shared(si, sj, sc, en, ptr, rep, first):
    """``rep[r]``: the number of the distinct row that row ``r`` equals (numbers in
    order of first occurrence); ``first[u]``: the row where distinct row ``u`` first
    occurs.  Returns the number of distinct rows found."""
    nu = 0
    pa = 0           # the previous list's rows: pa..pb
    pb = 0
    for x in range(ptr.size - 1):
        a = ptr[x]
        b = ptr[x + 1]
        for r in range(a, b):
            found = -1
            base = pa + (r - a)
            for d in (0, -1, 1):
                q = base + d
                if pa <= q < pb and si[q] == si[r] and sj[q] == sj[r] and sc[q] == sc[r] \
                        and en[q] == en[r]:
                    found = q
                    break
            if found >= 0:
                rep[r] = rep[found]
            else:
                rep[r] = nu
                first[nu] = r
                nu += 1
        pa = a
        pb = b
    return nu


def _key(a: np.ndarray) -> np.ndarray:
    """``a`` as int64 keys, equal exactly when the values ``a.tolist()`` gives are the same
    (floats by their bits)."""
    if a.dtype.kind == "f":
        a = a.astype(np.float64, copy=False)
    return np.ascontiguousarray(a).view(np.int64) if a.dtype.itemsize == 8 else a.astype(np.int64)


def shared_rows(seq_i, seq_j, score, end, ptr) -> tuple[np.ndarray, np.ndarray]:
    """``(rep, first)`` of ``_shared`` over checked ``Changes`` columns (``first`` cut to
    the distinct rows)."""
    n = len(seq_i)
    rep = np.empty(n, np.int64)
    first = np.empty(n, np.int64)
    nu = _shared(_key(seq_i), _key(seq_j), _key(score), _key(end),
                 np.ascontiguousarray(ptr, dtype=np.int64), rep, first)
    return rep, first[:nu]


@njit(cache=True)
def plain_changes(pos, ptr, si, sj, sc, en, sc_bits, en_bits, n, rep, u_i, u_j, u_sc, u_e):
    """``_check_changes`` and ``shared_rows`` of int64/float64 ``Changes`` columns in one
    compiled pass (``sc_bits``/``en_bits``: ``sc``/``en`` viewed as int64): -1 unless
    ``ptr`` has one more entry than ``pos`` and rises from 0 to the rows, the positions
    increase within ``0..n-1``, the row columns have one length and no seq is negative;
    else the number of distinct rows, ``rep`` as ``_shared``'s and row ``u`` of each
    distinct row in ``u_i``, ``u_j``, ``u_sc``, ``u_e``.  On -1 the caller runs the
    checks that say what is wrong."""
    k = pos.size
    rows = si.size
    if ptr.size != k + 1 or sj.size != rows or sc.size != rows or en.size != rows:
        return -1
    for x in range(k):
        if pos[x] < 0 or pos[x] >= n or (x > 0 and pos[x] <= pos[x - 1]):
            return -1
    if ptr[0] != 0 or ptr[k] != rows:
        return -1
    for x in range(k):
        if ptr[x + 1] < ptr[x]:
            return -1
    for r in range(rows):
        if si[r] < 0 or sj[r] < 0:
            return -1
    first = np.empty(rows, np.int64)
    nu = _shared(si, sj, sc_bits, en_bits, ptr, rep, first)
    for u in range(nu):
        r = first[u]
        u_i[u] = si[r]
        u_j[u] = sj[r]
        u_sc[u] = sc[r]
        u_e[u] = en[r]
    return nu

