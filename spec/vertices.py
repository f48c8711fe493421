"""Dense ids for external vertex (or token) ids: int or str, remapped internally.

Ids are numbered ``0, 1, 2, ...`` in order of first appearance, so engines can
index flat numpy arrays by them (analysis note Section 8.2).  Integer ids use a
sorted-array index (vectorised lookups, no per-record Python work on large
batches); string ids use a dict.  The state is plain numpy arrays and dicts,
so it pickles.
"""
from __future__ import annotations

import numpy as np


class IdIndex:
    """External id -> dense id.  ``kind`` is ``int`` or ``str``."""

    def __init__(self, kind: type):
        if kind not in (int, str):
            raise TypeError(f"ids are int or str, not {kind!r}")
        self.kind = kind
        self.size = 0
        if kind is int:
            self._keys = np.empty(0, dtype=np.int64)   # sorted external ids
            self._ids = np.empty(0, dtype=np.int64)    # dense id of each key
        else:
            self._map: dict[str, int] = {}
        self._external: list = []                      # dense id -> external id (for reports)

    def lookup(self, values) -> np.ndarray:
        """Dense ids of ``values``; ``-1`` for ids never seen.  Changes nothing."""
        if self.kind is int:
            arr = np.asarray(values, dtype=np.int64)
            if self.size == 0 or arr.size == 0:
                return np.full(arr.shape, -1, dtype=np.int64)
            pos = np.searchsorted(self._keys, arr)
            pos_c = np.minimum(pos, self.size - 1)
            found = self._keys[pos_c] == arr
            return np.where(found, self._ids[pos_c], -1)
        get = self._map.get
        return np.fromiter((get(x, -1) for x in values), dtype=np.int64, count=len(values))

    def add(self, values) -> np.ndarray:
        """Dense ids of ``values``, numbering unseen ones in order of first appearance."""
        if self.kind is int:
            arr = np.asarray(values, dtype=np.int64)
            if arr.size == 0:
                return np.empty(0, dtype=np.int64)
            uniq, first, inverse = np.unique(arr, return_index=True, return_inverse=True)
            known = self.lookup(uniq)
            new = known < 0
            if new.any():
                # number the new ids by where they first occur, not by value
                order = np.argsort(first[new], kind="stable")
                new_keys = uniq[new][order]
                new_ids = np.arange(self.size, self.size + new_keys.size, dtype=np.int64)
                known[np.flatnonzero(new)[order]] = new_ids
                # merge into the sorted index in O(N + b): no re-sort
                by_value = np.argsort(new_keys)
                at = np.searchsorted(self._keys, new_keys[by_value])
                self._keys = np.insert(self._keys, at, new_keys[by_value])
                self._ids = np.insert(self._ids, at, new_ids[by_value])
                self._external.extend(new_keys.tolist())
                self.size += new_keys.size
            return known[inverse.reshape(-1)]
        out = np.empty(len(values), dtype=np.int64)
        m = self._map
        for i, x in enumerate(values):
            g = m.get(x)
            if g is None:
                g = m[x] = self.size
                self._external.append(x)
                self.size += 1
            out[i] = g
        return out

    def external(self, dense: int):
        """The external id of a dense id."""
        return self._external[dense]
