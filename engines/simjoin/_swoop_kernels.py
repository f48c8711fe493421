"""SWOOP kernels (numba): one call processes a whole batch of operations.

Paper sections: 5.2 (index lists ordered by expiry; ``_swoop_index_kernels``),
5.3 (positional upper bound), 5.4/6.2 (skyband lower bound through the end
time index, Theorem 2), 5.5 (Algorithm 1, candidate generation with early-exit
overlap verification), 5.6 (token numbering by first appearance, shortest
list first), 6.1-6.3 (stock, expiry, cleanup; ``_swoop_stock_kernels``).

Data layout (all numpy, so the engine pickles):

- records in a ring: set ``seq`` is row ``seq & (rec.shape[0] - 1)`` of
  ``r_ts`` and the int32 rows ``rec = (PTR, LS, MARK, HITS)``: where its
  tokens start in ``p_tok``, ``2 * length + side`` (``rec_len``,
  ``rec_side``), and the scan scratch (the stamp ``(seq & SEQ_MASK) + 1`` of
  the last set that met it in a list, and in how many of that set's lists).
  A row is 16 bytes, so it never straddles two cache lines: a pre-candidate's
  fields are one line, the one the list scan prefetches (with five 20-byte
  columns a quarter of the rows had their stamp or count on the next line,
  which the prefetch did not ask for).  The index entries name a set by ``seq & SEQ_MASK`` (2**30
  sets, far more than a window holds), so the ring's row is that number
  masked and no entry changes when the ring grows.
- tokens in a ring ``p_tok`` of ``2**n`` slots: a set's distinct tokens are
  contiguous (descending dense id = rarest-first guess; a set that would
  straddle the end starts at 0 instead), the live ones are the global
  positions ``meta[POST_BASE]..meta[N_POST]`` (global position ``g`` is slot
  ``g & (p_tok.size - 1)``).  Expired records are never moved: the rings
  and the index arena are reused in place, so no call does work in
  proportion to the window except when a ring or the arena grows (a
  ``NEED_RING`` or ``NEED_ARENA`` return: the engine makes room and calls
  again), which a window of stable size stops needing.
- index lists, stock S and end time index E: see the two kernel modules.

Candidate generation counts, per pre-candidate ``s``, the lists of ``r`` it
was met in.  A list is scanned from its tail down to its crop threshold, so
it meets every set of its token that ends after that threshold: for ``s``
the lists whose threshold lies below ``e_s`` are *complete*, and the hits in
them are exactly ``|r & s|`` restricted to those tokens.  When all of ``r``'s
lists are complete for ``s`` (always for the newest sets, whose lower bound is
``-inf``) the count is the overlap and no verification is needed; otherwise
``hits + |incomplete lists|`` bounds the overlap, and only the survivors are
verified: the incomplete lists' tokens are looked up in ``s``'s run (the hits
already count the others).  The thresholds do not fall from list to list, so
a set first met in the ``rho``-th list holds none of the earlier lists'
tokens: ``|r & s| <= min(|s|, |r| - rho + 1)``, and a set that cannot beat
its ``lb`` even so is not kept as a pre-candidate (its size is in the record
row the scan reads anyway).  Same candidates, same order: exact.

Helpers are inlined at numba IR level (``inline="always"``): an njit call
that passes arrays pays reference counting per array, which a profile showed
as 15-20% of the time; calls stay at 30 arguments or fewer (CPython passes
more as one tuple, which numba cannot inline).

The index's cache misses (list rows of the new and the expiring set's
tokens, list tails in the arena) are requested ahead with a software
prefetch (``streamspec.engines._prefetch``); it changes no result.  The
record rows a list scan meets are not: a prefetch of the row 12 entries on
cost more than it saved at |W| = 1e4 and 1e6 alike (its load, test and
shift on every entry scanned; a scan reads a list from its tail, the newest
sets, whose rows are likely still cached).

Flags select the ablations of the paper's Figure 13 and the SCase
competitor: ``use_index`` (off: scan the whole window newest first),
``crop`` (stop a list at ``lb > ub``), ``incremental`` (off: recompute
the skyband of ``S + C`` from scratch), ``lb_linear`` (scan ``S`` for the
lower bound instead of Theorem 2; only without the index), ``shortest_first``
(off: look lists up in first-appearance order instead of shortest first).
"""
from __future__ import annotations

import math

import numpy as np
from streamspec.spec._numba import njit

