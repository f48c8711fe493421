"""Per-slot partial aggregates of the stream: the streaming scores of every window.

notes/topkjoin.md ("Memory": "for ``sum``, per-slide partial counts of the
ids in the window"); analysis note §1.2 (the Java aggregates per slide and
feeds the whole window again at each evaluation, §3.9).

The stream is cut into slots of ``g = gcd(omega, beta)`` aligned at ``t0``;
window ``i`` is slots ``i*m .. i*m + omega/g - 1``.  For each slot we keep, per
id, the partial aggregate (sum of x, or the x of the latest item) and the time
of the id's last item.  Only the slots of windows not yet evaluated are kept,
so memory is O(distinct ids per window), independent of the stream rate.  The
same partials are kept under ``latest`` because a re-arrival with a smaller x
can bring back an id that MinTopK discarded for good (its discards are
permanent), so exactness with static remote data needs them there too.

Everything is vectorised numpy: ingesting a batch is one stable sort per slot.
"""
from __future__ import annotations

import numpy as np

_EMPTY = (np.empty(0, np.int64), np.empty(0, np.float64), np.empty(0, np.int64))


def combine(ids: np.ndarray, vals: np.ndarray, ts: np.ndarray, how: str):
    """Aggregate rows given in stream order per id: ``(ids, values, last ts)``, sorted by id.

    ``sum`` adds the values; ``latest`` keeps the value of the id's last row.
    """
    if ids.size == 0:
        return _EMPTY
    order = np.argsort(ids, kind="stable")  # stable: rows of one id stay in stream order
    sid = ids[order]
    starts = np.flatnonzero(np.concatenate(([True], sid[1:] != sid[:-1])))
    ends = np.concatenate((starts[1:], [sid.size])) - 1
    uid = sid[starts]
    last_ts = ts[order][ends]
    if how == "sum":
        agg = np.add.reduceat(vals[order], starts)
    else:
        agg = vals[order][ends]
    return uid, agg, last_ts


class SlotAggregates:
    """Partial aggregates per slot of length ``g`` (see the module docstring)."""

    def __init__(self, t0: int, omega: int, beta: int, how: str):
        import math
        self.t0, self.how = int(t0), how
        self.g = math.gcd(omega, beta)
        self.per_window = omega // self.g
        self.per_slide = beta // self.g
        self.slots: dict[int, tuple] = {}

    def ingest(self, ids: np.ndarray, x: np.ndarray, ts: np.ndarray) -> None:
        """Add a batch (``ts`` non-decreasing) to its slots."""
        if ts.size == 0:
            return
        slot = (ts - self.t0) // self.g
        cut = np.flatnonzero(slot[1:] != slot[:-1]) + 1
        bounds = np.concatenate(([0], cut, [ts.size]))
        for a, b in zip(bounds[:-1], bounds[1:]):
            s = int(slot[a])
            part = (ids[a:b], x[a:b], ts[a:b])
            old = self.slots.get(s)
            if old is not None:  # earlier rows first, so ``latest`` lets the new ones win
                part = tuple(np.concatenate((o, p)) for o, p in zip(old, part))
            self.slots[s] = combine(*part, self.how)

    def window(self, i: int):
        """``(ids, streaming scores, last ts)`` of window ``i``, sorted by id."""
        first = i * self.per_slide
        parts = [self.slots[s] for s in range(first, first + self.per_window) if s in self.slots]
        if not parts:
            return _EMPTY
        if len(parts) == 1:
            return parts[0]
        return combine(*(np.concatenate(col) for col in zip(*parts)), self.how)

    def drop_before_window(self, i: int) -> None:
        """Forget the slots that no window ``>= i`` uses."""
        first = i * self.per_slide
        for s in [s for s in self.slots if s < first]:
            del self.slots[s]

    @property
    def size(self) -> int:
        """Rows held (the memory the engine keeps for the stream)."""
        return sum(p[0].size for p in self.slots.values())
