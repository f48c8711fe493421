"""SWOOP kernels (numba): candidate index, bounds, stock and end time index.

Paper sections: 5.2 (index lists ordered by expiry, appended at the tail,
expired at the head), 5.3 (positional upper bound), 5.4/6.2 (skyband lower
bound through the end time index, Theorem 2), 5.5 (Algorithm 1, early-exit
overlap verification), 5.6 (token numbering by first appearance, shortest
list first), 6.1 (expiry through the end time index), 6.3 (Lemma 4 cleanup,
Algorithm 2, with Theorem 3's end-time stop).

Data layout (all numpy, so the engine pickles):

- records by ``L = seq - rec_base``: ``r_ts``, ``r_side``, ``r_ptr`` (global id
  of its first posting), ``r_len``; postings by ``P = g - post_base``:
  ``p_tok`` (a record's tokens, descending dense id = rarest-first guess),
  ``p_rec`` (seq), ``p_prev`` (previous posting of the same index list).
  An index list ``tok*2 + side`` is a singly linked list from ``l_tail``
  backwards (tail to head = decreasing expiry); the head is expired lazily:
  a scan stops at the first record older than ``meta[OLDEST]``;
  ``l_count`` counts its valid entries (for the shortest-list-first order).
- stock ``S`` (``s_*``) sorted by the canonical key ``(-score, -e, seq_i,
  seq_j)`` and end time index ``E`` (``e_*``) sorted by ``(e, score, -seq_i,
  -seq_j)``: parallel sorted arrays.  Rank is a binary search (O(log n)),
  select is O(1); an update is a memmove, which at minimal-stock sizes
  (O(k|W|) worst case, ~1e2..1e4 in practice) is cheaper than a tree.

Flags select the ablations of the paper's Figure 13 and the SCase
competitor: ``use_index`` (off: scan the whole window newest first),
``crop`` (stop a list once ``lb > ub``), ``incremental`` (off: recompute
the skyband of ``S + C`` from scratch), ``lb_linear`` (scan ``S`` for the
lower bound instead of Theorem 2), ``shortest_first`` (off: look lists up in
first-appearance order instead of the shortest-list-first heap).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from spec._simjoin_similarity import min_overlap, positional_upper_bound, similarity

REC_BASE, N_REC, POST_BASE, N_POST, OLDEST, NS, NTOP, OUT_EV, OUT_ROW, \
    PRECAND, CAND, MAX_STOCK, SUM_STOCK, SCANNED = range(14)
META = 14
NEED_STOCK, NEED_OUT = 1, 2


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


@njit(cache=True)
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
    v = np.searchsorted(e_e[:ns], t, side="left")
    x = v + k - 1
    return s_sc[x] if x < ns else -math.inf


@njit(cache=True)
def overlap_at_least(p_tok, a0, la, b0, lb, need):
    """``|a & b|`` of two descending token runs, or -1 as soon as ``need`` is out of reach."""
    i = 0
    j = 0
    o = 0
    while i < la and j < lb:
        if o + min(la - i, lb - j) < need:
            return -1
        x = p_tok[a0 + i]
        y = p_tok[b0 + j]
        if x == y:
            o += 1
            i += 1
            j += 1
        elif x > y:
            i += 1
        else:
            j += 1
    return o if o >= need else -1


@njit(cache=True)
def _key_order(c_sc, c_e, c_j, n, by_end):
    """Candidates (all with the same seq_i) in stock order, or end time order."""
    idx = np.argsort(c_j[:n], kind="mergesort")
    if by_end:                       # (e, score, -seq_j)
        idx = idx[::-1].copy()
        idx = idx[np.argsort(c_sc[idx], kind="mergesort")]
        idx = idx[np.argsort(c_e[idx], kind="mergesort")]
    else:                            # (-score, -e, seq_j)
        idx = idx[np.argsort(-c_e[idx], kind="mergesort")]
        idx = idx[np.argsort(-c_sc[idx], kind="mergesort")]
    return idx


@njit(cache=True)
def _merge_in(a_sc, a_e, a_i, a_j, n, c_sc, c_e, c_i, c_j, order, by_end):
    """Merge the sorted candidates ``order`` into the first ``n`` entries of a, from the back."""
    m = order.size
    x = n - 1
    y = m - 1
    for z in range(n + m - 1, -1, -1):
        take_a = False
        if x >= 0:
            if y < 0:
                take_a = True
            else:
                c = order[y]
                if by_end:
                    take_a = e_before(c_sc[c], c_e[c], c_i[c], c_j[c], a_sc[x], a_e[x], a_i[x], a_j[x])
                else:
                    take_a = s_before(c_sc[c], c_e[c], c_i[c], c_j[c], a_sc[x], a_e[x], a_i[x], a_j[x])
        if take_a:
            a_sc[z], a_e[z], a_i[z], a_j[z] = a_sc[x], a_e[x], a_i[x], a_j[x]
            x -= 1
        else:
            c = order[y]
            a_sc[z], a_e[z], a_i[z], a_j[z] = c_sc[c], c_e[c], c_i[c], c_j[c]
            y -= 1


@njit(cache=True)
def _delete(a_sc, a_e, a_i, a_j, pos, n):
    a_sc[pos:n - 1] = a_sc[pos + 1:n]
    a_e[pos:n - 1] = a_e[pos + 1:n]
    a_i[pos:n - 1] = a_i[pos + 1:n]
    a_j[pos:n - 1] = a_j[pos + 1:n]


@njit(cache=True)
def _stock_rank(s_sc, s_e, s_i, s_j, ns, sc, e, i, j):
    lo = 0
    hi = ns
    while lo < hi:
        mid = (lo + hi) >> 1
        if s_before(s_sc[mid], s_e[mid], s_i[mid], s_j[mid], sc, e, i, j):
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def cleanup(k, ns, max_e, s_sc, s_e, s_i, s_j, e_sc, e_e, e_i, e_j):
    """Algorithm 2 (Lemma 4): ``E[u]`` is irrelevant iff it sorts after
    ``S[u+k-1]`` once ``E[:u]`` is clean.  Theorem 3: only pairs ending by
    ``max_e`` can have become irrelevant, so the scan stops there.  Returns ns."""
    u = 0
    while u + k - 1 < ns and e_e[u] <= max_e:
        x = u + k - 1
        if s_before(s_sc[x], s_e[x], s_i[x], s_j[x], e_sc[u], e_e[u], e_i[u], e_j[u]):
            pos = _stock_rank(s_sc, s_e, s_i, s_j, ns, e_sc[u], e_e[u], e_i[u], e_j[u])
            _delete(s_sc, s_e, s_i, s_j, pos, ns)
            _delete(e_sc, e_e, e_i, e_j, u, ns)
            ns -= 1
        else:
            u += 1
    return ns


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


@njit(cache=True)
def get_candidates(seq, side, lr, a0, kind, k, w, opp, meta, r_ts, r_side, r_ptr, r_len,
                   p_tok, p_rec, p_prev, l_tail, l_count, mark,
                   s_sc, s_e, e_e, pc, pclb, c_sc, c_e, c_j, use_index, crop, lb_linear,
                   shortest_first):
    """Algorithm 1: crop the new set's index lists (shortest first) with
    ``lb(e, k) > ub(|r|, rho)``, then verify the pre-candidates with an
    early-exit overlap against ``overlap(|r|, |s|, lb)``.  Returns #candidates."""
    rec_base, post_base, oldest, ns = meta[REC_BASE], meta[POST_BASE], meta[OLDEST], meta[NS]
    stamp = seq + 1
    npc = 0
    if use_index:
        cnt = np.empty(lr, np.int64)
        for q in range(lr):
            cnt[q] = l_count[p_tok[a0 + q] * 2 + opp]
        if shortest_first:                                 # the shortest-list-first heap
            order = np.argsort(cnt, kind="mergesort")
        else:                                              # plain first-appearance order
            order = np.arange(lr)
        for rho in range(1, lr + 1):
            key = p_tok[a0 + order[rho - 1]] * 2 + opp
            if l_count[key] == 0:
                continue
            ub = positional_upper_bound(kind, lr, rho)
            # a margin so that a rounding of ub can never crop a relevant pair
            limit = ub + 1e-9 * max(1.0, abs(ub))
            last_e = math.nan
            lb = -math.inf
            g = l_tail[key]
            while g >= post_base:
                j = p_rec[g - post_base]
                if j < oldest:
                    break
                lj = j - rec_base
                ej = r_ts[lj] + w
                if ej != last_e:
                    lb = skyband_lower_bound(ej, k, ns, s_sc, s_e, e_e, lb_linear)
                    last_e = ej
                if crop and lb > limit:
                    break
                meta[SCANNED] += 1
                if mark[lj] != stamp:
                    mark[lj] = stamp
                    pc[npc] = j
                    pclb[npc] = lb
                    npc += 1
                g = p_prev[g - post_base]
    else:
        ub = positional_upper_bound(kind, lr, 1)
        limit = ub + 1e-9 * max(1.0, abs(ub))
        for j in range(seq - 1, oldest - 1, -1):
            lj = j - rec_base
            if r_side[lj] != opp or r_len[lj] == 0:
                continue
            lb = skyband_lower_bound(r_ts[lj] + w, k, ns, s_sc, s_e, e_e, lb_linear)
            if crop and lb > limit:
                break
            pc[npc] = j
            pclb[npc] = lb
            npc += 1
    meta[PRECAND] += npc
    nc = 0
    for x in range(npc):
        j = pc[x]
        lj = j - rec_base
        ls = r_len[lj]
        need = min_overlap(kind, lr, ls, pclb[x])
        if need > min(lr, ls):
            continue
        o = overlap_at_least(p_tok, a0, lr, r_ptr[lj] - post_base, ls, need)
        if o < 0:
            continue
        sc = similarity(kind, lr, ls, o)
        if sc > pclb[x]:         # relevant against the current stock
            c_sc[nc] = sc
            c_e[nc] = r_ts[lj] + w
            c_j[nc] = j
            nc += 1
    meta[CAND] += nc
    return nc