from streamspec.engines._prefetch import prefetch, prefetch_row
from streamspec.engines.simjoin._swoop_index_kernels import (END, FREE, HEAD, N_CLASS, append_all, pop_heads,
                                                              room_needed)
from streamspec.engines.simjoin._swoop_stock_kernels import (crop_threshold_from, end_rank_top, expire_pairs,
                                                  insert_candidates, skyband_lower_bound)
from streamspec.spec._simjoin_similarity import (COSINE, DICE, JACCARD, min_overlap, positional_upper_bound,
                                                  similarity)

N_REC, POST_BASE, N_POST, OLDEST, NS, NTOP, OUT_EV, OUT_ROW, PRECAND, CAND, MAX_STOCK, \
    SUM_STOCK, SCANNED, A_NEED, VERIFIED, A_TOP, A_FREE = range(17)
A_FREE_LISTS = A_TOP + FREE          # meta[A_FREE_LISTS + c]: class c's free list (-1: empty)
META = A_FREE_LISTS + N_CLASS
NEED_STOCK, NEED_OUT, NEED_ARENA, NEED_RING = 1, 2, 3, 4
SEQ_MASK = (1 << 30) - 1
PTR, LS, MARK, HITS = range(4)
REC_COLS = 4
SMALL_SORT = 32


@njit(cache=True, inline="always")
def rec_len(rec, row):
    """The number of distinct tokens of the set in ring row ``row``."""
    return rec[row, LS] >> 1


@njit(cache=True, inline="always")
def rec_side(rec, row):
    """The side (0 or 1) of the set in ring row ``row``."""
    return rec[row, LS] & 1


@njit(cache=True, inline="always")
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
        # branch-free steps: which run moves on is data (a 3-way branch mispredicted often)
        o += x == y
        i += x >= y
        j += x <= y
    return o if o >= need else -1


@njit(cache=True, inline="always")
def may_beat(kind, lr, ls, o, lb):
    """False only if ``similarity(kind, lr, ls, o) > lb`` is false, without a division:
    the real quotient below ``lb`` (with a margin for the rounding of the products)
    rounds to at most ``lb`` (``lb`` is a float, rounding is monotone)."""
    if kind == JACCARD:
        return not (o < lb * (lr + ls - o) * (1.0 - 1e-12))
    if kind == DICE:
        return not (2 * o < lb * (lr + ls) * (1.0 - 1e-12))
    if kind == COSINE:
        return not (lb > 0 and o * o < lb * lb * (lr * ls) * (1.0 - 1e-12))
    return similarity(kind, lr, ls, o) > lb


@njit(cache=True, inline="always")
def holds(p_tok, b0, n, t):
    """1 if the descending token run ``p_tok[b0:b0+n]`` holds ``t``, else 0 (a binary search)."""
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) >> 1
        if p_tok[b0 + mid] > t:
            lo = mid + 1
        else:
            hi = mid
    return 1 if lo < n and p_tok[b0 + lo] == t else 0


@njit(cache=True, inline="always")
def _store_tokens(tok, lo, hi, p_tok, a0):
    """The distinct tokens of ``tok[lo:hi]`` into ``p_tok[a0:]`` in descending order; their count."""
    n = hi - lo
    if n > SMALL_SORT:
        mine = np.sort(tok[lo:hi])[::-1]
        for q in range(n):
            p_tok[a0 + q] = mine[q]
    else:
        for q in range(n):                      # insertion sort, descending
            x = tok[lo + q]
            y = q
            while y > 0 and p_tok[a0 + y - 1] < x:
                p_tok[a0 + y] = p_tok[a0 + y - 1]
                y -= 1
            p_tok[a0 + y] = x
    lr = 0
    for q in range(n):
        if lr == 0 or p_tok[a0 + lr - 1] != p_tok[a0 + q]:
            p_tok[a0 + lr] = p_tok[a0 + q]
            lr += 1
    return lr


@njit(cache=True, inline="always")
def _list_order(lens, lr, order, shortest_first):
    """Shortest list first (stable), or first-appearance order."""
    if not shortest_first:
        for q in range(lr):
            order[q] = q
    elif lr > SMALL_SORT:
        order[:lr] = np.argsort(lens[:lr], kind="mergesort")
    else:
        for q in range(lr):
            y = q
            while y > 0 and lens[order[y - 1]] > lens[q]:
                order[y] = order[y - 1]
                y -= 1
            order[y] = q


