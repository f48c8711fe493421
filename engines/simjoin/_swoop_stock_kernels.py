"""SWOOP stock kernels (numba): the stock S and the end time index E (Section 6).

``S`` (``s_*``) is sorted by the canonical key ``(-score, -e, seq_i, seq_j)``,
``E`` (``e_*``) by ``(e, score, -seq_i, -seq_j)``; both are parallel sorted
arrays over the same pairs.  Rank is a binary search (O(log n)), select is
O(1); an update is a shift, which at minimal-stock sizes (O(k|W|) worst case,
~1e2..1e4 in practice) is cheaper than a tree.  Every shift is an explicit
loop: numba copies overlapping slice assignments through a temporary, an
allocation per call that showed up in profiles.

Section 6.2 (Theorem 2): with a minimal stock the skyband lower bound at time
``t`` is ``S[v + k - 1]``, ``v`` = number of pairs ending before ``t``.
Section 6.3 (Lemma 4, Algorithm 2, Theorem 3): the cleanup.
"""
from __future__ import annotations

import math

import numpy as np
from streamspec.spec._numba import njit

SMALL_SORT = 32   # candidate lists up to this size are insertion-sorted (no allocation)


@njit(cache=True, inline="always")
def s_before(sa, ea, ia, ja, sb, eb, ib, jb):
    """Pair a precedes pair b in the stock order ``(-score, -e, seq_i, seq_j)``."""
    if sa != sb:
        return sa > sb
    if ea != eb:
        return ea > eb
    if ia != ib:
        return ia < ib
    return ja < jb


@njit(cache=True, inline="always")
def e_before(sa, ea, ia, ja, sb, eb, ib, jb):
    """Pair a precedes pair b in the end time order ``(e, score, -seq_i, -seq_j)``."""
    if ea != eb:
        return ea < eb
    if sa != sb:
        return sa < sb
    if ia != ib:
        return ia > ib
    return ja > jb


@njit(cache=True, inline="always")
def end_rank(t, ns, e_e):
    """``v`` = #{E.e < t}: E is sorted by end time."""
    return _end_rank_in(t, 0, ns, e_e)


@njit(cache=True, inline="always")
def _end_rank_in(t, lo, hi, e_e):
    """``end_rank`` known to lie in ``[lo, hi]`` (``e_e[:lo] < t <= e_e[hi:]``): a binary search."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if e_e[mid] < t:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, inline="always")
def end_rank_top(t, ns, e_e):
    """``end_rank`` by a galloping search down from ``ns``: the list scans ask first for
    the end time of a list's tail, a recent set, so ``v`` is usually within a few
    pairs of ``ns`` (a couple of predictable comparisons instead of ~7 unpredictable
    ones).  Same result as ``end_rank``."""
    hi = ns             # e_e[hi:] >= t
    step = 1
    while hi > 0 and e_e[hi - 1] >= t:
        lo = hi - step
        if lo < 0:
            lo = 0
        if e_e[lo] >= t:
            hi = lo
            step <<= 1
            continue
        # e_e[lo] < t <= e_e[hi - 1]: the boundary lies in (lo, hi - 1]
        return _end_rank_in(t, lo + 1, hi - 1, e_e)
    return hi


@njit(cache=True, inline="always")
def skyband_lower_bound(t, k, ns, s_sc, s_e, e_e, linear):
    """``lb(t, k)``: score of the k-th stock pair still valid just before ``t``
    (``e >= t``); ``-inf`` with fewer than k.  Theorem 2: with a minimal stock
    it is ``S[v + k - 1]``, ``v`` = number of pairs ending before ``t``."""
    if linear:
        c = 0
        for x in range(ns):
            if s_e[x] >= t:
                c += 1
                if c == k:
                    return s_sc[x]
        return -math.inf
    x = end_rank(t, ns, e_e) + k - 1
    return s_sc[x] if x < ns else -math.inf


@njit(cache=True, inline="always")
def crop_threshold(limit, k, ns, s_sc, e_e):
    """The end time at which a list scan stops: ``lb(e, k) > limit`` iff
    ``e <= crop_threshold`` (``-inf``: never).  With ``X`` = #{S.score > limit}
    (S is sorted by descending score), Theorem 2 gives ``lb(e) > limit`` iff
    ``v(e) + k - 1 < X`` iff ``e <= E[X - k].e``; lb is non-increasing in e,
    so one threshold per list replaces a bound per scanned entry."""
    m = _above_in(limit, 0, ns, s_sc) - k
    return e_e[m] if m >= 0 else -math.inf


@njit(cache=True, inline="always")
def _above_in(limit, lo, hi, s_sc):
    """#{S.score > limit} known to lie in ``[lo, hi]`` (``s_sc[:lo] > limit >= s_sc[hi:]``;
    S by descending score): a binary search."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if s_sc[mid] > limit:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, inline="always")
