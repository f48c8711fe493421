"""Per-slot partial aggregates of the stream: the streaming scores of every window.

Per-slide partial counts of the ids in the window, for ``sum``; the authors'
Java also aggregates per slide and feeds the whole window again at each
evaluation.

The stream is cut into slots of ``g = gcd(omega, beta)`` aligned at ``t0``;
window ``i`` is slots ``i*m .. i*m + omega/g - 1`` (``m = beta/g``).  Items
are folded as they are ingested (never kept raw): the open slot aggregates
in a dense per-key scratch, and each closed slot is one block: its distinct
ids with their partial aggregate, the sum of x or the x of the latest item,
and the time of the id's last item.  Only the blocks of windows not yet
evaluated are kept (``drop_before_window``), so memory is O(distinct ids per
slot x slots per window) plus dense per-key scratch (one cell per key, like
the replica): independent of the stream rate (a batch that runs ahead of the
evaluations holds the blocks of the windows it spans until they are
evaluated).  The same partials are kept under ``latest``
because a re-arrival with a smaller x can bring back an id that MinTopK
discarded for good (its discards are permanent), so exactness with static
remote data needs them there too.

The folding and the window merge are numba kernels (``_acquatop_kernels``):
O(items) per slide and O(block rows) per window, no per-window Python loop
over ids.
"""
from __future__ import annotations

import math

import numpy as np

from streamspec.engines.topkjoin import _acquatop_kernels as kern


# the dense per-key state; beyond ``keys`` they hold only the fill ``grow_keys`` gives them
PER_KEY = ("acc_val", "acc_ts", "acc_mark", "touched", "tie")
# the window merge's output, valid from one ``window`` call to the end of that evaluation
SCRATCH = ("w_val", "w_ts", "w_mark", "w_ids")


