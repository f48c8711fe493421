"""SWOOP's stock is exactly the minimal stock (Section 6.1) after every chunk:
the pairs whose rank at their own end time is at most k, by brute force."""
import random

import pytest
from hypothesis import given

from streamspec.conformance.strategies.simjoin import cases
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
        assert engine.end_index() == want


def test_stock_stays_far_below_k_times_window():
    rng = random.Random(7)
    params = Params(k=3, w=50, similarity="jaccard")
    events = [Record(i, [rng.randint(0, 30) for _ in range(5)], i) for i in range(600)]
    engine = SwoopEngine(params)
    list(engine.process(events))
    assert engine.stats["max_stock"] < params.k * 50
