"""The spec boundary's check of an engine's ``Changes`` columns on long columns
(spec/simjoin.py checks 64 items or more with numpy, fewer in Python): a
position out of order, a decreasing ``ptr`` or a negative seq far into the
columns is a ContractViolation naming the rule, as on short columns."""
from __future__ import annotations

import math

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


class Lists(SimJoinEngine):
    """Answers a batch with the given Changes columns (lists of up to 3 pairs)."""

    name = "lists"
    description = "test engine"
    columns = None

    def _apply(self, prepared):
        return Changes(*self.columns)


def test_rows_repeated_across_lists_are_built_once_and_equal():
    """The base class builds each distinct row of a batch once (``_simjoin_rows``): a row
    is shared only with a row equal in all four columns, bit for bit (-0.0 and 0.0 apart,
    a pair's score differing between lists kept apart); the outputs are those of one tuple
    per row."""
    ends = [5.0, -0.0, 0.0, 7.0]
    pos = np.array([0, 1, 2, 3, 4, 5])
    ptr = np.array([0, 3, 6, 8, 11, 11, 12])
    #               list 0    list 1 (shift) list 2  list 3 (new at 0) list 4 empty, list 5
    si = np.array([3, 2, 1,   2, 1, 0,       2, 1,   3, 2, 1,                       1])
    sj = np.array([0, 0, 0,   0, 0, 0,       0, 0,   0, 0, 0,                       0])
    sc = np.array([.9, .8, .7, .8, .7, .6,   .8, .5, .9, .8, .5,                    .5])
    en = np.array([ends[0], ends[1], ends[2], ends[1], ends[2], ends[3], ends[1], ends[2],
                   ends[0], ends[2], ends[2], ends[2]])
    engine = Lists(Params(k=3, w=10))
    engine.columns = (pos, ptr, si, sj, sc, en)
    out = list(engine.process([Record(f"r{n}", [1], 0) for n in range(6)]))
    ids = [f"r{n}" for n in range(6)]
    want = [TopK(0.0, tuple((ids[si[r]], ids[sj[r]], float(sc[r]), float(en[r]))
                            for r in range(ptr[x], ptr[x + 1]))) for x in range(6)]
    assert out == want
    signs = [[math.copysign(1, p[3]) for p in t.pairs] for t in out]
    assert signs == [[math.copysign(1, en[r]) for r in range(ptr[x], ptr[x + 1])] for x in range(6)]


def test_rows_of_int_columns_keep_their_type():
    engine = Lists(Params(k=2, w=10))
    engine.columns = (np.array([0, 1]), np.array([0, 2, 4]), np.array([1, 2, 1, 2], np.int32),
                      np.zeros(4, np.uint64), np.array([1, 1, 1, 1], np.int32), np.array([3, 3, 3, 4]))
    out = list(engine.process([Record(n, [1], 0) for n in range(3)]))
    assert out == [TopK(0.0, ((1, 0, 1, 3), (2, 0, 1, 3))), TopK(0.0, ((1, 0, 1, 3), (2, 0, 1, 4)))]
    assert type(out[0].pairs[0][2]) is int
