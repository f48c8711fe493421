"""SWOOP candidate index kernels (numba): the index lists of Section 5.2.

An index list ``key = token * 2 + side`` (two-stream join; ``token`` in the
self join) holds the window's sets containing
the token, in arrival order (= expiry order): appended at the tail, expired at
the head, scanned from tail to head.  Each list is a contiguous segment of one
arena (``a_rec`` = local record number, see ``_swoop_kernels``, ``a_e`` = end time ``ts + w`` of the entry), so a scan
reads memory backwards in order instead of chasing one pointer per entry (at
|W| = 1e6 the arena is far larger than the caches):

- ``lists[key] = (BEG, CAP, HEAD, END)``: the list's segment and its live
  entries ``[head, end)``, so ``end - head`` is the list's length (the
  shortest-list-first order of Section 5.6 needs it).  One int32 row per key
  keeps a list's bookkeeping in a quarter of a cache line (there are ~1e6
  keys, touched at random: the rows are the index's main cache misses).
- A full segment is compacted in place when at most half of it is live (the
  head has expired), else moved to a segment of twice the size at the arena
  top (the old one becomes garbage); an emptied list frees its segment.
- ``meta[A_TOP]``, ``meta[A_GARBAGE]``: arena use; the engine compacts the
  whole arena with ``compact_arena`` when an insert does not fit.

Expiry is eager: a set leaving the window is the head of each of its lists.
"""
from __future__ import annotations

from streamspec.spec._numba import njit

MIN_CAP = 4
BEG, CAP, HEAD, END = range(4)


@njit(cache=True, inline="always")
def room_needed(keys, n, lists):
    """Arena space (entries) that appending one entry to each list ``keys[:n]`` takes."""
    need = 0
    for q in range(n):
        key = keys[q]
        cap = lists[key, CAP]
        if lists[key, END] < lists[key, BEG] + cap:
            continue
        live = lists[key, END] - lists[key, HEAD]
        if cap > 0 and 2 * live <= cap:
            continue
        need += max(MIN_CAP, 2 * cap)
    return need


@njit(cache=True, inline="always")
def append_all(keys, n, rec, e, lists, a_rec, a_e, top_garbage):
    """Append ``(rec, e)`` at the tail of each list ``keys[:n]``; the arena has
    room (``room_needed``).  ``top_garbage`` = [arena top, garbage].  (One call
    per set, not per token: every call passing arrays costs numba reference
    counting, which showed up as 15% of the time.)"""
    for q in range(n):
        key = keys[q]
        cap = lists[key, CAP]
        if lists[key, END] == lists[key, BEG] + cap:
            head = lists[key, HEAD]
            live = lists[key, END] - head
            if cap > 0 and 2 * live <= cap:          # compact in place
                b = lists[key, BEG]
                for x in range(live):
                    a_rec[b + x] = a_rec[head + x]
                    a_e[b + x] = a_e[head + x]
            else:                                    # move to a segment twice the size
                b = top_garbage[0]
                for x in range(live):
                    a_rec[b + x] = a_rec[head + x]
                    a_e[b + x] = a_e[head + x]
                top_garbage[1] += cap
                cap = max(MIN_CAP, 2 * cap)
                top_garbage[0] += cap
                lists[key, BEG] = b
                lists[key, CAP] = cap
            lists[key, HEAD] = b
            lists[key, END] = b + live
        x = lists[key, END]
        a_rec[x] = rec
        a_e[x] = e
        lists[key, END] = x + 1


@njit(cache=True, inline="always")
def pop_heads(p_tok, b, n, ks, side, lists, top_garbage):
    """A set with tokens ``p_tok[b:b+n]`` expired: it is the head of each of its
    lists; an emptied list frees its segment."""
    for q in range(n):
        key = p_tok[b + q] * ks + side
        h = lists[key, HEAD] + 1
        if h == lists[key, END]:
            top_garbage[1] += lists[key, CAP]
            lists[key, BEG] = 0
            lists[key, CAP] = 0
            lists[key, END] = 0
            h = 0
        lists[key, HEAD] = h


@njit(cache=True)
def compacted_size(lists):
    """Arena entries the lists take after ``compact_arena``."""
    total = 0
    for key in range(lists.shape[0]):
        if lists[key, CAP] > 0:
            live = lists[key, END] - lists[key, HEAD]
            total += max(MIN_CAP, 2 * live)
    return total


@njit(cache=True)
def compact_arena(lists, a_rec, a_e, b_rec, b_e):
    """Copy every list's live entries into the fresh arena ``b_*``, each in a
    segment twice its length (so it then slides in place as the window moves
    instead of moving again); returns the new arena top."""
    top = 0
    for key in range(lists.shape[0]):
        if lists[key, CAP] == 0:
            continue
        head = lists[key, HEAD]
        live = lists[key, END] - head
        cap = max(MIN_CAP, 2 * live)
        for x in range(live):
            b_rec[top + x] = a_rec[head + x]
            b_e[top + x] = a_e[head + x]
        lists[key, BEG] = top
        lists[key, CAP] = cap
        lists[key, HEAD] = top
        lists[key, END] = top + live
        top += cap
    return top