@njit(cache=True)
def insert_candidates(seq, nc, k, meta, s_sc, s_e, s_i, s_j, e_sc, e_e, e_i, e_j,
                      c_sc, c_e, c_i, c_j, incremental):
    """Add the candidates to S and E, then restore minimality.

    The paper's Algorithm 3 interleaves the merge with the relevance walk; here
    its two ingredients run one after the other, the "insert via cleanup" the
    paper derives it from (Section 6.3): candidates already passed the
    relevance test against the old stock (``score > lb(e)``, Algorithm 1),
    are merged into S and E in O(|S| + |C|), and Algorithm 2 removes what the
    new pairs made irrelevant (including candidates beaten by candidates)."""
    ns = meta[NS]
    c_i[:nc] = seq
    order = _key_order(c_sc, c_e, c_j, nc, False)
    _merge_in(s_sc, s_e, s_i, s_j, ns, c_sc, c_e, c_i, c_j, order, False)
    if incremental:
        order = _key_order(c_sc, c_e, c_j, nc, True)
        _merge_in(e_sc, e_e, e_i, e_j, ns, c_sc, c_e, c_i, c_j, order, True)
        max_e = c_e[:nc].max()
        meta[NS] = cleanup(k, ns + nc, max_e, s_sc, s_e, s_i, s_j, e_sc, e_e, e_i, e_j)
    else:
        meta[NS] = recompute_skyband(k, ns + nc, s_sc, s_e, s_i, s_j, e_sc, e_e, e_i, e_j)


