"""Dense ids for external vertex (or token, or key) ids: int or str, remapped internally.

Engines index flat numpy arrays by dense ids ``0, 1, 2, ...`` (the BIC engine's
flat arrays, for one).  Ids added earlier get smaller dense ids, so the workload's
vertices, added first, are ``0..``; within one ``add`` call the numbering is
deterministic (increasing external value for ints, first appearance for strs).

Integer ids: small non-negative ids live in a direct-address table (one numba
pass per batch, ``streamspec.spec._vertices_kernels``: a random read per id and a sort of
the fresh ids only, so a 20M-id batch maps in tens of milliseconds); other ints
(negative, or a sparse id space the table would cover at more than ``DENSITY``
entries an id) in a numba hash table (``spec._hash_kernels``, ``SparseIds``): a
sorted array there took each call's fresh ids by ``np.insert``, a copy of all it
held (10-35 ms a one-edge call with millions held).  String ids: a dict.  The
state is numpy arrays, lists and dicts, so it pickles.

Growth (issue 28).  Growing the direct table costs a fresh table (page faults
included) plus moving the hash table's ids it now covers and rebuilding the
hash table of the rest; growing the hash table's column copies it and
rebuilds the table.  Both are O(ids held), 150-610 ms with millions held, and
the window's triggering call (one edge between two slides of inserts) must
not pay them: a call of ``m`` ids may do at most ``GROW_WORK * m`` entries of
growth work (``GROW_FREE`` in any call; consecutive calls under ``LARGE`` ids
add up, so a stream fed edge by edge still grows, amortized), ids the table
may not cover yet go to the hash table; a large call grows the table ahead of
its ids (to twice the largest once it is half used) and leaves the hash table
room for another call of its size.  Where an id lives never changes its
number: a call's fresh ids are numbered by increasing value either way.
"""
from __future__ import annotations

import numpy as np

from streamspec.spec import _hash_kernels as hash_kernels
from streamspec.spec._vertices_kernels import direct_add

# The direct table may be this many times larger than the number of ids it serves.
DENSITY = 4
MIN_DIRECT = 1 << 16
# ``add`` calls with at most this many ints take a plain-Python path
SMALL = 32
MIN_SLOTS = 64
# growth work (table entries written, hash-table ids moved or rehashed) a call of m ids may
# do: max(GROW_FREE, GROW_WORK * m); calls of fewer than LARGE ids add up until one grows
GROW_FREE = MIN_DIRECT
GROW_WORK = 1024
LARGE = 1024


def grown_direct(table: np.ndarray, max_id: int, n_ids: int) -> np.ndarray | None:
    """A larger copy of the direct-address ``table`` (-1 = absent) that covers
    ``max_id``, or ``None`` when it covers it already or would hold fewer than
    one id in ``DENSITY`` entries for ``n_ids`` ids (then ids past it go elsewhere)."""
    cap = table.size
    if max_id < cap or max_id >= max(MIN_DIRECT, DENSITY * n_ids):
        return None
    return widened(table, max(max_id + 1, 2 * cap, MIN_DIRECT))


def widened(table: np.ndarray, cap: int) -> np.ndarray:
    """The direct-address ``table`` (-1 = absent) copied into a fresh one of ``cap`` entries."""
    grown = np.full(cap, -1, dtype=table.dtype)
    grown[:table.size] = table
    return grown


def packed_direct(table: np.ndarray) -> tuple:
    """A direct-address ``table`` (-1 = absent) without its unused capacity, for pickling.

    Spark keeps engines pickled in group state (``streamspec stream``), rewritten at
    every micro-batch, and the table grows in large steps (``grown_direct``: 64K
    entries, 512 KB, for a few small ids).  It is kept as its used prefix, or as
    (slot, value) pairs when those are fewer bytes, plus its capacity;
    ``unpacked_direct`` rebuilds it entry for entry."""
    used = np.flatnonzero(table >= 0)
    prefix = int(used[-1]) + 1 if used.size else 0
    if 2 * used.size < prefix:
        return ("pairs", table.size, table.dtype.str, used, table[used])
    return ("prefix", table.size, table.dtype.str, table[:prefix].copy())


def unpacked_direct(packed: tuple) -> np.ndarray:
    """The table ``packed_direct`` packed."""
    form, cap, dtype, *parts = packed
    table = np.full(cap, -1, dtype=np.dtype(dtype))
    if form == "pairs":
        table[parts[0]] = parts[1]
    else:
        table[:parts[0].size] = parts[0]
    return table


def slots_for(capacity: int) -> np.ndarray:
    """A free hash table (``spec._hash_kernels``) for ``capacity`` ids at most half full
    (a power of two)."""
    size = max(MIN_SLOTS, 1 << (2 * max(int(capacity), 1) - 1).bit_length())
    # int32 slots halve the table; positions beyond 2**31 would need a 16 GB column
    return np.full(size, -1, np.int32 if size < (1 << 31) else np.int64)


