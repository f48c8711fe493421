"""Numba kernels of the Super-MTK+N list (``super_list``) and of the changed objects'
re-insertion (``acquatop._evaluate``).

Plain ``@njit`` functions over numpy arrays and scalars: no validation, no
Python objects, no I/O.  Paper §4.3 (the Super-MTK+N list: one list for every
active window, window marks), §4.4 (Algorithm 2, PurgeExpiredWindow; Algorithm
3, UpdateMTKN / InsertInToMTKN / UpdateChangedObjects; Algorithm 4, the LBP
set), §5 (Algorithm 5, which hands the changed objects over); MinTopK's
insertion and expiration (Yang et al., EDBT 2011), the authors' Java batch
flow (every window id offered again at each evaluation).  The stream side (per-slot partial aggregates) and the
eviction helpers are in ``_acquatop_kernels``.

The Super-MTK+N list is arrays ``l_*[:m]`` sorted by the total order ``(score
desc, tie asc)``, with window marks ``sw``/``ew``.  The list's membership is
always the *staircase* of its candidates: ``P(w)`` is the first ``cap``
candidates with ``ew >= w``, ``sw`` the first such window, and
candidates in no ``P(w)`` are dropped.  MinTopK's incremental insertion
yields exactly this for the objects offered so far, so each operation
recomputes it by one scan of the O(cap) list instead of walking LBPs:

- ``arrivals``: the whole window arrives (the Java's batch flow): the staircase of every id of
  the window, scored with the replica (ids ranked below every window's
  ``cap``-th are MinTopK's discards);
- ``offer``: one object offered to the list (a MinTopK insertion);
- ``remove``: an id leaves and the list is rebuilt from retained entries (the
  hole of Theorem 2 is refilled only from what is retained);
- ``purge``: window ``c`` is evaluated: entries with ``sw == c`` move on;
- ``changed_objects``: every changed object re-inserted (``remove`` then
  ``offer``), its LBPs kept between objects the list discards.
"""
from __future__ import annotations

import numpy as np
from streamspec.spec._numba import njit

# -- list side --------------------------------------------------------------------------
@njit(cache=True)
def _before(score_a, tie_a, score_b, tie_b):
    """The total order: score descending, then tie (external id order) ascending."""
    return score_a > score_b or (score_a == score_b and tie_a < tie_b)


@njit(cache=True)
def _keep(l_dense, l_score, l_tie, l_sval, l_ts, l_sw, l_ew, i, out, sw):
    """Compaction step shared by ``staircase`` and ``purge``: entry ``i`` moves to
    row ``out <= i`` with start window ``sw``."""
    l_dense[out] = l_dense[i]
    l_score[out] = l_score[i]
    l_tie[out] = l_tie[i]
    l_sval[out] = l_sval[i]
    l_ts[out] = l_ts[i]
    l_ew[out] = l_ew[i]
    l_sw[out] = sw


@njit(cache=True)
def staircase(l_dense, l_score, l_tie, l_sval, l_ts, l_sw, l_ew, m, c, cap, span, cnt):
    """Marks of the sorted list ``[:m]`` from scratch (the rebuild); drops non-members; returns new m."""
    for w in range(span):
        cnt[w] = 0
    out = 0
    for i in range(m):
        sw = -1
        top = min(l_ew[i] - c, span - 1)
        for w in range(top + 1):
            if cnt[w] < cap:
                cnt[w] += 1
                if sw < 0:
                    sw = c + w
        if sw >= 0:
            _keep(l_dense, l_score, l_tie, l_sval, l_ts, l_sw, l_ew, i, out, sw)
            out += 1
    return out


