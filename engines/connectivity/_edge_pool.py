"""Growth of the array pools shared by the engines that delete expired edges one by one
(``dtree``, ``dfs``): int64 arrays grown by doubling, a free list of edge slots, and the
FIFO of (slot, time) that expires the window's edges oldest first (the FDC baselines of
the BIC paper, TR Section 7.1)."""
from __future__ import annotations

import numpy as np

MIN_CAPACITY = 64


def grow(arr: np.ndarray, cap: int, fill: int) -> np.ndarray:
    """``arr`` copied into a new int64 array of length ``cap``, the rest ``fill``."""
    out = np.full(cap, fill, dtype=np.int64)
    out[:len(arr)] = arr
    return out


def capacity(have: int, need: int) -> int:
    """The doubled capacity (at least ``MIN_CAPACITY``) that holds ``need``."""
    cap = max(have, MIN_CAPACITY)
    while cap < need:
        cap *= 2
    return cap


def grow_free_ids(free_ids: np.ndarray, n_free: int, old: int, cap: int) -> tuple:
    """The free list after the pool grew from ``old`` to ``cap`` slots: the new slots are
    pushed so that the lowest is popped first (``(free_ids, n_free)``)."""
    free = np.empty(cap, dtype=np.int64)
    free[:n_free] = free_ids[:n_free]
    new_ids = np.arange(cap - 1, old - 1, -1, dtype=np.int64)
    free[n_free:n_free + len(new_ids)] = new_ids
    return free, n_free + len(new_ids)


def reserve_fifo(slot: np.ndarray, t: np.ndarray, head: int, tail: int, n: int) -> tuple:
    """Room for ``n`` more entries in the FIFO ``slot[head:tail]``/``t[head:tail]``: the
    live part is moved to the front, and the arrays doubled while it would fill more than
    half of them (so that moves stay amortised O(1) per entry).  ``(slot, t, head, tail)``."""
    if tail + n <= len(t):
        return slot, t, head, tail
    live = tail - head
    cap = len(t)
    while live + n > cap // 2:
        cap *= 2
    new_slot = np.zeros(cap, dtype=np.int64)
    new_t = np.zeros(cap, dtype=np.int64)
    new_slot[:live] = slot[head:tail]
    new_t[:live] = t[head:tail]
    return new_slot, new_t, 0, live
