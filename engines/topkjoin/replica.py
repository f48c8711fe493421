"""What the local replica remembers of keys that left the window: the bounded retention policy.

Paper §5 (the replica the maintenance policies refresh) and
``streamspec.spec.topkjoin_remote`` ("a local replica, initialised with ``value(key, t0)`` for every key (one
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

from streamspec.engines.topkjoin import _replica_kernels as kern

RETAIN = 512


def capacity(held: int) -> int:
    """Departed keys kept by an engine holding ``held`` ids (the policy above: a constant)."""
    return RETAIN


class DepartedEntries:
    """Replica cells of departed, fetched keys, sorted by external key (int or str).

    The cells live in arrays preallocated at ``capacity`` entries (40 bytes each: key,
    value, last fetch, changes seen, departure), allocated when the store is made, so
    an engine whose ids never leave (every id in every window) holds the same bytes as
    one whose ids all leave: the footprint is the policy's, not the stream's.  ``keys``,
    ``value``... are views of the ``len(self)`` cells in use."""

    def __init__(self, capacity: int | None = None):
        self._n = 0
        self.puts = 0
        self._allocate(RETAIN if capacity is None else capacity, np.int64)

    def _allocate(self, size: int, key_dtype) -> None:
        n = min(self._n, size)
        old = getattr(self, "_cells", None)
        cells = (np.zeros(size, key_dtype), np.zeros(size, np.float64), np.zeros(size, np.int64),
                 np.zeros(size, np.int64), np.zeros(size, np.int64))
        if old is not None:
            for a, b in zip(cells, old):
                a[:n] = b[:n]
        self._cells, self._n, self._capacity = cells, n, int(size)

    @property
    def capacity(self) -> int:
        return self._capacity

    @capacity.setter
    def capacity(self, size: int) -> None:
        """The engine sets it from ``capacity(held)`` (a constant: no reallocation then)."""
        if size != self._capacity:
            self._allocate(max(int(size), 0), self._cells[0].dtype)

    def __getstate__(self) -> dict:
        """The cells in use only (Spark rewrites the engine's group state every batch)."""
        return {"n": self._n, "puts": self.puts, "capacity": self._capacity,
                "cells": tuple(c[:self._n].copy() for c in self._cells)}

    def __setstate__(self, state: dict) -> None:
        if "cells" not in state:          # pickled before the preallocated cells
            n = 0 if state["keys"] is None else int(state["keys"].size)
            cells = (state["keys"] if n else np.zeros(0, np.int64), state["value"],
                     state["last"], state["changes"], state["left"])
            state = {"n": n, "puts": state["puts"], "capacity": state["capacity"],
                     "cells": cells}
        self._n, self.puts = 0, state["puts"]
        self._allocate(state["capacity"], state["cells"][0].dtype)
        n = self._n = state["n"]
        for cell, col in zip(self._cells, state["cells"]):
            cell[:n] = col

    keys = property(lambda self: self._cells[0][:self._n] if self._n else None)
    value = property(lambda self: self._cells[1][:self._n])
    last = property(lambda self: self._cells[2][:self._n])
    changes = property(lambda self: self._cells[3][:self._n])
    left = property(lambda self: self._cells[4][:self._n])

    def __len__(self) -> int:
        return self._n

    def put(self, keys: list, value, last, changes) -> None:
        """Keep these departed keys (none of them is held already); trim to ``capacity``.

        In place in the preallocated cells: the cells to forget are dropped first, the new
        ones written after the rest, then all sorted by key one column at a time, so the
        temporaries are a few arrays of at most ``capacity`` (or ``len(keys)``) entries, not
        five concatenated copies of the store (a compaction's peak, issue 15)."""
        if not len(keys):
            return
        self.puts += 1
        new = np.asarray(keys, dtype=np.int64 if isinstance(keys[0], (int, np.integer)) else object)
        if new.dtype != self._cells[0].dtype and not self._n:
            self._allocate(self._capacity, new.dtype)        # str keys: an object key column
        value, last, changes = (np.asarray(value, np.float64), np.asarray(last, np.int64),
                                np.asarray(changes, np.int64))
        if new.dtype == self._cells[0].dtype == np.int64:     # int keys: one kernel pass
            pick = np.argsort(new)
            if new.size > self._capacity:      # all left now: the latest fetches first
                pick = pick[np.argsort(-last[pick], kind="stable")[:self._capacity]]
                pick = pick[np.argsort(new[pick])]
            self._n = kern.put(*self._cells, self._n, new, value, last, changes, pick,
                               self.puts)
            return
        n, m, cap = self._n, new.size, self._capacity
        if m > cap:
            # all left now: the latest fetches first, then the smaller keys
            by_key = np.argsort(new, kind="stable")
            pick = by_key[np.lexsort((-last[by_key],))[:cap]]
            new, value, last, changes = new[pick], value[pick], last[pick], changes[pick]
            m = cap
        over = n + m - cap
        if over > 0:
            # forget the ``over`` cells that left longest ago (then least recently fetched,
            # then the larger key: the cells are in key order and lexsort is stable)
            stay = np.ones(n, np.bool_)
            stay[np.lexsort((-self.last, -self.left))[n - over:]] = False
            for cell in self._cells:
                cell[:n - over] = cell[:n][stay]
            n -= over
        for cell, col in zip(self._cells, (new, value, last, changes, self.puts)):
            cell[n:n + m] = col
        n += m
        order = np.argsort(self._cells[0][:n], kind="stable")
        for cell in self._cells:
            cell[:n] = cell[:n][order]
        self._n = n

    def take(self, keys: list) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(found, value, last, changes)`` for ``keys`` (the found ones leave the store)."""
        n = len(keys)
        found = np.zeros(n, np.bool_)
        if not n or not self._n:
            return found, np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64)
        held = self.keys
        q = np.asarray(keys, dtype=held.dtype)
        if held.dtype == np.int64:          # int keys: one kernel pass
            out = np.empty(n, np.float64), np.empty(n, np.int64), np.empty(n, np.int64)
            self._n, h = kern.take(*self._cells, self._n, q, found, *out)
            return (found, *(a[:h] for a in out))
        at = np.minimum(np.searchsorted(held, q), held.size - 1)
        found = held[at] == q
        hit = at[found]
        out = self.value[hit], self.last[hit], self.changes[hit]
        if hit.size:
            stay = np.ones(self._n, np.bool_)
            stay[hit] = False
            m = int(stay.sum())
            for cell in self._cells:          # in place: the kept cells move down, in order
                cell[:m] = cell[:self._n][stay]
            self._n = m
        return (found, *out)