def slot_shift(slots: np.ndarray) -> int:
    """The hash kernels' shift for a table of ``slots`` (its size's bits kept)."""
    return 64 - (slots.size.bit_length() - 1)


class SparseIds:
    """Int ids outside the direct table -> dense ids: the ids in a column (grown by
    doubling), their dense ids beside, a hash table of positions over the column.
    Pickles as the two columns; the table is rebuilt."""

    def __init__(self, keys=None, ids=None, capacity: int = 0):
        keys = np.zeros(0, np.int64) if keys is None else np.ascontiguousarray(keys, np.int64)
        ids = np.zeros(0, np.int64) if ids is None else np.ascontiguousarray(ids, np.int64)
        self.n = n = int(keys.size)
        cap = max(n, int(capacity))       # room for ``capacity`` ids before a regrowth
        self._column, self._ids = np.zeros(cap, np.int64), np.zeros(cap, np.int64)
        self._column[:n], self._ids[:n] = keys, ids
        self._slots = slots_for(cap)
        hash_kernels.rebuild(self._column, self.n, self._slots, slot_shift(self._slots))

    def __len__(self) -> int:
        return self.n

    def __getstate__(self) -> dict:
        return {"keys": self._column[:self.n].copy(), "ids": self._ids[:self.n].copy()}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["keys"], state["ids"])

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """The ids held and their dense ids (views)."""
        return self._column[:self.n], self._ids[:self.n]

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """Dense ids of ``keys`` (1-d int64), ``-1`` for ids not held."""
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        if not self.n:
            return np.full(keys.size, -1, dtype=np.int64)
        at = np.empty(keys.size, dtype=np.int64)
        hash_kernels.lookup(keys, self._column, self._slots, slot_shift(self._slots), at)
        return np.where(at >= 0, self._ids[np.maximum(at, 0)], -1)

    def capacity(self) -> int:
        """Ids it holds before its column (and table) must grow."""
        return int(self._column.size)

    def insert(self, keys: np.ndarray, ids: np.ndarray, room: int = 0) -> None:
        """Hold ``keys`` (distinct, none held yet) with dense ids ``ids``; when the column
        must grow, it grows (doubling) to leave ``room`` more ids free after them."""
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        n, m = self.n, int(keys.size)
        if n + m > self._column.size or (room and n + m + room > self._column.size):
            cap = max(n + m + room, 2 * self._column.size)
            column, dense = np.zeros(cap, np.int64), np.zeros(cap, np.int64)
            column[:n], dense[:n] = self._column[:n], self._ids[:n]
            self._column, self._ids = column, dense
            slots = slots_for(cap)
            if slots.size != self._slots.size:
                self._slots = slots
                hash_kernels.rebuild(self._column, n, self._slots, slot_shift(slots))
        at = np.empty(m, dtype=np.int64)
        fresh_slot = np.empty(m, dtype=np.int64)
        # every key absent and distinct: appended at positions n, n + 1, ... in order
        hash_kernels.add(keys, self._column, n, self._slots, slot_shift(self._slots), at,
                         fresh_slot)
        self._ids[n:n + m] = ids
        self.n = n + m


