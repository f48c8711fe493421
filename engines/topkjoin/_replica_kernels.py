"""Numba kernel of ``replica.DepartedEntries.put``: the retention policy over int keys in place.

Plain ``@njit`` functions over numpy arrays (no validation, no Python
objects).  Paper §5 (the replica the policies refresh); issue 15: a compaction
happens about once per slide when ids churn, and the store's put was a
dozen numpy calls over its 512 cells each time (a tenth of an AcquaTop
engine's CPU time at 600 items per slide); this is the same policy in one
pass: keep the latest fetches of a batch too large for the store, forget the
cells that left longest ago, merge the new cells into the key order.
"""
from __future__ import annotations

import numpy as np

from streamspec.spec._numba import njit


@njit(cache=True)
def put(keys, value, last, changes, left, n, new, new_value, new_last, new_changes, pick, stamp):
    """Store the departed cells ``new*[pick]`` (``pick``: the ones kept, in key order; keys
    distinct, none held) in the cells ``[:n]`` (sorted by key, capacity ``keys.size``),
    departure ``stamp``; returns the new count.

    The caller picks (``DepartedEntries.put``, numpy's sorts: several times faster than
    numba's): more new keys than the capacity, the latest fetches (ties: the smaller key).
    Here the ``n + m - capacity`` held cells that left longest ago are forgotten (ties: the
    least recently fetched, then the larger key), and the new cells merged in key order."""
    cap = keys.size
    m = pick.size
    over = n + m - cap
    if over >= n:
        n = 0
    elif over > 0:
        # forget order: left ascending, then last ascending, then key descending
        stay = np.ones(n, np.bool_)
        if over <= 64:         # a few (a compaction's departures): one scan each
            for _ in range(over):
                worst = -1
                for i in range(n):
                    if stay[i] and (worst < 0 or left[i] < left[worst] or (
                            left[i] == left[worst] and last[i] <= last[worst])):
                        worst = i      # ``<=``: of equal ones the later, larger key
                stay[worst] = False
        else:                  # stable sorts from the last criterion to the first
            order = np.arange(n - 1, -1, -1)
            order = order[np.argsort(last[order], kind="mergesort")]
            order = order[np.argsort(left[order], kind="mergesort")]
            for r in range(over):
                stay[order[r]] = False
        q = 0
        for i in range(n):
            if stay[i]:
                keys[q] = keys[i]
                value[q] = value[i]
                last[q] = last[i]
                changes[q] = changes[i]
                left[q] = left[i]
                q += 1
        n = q
    # merge the new cells (in key order) into the held ones, from the back, in place
    i, j, k = n - 1, m - 1, n + m - 1
    while j >= 0:
        p = pick[j]
        if i >= 0 and keys[i] > new[p]:
            keys[k] = keys[i]
            value[k] = value[i]
            last[k] = last[i]
            changes[k] = changes[i]
            left[k] = left[i]
            i -= 1
        else:
            keys[k] = new[p]
            value[k] = new_value[p]
            last[k] = new_last[p]
            changes[k] = new_changes[p]
            left[k] = stamp
            j -= 1
        k -= 1
    return n + m


@njit(cache=True)
def take(keys, value, last, changes, left, n, q, found, out_val, out_last, out_changes):
    """``DepartedEntries.take`` over int keys: for each of ``q`` held in the cells ``[:n]``
    (sorted by key), ``found`` and its cells into ``out_*`` (in the order of ``q``); the
    found cells leave the store, the others move down in order.  Returns ``(n, found)``."""
    gone = np.zeros(n, np.bool_)
    h = 0
    for i in range(q.size):
        lo, hi = 0, n
        while lo < hi:                       # first cell with key >= q[i]
            mid = (lo + hi) >> 1
            if keys[mid] < q[i]:
                lo = mid + 1
            else:
                hi = mid
        if lo < n and keys[lo] == q[i]:
            found[i] = True
            out_val[h] = value[lo]
            out_last[h] = last[lo]
            out_changes[h] = changes[lo]
            h += 1
            gone[lo] = True
    if h:
        k = 0
        for i in range(n):
            if not gone[i]:
                keys[k] = keys[i]
                value[k] = value[i]
                last[k] = last[i]
                changes[k] = changes[i]
                left[k] = left[i]
                k += 1
        n = k
    return n, h
