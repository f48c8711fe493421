"""Static competitor kernels (numba): Xiao et al.'s one-time top-k set similarity
join (ICDE 2009) rerun over the window whenever it changes (SWOOP Section 7.1,
"Static"; Section 7.2 (4), "Static algorithm").  One ``run_ops`` call processes
a whole batch of operations; ``streamspec.engines.simjoin.static`` keeps the
state arrays and ``topk_join`` there is the readable reference this compiles.

The join is the reference's, step for step, so the two agree bit for bit:

- the global token order is SWOOP's token numbering (Section 5.6, shared by every
  engine: dense ids by first appearance in the stream), descending: the token seen
  last first, as a frequency estimate; each set's tokens are put in that order once,
  when it enters the window (``_insert_tokens_desc``), not at every run.  (Up to
  issue 27 each run counted the window's token frequencies and re-sorted every
  window set by them: O(|W|) per run on top of the join, three quarters of a
  run's time at |W| = 1e4; Section 7.1 maps tokens to integers (Section 5.6)
  "identically for all algorithms" and leaves it out of the set rate);
- prefix events ``(set, pos)`` with the positional upper bound
  ``ub(|x|, pos + 1)`` processed in the order ``(-ub, -ts, -seq, pos)``; here by a
  binary heap holding each set's next event (a set's bounds never increase
  with ``pos`` for the five measures, so popping the heap gives exactly the
  sorted order of the reference, and stops early without sorting the rest);
- each event probes the inverted list of its token (the other side's, for the
  R-S join) built from the events processed so far, verifies each new pair by
  a merge of the two ordered token arrays, then joins the end of its own list
  (linked entries, so a run allocates nothing per token);
- the run stops before an event when no unseen pair can precede the k-th best
  in the canonical order (``streamspec.spec.simjoin.order_key``, ``_stop``):
  its bound is below the k-th score (with the reference's 1e-9 margin), or it
  is at most the k-th score and the event's set, the newest one still queued
  at that bound, ends its pairs before the k-th pair ends.  Xiao et al. stop at
  ``ub <= s_k``; up to issue 27 the run went on through every event tying the
  k-th score, which on a stream of exact copies (k-th score 1.0 = every set's
  first bound) was every window set's first event, O(|W|) per run.

A pair is met once per common token in both processed prefixes; the reference
skips repeats with a set of pairs.  Here: the pair was met before iff the
prefixes processed *before* this event (``x[:pos]`` and ``y[:done[y]]``)
share a token, because the later of the two events of that token probed the
earlier one's list.  Checking that is a merge of two short prefixes: no hash
set in the kernel, the same pairs verified.

Data layout (numpy, so the engine pickles): window records by row ``L``
(insertion order, so row order is seq order), ``r_seq``, ``r_ts``, ``r_side``,
and their distinct tokens (descending dense id) ``p_tok[r_ptr[L]:r_ptr[L + 1]]``.
``meta`` holds the counters below.  The per-run scratch (heap, list entries)
lives only during one call; the list heads and tails (``head``, ``tail``, two
per dense token id) are zero between runs.
"""
from __future__ import annotations


import numpy as np

from streamspec.spec._numba import njit
from streamspec.spec._simjoin_similarity import COSINE, positional_upper_bound, similarity

# meta fields: rows in use, oldest valid row, tokens in use, output events and rows written,
# size of the last emitted top-k list, then statistics (runs of the join, prefix events
# processed, inverted-list items met = the paper's pre-candidates, pairs verified, pairs
# that entered a run's running top-k), then the window changes counted for ``batch``
N_REC, OLDEST, N_POST, OUT_EV, OUT_ROW, N_LAST, RUNS, EVENTS, PRECAND, VERIFIED, CAND, CHANGES, META = range(13)
NEED_OUT = 1         # status: the output buffers are full, grow them and call again from ``pos``


@njit(cache=True)
def _before(sc1, e1, i1, j1, sc2, e2, i2, j2):
    """Canonical order (``order_key``): higher score, later end, smaller seqs first."""
    if sc1 != sc2:
        return sc1 > sc2
    if e1 != e2:
        return e1 > e2
    if i1 != i2:
        return i1 < i2
    return j1 < j2


