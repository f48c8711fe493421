"""SWOOP's stock is exactly the minimal stock (Section 6.1) after every chunk:
the pairs whose rank at their own end time is at most k, by brute force."""
import random

import pytest
from hypothesis import given

from streamspec.conformance.strategies.simjoin import cases
from streamspec.engines.simjoin import _swoop_kernels as K
from streamspec.engines.simjoin.swoop import SCaseEngine, SwoopEngine, SwoopNoIncrement, SwoopNoIndex
from streamspec.reference.simjoin import minimal_stock
from streamspec.spec.simjoin import SIDES, Advance, Params, Record


@pytest.mark.parametrize("swoop_cls", [SwoopEngine, SwoopNoIndex, SwoopNoIncrement, SCaseEngine],
                         ids=lambda c: c.name)
@given(case=cases(lateness=("error",)))   # the brute-force model has no late events
def test_stock_is_the_minimal_stock(swoop_cls, case):
    engine = swoop_cls(case.params)
    window, pos, now, seq = [], 0, None, 0
    for size in case.chunks:
        chunk = case.events[pos:pos + size]
        pos += size
        list(engine.process(chunk))
        for ev in chunk:
            now = float(ev.t if isinstance(ev, Advance) else ev.ts)
            if not isinstance(ev, Advance):
                window.append((seq, frozenset(ev.tokens), now, SIDES.get(ev.side, 0)))
                seq += 1
        want = minimal_stock(window, case.params, now)
        assert engine.stock() == want
        assert_end_index_and_counts(engine)


def assert_end_index_and_counts(engine):
    """E holds S's end times in ascending order, and each pair's count is the number of
    pairs before it in S that end no earlier (its dominators)."""
    ns = int(engine.meta[K.NS])
    ends = engine.s[1][:ns].tolist()
    assert engine.end_index() == sorted(ends)
    assert engine.dominance() == [sum(ends[y] >= ends[x] for y in range(x)) for x in range(ns)]


def test_stock_stays_far_below_k_times_window():
    rng = random.Random(7)
    params = Params(k=3, w=50, similarity="jaccard")
    events = [Record(i, [rng.randint(0, 30) for _ in range(5)], i) for i in range(600)]
    engine = SwoopEngine(params)
    list(engine.process(events))
    assert engine.stats["max_stock"] < params.k * 50


def test_stock_and_counts_with_many_candidates_a_set():
    """k = 20 over a small alphabet: most sets bring more than four candidates, so the
    stock insert counts dominators four candidates at a time (and one at a time for the rest)."""
    rng = random.Random(11)
    params = Params(k=20, w=30, similarity="jaccard")
    events = [Record(i, [rng.randint(0, 12) for _ in range(4)], i // 2) for i in range(240)]
    engine = SwoopEngine(params)
    window = []
    for a in range(0, len(events), 40):
        chunk = events[a:a + 40]
        list(engine.process(chunk))
        window += [(ev.id, frozenset(ev.tokens), float(ev.ts), 0) for ev in chunk]
        assert engine.stock() == minimal_stock(window, params, float(chunk[-1].ts))
        assert_end_index_and_counts(engine)
    assert engine.stats["candidates"] > 5 * len(events)
