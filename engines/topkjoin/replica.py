"""What the local replica remembers of keys that left the window: the bounded retention policy.

Paper §5 (the replica the maintenance policies refresh) and notes/topkjoin.md
("a local replica, initialised with ``value(key, t0)`` for every key (one
bulk load ... not counted)").  The engine holds replica cells for the keys
live in its state only (``acquatop``: ids in a block of a window not yet
evaluated, in the open slot or in the list); when a key leaves, its cell is
evicted.  A key that was never fetched loses nothing: its cell is the bulk
load's ``value(key, t0)``, reloaded (uncounted) if the key comes back.  A key
that was fetched carries what the policies learnt (the value fetched, when,
how many fetches found a change: LRU and WBM rank by them), so its cell is
kept here, in ``DepartedEntries``, and given back when the key re-appears.

The policy: at most ``RETAIN`` (512) departed keys are kept, 32 bytes each,
more than the 400 users of the paper's data and the 283 of its real stream,
so the committed experiments never lose one; beyond that the keys that left
longest ago are forgotten first (among keys that left together: the least
recently fetched, then the larger key).  A forgotten key that comes back is
bulk-loaded again, as if first seen: the bulk load's value, never
refreshed, no change seen.  So answers equal those of an engine that
forgets nothing as long as no fetched key is forgotten.
"""
from __future__ import annotations

import numpy as np

RETAIN = 512


def capacity(held: int) -> int:
    """Departed keys kept by an engine holding ``held`` ids (the policy above: a constant)."""
    return RETAIN


class DepartedEntries:
    """Replica cells of departed, fetched keys, sorted by external key (int or str)."""

    def __init__(self, capacity: int | None = None):
        self.capacity = RETAIN if capacity is None else capacity
        self.keys: np.ndarray | None = None      # int64, or object for str keys
        self.value = np.zeros(0, np.float64)
        self.last = np.zeros(0, np.int64)
        self.changes = np.zeros(0, np.int64)
        self.left = np.zeros(0, np.int64)        # when each left (a counter of ``put`` calls)
        self.puts = 0

    def __len__(self) -> int:
        return 0 if self.keys is None else int(self.keys.size)

    def put(self, keys: list, value, last, changes) -> None:
        """Keep these departed keys (none of them is held already); trim to ``capacity``."""
        if not len(keys):
            return
        self.puts += 1
        new = np.asarray(keys, dtype=np.int64 if isinstance(keys[0], (int, np.integer)) else object)
        ks = new if self.keys is None else np.concatenate((self.keys, new))
        value = np.concatenate((self.value, value))
        last = np.concatenate((self.last, last))
        changes = np.concatenate((self.changes, changes))
        left = np.concatenate((self.left, np.full(new.size, self.puts, np.int64)))
        order = np.argsort(ks, kind="stable")
        if order.size > self.capacity:
            # latest departures first, then latest fetches, then smaller keys (``order``)
            rank = np.lexsort((-last[order], -left[order]))
            by_age = order[rank][:self.capacity]
            order = by_age[np.argsort(ks[by_age], kind="stable")]
        self.keys, self.value = ks[order], value[order]
        self.last, self.changes, self.left = last[order], changes[order], left[order]

    def take(self, keys: list) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(found, value, last, changes)`` for ``keys`` (the found ones leave the store)."""
        n = len(keys)
        found = np.zeros(n, np.bool_)
        if not n or not len(self):
            return found, np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64)
        q = np.asarray(keys, dtype=self.keys.dtype)
        at = np.minimum(np.searchsorted(self.keys, q), self.keys.size - 1)
        found = self.keys[at] == q
        hit = at[found]
        out = self.value[hit], self.last[hit], self.changes[hit]
        if hit.size:
            self.keys = np.delete(self.keys, hit)
            self.value = np.delete(self.value, hit)
            self.last = np.delete(self.last, hit)
            self.changes = np.delete(self.changes, hit)
            self.left = np.delete(self.left, hit)
        return (found, *out)