@njit(cache=True)
def _heap_above(ub, row, a, b):
    """Heap entry ``a`` pops before ``b``: larger bound, then larger row (= larger seq,
    the newer set: timestamps do not decrease with seq, so this is the reference's
    order ``(-ub, -ts, -seq)`` without reading the times)."""
    if ub[a] != ub[b]:
        return ub[a] > ub[b]
    return row[a] > row[b]


@njit(cache=True)
def _sift_down(ub, row, n, i):
    while True:
        c = 2 * i + 1
        if c >= n:
            return
        if c + 1 < n and _heap_above(ub, row, c + 1, c):
            c += 1
        if not _heap_above(ub, row, c, i):
            return
        ub[i], ub[c] = ub[c], ub[i]
        row[i], row[c] = row[c], row[i]
        i = c


@njit(cache=True)
def _stop(kind, ub, e_ub, sc_k, e_k):
    """No unseen pair can precede the k-th ``(sc_k, e_k)`` in the canonical order, when
    the next event has bound ``ub`` and time ``ts`` (``e_ub = ts + w``): Xiao et al.'s
    stop rule ``ub <= s_k`` with the ties the canonical order breaks.  An unseen pair
    has one set whose event of the pair's first common token is still queued; that
    set's next event bounds the pair's score by its ``ub`` (Theorem 1) and its end
    time by its ``ts + w`` (a pair ends when its older set expires), and the queue
    pops ``(ub, ts)`` largest first.  So: stop when ``ub`` is below ``sc_k`` (the
    1e-9 margin keeps a rounding of ``ub`` from stopping early), or when ``ub``
    reaches at most ``sc_k`` and every unseen pair ends before the k-th.  For the
    measures whose score and bound are each one correctly rounded operation on
    integers (all but cosine) ``score <= ub`` holds in floats as it does exactly;
    cosine's ``sqrt`` then division does not promise it, so there the margin stays."""
    margin = 1e-9 * max(1.0, abs(ub))
    if ub + margin < sc_k:
        return True
    if kind == COSINE:
        ub = ub + margin
    return ub <= sc_k and e_ub < e_k


@njit(cache=True)
def _met_before(p_tok, ax, nx, ay, ny):
    """The token arrays ``p_tok[ax:ax+nx]`` and ``p_tok[ay:ay+ny]`` (both in the global
    order: descending dense id) share an element."""
    i, j = ax, ay
    ex, ey = ax + nx, ay + ny
    while i < ex and j < ey:
        if p_tok[i] == p_tok[j]:
            return True
        if p_tok[i] > p_tok[j]:
            i += 1
        else:
            j += 1
    return False


@njit(cache=True)
def _overlap_desc(p_tok, ax, nx, ay, ny):
    """``|x & y|`` of two token arrays in descending order (a merge)."""
    i, j, o = ax, ay, 0
    ex, ey = ax + nx, ay + ny
    while i < ex and j < ey:
        if p_tok[i] == p_tok[j]:
            o += 1
            i += 1
            j += 1
        elif p_tok[i] > p_tok[j]:
            i += 1
        else:
            j += 1
    return o


@njit(cache=True)
def _overlap(key, ax, nx, ay, ny):
    """``|x & y|`` of two ascending token arrays (used by ``_base_kernels``)."""
    i, j, o = ax, ay, 0
    ex, ey = ax + nx, ay + ny
    while i < ex and j < ey:
        if key[i] == key[j]:
            o += 1
            i += 1
            j += 1
        elif key[i] < key[j]:
            i += 1
        else:
            j += 1
    return o