@njit(cache=True)
def expire(t, w, meta, r_ts, r_side, r_ptr, r_len, p_tok, l_count,
           s_sc, s_e, s_i, s_j, e_sc, e_e, e_i, e_j, two):
    """``set_index_time(t)``: drop expired records from the list counts and
    expired pairs (a prefix of E; filtered out of S)."""
    rec_base, post_base = meta[REC_BASE], meta[POST_BASE]
    oldest = meta[OLDEST]
    while oldest < meta[N_REC] and not (t < r_ts[oldest - rec_base] + w):
        lo = oldest - rec_base
        opp_side = r_side[lo]
        for q in range(r_len[lo]):
            l_count[p_tok[r_ptr[lo] - post_base + q] * 2 + opp_side] -= 1
        oldest += 1
    meta[OLDEST] = oldest
    ns = meta[NS]
    cut = 0
    while cut < ns and not (t < e_e[cut]):
        cut += 1
    if cut > 0:
        n2 = ns - cut
        e_sc[:n2] = e_sc[cut:ns].copy()
        e_e[:n2] = e_e[cut:ns].copy()
        e_i[:n2] = e_i[cut:ns].copy()
        e_j[:n2] = e_j[cut:ns].copy()
        z = 0
        for x in range(ns):
            if t < s_e[x]:
                s_sc[z], s_e[z], s_i[z], s_j[z] = s_sc[x], s_e[x], s_i[x], s_j[x]
                z += 1
        meta[NS] = n2


