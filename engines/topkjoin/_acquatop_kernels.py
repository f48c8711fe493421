"""Numba kernels of the Topk+N / AcquaTop engines' stream side (``window_aggregates``,
``acquatop``).

Plain ``@njit`` functions over numpy arrays and scalars: no validation, no
Python objects, no I/O.  Paper §4.4 (Algorithm 1: the stream's arrivals per
window), §5 (Algorithm 5); the authors' Java feeds every id of the window again
at each evaluation, in ascending time then id (its batch flow).  The
Super-MTK+N list's kernels (§4.3-4.4, Algorithms 2-4, and the changed objects'
re-insertion) are in ``_super_list_kernels``.

Stream side (per-slot partial aggregates; slots of ``g = gcd(omega, beta)``):

- ``consume``: fold items (in time order) into the open slot's dense scratch
  (``acc_*``, one cell per key: O(1) per item); when an item of a later slot
  arrives, the open slot is closed into a block: its distinct ids with their
  partial aggregate (``sum`` of x, or the ``latest`` x) and last item time,
  appended to a FIFO buffer (``close_open_slot`` closes it on demand).
- ``window_columns``: the distinct ids of one window with its streaming score
  and last time, from the blocks of its slots (in first-appearance order: the
  caller sorts by the tie rank when it needs to), through a dense scratch
  stamped with the window.
- ``drop_blocks``: forget the blocks of slots before a given one.
- ``linear_scores``: the scoring function ``F(s, v)`` over columns.

Eviction (``acquatop._compact``): ``mark_live``, the ids still held; ``renumber``,
dense ids after a compaction (blocks, open slot and list).
"""
from __future__ import annotations

import numpy as np
from streamspec.spec._numba import njit


# -- stream side ----------------------------------------------------------------------
@njit(cache=True)
def _close_slot(acc_val, acc_ts, acc_mark, touched, buf_id, buf_val, buf_ts, blk_slot, blk_start,
                meta):
    """Write the open slot's aggregates as a block (if it has any)."""
    used, nblk, nt = meta[0], meta[1], meta[3]
    if nt == 0:
        return
    blk_slot[nblk] = meta[2]
    blk_start[nblk] = used
    for q in range(nt):
        d = touched[q]
        buf_id[used] = d
        buf_val[used] = acc_val[d]
        buf_ts[used] = acc_ts[d]
        used += 1
        acc_mark[d] = 0
    meta[0] = used
    meta[1] = nblk + 1
    meta[3] = 0


@njit(cache=True)
def consume(ids, xs, ts, t0, g, latest, acc_val, acc_ts, acc_mark, touched,
            buf_id, buf_val, buf_ts, blk_slot, blk_start, meta):
    """Fold items (in time order) into the open slot; a later slot closes it into a block.

    ``meta = [buffer rows, blocks, open slot, ids touched in the open slot]``.
    """
    for i in range(ts.size):
        s = (ts[i] - t0) // g
        if s != meta[2]:
            _close_slot(acc_val, acc_ts, acc_mark, touched, buf_id, buf_val, buf_ts, blk_slot,
                        blk_start, meta)
            meta[2] = s
        d = ids[i]
        if acc_mark[d] == 0:
            acc_mark[d] = 1
            touched[meta[3]] = d
            meta[3] += 1
            acc_val[d] = xs[i]
        elif latest:
            acc_val[d] = xs[i]
        else:
            acc_val[d] += xs[i]
        acc_ts[d] = ts[i]


@njit(cache=True)
def close_open_slot(acc_val, acc_ts, acc_mark, touched, buf_id, buf_val, buf_ts, blk_slot,
                    blk_start, meta):
    _close_slot(acc_val, acc_ts, acc_mark, touched, buf_id, buf_val, buf_ts, blk_slot, blk_start,
                meta)


@njit(cache=True)
def window_columns(first, stop, latest, stamp, buf_id, buf_val, buf_ts, blk_slot, blk_start, meta,
                   w_val, w_ts, w_mark, out_ids):
    """Ids of the window of slots ``[first, stop)`` into ``out_ids`` (in first-appearance
    order; ``SlotAggregates.window`` sorts them by tie when asked); returns count.

    ``w_val[d]``/``w_ts[d]`` hold the id's streaming score and last time, ``w_mark[d] == stamp``.
    """
    used = meta[0]
    nblk = meta[1]
    n = 0
    for b in range(nblk):
        s = blk_slot[b]
        if s < first or s >= stop:
            continue
        end = blk_start[b + 1] if b + 1 < nblk else used
        for q in range(blk_start[b], end):
            d = buf_id[q]
            if w_mark[d] != stamp:
                w_mark[d] = stamp
                out_ids[n] = d
                n += 1
                w_val[d] = buf_val[q]
            elif latest:
                w_val[d] = buf_val[q]
            else:
                w_val[d] += buf_val[q]
            w_ts[d] = buf_ts[q]     # blocks are in time order: the last one wins
    return n


@njit(cache=True)
def drop_blocks(first, buf_id, buf_val, buf_ts, blk_slot, blk_start, meta):
    """Forget the blocks of slots ``< first`` (they are the oldest: shift the rest down)."""
    used = meta[0]
    nblk = meta[1]
    b = 0
    while b < nblk and blk_slot[b] < first:
        b += 1
    if b == 0:
        return
    start = blk_start[b] if b < nblk else used
    for q in range(start, used):
        buf_id[q - start] = buf_id[q]
        buf_val[q - start] = buf_val[q]
        buf_ts[q - start] = buf_ts[q]
    for k in range(b, nblk):
        blk_slot[k - b] = blk_slot[k]
        blk_start[k - b] = blk_start[k] - start
    meta[0] = used - start
    meta[1] = nblk - b


@njit(cache=True)
def linear_scores(s, v, ws, wv, slo, shi, vlo, vhi, out):
    """``F(s, v)`` (the linear score), in the same operation order as ``streamspec.spec.topkjoin.Scoring``."""
    for i in range(s.size):
        out[i] = ws * ((s[i] - slo) / (shi - slo)) + wv * ((v[i] - vlo) / (vhi - vlo))


# -- eviction (ids that left the window; ``acquatop._compact``) ------------------------
@njit(cache=True)
def mark_live(n, buf_id, used, touched, nt, l_dense, m):
    """Dense ids ``< n`` still held: in a block, in the open slot or in the list."""
    live = np.zeros(n, np.bool_)
    for q in range(used):
        live[buf_id[q]] = True
    for q in range(nt):
        live[touched[q]] = True
    for q in range(m):
        live[l_dense[q]] = True
    return live


@njit(cache=True)
def renumber(a, n, remap):
    """``a[:n] = remap[a[:n]]`` in place (dense ids after a compaction)."""
    for q in range(n):
        a[q] = remap[a[q]]