def crop_threshold_from(limit, x0, k, ns, s_sc, e_e):
    """``crop_threshold`` and its ``X``, the search galloping from ``x0`` (the
    previous list's ``X``): the limits fall list by list (``ub`` falls with
    ``rho``), so ``X`` grows by a few pairs at a time.  Any ``x0`` in
    ``[0, ns]`` gives the same result as ``crop_threshold``."""
    lo = x0             # invariant: s_sc[:lo] > limit, s_sc[hi:] <= limit
    hi = x0
    if lo > 0 and not (s_sc[lo - 1] > limit):
        hi = lo - 1     # the boundary lies below x0: gallop down
        lo = hi
        step = 1
        while lo > 0 and not (s_sc[lo - 1] > limit):
            hi = lo - 1
            lo = max(0, lo - step)
            step <<= 1
    else:
        hi = lo
        step = 1
        while hi < ns and s_sc[hi] > limit:
            lo = hi + 1
            hi = min(ns, hi + step)
            step <<= 1
    x = _above_in(limit, lo, hi, s_sc)
    m = x - k
    return (e_e[m] if m >= 0 else -math.inf), x


@njit(cache=True, inline="always")
def order_candidates(c_sc, c_e, c_j, n, order, by_end):
    """``order[:n]``: the candidates (all with the same seq_i) in stock order
    ``(-score, -e, seq_j)``, or end time order ``(e, score, -seq_j)``."""
    if n > SMALL_SORT:
        idx = np.argsort(c_j[:n], kind="mergesort")
        if by_end:
            idx = idx[::-1].copy()
            idx = idx[np.argsort(c_sc[idx], kind="mergesort")]
            idx = idx[np.argsort(c_e[idx], kind="mergesort")]
        else:
            idx = idx[np.argsort(-c_e[idx], kind="mergesort")]
            idx = idx[np.argsort(-c_sc[idx], kind="mergesort")]
        order[:n] = idx
        return
    for x in range(n):
        y = x
        while y > 0:
            c = order[y - 1]
            if by_end:
                later = e_before(c_sc[x], c_e[x], 0, c_j[x], c_sc[c], c_e[c], 0, c_j[c])
            else:
                later = s_before(c_sc[x], c_e[x], 0, c_j[x], c_sc[c], c_e[c], 0, c_j[c])
            if not later:
                break
            order[y] = c
            y -= 1
        order[y] = x


@njit(cache=True, inline="always")
def merge_in(a_sc, a_e, a_i, a_j, n, c_sc, c_e, c_i, c_j, order, m, by_end):
    """Merge the sorted candidates ``order[:m]`` into the first ``n`` entries of a, from the
    back; returns where the first candidate landed (``a[:that]`` is unchanged).  The
    candidate in hand is kept in scalars (the stores into ``a`` would otherwise make
    every step reload it: the compiler cannot tell the arrays apart); the positions are
    unsigned (numba checks every signed index for a negative one)."""
    one = np.uint64(1)
    xa = np.uint64(n)           # a[:xa] not moved yet
    z = np.uint64(n + m)        # a[z:] in place
    y = m - 1
    c = order[y]
    csc, ce, ci, cj = c_sc[c], c_e[c], c_i[c], c_j[c]
    while True:
        z -= one
        take_a = False
        if xa > 0:
            x = xa - one
            if by_end:
                take_a = e_before(csc, ce, ci, cj, a_sc[x], a_e[x], a_i[x], a_j[x])
            else:
                take_a = s_before(csc, ce, ci, cj, a_sc[x], a_e[x], a_i[x], a_j[x])
        if take_a:
            x = xa - one
            a_sc[z], a_e[z], a_i[z], a_j[z] = a_sc[x], a_e[x], a_i[x], a_j[x]
            xa = x
        else:
            a_sc[z], a_e[z], a_i[z], a_j[z] = csc, ce, ci, cj
            y -= 1
            if y < 0:
                return np.int64(z)      # the rest of a is already in place
            c = order[y]
            csc, ce, ci, cj = c_sc[c], c_e[c], c_i[c], c_j[c]