@njit(cache=True, inline="always")
def get_candidates(lr, kind, k, w, ks, opp, meta, r_ts, rec, p_tok, lists, a_rec, a_e,
                   s_sc, s_e, e_e, pc, pce, pclb, c_sc, c_e, c_j, keys, lens, order, thr,
                   use_index, crop, lb_linear, shortest_first):
    """Algorithm 1: crop the new set's index lists (shortest first) at
    ``lb(e, k) > ub(|r|, rho)``, then keep the pre-candidates whose score can
    beat ``lb(e_s)``: counted hits decide when every list of ``r`` reached
    ``s``, else the early-exit merge against ``overlap(|r|, |s|, lb)``.
    Returns #candidates.  (At most 30 arguments: CPython passes more as a
    tuple, which numba cannot inline; the new set is ``meta[N_REC]``.)"""
    ns = meta[NS]
    seq = meta[N_REC]
    rmask = rec.shape[0] - 1
    a0 = rec[seq & rmask, PTR]
    stamp = (seq & SEQ_MASK) + 1
    npc = 0
    upc = np.uint64(0)     # npc in the list scans: unsigned, no negative-index checks
    dropped = 0        # sets met whose size and first list rule them out (not in pc)
    scanned = 0
    n_thr = 0          # thresholds of the non-empty lists, non-decreasing (ub falls with rho)
    one = np.uint64(1)
    urmask = np.uint64(rmask)
    if use_index:
        for q in range(lr):
            key = np.uint64(p_tok[a0 + q] * ks + opp)     # unsigned: no negative-index checks
            keys[q] = key
            lens[q] = lists[key, END] - lists[key, HEAD]
            if lens[q] > 0:                      # the scans start at the list tails
                prefetch(a_e, lists[key, END] - 1)
                prefetch(a_rec, lists[key, END] - 1)
        _list_order(lens, lr, order, shortest_first)
        xs = 0             # #{S.score > limit} of the previous list (the searches gallop from it)
        for rho in range(1, lr + 1):
            if lens[order[rho - 1]] == 0:
                continue                         # complete for every set
            key = np.uint64(keys[order[rho - 1]])
            th = -math.inf
            if crop:
                ub = positional_upper_bound(kind, lr, rho)
                if kind == COSINE:
                    # a margin so that a rounding of ub can never crop a relevant pair
                    limit = ub + 1e-9 * max(1.0, abs(ub))
                else:
                    # one rounding of a ratio of integers: every score of a set first met
                    # here is <= ub as a float too, so lb >= ub already crops (ties)
                    limit = np.nextafter(ub, -np.inf)
                th, xs = crop_threshold_from(limit, xs, k, ns, s_sc, e_e)
            thr[n_thr] = th
            order[n_thr] = order[rho - 1]        # the token of the n_thr-th list scanned
            n_thr += 1
            v = -1             # #{E.e < ej} (Theorem 2), walked down as ej falls
            # unsigned positions and rows: numba tests every signed index for a negative
            # value (wraparound); these are never negative
            head = np.uint64(lists[key, HEAD])
            x = np.uint64(lists[key, END])
            while x > head:
                x -= one
                ej = a_e[x]
                if ej <= th:
                    break
                nj = a_rec[x]
                lj = np.uint64(nj) & urmask
                scanned += 1
                if rec[lj, MARK] != stamp:
                    rec[lj, MARK] = stamp
                    rec[lj, HITS] = 1
                    if v < 0:
                        v = end_rank_top(ej, ns, e_e)
                    elif v >= 8 and e_e[v - 8] < ej:
                        # the walk below: ~2.9 entries a first meeting on average (TWEET-like,
                        # |W| = 1e4), of unpredictable length, so its exit branch mispredicted;
                        # the boundary lies within the 8 entries below v: count them instead
                        # (branch-free; E is sorted)
                        b = v - 8
                        c = 0
                        for q in range(8):
                            c += e_e[b + q] >= ej
                        v -= c
                    else:
                        while v > 0 and e_e[v - 1] >= ej:
                            v -= 1
                    lb = s_sc[v + k - 1] if v + k - 1 < ns else -math.inf
                    # s holds none of the tokens of the lists before this one (they reached
                    # below e_s): |r & s| <= min(|s|, lr - rho + 1)
                    ls = rec[lj, LS] >> 1
                    pc[upc] = nj          # kept or not, branch-free (the test is data)
                    pce[upc] = ej
                    pclb[upc] = lb
                    keep = may_beat(kind, lr, ls, min(ls, lr - rho + 1), lb)
                    upc += np.uint64(keep)
                    dropped += 1 - keep
                else:
                    rec[lj, HITS] += 1
        npc = np.int64(upc)
    else:
        for j in range(seq - 1, meta[OLDEST] - 1, -1):
            lj = j & rmask
            if rec_side(rec, lj) != opp or rec_len(rec, lj) == 0:
                continue
            pc[npc] = j & SEQ_MASK
            pce[npc] = r_ts[lj] + w
            pclb[npc] = skyband_lower_bound(pce[npc], k, ns, s_sc, s_e, e_e, lb_linear)
            npc += 1
        if crop:
            ub = positional_upper_bound(kind, lr, 1)
            limit = ub + 1e-9 * max(1.0, abs(ub))
            for x in range(npc):                 # newest first: lb only grows
                if pclb[x] > limit:
                    npc = x
                    break
        scanned = npc
    meta[SCANNED] += scanned
    meta[PRECAND] += npc + dropped
    nc = 0
    verified = 0
    for x in range(np.uint64(npc)):     # unsigned: no negative-index checks
        nj = pc[x]
        lj = np.uint64(nj) & urmask
        ls = rec_len(rec, lj)
        ej = pce[x]
        lb = pclb[x]
        if use_index:
            h = rec[lj, HITS]
            open_lists = 0                       # lists that stopped before reaching s
            while open_lists < n_thr and not (thr[n_thr - 1 - open_lists] < ej):
                open_lists += 1
            if open_lists == 0:                  # the hits are the overlap
                o = h
            else:
                o_max = h + min(open_lists, ls - h)
                # well-behaved similarity: non-decreasing in the overlap
                if not (similarity(kind, lr, ls, o_max) > lb):
                    continue
                verified += 1
                # the hits count the complete lists: only the open lists' tokens are unknown
                o = h
                b0 = rec[lj, PTR]
                for y in range(n_thr - open_lists, n_thr):
                    o += holds(p_tok, b0, ls, p_tok[a0 + order[y]])
        else:
            need = min_overlap(kind, lr, ls, lb)
            if need > min(lr, ls):
                continue
            verified += 1
            o = overlap_at_least(p_tok, a0, lr, rec[lj, PTR], ls, need)
        if o <= 0:
            continue
        sc = similarity(kind, lr, ls, o)
        if sc > lb:         # relevant against the current stock
            c_sc[nc] = sc
            c_e[nc] = ej
            c_j[nc] = seq - ((seq - nj) & SEQ_MASK)
            nc += 1
    meta[VERIFIED] += verified
    meta[CAND] += nc
    return nc


