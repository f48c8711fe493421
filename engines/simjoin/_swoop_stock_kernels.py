"""SWOOP stock kernels (numba): the stock S and the end time index E (Section 6).

``S`` (``s_*``) holds the stock's pairs sorted by the canonical key
``(-score, -e, seq_i, seq_j)``, each with ``s_n``, the number of stock pairs
that dominate it (sort before it in S and end no earlier: ``q`` before ``p``
and ``q.e >= p.e``; a pair is in the minimal stock, the k-skyband of Section
6.1, iff fewer than k pairs dominate it).  ``E`` (``e_e``) is the sorted
multiset of the stock's end times: the end time index of Section 6.2 is only
ever asked for ranks by end time (``v`` = #{E.e < t}) and for the end time at
a rank (the crop threshold), so it keeps no pair identities.  Rank is a
binary search (O(log n)), select is O(1); an update is a shift, which at
minimal-stock sizes (O(k|W|) worst case, ~1e2..1e4 in practice) is cheaper
than a tree.  Every shift is an explicit loop: numba copies overlapping slice
assignments through a temporary, an allocation per call that showed up in
profiles.

Section 6.2 (Theorem 2): with a minimal stock the skyband lower bound at time
``t`` is ``S[v + k - 1]``, ``v`` = number of pairs ending before ``t``.
Section 6.3 (Lemma 4, Algorithm 2, Theorem 3): restoring minimality after an
insert.  Here the cleanup uses the dominance counts instead of the paper's
walk over E against S: a new pair can only raise the counts of the pairs it
dominates, so after merging the candidates into S one pass a candidate
(count its dominators before it, add one to each pair it dominates after it)
and one compaction drop every pair whose count reached k.  That walk needed
E to hold whole pairs (four columns moved on every merge, expiry and
compaction, and a four-field comparison per step); the counts need E's end
times only.
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
def order_candidates(c_sc, c_e, c_j, n, order):
    """``order[:n]``: the candidates (all with the same seq_i) in stock order
    ``(-score, -e, seq_j)``."""
    if n > SMALL_SORT:
        idx = np.argsort(c_j[:n], kind="mergesort")
        idx = idx[np.argsort(-c_e[idx], kind="mergesort")]
        idx = idx[np.argsort(-c_sc[idx], kind="mergesort")]
        order[:n] = idx
        return
    for x in range(n):
        y = x
        while y > 0:
            c = order[y - 1]
            if not s_before(c_sc[x], c_e[x], 0, c_j[x], c_sc[c], c_e[c], 0, c_j[c]):
                break
            order[y] = c
            y -= 1
        order[y] = x


@njit(cache=True, inline="always")
def sort_ends(a, n):
    """``a[:n]`` sorted ascending in place (insertion sort while small)."""
    if n > SMALL_SORT:
        a[:n] = np.sort(a[:n])
        return
    for x in range(1, n):
        v = a[x]
        y = x
        while y > 0 and a[y - 1] > v:
            a[y] = a[y - 1]
            y -= 1
        a[y] = v


@njit(cache=True, inline="always")
def merge_in(a_sc, a_e, a_i, a_j, a_n, n, c_sc, c_e, c_i, c_j, order, m):
    """Merge the candidates ``order[:m]`` (in stock order) into the first ``n`` pairs of S,
    from the back; ``order[y]`` becomes the position candidate ``y`` landed at (its count
    ``a_n`` is set by ``count_dominators``).  ``a[:order[0]]`` is unchanged.  The
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
            take_a = s_before(csc, ce, ci, cj, a_sc[x], a_e[x], a_i[x], a_j[x])
        if take_a:
            x = xa - one
            a_sc[z], a_e[z], a_i[z], a_j[z], a_n[z] = a_sc[x], a_e[x], a_i[x], a_j[x], a_n[x]
            xa = x
        else:
            a_sc[z], a_e[z], a_i[z], a_j[z], a_n[z] = csc, ce, ci, cj, 0
            order[y] = np.int64(z)
            y -= 1
            if y < 0:
                return          # the rest of a is already in place
            c = order[y]
            csc, ce, ci, cj = c_sc[c], c_e[c], c_i[c], c_j[c]