@njit(cache=True, inline="always")
def _stock_rank(s_sc, s_e, s_i, s_j, lo, ns, sc, e, i, j):
    """The position of pair ``(sc, e, i, j)`` in the sorted ``S[:ns]``, known to be ``>= lo``."""
    hi = ns
    while lo < hi:
        mid = (lo + hi) >> 1
        if s_before(s_sc[mid], s_e[mid], s_i[mid], s_j[mid], sc, e, i, j):
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, inline="always")
def cleanup(k, ns, start, max_e, s_sc, s_e, s_i, s_j, e_sc, e_e, e_i, e_j, dead):
    """Algorithm 2 (Lemma 4): ``E[u]`` is irrelevant iff it sorts after
    ``S[u+k-1]`` once ``E[:u]`` is clean.  Theorem 3: only pairs ending by
    ``max_e`` can have become irrelevant, so the scan stops there.  Returns ns.

    The scan starts at ``start``: the caller knows that ``E[:start]`` and
    ``S[:start + k - 1]`` are those of a minimal stock (the candidates were
    merged in after them), where no ``E[u]`` sorts after ``S[u+k-1]``, so the
    scan would keep all of ``E[:start]`` (on the TWEET-like stream at |W| =
    1e4 that skips about 52 of the 91 entries it compared).

    ``rd`` reads E, ``u`` is the logical position (entries kept so far), ``px``
    the physical position of ``S[u+k-1]``.  A deleted pair sits in S after
    the ``S[px]`` of its time, so the deleted pairs ``px`` has not passed yet
    all lie beyond it: they are kept in ``dead[dp:nd]`` (their positions in E)
    in S order, and when ``px`` steps on, ``S[px]`` is deleted iff it is the
    first of them (a pair's ``(seq_i, seq_j)`` is unique in the stock).  So no
    pair's place in S is searched (a binary search per deleted pair, with
    unpredictable branches, was most of the cleanup's time).  E is not moved
    during the scan: a deleted entry is marked by ``e_i = ~seq_i`` (set
    numbers are non-negative) and both arrays are compacted once at the end,
    S by walking its deleted pairs in order from the first one's place."""
    n = ns
    one = np.uint64(1)
    nsu = np.uint64(ns)
    rd = np.uint64(start)       # unsigned positions: no negative-index checks
    u = start
    px = np.uint64(start + k - 1)
    nd = 0
    dp = 0
    first_rd = ns
    while u + k - 1 < n and e_e[rd] <= max_e:
        if s_before(s_sc[px], s_e[px], s_i[px], s_j[px], e_sc[rd], e_e[rd], e_i[rd], e_j[rd]):
            # E[rd] sorts after S[px]: its place in S is beyond px; keep dead[dp:nd] in S order
            y = nd
            while y > dp:
                d = dead[y - 1]
                if not s_before(e_sc[rd], e_e[rd], e_i[rd], e_j[rd], e_sc[d], e_e[d], ~e_i[d], e_j[d]):
                    break
                dead[y] = d
                y -= 1
            dead[y] = np.int64(rd)
            nd += 1
            e_i[rd] = ~e_i[rd]
            if first_rd == ns:
                first_rd = np.int64(rd)
            n -= 1
        else:
            u += 1
            px += one
            while dp < nd and px < nsu and s_j[px] == e_j[dead[dp]] and s_i[px] == ~e_i[dead[dp]]:
                px += one
                dp += 1
        rd += one
    if nd == 0:
        return n
    d = dead[0]       # the first deleted pair in S order: S before it stays
    pos = _stock_rank(s_sc, s_e, s_i, s_j, start + k, ns, e_sc[d], e_e[d], ~e_i[d], e_j[d])
    dq = 0
    di = ~e_i[d]        # the next deleted pair in S order, in scalars
    dj = e_j[d]
    z = np.uint64(pos)
    for y in range(np.uint64(pos), np.uint64(ns)):     # unsigned: no negative-index checks
        if s_j[y] == dj and s_i[y] == di:
            dq += 1
            if dq < nd:
                d = dead[dq]
                di = ~e_i[d]
                dj = e_j[d]
            else:
                di = -1                 # no pair has seq_i -1
        else:
            s_sc[z], s_e[z], s_i[z], s_j[z] = s_sc[y], s_e[y], s_i[y], s_j[y]
            z += one
    z = np.uint64(first_rd)
    for y in range(np.uint64(first_rd), np.uint64(ns)):
        if e_i[y] >= 0:
            e_sc[z], e_e[z], e_i[z], e_j[z] = e_sc[y], e_e[y], e_i[y], e_j[y]
            z += one
    return n