@njit(cache=True, inline="always")
def expire(t, w, ks, meta, r_ts, rec, p_tok, lists, a_rec, s_sc, s_e, s_i, s_j, s_n, e_e):
    """``set_index_time(t)``: expired sets leave the heads of their lists,
    expired pairs (a prefix of E) leave S and E."""
    rmask = rec.shape[0] - 1
    oldest = meta[OLDEST]
    tg = meta[A_TOP:]
    while oldest < meta[N_REC] and not (t < r_ts[oldest & rmask] + w):
        lo = oldest & rmask
        pop_heads(p_tok, rec[lo, PTR], rec_len(rec, lo), ks, rec_side(rec, lo), lists, a_rec, tg)
        oldest += 1
    if oldest != meta[OLDEST]:
        meta[OLDEST] = oldest
        if oldest == meta[N_REC]:
            meta[POST_BASE] = meta[N_POST]
        else:                   # the oldest live set's tokens: the one global position of its slot
            pmask = p_tok.size - 1
            pb = meta[POST_BASE]
            meta[POST_BASE] = pb + ((rec[oldest & rmask, PTR] - pb) & pmask)
    meta[NS] = expire_pairs(t, meta[NS], s_sc, s_e, s_i, s_j, s_n, e_e)


@njit(cache=True, inline="always")
def _prefetch_ahead(p, op, side, tok_ptr, tok, ks, meta, rec, p_tok, lists):
    """Ask for the lines the next operations will miss: the list rows of the
    next insert's tokens and of the next set to expire after this one, and
    the tokens of the set expiring after that."""
    if p + 1 < op.size and op[p + 1] == 0:
        for q in range(tok_ptr[p + 1], tok_ptr[p + 2]):
            prefetch_row(lists, tok[q] * ks + side[p + 1])
    rmask = rec.shape[0] - 1
    nxt = meta[OLDEST] + 1
    if nxt < meta[N_REC]:
        ln = nxt & rmask
        b = rec[ln, PTR]
        sd = rec_side(rec, ln)
        for q in range(rec_len(rec, ln)):
            prefetch_row(lists, p_tok[b + q] * ks + sd)
    if nxt + 1 < meta[N_REC]:
        prefetch(p_tok, rec[(nxt + 1) & rmask, PTR])


