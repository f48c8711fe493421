"""SWOOP candidate index kernels (numba): the index lists of Section 5.2.

An index list ``key = token * 2 + side`` (two-stream join; ``token`` in the
self join) holds the window's sets containing
the token, in arrival order (= expiry order): appended at the tail, expired at
the head, scanned from tail to head.  Each list is a contiguous segment of one
arena (``a_rec`` = the set's number modulo 2**30, see ``_swoop_kernels``, ``a_e`` = end time ``ts + w`` of the entry), so a scan
reads memory backwards in order instead of chasing one pointer per entry (at
|W| = 1e6 the arena is far larger than the caches):

- ``lists[key] = (BEG, CAP, HEAD, END)``: the list's segment and its live
  entries ``[head, end)``, so ``end - head`` is the list's length (the
  shortest-list-first order of Section 5.6 needs it).  One int32 row per key
  keeps a list's bookkeeping in a quarter of a cache line (there are ~1e6
  keys, touched at random: the rows are the index's main cache misses).
- Segments come in size classes ``MIN_CAP << c``.  A full segment is
  compacted in place when at most half of it is live (the head has
  expired), moved to a segment of half its class or less when at most a
  quarter is live, else moved to a segment of twice the size.  The segment
  left behind goes on its class's free list (threaded through ``a_rec``:
  a free segment's first entry is the next one's position, -1 ends it), and
  a new segment is taken from its class's free list before the arena top
  grows.  An emptied list of the smallest class keeps its segment (the
  token's next set reuses it; the lists' rows are kept per token anyway);
  a larger one frees it.
- ``tg = meta[A_TOP:]``: ``tg[0]`` the arena top, ``tg[1]`` the entries on
  free lists, ``tg[FREE + c]`` the head of class ``c``'s free list.  Free
  segments are reused as they come, so there is no whole-arena compaction
  while the engine runs: the arena only grows (a copy, positions kept) when
  the lists' peak demand does.  ``compact_arena`` packs the lists into a
  fresh arena for a pickled state.

Expiry is eager: a set leaving the window is the head of each of its lists.
"""
from __future__ import annotations

import numpy as np
from streamspec.spec._numba import njit

MIN_CAP = 4
BEG, CAP, HEAD, END = range(4)
FREE = 2            # tg[FREE + c]: free list of the segments of MIN_CAP << c entries
N_CLASS = 30


@njit(cache=True, inline="always")
def size_class(cap):
    """``c`` with ``MIN_CAP << c == cap`` (caps are powers of two from MIN_CAP)."""
    c = 0
    while (MIN_CAP << c) < cap:
        c += 1
    return c


@njit(cache=True, inline="always")
def class_cap(n):
    """The smallest segment size (``MIN_CAP << c``) of at least ``n`` entries."""
    cap = MIN_CAP
    while cap < n:
        cap <<= 1
    return cap


@njit(cache=True, inline="always")
def new_cap(cap, live):
    """The size of the segment a full list of ``live`` entries in a ``cap`` segment
    moves to, or 0 when it compacts in place."""
    if cap > MIN_CAP and 4 * live <= cap:
        return class_cap(max(MIN_CAP, 2 * live))
    if cap > 0 and 2 * live <= cap:
        return 0
    return max(MIN_CAP, 2 * cap)


@njit(cache=True, inline="always")
def room_needed(keys, n, lists):
    """Arena space above the top (entries) that appending one entry to each list
    ``keys[:n]`` may take (free lists ignored: an upper bound)."""
    need = 0
    for q in range(n):
        key = keys[q]
        cap = lists[key, CAP]
        if lists[key, END] < lists[key, BEG] + cap:
            continue
        need += new_cap(cap, lists[key, END] - lists[key, HEAD])
    return need


@njit(cache=True, inline="always")
def free_segment(b, cap, a_rec, tg):
    c = size_class(cap)
    a_rec[b] = tg[FREE + c]
    tg[FREE + c] = b
    tg[1] += cap


@njit(cache=True, inline="always")
def take_segment(cap, a_rec, tg):
    c = size_class(cap)
    b = tg[FREE + c]
    if b >= 0:
        tg[FREE + c] = a_rec[b]
        tg[1] -= cap
        return b
    b = tg[0]
    tg[0] += cap
    return b


@njit(cache=True, inline="always")
def append_all(keys, n, rec, e, lists, a_rec, a_e, tg):
    """Append ``(rec, e)`` at the tail of each list ``keys[:n]``; the arena has
    room (``room_needed``).  (One call per set, not per token: every call
    passing arrays costs numba reference counting, which showed up as 15% of
    the time.)"""
    for q in range(n):
        key = np.uint64(keys[q])             # unsigned: no negative-index checks
        cap = lists[key, CAP]
        if lists[key, END] == lists[key, BEG] + cap:
            head = lists[key, HEAD]
            live = lists[key, END] - head
            cap2 = new_cap(cap, live)
            if cap2 == 0:                            # compact in place
                b = lists[key, BEG]
                for x in range(live):
                    a_rec[b + x] = a_rec[head + x]
                    a_e[b + x] = a_e[head + x]
            else:                                    # move to a segment of cap2
                b = take_segment(cap2, a_rec, tg)
                for x in range(live):
                    a_rec[b + x] = a_rec[head + x]
                    a_e[b + x] = a_e[head + x]
                if cap > 0:
                    free_segment(lists[key, BEG], cap, a_rec, tg)
                lists[key, BEG] = b
                lists[key, CAP] = cap2
            lists[key, HEAD] = b
            lists[key, END] = b + live
        x = np.uint64(lists[key, END])
        a_rec[x] = rec
        a_e[x] = e
        lists[key, END] = lists[key, END] + 1


@njit(cache=True, inline="always")
def pop_heads(p_tok, b, n, ks, side, lists, a_rec, tg):
    """A set with tokens ``p_tok[b:b+n]`` expired: it is the head of each of its
    lists; an emptied list keeps a smallest segment, frees a larger one."""
    for q in range(n):
        key = np.uint64(p_tok[b + q] * ks + side)     # unsigned: no negative-index checks
        h = lists[key, HEAD] + 1
        if h == lists[key, END]:
            cap = lists[key, CAP]
            if cap == MIN_CAP:
                h = lists[key, BEG]
                lists[key, END] = h
            else:
                free_segment(lists[key, BEG], cap, a_rec, tg)
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
            total += class_cap(max(MIN_CAP, 2 * (lists[key, END] - lists[key, HEAD])))
    return total


@njit(cache=True)
def compact_arena(lists, a_rec, a_e, b_rec, b_e):
    """Copy every list's live entries into the fresh arena ``b_*``, each in a
    segment of the class of twice its length (so it then slides in place as
    the window moves instead of moving again); returns the new arena top
    (the free lists are then empty)."""
    top = 0
    for key in range(lists.shape[0]):
        if lists[key, CAP] == 0:
            continue
        head = lists[key, HEAD]
        live = lists[key, END] - head
        cap = class_cap(max(MIN_CAP, 2 * live))
        for x in range(live):
            b_rec[top + x] = a_rec[head + x]
            b_e[top + x] = a_e[head + x]
        lists[key, BEG] = top
        lists[key, CAP] = cap
        lists[key, HEAD] = top
        lists[key, END] = top + live
        top += cap
    return top
