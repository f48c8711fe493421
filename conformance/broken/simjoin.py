"""Broken simjoin engines, each with one classic mistake.

Each is the oracle engine with one mutation, so a mismatch can only come from
that mutation.  ``tests/simjoin/test_suite_catches_broken.py`` asserts the
conformance runner finds every one.
"""
from __future__ import annotations

from streamspec.reference.simjoin import OracleEngine, valid_pairs


class ClosedWindowEnd(OracleEngine):
    """Off by one at the end: a record is still valid at ``t == ts + w``."""

    name = "broken-closed-end"
    description = "window end inclusive"

    def _alive(self, record, t):
        return t <= record[2] + self.params.wf

    def _top(self, t):
        # pairs still count at t == ts_j + w (a hair before t is the closed window)
        return tuple(q[1:] for q in valid_pairs(self._window, self.params, t - 1e-9)[:self.params.k])


class ScoreOnlyOrder(OracleEngine):
    """Ignores the tie-breaking rule: equal scores keep the newest pair first."""

    name = "broken-score-only"
    description = "ties broken by recency, not by (-e, seq_i, seq_j)"

    def _top(self, t):
        pairs = sorted(valid_pairs(self._window, self.params, t), key=lambda q: (-q[3], -q[1], -q[2]))
        return tuple(q[1:] for q in pairs[:self.params.k])


class KeepsExpiredTop(OracleEngine):
    """Only recomputes on inserts: an ``Advance`` never expires the list."""

    name = "broken-no-advance"
    description = "ignores Advance events"

    def _apply(self, prep):
        keep = prep.op == 0
        changes = super()._apply(prep)
        return [(p, c) for p, c in changes if keep[p]]
BROKEN = [ClosedWindowEnd, ScoreOnlyOrder, KeepsExpiredTop]
