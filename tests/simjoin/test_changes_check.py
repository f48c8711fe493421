"""The spec boundary's check of an engine's ``Changes`` columns on long columns
(spec/simjoin.py checks 64 items or more with numpy, fewer in Python): a
position out of order, a decreasing ``ptr`` or a negative seq far into the
columns is a ContractViolation naming the rule, as on short columns."""
from __future__ import annotations

import numpy as np
import pytest

from streamspec.spec.errors import ContractViolation
from streamspec.spec.simjoin import Changes, Params, Record, SimJoinEngine, TopK

N = 100


class Scripted(SimJoinEngine):
    """Answers a batch of N records with one change per record: pair (p, 0)."""

    name = "scripted"
    description = "test engine"
    spoil = None

    def _apply(self, prepared):
        pos = np.arange(N, dtype=np.int64)
        ptr = np.arange(N + 1, dtype=np.int64)
        si, sj = pos.copy(), np.zeros(N, np.int64)
        if self.spoil == "pos":
            pos[70], pos[71] = pos[71], pos[70]
        elif self.spoil == "ptr":
            ptr[80] = 82
        elif self.spoil == "seq":
            sj[90] = -1
        return Changes(pos, ptr, si, sj, np.ones(N), np.full(N, 10.0))


@pytest.mark.parametrize("spoil, says", [
    ("pos", "positions increasing"), ("ptr", "ptr non-decreasing"), ("seq", "seqs of known records")])
def test_long_changes_columns_are_checked(spoil, says):
    engine = Scripted(Params(k=1, w=10))
    engine.spoil = spoil
    with pytest.raises(ContractViolation, match=says):
        list(engine.process([Record(n, [1], 0) for n in range(N)]))


def test_long_changes_columns_that_are_right_pass():
    out = list(Scripted(Params(k=1, w=10)).process([Record(n, [1], 0) for n in range(N)]))
    assert out == [TopK(0.0, ((n, 0, 1.0, 10.0),)) for n in range(N)]