@njit(cache=True)
def topk_join(lo, hi, r_seq, r_ts, r_side, r_ptr, p_tok, kind, k, w, two, head, tail, meta,
              b_sc, b_e, b_i, b_j):
    """One run of the static join over the window rows ``lo..hi-1``; the top list goes to
    ``b_*`` (best first) and its length is returned.  ``head`` and ``tail`` (two entries
    per dense token id: one per side) are zero on entry and on return."""
    base = r_ptr[lo]
    # inverted lists: linked entries (row, next) in insertion order; ``head[2t + side]``
    # and ``tail[2t + side]`` hold the first and last entry + 1 of token t's list
    cap = r_ptr[hi] - base
    e_row = np.empty(cap, np.int64)
    e_next = np.empty(cap, np.int64)
    e_key = np.empty(cap, np.int64)
    n_e = 0
    # heap of each non-empty set's next event
    n_w = hi - lo
    h_ub = np.empty(n_w, np.float64)
    h_row = np.empty(n_w, np.int64)
    done = np.zeros(n_w, np.int64)
    n_h = 0
    for r in range(hi - 1, lo - 1, -1):      # newest first: already a heap when the bounds tie
        ln = r_ptr[r + 1] - r_ptr[r]
        if ln > 0:
            h_ub[n_h] = positional_upper_bound(kind, ln, 1)
            h_row[n_h] = r
            n_h += 1
    for i in range(n_h // 2 - 1, -1, -1):
        _sift_down(h_ub, h_row, n_h, i)
    nb = 0
    events = 0
    met = 0
    verified = 0
    entered = 0
    while n_h > 0:
        ub = h_ub[0]
        x = h_row[0]
        if nb == k and _stop(kind, ub, r_ts[x] + w, b_sc[k - 1], b_e[k - 1]):
            break
        xl = x - lo
        ax = r_ptr[x]
        lx = r_ptr[x + 1] - ax
        pos = done[xl]
        t = p_tok[ax + pos]
        side = r_side[x]
        probe = (1 - side) if two else side
        events += 1
        q = head[2 * t + probe] - 1
        while q >= 0:
            y = e_row[q]
            q = e_next[q]
            met += 1
            yl = y - lo
            ay = r_ptr[y]
            if _met_before(p_tok, ax, pos, ay, done[yl]):
                continue
            ly = r_ptr[y + 1] - ay
            o = _overlap_desc(p_tok, ax, lx, ay, ly)
            verified += 1
            if x > y:
                a_row, b_row = x, y
            else:
                a_row, b_row = y, x
            sc = similarity(kind, r_ptr[a_row + 1] - r_ptr[a_row], r_ptr[b_row + 1] - r_ptr[b_row], o)
            sa, sb = r_seq[a_row], r_seq[b_row]
            e = r_ts[b_row] + w
            if nb == k and not _before(sc, e, sa, sb, b_sc[k - 1], b_e[k - 1], b_i[k - 1], b_j[k - 1]):
                continue
            # insertion into the sorted top list (at most k, best first)
            m = nb if nb < k else k - 1
            while m > 0 and _before(sc, e, sa, sb, b_sc[m - 1], b_e[m - 1], b_i[m - 1], b_j[m - 1]):
                b_sc[m], b_e[m], b_i[m], b_j[m] = b_sc[m - 1], b_e[m - 1], b_i[m - 1], b_j[m - 1]
                m -= 1
            b_sc[m], b_e[m], b_i[m], b_j[m] = sc, e, sa, sb
            if nb < k:
                nb += 1
            entered += 1
        # x joins the end of its own token's list, then its next event replaces this one
        own = 2 * t + side
        e_row[n_e] = x
        e_next[n_e] = -1
        e_key[n_e] = own
        if tail[own] > 0:
            e_next[tail[own] - 1] = n_e
        else:
            head[own] = n_e + 1
        tail[own] = n_e + 1
        n_e += 1
        done[xl] = pos + 1
        if pos + 1 < lx:
            h_ub[0] = positional_upper_bound(kind, lx, pos + 2)
        else:
            n_h -= 1
            h_ub[0], h_row[0] = h_ub[n_h], h_row[n_h]
        _sift_down(h_ub, h_row, n_h, 0)
    for q in range(n_e):
        head[e_key[q]] = 0
        tail[e_key[q]] = 0
    meta[RUNS] += 1
    meta[EVENTS] += events
    meta[PRECAND] += met
    meta[VERIFIED] += verified
    meta[CAND] += entered
    return nb


@njit(cache=True)
def _insert_tokens(p_tok, g, tok, a, b):
    """Copy ``tok[a:b]`` to ``p_tok[g:]`` as a sorted set; returns its size."""
    n = b - a
    if n == 0:
        return 0
    p_tok[g:g + n] = tok[a:b]
    p_tok[g:g + n].sort()
    m = 1
    for i in range(1, n):
        if p_tok[g + i] != p_tok[g + m - 1]:
            p_tok[g + m] = p_tok[g + i]
            m += 1
    return m


@njit(cache=True)
def _insert_tokens_desc(p_tok, g, tok, a, b):
    """``tok[a:b]`` as a set at ``p_tok[g:]`` in the global order, descending dense id
    (the token numbered last first: SWOOP Section 5.6); returns its size."""
    m = _insert_tokens(p_tok, g, tok, a, b)
    i, j = g, g + m - 1
    while i < j:
        p_tok[i], p_tok[j] = p_tok[j], p_tok[i]
        i += 1
        j -= 1
    return m


@njit(cache=True)
def run_ops(start, op, ts, side, seq, tok_ptr, tok, kind, k, w, two, batch, meta, r_seq, r_ts,
            r_side, r_ptr, p_tok, head, tail, last_i, last_j, last_sc, last_e, b_i, b_j, b_sc, b_e,
            out_pos, out_ptr, out_i, out_j, out_sc, out_e):
    """Operations ``start..`` of a batch: expire, insert, rerun the join when the window
    changed (with ``batch`` = b > 1: only at every b-th change of the window, counted in
    ``meta[CHANGES]`` across calls, SWOOP Section 7.2's approximate Static), record the
    top list when it differs from the last one.  Returns
    ``(next position, 0)`` when done or ``(position, NEED_OUT)`` when the output
    buffers cannot take one more list (nothing of that operation happened yet)."""
    for pos in range(start, op.shape[0]):
        if meta[OUT_EV] + 1 > out_pos.shape[0] or meta[OUT_ROW] + k > out_i.shape[0]:
            return pos, NEED_OUT
        t = ts[pos]
        changed = False
        while meta[OLDEST] < meta[N_REC] and not (t < r_ts[meta[OLDEST]] + w):
            meta[OLDEST] += 1
            changed = True
        if op[pos] == 0:
            r = meta[N_REC]
            g = meta[N_POST]
            n = _insert_tokens_desc(p_tok, g, tok, tok_ptr[pos], tok_ptr[pos + 1])
            r_seq[r], r_ts[r], r_side[r] = seq[pos], t, side[pos]
            r_ptr[r + 1] = g + n
            meta[N_REC] = r + 1
            meta[N_POST] = g + n
            changed = changed or n > 0
        if not changed:
            continue
        meta[CHANGES] += 1
        if meta[CHANGES] % batch != 0:
            continue
        nb = topk_join(meta[OLDEST], meta[N_REC], r_seq, r_ts, r_side, r_ptr, p_tok, kind, k, w,
                       two, head, tail, meta, b_sc, b_e, b_i, b_j)
        same = nb == meta[N_LAST]
        if same:
            for x in range(nb):
                if (b_i[x] != last_i[x] or b_j[x] != last_j[x] or b_sc[x] != last_sc[x]
                        or b_e[x] != last_e[x]):
                    same = False
                    break
        if same:
            continue
        ev, row = meta[OUT_EV], meta[OUT_ROW]
        out_pos[ev] = pos
        out_ptr[ev] = row
        for x in range(nb):
            last_i[x], last_j[x], last_sc[x], last_e[x] = b_i[x], b_j[x], b_sc[x], b_e[x]
            out_i[row + x], out_j[row + x], out_sc[row + x], out_e[row + x] = b_i[x], b_j[x], b_sc[x], b_e[x]
        meta[N_LAST] = nb
        meta[OUT_EV] = ev + 1
        meta[OUT_ROW] = row + nb
    return op.shape[0], 0