@njit(cache=True)
def _cut(ids, scores, w_ts, t0, beta, c, cap, span):
    """The least over windows ``c + w`` of the ``cap``-th best score among the ids whose
    newest window ``ew`` is at least ``c + w`` (``-inf`` when some window has fewer):
    a top-``cap`` buffer of scores per window, kept sorted descending."""
    best = np.full((span, cap), -np.inf)
    for i in range(ids.size):
        s = scores[i]
        top = min((w_ts[ids[i]] - t0) // beta - c, span - 1)
        for w in range(top + 1):
            row = best[w]
            if s <= row[cap - 1]:
                continue
            j = cap - 1
            while j > 0 and row[j - 1] < s:
                row[j] = row[j - 1]
                j -= 1
            row[j] = s
    cut = np.inf
    for w in range(span):
        cut = min(cut, best[w, cap - 1])
    return cut


@njit(cache=True)
def arrivals(ids, scores, w_val, w_ts, tie, t0, beta, c, cap, span,
             l_dense, l_score, l_tie, l_sval, l_ts, l_sw, l_ew, cnt):
    """The whole window ``c`` arrives (ids with their scores): the list becomes its staircase.

    Only the ids that can reach it are sorted: the staircase is full once every window
    ``c + w`` holds ``cap`` entries, i.e. at the ``cap``-th best id with ``ew >= c + w``
    for the last ``w`` to fill, so no id scored below the ``cap``-th best score of some
    such set ``S_w`` (the least of these scores: ``_cut``) is ever reached.  Those kept
    (every id scored at least the cut: equal scores are ordered by tie) are sorted by
    the total order; the same list as sorting all ``n``, in O(n span) plus the sort of
    the few kept instead of O(n log n)."""
    cut = _cut(ids, scores, w_ts, t0, beta, c, cap, span)
    n = 0
    for i in range(ids.size):
        if scores[i] >= cut:
            n += 1
    if n < ids.size:
        sel = np.empty(n, np.int64)
        q = 0
        for i in range(ids.size):
            if scores[i] >= cut:
                sel[q] = i
                q += 1
        ids = ids[sel]
        scores = scores[sel]
    keys = np.empty(n, np.int64)
    for i in range(n):
        keys[i] = tie[ids[i]]
    # by tie, then stably by score descending: the total order
    order = np.argsort(keys)
    neg = np.empty(n, np.float64)
    for i in range(n):
        neg[i] = -scores[order[i]]
    order = order[np.argsort(neg, kind="mergesort")]
    for w in range(span):
        cnt[w] = 0
    m = 0
    full = 0
    for r in range(n):
        if full == span:
            break            # every window's list is full: the rest are MinTopK's discards
        i = order[r]
        d = ids[i]
        ew = (w_ts[d] - t0) // beta
        sw = -1
        top = min(ew - c, span - 1)
        for w in range(top + 1):
            if cnt[w] < cap:
                cnt[w] += 1
                if cnt[w] == cap:
                    full += 1
                if sw < 0:
                    sw = c + w
        if sw >= 0:
            l_dense[m] = d
            l_score[m] = scores[i]
            l_tie[m] = keys[i]
            l_sval[m] = w_val[d]
            l_ts[m] = w_ts[d]
            l_ew[m] = ew
            l_sw[m] = sw
            m += 1
    return m


@njit(cache=True)
def find(l_dense, m, d):
    for i in range(m):
        if l_dense[i] == d:
            return i
    return -1


@njit(cache=True)
def remove(l_dense, l_score, l_tie, l_sval, l_ts, l_sw, l_ew, m, c, cap, span, cnt, d):
    """Id ``d`` leaves the list; the rest is rebuilt from the retained entries; returns new m."""
    at = find(l_dense, m, d)
    if at < 0:
        return m
    for i in range(at, m - 1):
        l_dense[i] = l_dense[i + 1]
        l_score[i] = l_score[i + 1]
        l_tie[i] = l_tie[i + 1]
        l_sval[i] = l_sval[i + 1]
        l_ts[i] = l_ts[i + 1]
        l_sw[i] = l_sw[i + 1]
        l_ew[i] = l_ew[i + 1]
    return staircase(l_dense, l_score, l_tie, l_sval, l_ts, l_sw, l_ew, m - 1, c, cap, span, cnt)


@njit(cache=True)
def offer(l_dense, l_score, l_tie, l_sval, l_ts, l_sw, l_ew, m, c, cap, span, cnt,
          d, score, tie, sval, ts, ew):
    """MinTopK insertion of an object not in the list (it may be discarded); returns new m.

    The list is a staircase: an object that every window it reaches has ``cap`` entries
    before (``ew >= c + w``) is discarded with nothing else changed, so that case returns
    at once (at an evaluation most changed objects outside the list stay outside)."""
    at = m
    for i in range(m):
        if _before(score, tie, l_score[i], l_tie[i]):
            at = i
            break
    top = min(ew - c, span - 1)
    if top >= 0:
        for w in range(top + 1):
            cnt[w] = 0
        for i in range(at):
            for w in range(min(l_ew[i] - c, top) + 1):
                cnt[w] += 1
        counted = True
        for w in range(top + 1):
            if cnt[w] < cap:
                counted = False
                break
        if counted:
            return m
    for i in range(m, at, -1):
        l_dense[i] = l_dense[i - 1]
        l_score[i] = l_score[i - 1]
        l_tie[i] = l_tie[i - 1]
        l_sval[i] = l_sval[i - 1]
        l_ts[i] = l_ts[i - 1]
        l_sw[i] = l_sw[i - 1]
        l_ew[i] = l_ew[i - 1]
    l_dense[at] = d
    l_score[at] = score
    l_tie[at] = tie
    l_sval[at] = sval
    l_ts[at] = ts
    l_ew[at] = ew
    l_sw[at] = c
    return staircase(l_dense, l_score, l_tie, l_sval, l_ts, l_sw, l_ew, m + 1, c, cap, span, cnt)


@njit(cache=True)
def purge(l_dense, l_score, l_tie, l_sval, l_ts, l_sw, l_ew, m, c):
    """MinTopK expiration: window ``c`` was evaluated: entries with ``sw == c`` move to ``c + 1``; returns new m."""
    out = 0
    for i in range(m):
        sw = l_sw[i] + 1 if l_sw[i] == c else l_sw[i]
        if sw > l_ew[i]:
            continue
        _keep(l_dense, l_score, l_tie, l_sval, l_ts, l_sw, l_ew, i, out, sw)
        out += 1
    return out


# -- changed objects (Algorithm 5, UpdateChangedObjects; ``acquatop._evaluate``) -------
@njit(cache=True)
def _lower_bounds(l_score, l_tie, l_ew, m, c, cap, span, lb_score, lb_tie):
    """``lb_*[w]``: the ``cap``-th entry among those with ``ew >= c + w`` (window ``c + w``'s
    LBP); a score of ``-inf`` and tie ``-1`` while the window has fewer (nothing is after it)."""
    for w in range(span):
        lb_score[w] = -np.inf
        lb_tie[w] = -1
    for w in range(span):
        n = 0
        for i in range(m):
            if l_ew[i] >= c + w:
                n += 1
                if n == cap:
                    lb_score[w] = l_score[i]
                    lb_tie[w] = l_tie[i]
                    break


@njit(cache=True)
def changed_objects(changed, replica, w_val, w_ts, w_mark, stamp, tie, latest, smin, t0, beta,
                    ws, wv, slo, shi, vlo, vhi, l_dense, l_score, l_tie, l_sval, l_ts, l_sw, l_ew,
                    m, c, cap, span, cnt):
    """Re-insert every changed object, one by one in the order given (``remove`` then
    ``offer``, as ``SuperTopKList.replace``): an object in the list keeps its streaming
    score, one outside it but in the window (``w_mark == stamp``) takes its exact score
    (``sum``) or ``smin`` (``latest``, Theorem 3's lower bound), others are skipped (they
    do not join).  Linear scoring ``F(s, v)`` as ``linear_scores``.  Returns the new m.

    An object outside the list that ranks after the LBP of every window it reaches is
    discarded by ``offer`` with nothing changed; the LBPs are kept from one such object to
    the next (recomputed after the list changes), so most changed objects of a window (the
    push variant: every key that changed) cost O(span) each."""
    lb_score = np.empty(span, np.float64)
    lb_tie = np.empty(span, np.int64)
    bounds = False
    for j in range(changed.size):
        d = changed[j]
        at = find(l_dense, m, d)
        if at >= 0:
            s = l_sval[at]
        elif w_mark[d] == stamp:
            s = smin if latest else w_val[d]
        else:
            continue
        score = ws * ((s - slo) / (shi - slo)) + wv * ((replica[d] - vlo) / (vhi - vlo))
        ts = w_ts[d]
        ew = (ts - t0) // beta
        if at < 0:
            top = min(ew - c, span - 1)
            if top >= 0:
                if not bounds:
                    _lower_bounds(l_score, l_tie, l_ew, m, c, cap, span, lb_score, lb_tie)
                    bounds = True
                after = True
                for w in range(top + 1):
                    if lb_tie[w] < 0 or _before(score, tie[d], lb_score[w], lb_tie[w]):
                        after = False
                        break
                if after:
                    continue           # ``offer`` would discard it: the list stays
        m = remove(l_dense, l_score, l_tie, l_sval, l_ts, l_sw, l_ew, m, c, cap, span, cnt, d)
        m = offer(l_dense, l_score, l_tie, l_sval, l_ts, l_sw, l_ew, m, c, cap, span, cnt,
                  d, score, tie[d], s, ts, ew)
        bounds = False
    return m