@njit(cache=True)
def run_ops(start, op, ts, side, tok_ptr, tok, kind, k, w, two, meta,
            r_ts, r_side, r_ptr, r_len, p_tok, p_rec, p_prev, l_tail, l_count, mark,
            s_sc, s_e, s_i, s_j, e_sc, e_e, e_i, e_j, top_i, top_j,
            pc, pclb, c_sc, c_e, c_i, c_j,
            out_pos, out_ptr, out_i, out_j, out_sc, out_e,
            use_index, crop, incremental, lb_linear, shortest_first):
    """Apply operations ``start..`` in order; return ``(next_op, status)``:
    status 0 done, NEED_STOCK / NEED_OUT when a buffer must grow first."""
    n = op.size
    for p in range(start, n):
        window = meta[N_REC] - meta[OLDEST] + 1
        if op[p] == 0 and (meta[NS] + window > s_sc.size or window > pc.size):
            return p, NEED_STOCK
        if meta[OUT_EV] + 1 > out_pos.size or meta[OUT_ROW] + k > out_i.size:
            return p, NEED_OUT
        t = ts[p]
        expire(t, w, meta, r_ts, r_side, r_ptr, r_len, p_tok, l_count,
               s_sc, s_e, s_i, s_j, e_sc, e_e, e_i, e_j, two)
        if op[p] == 0:
            seq = meta[N_REC]
            L = seq - meta[REC_BASE]
            a0 = meta[N_POST] - meta[POST_BASE]
            mine = np.sort(tok[tok_ptr[p]:tok_ptr[p + 1]])
            lr = 0
            for q in range(mine.size - 1, -1, -1):   # descending dense id, duplicates dropped
                if lr == 0 or p_tok[a0 + lr - 1] != mine[q]:
                    p_tok[a0 + lr] = mine[q]
                    p_rec[a0 + lr] = seq
                    lr += 1
            r_ts[L] = t
            r_side[L] = side[p]
            r_ptr[L] = meta[N_POST]
            r_len[L] = lr
            mark[L] = -1
            opp = 1 - side[p] if two else side[p]
            nc = 0
            if lr > 0:
                nc = get_candidates(seq, side[p], lr, a0, kind, k, w, opp, meta, r_ts, r_side,
                                    r_ptr, r_len, p_tok, p_rec, p_prev, l_tail, l_count, mark,
                                    s_sc, s_e, e_e, pc, pclb, c_sc, c_e, c_j,
                                    use_index, crop, lb_linear, shortest_first)
            for q in range(lr):          # Section 5.2: append at the tails
                key = p_tok[a0 + q] * 2 + side[p]
                p_prev[a0 + q] = l_tail[key]
                l_tail[key] = meta[N_POST] + q
                l_count[key] += 1
            meta[N_POST] += lr
            meta[N_REC] += 1
            if nc > 0:
                insert_candidates(seq, nc, k, meta, s_sc, s_e, s_i, s_j, e_sc, e_e, e_i, e_j,
                                  c_sc, c_e, c_i, c_j, incremental)
            meta[MAX_STOCK] = max(meta[MAX_STOCK], meta[NS])
            meta[SUM_STOCK] += meta[NS]
        m = min(k, meta[NS])
        changed = m != meta[NTOP]
        if not changed:
            for x in range(m):
                if top_i[x] != s_i[x] or top_j[x] != s_j[x]:
                    changed = True
                    break
        if changed:
            ev = meta[OUT_EV]
            row = meta[OUT_ROW]
            out_pos[ev] = p
            out_ptr[ev] = row
            for x in range(m):
                top_i[x] = s_i[x]
                top_j[x] = s_j[x]
                out_i[row + x] = s_i[x]
                out_j[row + x] = s_j[x]
                out_sc[row + x] = s_sc[x]
                out_e[row + x] = s_e[x]
            meta[NTOP] = m
            meta[OUT_EV] = ev + 1
            meta[OUT_ROW] = row + m
    return n, 0
