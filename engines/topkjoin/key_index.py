"""The join keys' id index with its external ids in a numpy column (issue 15, bounded state).

Paper §5: the engine's state is the Super-MTK+N list and the replica of the
keys in the window; the index from external key to dense id is the engine's
own bookkeeping, so it must not cost more per key than the replica does.
``spec.vertices.IdIndex`` keeps dense id -> external id as a Python list (8
bytes of pointer and a 32-byte int object per 40-bit key: the largest cost
per key the AcquaTop engines had), and its compaction built a fresh list of
fresh ints while the old one was alive.  ``KeyIndex`` is the same index for
int keys with that column as an int64 array (8 bytes per key) kept at a
capacity the engine sets (``reserve``, from ``AcquaTopEngine.threshold``,
whether or not keys churn), compacted in place.  Lookups, additions, the
numbering order and pickling are ``IdIndex``'s.
"""
from __future__ import annotations

import numpy as np

from streamspec.spec.vertices import DENSITY, MIN_DIRECT, IdIndex


class KeyIndex(IdIndex):
    """``IdIndex(int)`` with the external ids in an int64 array (``externals``)."""

    def __init__(self):
        super().__init__(int)
        self._external = None                       # unused: ``_column`` holds them
        self._column = np.zeros(0, np.int64)

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state["_column"] = self._column[:self.size].copy()
        return state

    def reserve(self, size: int) -> None:
        """Room for ``size`` external ids (at least the ids held), no more."""
        size = max(int(size), self.size)
        if size != self._column.size:
            column = np.zeros(size, np.int64)
            column[:self.size] = self._column[:self.size]
            self._column = column

    def external(self, dense: int):
        return int(self._column[dense])

    def externals(self, lo: int, hi: int) -> np.ndarray:
        """External ids of dense ids ``lo..hi-1`` (a view)."""
        return self._column[lo:hi]

    def numbered(self, keys: np.ndarray) -> None:
        n, m = self.size, len(keys)
        if n + m > self._column.size:              # beyond the reserved room: doubling
            self.reserve(max(n + m, 2 * self._column.size))
        self._column[n:n + m] = keys
        self.size = n + m

    def compact(self, keep: np.ndarray) -> None:
        """``IdIndex.compact`` over the column, in place (no list, no new int objects)."""
        keep = np.asarray(keep, dtype=np.int64)
        every = self._column[:self.size]
        cap = self._direct.size
        if cap:
            table = self._direct
            if cap > 2 * max(MIN_DIRECT, DENSITY * keep.size):
                table = np.full(max(MIN_DIRECT, DENSITY * keep.size), -1, np.int64)
                cap = table.size
            else:
                table[every[(every >= 0) & (every < cap)]] = -1
            self._direct = table
        self._column[:keep.size] = every[keep]
        self.size = int(keep.size)
        ext = self._column[:self.size]
        self._keys = self._ids = None            # freed before their successors are made
        if not cap:                              # no direct table (large keys): all sorted
            self._ids = np.argsort(ext, kind="stable")
            self._keys = ext[self._ids]
            return
        inside = (ext >= 0) & (ext < cap)
        ids = np.arange(ext.size, dtype=np.int64)
        self._direct[ext[inside]] = ids[inside]
        outside = ~inside
        order = np.argsort(ext[outside], kind="stable")
        self._keys = ext[outside][order]
        self._ids = ids[outside][order]

    def held(self) -> int:
        """Entries of the index: the direct table's and the sorted array's."""
        return int(self._direct.size + self._keys.size)