@njit(cache=True, inline="always")
def count_dominators(n, s_e, s_n, order, m):
    """The candidates at positions ``order[:m]`` (ascending) of the merged ``S[:n]``: each
    one adds one to the count of each pair after it that it dominates (``e <= ce``), and
    its own count is its dominators before it (``e >= ce``: S order is the other half of
    dominance).  The increments run first (a candidate's slot takes some too, then its
    count overwrites them).  Candidates go four at a time where they can: one pass of
    the columns adds four comparisons (the loops are branch-free over plain columns and
    vectorised; at k = 1000 the stock holds ~1e4 pairs and a set brings ~67 candidates,
    so the passes' loads and stores are what costs)."""
    one = np.uint64(1)
    nu = np.uint64(n)
    y = 0
    while y < m:
        p0 = np.uint64(order[y])
        c0 = s_e[p0]
        if y + 4 <= m:
            p1 = np.uint64(order[y + 1])
            p2 = np.uint64(order[y + 2])
            p3 = np.uint64(order[y + 3])
            c1, c2, c3 = s_e[p1], s_e[p2], s_e[p3]
            for x in range(p0 + one, p3 + one):
                s_n[x] += s_e[x] <= c0
            for x in range(p1 + one, p3 + one):
                s_n[x] += s_e[x] <= c1
            for x in range(p2 + one, p3 + one):
                s_n[x] += s_e[x] <= c2
            for x in range(p3 + one, nu):
                ex = s_e[x]
                # as integers: numpy adds two bools as a logical or (NUMBA_DISABLE_JIT)
                s_n[x] += np.int64(ex <= c0) + np.int64(ex <= c1) + np.int64(ex <= c2) + np.int64(ex <= c3)
            y += 4
        else:
            for x in range(p0 + one, nu):
                s_n[x] += s_e[x] <= c0
            y += 1
    y = 0
    while y < m:
        p0 = np.uint64(order[y])
        c0 = s_e[p0]
        if y + 4 <= m:
            p1 = np.uint64(order[y + 1])
            p2 = np.uint64(order[y + 2])
            p3 = np.uint64(order[y + 3])
            c1, c2, c3 = s_e[p1], s_e[p2], s_e[p3]
            a0 = a1 = a2 = a3 = 0
            for x in range(p0):
                ex = s_e[x]
                a0 += ex >= c0
                a1 += ex >= c1
                a2 += ex >= c2
                a3 += ex >= c3
            for x in range(p0, p1):
                a1 += s_e[x] >= c1
            for x in range(p0, p2):
                a2 += s_e[x] >= c2
            for x in range(p0, p3):
                a3 += s_e[x] >= c3
            s_n[p0], s_n[p1], s_n[p2], s_n[p3] = a0, a1, a2, a3
            y += 4
        else:
            a0 = 0
            for x in range(p0):
                a0 += s_e[x] >= c0
            s_n[p0] = a0
            y += 1


@njit(cache=True, inline="always")
def update_ends(ns, e_e, dead, nd, add, na):
    """E (the sorted end times ``e_e[:ns]``) without the ends ``dead[:nd]`` and with the
    ends ``add[:na]`` (both sorted ascending here; ``dead`` has room for a sentinel);
    returns the new size.  The branches are taken about once per moved end, so they
    predict well; a branch-free step (the next position depends on the last loaded
    value) chains each step on a load and was several times slower on long runs."""
    one = np.uint64(1)
    n = ns
    if nd > 0:          # delete: one forward pass from the first dead end's place
        # the sentinel is never an end: the spec validates times and w as finite
        dead[nd] = math.inf
        z = np.uint64(_end_rank_in(dead[0], 0, ns, e_e))
        dp = 0
        dv = dead[0]
        for y in range(z, np.uint64(ns)):
            ev = e_e[y]
            if ev == dv:
                dp += 1
                dv = dead[dp]
            else:
                e_e[z] = ev
                z += one
        n = ns - nd
    if na > 0:          # insert: merge from the back
        xa = np.uint64(n)
        z = np.uint64(n + na)
        y = na - 1
        cv = add[y]
        while True:
            z -= one
            if xa > 0 and e_e[xa - one] > cv:
                xa -= one
                e_e[z] = e_e[xa]
            else:
                e_e[z] = cv
                y -= 1
                if y < 0:
                    break
                cv = add[y]
        n += na
    return n