@njit(cache=True)
def recompute_skyband(k, ns, s_sc, s_e, s_i, s_j, e_sc, e_e, e_i, e_j):
    """SCase-style: the k-skyband of the whole (merged) stock from scratch: a
    pair stays iff fewer than k kept better pairs end at or after it."""
    ends = np.empty(ns, np.float64)
    nk = 0
    for x in range(ns):
        v = np.searchsorted(ends[:nk], s_e[x], side="left")
        if nk - v < k:
            ends[v + 1:nk + 1] = ends[v:nk].copy()
            ends[v] = s_e[x]
            s_sc[nk], s_e[nk], s_i[nk], s_j[nk] = s_sc[x], s_e[x], s_i[x], s_j[x]
            nk += 1
    idx = np.argsort(-s_j[:nk], kind="mergesort")
    idx = idx[np.argsort(-s_i[idx], kind="mergesort")]
    idx = idx[np.argsort(s_sc[idx], kind="mergesort")]
    idx = idx[np.argsort(s_e[idx], kind="mergesort")]
    e_sc[:nk] = s_sc[idx]
    e_e[:nk] = s_e[idx]
    e_i[:nk] = s_i[idx]
    e_j[:nk] = s_j[idx]
    return nk


@njit(cache=True, inline="always")
def insert_candidates(seq, nc, k, ns, s_sc, s_e, s_i, s_j, e_sc, e_e, e_i, e_j,
                      c_sc, c_e, c_i, c_j, order, incremental, dead):
    """Add the candidates to S and E, then restore minimality; returns ns.

    The paper's Algorithm 3 interleaves the merge with the relevance walk; here
    its two ingredients run one after the other, the "insert via cleanup" the
    paper derives it from (Section 6.3): candidates already passed the
    relevance test against the old stock (``score > lb(e)``, Algorithm 1),
    are merged into S and E in O(|S| + |C|), and Algorithm 2 removes what the
    new pairs made irrelevant (including candidates beaten by candidates)."""
    c_i[:nc] = seq
    order_candidates(c_sc, c_e, c_j, nc, order, False)
    q_s = merge_in(s_sc, s_e, s_i, s_j, ns, c_sc, c_e, c_i, c_j, order, nc, False)
    if not incremental:
        return recompute_skyband(k, ns + nc, s_sc, s_e, s_i, s_j, e_sc, e_e, e_i, e_j)
    order_candidates(c_sc, c_e, c_j, nc, order, True)
    q_e = merge_in(e_sc, e_e, e_i, e_j, ns, c_sc, c_e, c_i, c_j, order, nc, True)
    max_e = c_e[0]
    for x in range(1, nc):
        max_e = max(max_e, c_e[x])
    # E[:q_e] and S[:q_s] are the minimal stock's before the merge: the scan can skip them
    start = min(q_e, max(0, q_s - k + 1))
    return cleanup(k, ns + nc, start, max_e, s_sc, s_e, s_i, s_j, e_sc, e_e, e_i, e_j, dead)


@njit(cache=True, inline="always")
def expire_pairs(t, ns, s_sc, s_e, s_i, s_j, e_sc, e_e, e_i, e_j):
    """Section 6.1: the pairs ending by ``t`` are a prefix of E; they are
    filtered out of S in one pass.  Returns ns."""
    cut = 0
    while cut < ns and not (t < e_e[cut]):
        cut += 1
    if cut == 0:
        return ns
    for x in range(cut, ns):
        y = x - cut
        e_sc[y], e_e[y], e_i[y], e_j[y] = e_sc[x], e_e[x], e_i[x], e_j[x]
    z = 0
    for x in range(ns):
        if t < s_e[x]:
            if z != x:
                s_sc[z], s_e[z], s_i[z], s_j[z] = s_sc[x], s_e[x], s_i[x], s_j[x]
            z += 1
    return ns - cut