class SlotAggregates:
    """Partial aggregates per slot of length ``g`` (see the module docstring)."""

    def __init__(self, t0: int, omega: int, beta: int, how: str):
        self.t0, self.how = int(t0), how
        self.latest = how == "latest"
        self.g = math.gcd(omega, beta)
        self.per_window = omega // self.g
        self.per_slide = beta // self.g
        self.beta, self.omega = beta, omega
        self.keys = 0
        # dense per-key scratch: slot fold (acc_*) and window merge (w_*)
        self.acc_val = np.zeros(0, np.float64)
        self.acc_ts = np.zeros(0, np.int64)
        self.acc_mark = np.zeros(0, np.int64)
        self.touched = np.zeros(0, np.int64)
        self.w_val = np.zeros(0, np.float64)
        self.w_ts = np.zeros(0, np.int64)
        self.w_mark = np.zeros(0, np.int64)
        self.w_ids = np.zeros(0, np.int64)
        self.tie = np.zeros(0, np.int64)           # order of the window's ids (default: dense)
        self.stamp = 0
        # the blocks: FIFO rows (buf_*) and, per block, its slot and first row
        self.buf_id = np.zeros(64, np.int64)
        self.buf_val = np.zeros(64, np.float64)
        self.buf_ts = np.zeros(64, np.int64)
        self.blk_slot = np.zeros(self.per_window + self.per_slide + 2, np.int64)
        self.blk_start = np.zeros(self.per_window + self.per_slide + 2, np.int64)
        # buffer rows, blocks, open slot, ids touched in the open slot
        self.meta = np.array([0, 0, -1, 0], np.int64)

    # -- growth ----------------------------------------------------------------------------
    def grow_keys(self, n: int) -> None:
        """Make room for dense ids ``< n`` (amortised doubling)."""
        if n <= self.acc_val.size:
            self.keys = max(self.keys, n)
            return
        size = max(n, 2 * self.acc_val.size, 64)
        old = self.acc_val.size

        def grown(a, fill=0):
            out = np.full(size, fill, a.dtype)
            out[:a.size] = a
            return out
        self.acc_val, self.acc_ts, self.acc_mark = grown(self.acc_val), grown(self.acc_ts), grown(self.acc_mark)
        self.touched = grown(self.touched)
        self.w_val, self.w_ts, self.w_mark = grown(self.w_val), grown(self.w_ts), grown(self.w_mark, -1)
        self.w_ids = grown(self.w_ids)
        self.tie = grown(self.tie)
        self.tie[old:] = np.arange(old, size)
        self.keys = n

    def live(self, l_dense: np.ndarray, m: int) -> np.ndarray:
        """Mask of the dense ids ``< keys`` still held: in a block, in the open slot or in
        ``l_dense[:m]`` (the list); the others have left every window."""
        return kern.mark_live(self.keys, self.buf_id, int(self.meta[0]), self.touched,
                              int(self.meta[3]), l_dense, m)

    def renumber(self, keep: np.ndarray, remap: np.ndarray) -> None:
        """Keep the per-key cells of ``keep`` only, in place (dense id ``keep[j]`` becomes
        ``j``; ``remap`` maps old to new); block rows and open slot renumbered.  The capacity
        stays (the engine sizes it: ``reserve``)."""
        n = keep.size
        for name in ("acc_val", "acc_ts", "acc_mark", "tie"):
            a = getattr(self, name)
            a[:n] = a[keep]
        self.acc_mark[n:] = 0
        self.tie[n:] = np.arange(n, self.tie.size)
        kern.renumber(self.touched, int(self.meta[3]), remap)
        kern.renumber(self.buf_id, int(self.meta[0]), remap)
        self.w_mark[:] = -1   # the window merge's scratch: rewritten by the next ``window``
        self.keys = int(n)

    def reserve(self, size: int) -> None:
        """Per-key arrays at exactly ``size`` cells (at least ``keys``), the cells kept."""
        self._reallocate(max(int(size), self.keys))
        self.tie[self.keys:] = np.arange(self.keys, self.tie.size)

    def _reallocate(self, size: int) -> None:
        """Per-key arrays at ``size`` cells, their first ``size`` cells kept."""
        for name in PER_KEY + SCRATCH:
            a = getattr(self, name)
            b = np.full(size, -1 if name == "w_mark" else 0, a.dtype)
            k = min(size, a.size)
            b[:k] = a[:k]
            setattr(self, name, b)

    def _room(self, rows: int, blocks: int) -> None:
        need = int(self.meta[0]) + rows
        if need > self.buf_id.size:
            size = max(need, 2 * self.buf_id.size)
            for name in ("buf_id", "buf_val", "buf_ts"):
                a = getattr(self, name)
                b = np.zeros(size, a.dtype)
                b[:a.size] = a
                setattr(self, name, b)
        need = int(self.meta[1]) + blocks + 1
        if need > self.blk_slot.size:
            size = max(need, 2 * self.blk_slot.size)
            for name in ("blk_slot", "blk_start"):
                a = getattr(self, name)
                b = np.zeros(size, a.dtype)
                b[:a.size] = a
                setattr(self, name, b)

    # -- the stream ------------------------------------------------------------------------
    def ingest(self, ids: np.ndarray, x: np.ndarray, ts: np.ndarray) -> None:
        """Fold a batch of dense ids (``0..``; ``ts`` non-decreasing, after every item before)."""
        if ts.size == 0:
            return
        ids = np.asarray(ids, np.int64)
        ts = np.asarray(ts, np.int64)
        self.grow_keys(int(ids.max()) + 1)
        # every slot the batch closes (and the open one) may add a block of up to ``keys`` rows
        slots = (int(ts[-1]) - int(ts[0])) // self.g + 2
        self._room(min(ts.size + int(self.meta[3]), slots * self.keys), slots)
        kern.consume(ids, np.asarray(x, np.float64), ts, self.t0, self.g, self.latest,
                     self.acc_val, self.acc_ts, self.acc_mark, self.touched, self.buf_id,
                     self.buf_val, self.buf_ts, self.blk_slot, self.blk_start, self.meta)

    def window(self, i: int, ordered: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(ids, streaming scores, last ts)`` of window ``i``, ids ordered by ``tie`` (or in
        the blocks' order when not ``ordered``: the AT engines' arrivals rank them by score and
        tie themselves, so only the WSJ candidates need the sort).

        ``w_val[d]``/``w_ts[d]`` hold the same for every id of the window until the next call.
        """
        first = i * self.per_slide
        if self.meta[3] and self.meta[2] < first + self.per_window:
            # the open slot belongs to this window: no later item can reach it any more
            self._room(int(self.meta[3]), 1)
            kern.close_open_slot(self.acc_val, self.acc_ts, self.acc_mark, self.touched,
                                 self.buf_id, self.buf_val, self.buf_ts, self.blk_slot,
                                 self.blk_start, self.meta)
        self.stamp += 1
        n = kern.window_columns(first, first + self.per_window, self.latest, self.stamp,
                                self.buf_id, self.buf_val, self.buf_ts, self.blk_slot,
                                self.blk_start, self.meta, self.w_val, self.w_ts, self.w_mark,
                                self.w_ids)
        ids = self.w_ids[:n].copy()
        if ordered:        # numpy's argsort: several times faster than numba's here
            ids = ids[np.argsort(self.tie[ids])]
        return ids, self.w_val[ids], self.w_ts[ids]

    def in_window(self, d: int) -> bool:
        """Was ``d`` in the window of the last ``window`` call?"""
        return d < self.w_mark.size and self.w_mark[d] == self.stamp

    def drop_before_window(self, i: int) -> None:
        """Forget the blocks of slots that no window ``>= i`` uses."""
        kern.drop_blocks(i * self.per_slide, self.buf_id, self.buf_val, self.buf_ts,
                         self.blk_slot, self.blk_start, self.meta)

    # -- pickling (Spark keeps engines in group state between micro-batches) ---------------
    def __getstate__(self):
        """Only the rows in use: the block buffers keep the capacity of the largest batch
        ever ingested (a burst of 100K items leaves ~50K-row buffers holding ~100 rows) and
        the per-key arrays up to twice the keys; ``_room``/``grow_keys`` regrow them.  The
        window merge's arrays (``SCRATCH``) are not kept at all."""
        state = dict(self.__dict__)
        rows, blocks = int(self.meta[0]), int(self.meta[1])
        for name in ("buf_id", "buf_val", "buf_ts"):
            state[name] = state[name][:max(rows, 64)]
        for name in ("blk_slot", "blk_start"):
            state[name] = state[name][:max(blocks + 1, self.per_window + self.per_slide + 2)]
        for name in PER_KEY:
            state[name] = state[name][:self.keys]
        for name in SCRATCH:        # rewritten by the next ``window`` call before any read
            del state[name]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        size = self.acc_val.size
        self.w_val = np.zeros(size, np.float64)
        self.w_ts = np.zeros(size, np.int64)
        self.w_mark = np.full(size, -1, np.int64)     # below every stamp to come
        self.w_ids = np.zeros(size, np.int64)

    @property
    def size(self) -> int:
        """Rows held: the blocks plus the open slot (the memory the engine keeps for the stream)."""
        return int(self.meta[0] + self.meta[3])