@njit(cache=True)
def recompute_skyband(k, ns, s_sc, s_e, s_i, s_j, s_n, e_e):
    """SCase-style: the k-skyband of the whole (merged) stock from scratch: a
    pair stays iff fewer than k kept better pairs end at or after it (that many
    is its count); E is the kept pairs' end times."""
    ends = np.empty(ns, np.float64)
    nk = 0
    for x in range(ns):
        v = np.searchsorted(ends[:nk], s_e[x], side="left")
        if nk - v < k:
            ends[v + 1:nk + 1] = ends[v:nk].copy()
            ends[v] = s_e[x]
            s_sc[nk], s_e[nk], s_i[nk], s_j[nk] = s_sc[x], s_e[x], s_i[x], s_j[x]
            s_n[nk] = nk - v
            nk += 1
    e_e[:nk] = ends[:nk]
    return nk


@njit(cache=True, inline="always")
def insert_candidates(seq, nc, k, ns, s_sc, s_e, s_i, s_j, s_n, e_e,
                      c_sc, c_e, c_i, c_j, order, incremental, dead):
    """Add the candidates to S and E, then restore minimality; returns ns.

    The paper's Algorithm 3 interleaves the merge with the relevance walk; here
    the "insert via cleanup" it is derived from (Section 6.3) runs on the
    dominance counts: candidates already passed the relevance test against the
    old stock (``score > lb(e)``, Algorithm 1), are merged into S in
    O(|S| + |C|), counted (``count_dominators``: O(|S|) a candidate), and the
    pairs whose count reached k (old pairs, or candidates beaten by candidates)
    leave S in one compaction; E loses the old pairs' ends and gains the kept
    candidates'.  A pair dominated by a dropped pair is dropped too (the
    dropped pair's k dominators dominate it), so the kept pairs' counts are
    their counts in the new stock."""
    c_i[:nc] = seq
    order_candidates(c_sc, c_e, c_j, nc, order)
    merge_in(s_sc, s_e, s_i, s_j, s_n, ns, c_sc, c_e, c_i, c_j, order, nc)
    n = ns + nc
    if not incremental:
        return recompute_skyband(k, n, s_sc, s_e, s_i, s_j, s_n, e_e)
    count_dominators(n, s_e, s_n, order, nc)
    # nothing before the first candidate's place changed
    # a kept candidate's end joins E, a dropped old pair's leaves it (branches: a drop is
    # rare on a long stock, and a branch-free step would chain every step on a load)
    one = np.uint64(1)
    z = np.uint64(order[0])
    nd = np.uint64(0)
    na = np.uint64(0)
    for y in range(z, np.uint64(n)):
        if s_n[y] < k:
            if s_i[y] == seq:
                c_e[na] = s_e[y]
                na += one
            if z != y:
                s_sc[z], s_e[z], s_i[z], s_j[z], s_n[z] = s_sc[y], s_e[y], s_i[y], s_j[y], s_n[y]
            z += one
        elif s_i[y] != seq:
            dead[nd] = s_e[y]
            nd += one
    # back to signed counts: numba turns int64 - uint64 into a float
    ndi, nai = np.int64(nd), np.int64(na)
    sort_ends(dead, ndi)
    sort_ends(c_e, nai)
    update_ends(ns, e_e, dead, ndi, c_e, nai)
    return np.int64(z)


@njit(cache=True, inline="always")
def expire_pairs(t, ns, s_sc, s_e, s_i, s_j, s_n, e_e):
    """Section 6.1: the pairs ending by ``t`` are a prefix of E; they are
    filtered out of S in one pass.  No kept pair's count changes: a pair's
    dominators end no earlier than it does.  Returns ns."""
    cut = 0
    while cut < ns and not (t < e_e[cut]):
        cut += 1
    if cut == 0:
        return ns
    for x in range(cut, ns):
        e_e[x - cut] = e_e[x]
    z = 0
    for x in range(ns):
        if t < s_e[x]:
            if z != x:
                s_sc[z], s_e[z], s_i[z], s_j[z], s_n[z] = s_sc[x], s_e[x], s_i[x], s_j[x], s_n[x]
            z += 1
    return ns - cut