class IdIndex:
    """External id -> dense id.  ``kind`` is ``int`` or ``str``.

    Pickles with its direct table packed (``packed_direct``): a connectivity or
    topkjoin engine in Spark's group state would otherwise carry 512 KB of -1s
    for a few hundred small ids."""

    # ids added since the last growth by calls under ``LARGE`` ids (``_grow``); the class
    # default serves indexes pickled before it existed
    _run = 0

    def __init__(self, kind: type):
        if kind not in (int, str):
            raise TypeError(f"ids are int or str, not {kind!r}")
        self.kind = kind
        self.size = 0
        if kind is int:
            self._direct = np.full(0, -1, dtype=np.int64)  # external id -> dense id, or -1
            self._sparse = SparseIds()                      # ints outside the table
        else:
            self._map: dict[str, int] = {}
        self._external: list = []                           # dense id -> external id

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        if self.kind is int:
            state["_direct"] = packed_direct(self._direct)
        return state

    def __setstate__(self, state: dict) -> None:
        if state["kind"] is int:
            state = {**state, "_direct": unpacked_direct(state["_direct"])}
            if "_keys" in state:        # pickled when the ints outside were a sorted array
                state["_sparse"] = SparseIds(state.pop("_keys"), state.pop("_ids"))
        self.__dict__.update(state)

    # -- lookups ---------------------------------------------------------------
    def lookup(self, values) -> np.ndarray:
        """Dense ids of ``values``; ``-1`` for ids never seen.  Changes nothing."""
        if self.kind is str:
            get = self._map.get
            return np.fromiter((get(x, -1) for x in values), dtype=np.int64, count=len(values))
        arr = np.asarray(values, dtype=np.int64)
        out = np.full(arr.shape, -1, dtype=np.int64)
        cap = self._direct.size
        direct = (arr >= 0) & (arr < cap)
        if direct.all():
            return self._direct[arr]
        out[direct] = self._direct[arr[direct]]
        rest = ~direct
        if len(self._sparse):
            out[rest] = self._sparse.lookup(arr[rest])
        return out

    def external(self, dense: int):
        """The external id of a dense id."""
        return self._external[dense]

    # -- additions -------------------------------------------------------------
    def add(self, values) -> np.ndarray:
        """Dense ids of ``values``, numbering the unseen ones."""
        if self.kind is str:
            return self._add_str(values)
        if isinstance(values, list) and len(values) <= SMALL:
            dense = self._add_small(values)
            if dense is not None:
                return dense
        arr = np.ascontiguousarray(values, dtype=np.int64)
        m = int(arr.size)
        if m == 0:
            return np.empty(0, dtype=np.int64)
        if m >= LARGE:
            # a large call grows the table ahead of its ids, so that the small calls
            # between large ones (a window's triggering edge) find them covered
            self._run = 0
            self._grow(int(arr.max()), m, ahead=True)
        else:
            self._run += m
        # one pass over the table (the common case: every id inside it); the
        # max, for growing it, only when that fails
        dense = np.empty(m, dtype=np.int64)
        fresh = np.empty(m, dtype=np.int64)
        nf = direct_add(arr, arr[:0], self._direct, self.size, dense, fresh)
        if nf < 0 and m < LARGE and self._grow(int(arr.max()), m, ahead=False):
            nf = direct_add(arr, arr[:0], self._direct, self.size, dense, fresh)
        if nf >= 0:
            if nf:
                self.numbered(fresh[:nf])     # the table already holds their numbers
            return dense
        dense = self.lookup(arr)
        new = dense < 0
        if not new.any():
            return dense
        # increasing, table or not; the inverse numbers them without a second lookup
        keys, inverse = np.unique(arr[new], return_inverse=True)
        ids = self._number(keys)
        dense[new] = ids[inverse]
        in_table = (keys >= 0) & (keys < self._direct.size)
        self._direct[keys[in_table]] = ids[in_table]
        if not in_table.all():
            # room for another call of this size: a regrowth lands in a call as large
            self._sparse.insert(keys[~in_table], ids[~in_table], room=m)
        return dense

    def _add_small(self, values: list) -> np.ndarray | None:
        """``add`` for a few ints in the direct table, in plain Python (a
        one-edge call would spend several numpy calls per id otherwise);
        ``_add_small_outside`` when some id is outside the table."""
        table = self._direct
        cap = table.size
        out = []
        fresh = None
        for x in values:
            if not 0 <= x < cap:
                return self._add_small_outside(values)
            g = table.item(x)
            if g < 0:
                fresh = set() if fresh is None else fresh
                fresh.add(x)
            out.append(g)
        if fresh is not None:
            keys = sorted(fresh)                 # increasing, as in the general path
            table[keys] = self._number(np.asarray(keys, dtype=np.int64))
            out = [table.item(x) for x in values]
        return np.asarray(out, dtype=np.int64)

    def _add_small_outside(self, values: list) -> np.ndarray | None:
        """``add``'s general path for a few ints, some outside the direct table, with
        the same effects (the table's growth, the numbering in increasing value, the
        hash table's insert with room for another such call) in a handful of steps
        instead of some forty numpy calls.  Early in a stream whose ids span a large
        range, while the table covers only part of it, a window's triggering edge
        often brings such an id (Friendster's shape at scale 0.142: 15% of the
        windows, 0.34 ms in the general path's ``add``).  ``None``: not a list of
        Python ints (the general path then)."""
        if any(type(x) is not int for x in values):
            return None
        m = len(values)
        self._run += m
        self._grow(max(values), m, ahead=False)
        table = self._direct
        cap = table.size
        outside = [x for x in values if not 0 <= x < cap]
        known = dict.fromkeys(outside, -1)
        if outside and len(self._sparse):
            known.update(zip(outside, self._sparse.lookup(np.asarray(outside, np.int64)).tolist()))
        fresh = sorted({x for x in values
                        if (table.item(x) if 0 <= x < cap else known[x]) < 0})
        if fresh:
            first = self.size
            self.numbered(np.asarray(fresh, dtype=np.int64))
            keys, ids = [], []
            for i, x in enumerate(fresh, first):
                if 0 <= x < cap:
                    table[x] = i
                else:
                    known[x] = i
                    keys.append(x)
                    ids.append(i)
            if keys:
                self._sparse.insert(np.asarray(keys, np.int64), np.asarray(ids, np.int64), room=m)
        return np.asarray([table.item(x) if 0 <= x < cap else known[x] for x in values],
                          dtype=np.int64)

    def direct_table(self) -> np.ndarray:
        """The int direct table (external id -> dense id or -1), for fused
        boundary kernels that number fresh ids in it (then ``numbered``)."""
        return self._direct

    def numbered(self, keys: np.ndarray) -> None:
        """Record ids a kernel numbered ``size, size + 1, ...`` in ``direct_table()``."""
        self.size += keys.size
        self._external.extend(keys.tolist())

    def numbered_pair(self, n: int, a: int, b: int) -> None:
        """``numbered`` for the ``n`` (1 or 2) fresh ids ``a < b`` of a one-edge kernel."""
        self.size += n
        self._external.extend((a, b)[:n])

    def _number(self, keys: np.ndarray) -> np.ndarray:
        ids = np.arange(self.size, self.size + keys.size, dtype=np.int64)
        self.numbered(keys)
        return ids

    def _target(self, max_id: int, batch: int, ahead: bool) -> int:
        """The direct table's next capacity for a call of ``batch`` ids up to ``max_id``,
        or 0: ``grown_direct``'s (at least doubling, covering ``max_id``) when the table
        would serve one id in ``DENSITY`` entries; else, when ``max_id`` is beyond that
        bound, the bound itself once it is twice the table (a doubling: the ids past it stay
        in the hash table).  ``ahead``: also double a table ``max_id`` uses over half of."""
        cap = self._direct.size
        bound = max(MIN_DIRECT, DENSITY * (self.size + batch))
        if max_id >= bound:
            return bound if bound >= 2 * cap else 0
        if max_id >= cap:
            return max(max_id + 1, 2 * cap, MIN_DIRECT)
        if ahead and 2 * (max_id + 1) > cap and 2 * cap <= bound:
            return 2 * cap
        return 0

    def _grow(self, max_id: int, batch: int, ahead: bool) -> bool:
        """Grow the direct table (``_target``) if this call may pay for it: a fresh table
        of ``cap`` entries and a rebuilt hash table cost about ``cap + len(sparse)``
        entries, allowed up to ``GROW_WORK`` per id of the call (or of the small calls
        since the last growth) and ``GROW_FREE`` in any call."""
        cap = self._target(max_id, batch, ahead)
        if not cap:
            return False
        held = len(self._sparse)
        if cap + held > max(GROW_FREE, GROW_WORK * max(batch, self._run)):
            return False
        table = widened(self._direct, cap)
        # move the hash table's ints the larger table now covers, so each id lives in
        # one place; the rest keep room for this call's fresh ids and another call's
        keys, ids = self._sparse.pairs()
        moved = (keys >= 0) & (keys < table.size)
        if moved.any():
            table[keys[moved]] = ids[moved]
            rest = ~moved
            self._sparse = SparseIds(keys[rest], ids[rest], int(rest.sum()) + 2 * batch)
        self._direct = table
        self._run = 0
        return True

    # -- eviction ----------------------------------------------------------------
    def compact(self, keep: np.ndarray) -> None:
        """Forget every dense id not in ``keep`` (increasing dense ids); ``keep[j]`` becomes
        dense id ``j``, so earlier ids keep smaller numbers and fresh ids continue from
        ``len(keep)``.  A sliding-window engine calls it when many ids have left its window
        (topkjoin's AcquaTop): one O(size) pass, the direct table rebuilt at the capacity
        ``grown_direct`` would give the kept ids (it shrinks once far fewer ids are kept)."""
        keep = np.asarray(keep, dtype=np.int64)
        if self.kind is str:
            external = [self._external[d] for d in keep.tolist()]
            self._map = {x: j for j, x in enumerate(external)}
            self._external = external
            self.size = len(external)
            return
        every = np.asarray(self._external, dtype=np.int64)
        ext = every[keep]
        ids = np.arange(ext.size, dtype=np.int64)
        cap = self._direct.size
        bound = max(MIN_DIRECT, DENSITY * ext.size)
        if cap > 2 * bound:      # far larger than the kept ids justify: back to the bound
            cap = bound
            table = np.full(cap, -1, dtype=self._direct.dtype)
        else:                    # the same table, emptied entry by entry: O(size), not O(cap)
            table = self._direct
            table[every[(every >= 0) & (every < cap)]] = -1
        inside = (ext >= 0) & (ext < cap)
        table[ext[inside]] = ids[inside]
        self._sparse = SparseIds(ext[~inside], ids[~inside])
        self._direct = table
        self._external = ext.tolist()
        self.size = int(ext.size)

    def _add_str(self, values) -> np.ndarray:
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
