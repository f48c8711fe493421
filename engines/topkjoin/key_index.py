"""The join keys' id index: external ids in a numpy column, a numba hash table over it (issue 15).

Paper §5: the engine's state is the Super-MTK+N list and the replica of the
keys in the window; the index from external key to dense id is the engine's
own bookkeeping, so it must cost neither more memory per key than the replica
does nor more time per batch than the batch's items.  ``spec.vertices.IdIndex``
keeps dense id -> external id as a Python list (a pointer and a 32-byte int
object per 40-bit key) and looks large keys up in a sorted array: a batch of
fresh ids cost a ``np.unique``, two ``searchsorted`` and two ``np.insert``
copies of the sorted arrays, about a third of the AcquaTop engines' CPU time
at 600 items per slide with fresh ids (``bench/topkjoin/state.py``).
``KeyIndex`` is the same index for int keys: the external ids in an int64
column (8 bytes per key) kept at a capacity the engine sets (``reserve``, from
``AcquaTopEngine.threshold``, whether or not keys churn), and an
open-addressing table of dense ids over that column (``spec._hash_kernels``:
one pass per batch, O(1) per id; at most half full, 4 bytes a slot), both
compacted in place.  Lookups, the numbering (a batch's fresh ids in increasing
key order, after the ids already held), compaction and pickling are
``IdIndex``'s.
"""
from __future__ import annotations

import numpy as np

from streamspec.spec import _hash_kernels as kern
from streamspec.spec.vertices import IdIndex, slot_shift, slots_for


class KeyIndex(IdIndex):
    """``IdIndex(int)`` with the external ids in an int64 array (``externals``), hashed."""

    def __init__(self):
        self.kind = int
        self.size = 0
        self._external = None                       # unused: ``_column`` holds them
        self._column = np.zeros(0, np.int64)
        self._slots = slots_for(0)

    def __getstate__(self) -> dict:
        """The ids held only; the table is rebuilt from them."""
        return {"kind": int, "size": self.size, "_column": self._column[:self.size].copy()}

    def __setstate__(self, state: dict) -> None:
        # also reads the sorted-array index pickled before the table (its column is the same)
        self.kind, self.size, self._external = int, int(state["size"]), None
        self._column = np.asarray(state["_column"], np.int64)[:self.size].copy()
        self._slots = slots_for(self._column.size)
        self._rehash()

    def _rehash(self) -> None:
        kern.rebuild(self._column, self.size, self._slots, slot_shift(self._slots))

    def reserve(self, size: int) -> None:
        """Room for ``size`` external ids (at least the ids held), no more; the table at the
        size that keeps it at most half full with them."""
        size = max(int(size), self.size)
        if size != self._column.size:
            column = np.zeros(size, np.int64)
            column[:self.size] = self._column[:self.size]
            self._column = column
            slots = slots_for(size)
            if slots.size != self._slots.size:
                self._slots = slots
                self._rehash()

    # -- lookups ------------------------------------------------------------------------
    def lookup(self, values) -> np.ndarray:
        keys = np.ascontiguousarray(values, dtype=np.int64)
        out = np.empty(keys.shape, np.int64)
        kern.lookup(keys.ravel(), self._column, self._slots, slot_shift(self._slots), out.ravel())
        return out

    def external(self, dense: int):
        return int(self._column[dense])

    def externals(self, lo: int, hi: int) -> np.ndarray:
        """External ids of dense ids ``lo..hi-1`` (a view)."""
        return self._column[lo:hi]

    def direct_table(self) -> np.ndarray:
        raise NotImplementedError("KeyIndex has no direct table: use add")

    # -- additions ----------------------------------------------------------------------
    def add(self, values) -> np.ndarray:
        """Dense ids of ``values``, numbering the unseen ones (one kernel pass)."""
        keys = np.ascontiguousarray(values, dtype=np.int64)
        if keys.size == 0:
            return np.empty(0, dtype=np.int64)
        n, m = self.size, keys.size
        if n + m > self._column.size:              # beyond the reserved room: doubling
            self.reserve(max(n + m, 2 * self._column.size))
        dense = np.empty(m, np.int64)
        fresh_slot = np.empty(m, np.int64)
        nf = kern.add(keys, self._column, n, self._slots, slot_shift(self._slots), dense,
                      fresh_slot)
        if nf > 1:          # by increasing key, as ``IdIndex`` numbers a batch's fresh ids
            order = np.argsort(self._column[n:n + nf])
            kern.renumber_fresh(order, self._column, n, self._slots, fresh_slot, dense)
        self.size = n + nf
        return dense

    def numbered(self, keys: np.ndarray) -> None:
        raise NotImplementedError("KeyIndex numbers ids in add")

    # -- eviction -----------------------------------------------------------------------
    def compact(self, keep: np.ndarray) -> None:
        """``IdIndex.compact``: ``keep[j]`` (increasing dense ids) becomes dense id ``j``, the
        others are forgotten; the column compacted in place, the table rebuilt."""
        keep = np.asarray(keep, dtype=np.int64)
        self._column[:keep.size] = self._column[keep]
        self.size = int(keep.size)
        self._rehash()

    def compacted(self, size: int) -> None:
        """The caller compacted the column in place (``_eviction_kernels.evict``: the ids
        kept are its first ``size``, in their order): the table rebuilt for them."""
        self.size = int(size)
        self._rehash()

    def held(self) -> int:
        """Entries of the index: the table's slots."""
        return int(self._slots.size)