@njit(cache=True)
def run_ops(start, op, ts, side, tok_ptr, tok, kind, k, w, two, meta, r_ts, rec, p_tok,
            lists, a_rec, a_e, s_sc, s_e, s_i, s_j, s_n, e_e, s_dead, top_i, top_j,
            pc, pce, pclb, c_sc, c_e, c_i, c_j, c_ord, keys, lens, order, thr,
            out_pos, out_ptr, out_i, out_j, out_sc, out_e,
            use_index, crop, incremental, lb_linear, shortest_first):
    """Apply operations ``start..`` in order; return ``(next_op, status)``:
    status 0 done, NEED_STOCK / NEED_OUT / NEED_ARENA when a buffer must grow
    first (nothing of operation ``next_op`` is kept but its expiry, which is a
    no-op when the operation is retried)."""
    n = op.size
    tg = meta[A_TOP:]
    ks = 2 if two else 1               # list key = token * ks + side
    rmask = rec.shape[0] - 1
    n_tok = p_tok.size
    for p in range(start, n):
        window = meta[N_REC] - meta[OLDEST] + 1
        if op[p] == 0 and (meta[NS] + window > s_sc.size or window > pc.size):
            return p, NEED_STOCK
        if meta[OUT_EV] + 1 > out_pos.size or meta[OUT_ROW] + k > out_i.size:
            return p, NEED_OUT
        t = ts[p]
        _prefetch_ahead(p, op, side, tok_ptr, tok, ks, meta, rec, p_tok, lists)
        expire(t, w, ks, meta, r_ts, rec, p_tok, lists, a_rec, s_sc, s_e, s_i, s_j, s_n, e_e)
        if op[p] == 0:
            seq = meta[N_REC]
            L = seq & rmask
            g = meta[N_POST]           # where the set's tokens go: contiguous in the ring
            a0 = g & (n_tok - 1)
            n_raw = tok_ptr[p + 1] - tok_ptr[p]
            if a0 + n_raw > n_tok:
                g += n_tok - a0
                a0 = 0
            pb = g if meta[OLDEST] == seq else meta[POST_BASE]
            if seq - meta[OLDEST] + 1 > rmask + 1 or g + n_raw - pb >= n_tok:
                return p, NEED_RING
            lr = _store_tokens(tok, tok_ptr[p], tok_ptr[p + 1], p_tok, a0)
            for q in range(lr):
                keys[q] = p_tok[a0 + q] * ks + side[p]
            need = room_needed(keys, lr, lists)
            if meta[A_TOP] + need > a_rec.size:
                meta[A_NEED] = need
                return p, NEED_ARENA
            meta[POST_BASE] = pb
            r_ts[L] = t
            rec[L, PTR] = a0
            rec[L, LS] = 2 * lr + side[p]
            rec[L, MARK] = -1
            opp = 1 - side[p] if two else side[p]
            nc = 0
            if lr > 0:
                nc = get_candidates(lr, kind, k, w, ks, opp, meta, r_ts, rec, p_tok, lists,
                                    a_rec, a_e, s_sc, s_e, e_e, pc, pce, pclb, c_sc, c_e, c_j,
                                    keys, lens, order, thr, use_index, crop, lb_linear,
                                    shortest_first)
            for q in range(lr):          # Section 5.2: append at the tails
                keys[q] = p_tok[a0 + q] * ks + side[p]
            append_all(keys, lr, seq & SEQ_MASK, t + w, lists, a_rec, a_e, tg)
            meta[N_POST] = g + lr
            meta[N_REC] += 1
            if nc > 0:
                meta[NS] = insert_candidates(seq, nc, k, meta[NS], s_sc, s_e, s_i, s_j, s_n, e_e,
                                             c_sc, c_e, c_i, c_j, c_ord, incremental, s_dead)
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
