"""SWOOP's state housekeeping (engines/simjoin/swoop.py) against the oracle:
the record and token rings (expired sets' slots reused, relaid out when a ring
grows), the index arena's free segments reused and the arena grown, and
pickling mid-stream.  ``TinyArena`` leaves no slack in the arena, so it grows
many times (at normal settings the first growth comes after ~1e6 index
entries, far beyond the conformance streams)."""
import pickle
import random

import numpy as np
import pytest
from hypothesis import given, settings

from streamspec.conformance.strategies.simjoin import cases
from streamspec.engines.simjoin import _swoop_kernels as K
from streamspec.engines.simjoin.swoop import SwoopEngine
from streamspec.reference.simjoin import evaluate, minimal_stock
from streamspec.spec.simjoin import SIDES, Advance, Params, Record


class TinyArena(SwoopEngine):
    arena_slack = 1


def emitted(events, params):
    return [x for x in evaluate(events, params) if x is not None]


def feed(engine, events, chunk):
    out = []
    for a in range(0, len(events), chunk):
        out.extend(engine.process(events[a:a + chunk]))
    return out


def long_stream(seed: int, n: int, alphabet: int = 30, rs: bool = False) -> list:
    """Skewed small-alphabet sets, several per time unit, occasional advances and gaps."""
    rng = random.Random(seed)
    events, t = [], 0
    for i in range(n):
        t += rng.choice((0, 0, 1, 1, 2, 9))
        if rng.random() < 0.05:
            events.append(Advance(t))
            continue
        size = rng.choice((0, 1, 3, 4, 5, 6, 8))
        tokens = [int(alphabet * rng.random() ** 2) for _ in range(size)]
        events.append(Record(i, tokens, t, rng.choice("RS") if rs else None))
    return events


@settings(deadline=None)
@given(case=cases(max_events=40, lateness=("error",)))   # the model below has no late events
def test_tiny_arena_matches_the_oracle(case):
    engine = TinyArena(case.params)
    got, pos, window, seq = [], 0, [], 0
    for size in case.chunks:
        chunk = case.events[pos:pos + size]
        pos += size
        got.extend(engine.process(chunk))
        for ev in chunk:
            now = float(ev.t if isinstance(ev, Advance) else ev.ts)
            if not isinstance(ev, Advance):
                window.append((seq, frozenset(ev.tokens), now, SIDES.get(ev.side, 0)))
                seq += 1
        assert engine.stock() == minimal_stock(window, case.params, now)
    assert got == emitted(case.events, case.params)


@pytest.mark.parametrize("join, similarity", [("self", "jaccard"), ("rs", "cosine"), ("self", "hamming")])
def test_long_stream_with_many_compactions_matches_the_oracle(join, similarity):
    events = long_stream(seed=3, n=1500, rs=join == "rs")
    params = Params(k=3, w=12, similarity=similarity, join=join)
    engine = TinyArena(params)
    assert feed(engine, events, 97) == emitted(events, params)
    m = engine.meta
    assert m[K.N_REC] > 4 * engine.rec.shape[0]     # the record ring went round: expired slots reused
    assert m[K.N_POST] > 4 * engine.p_tok.size      # and the token ring
    assert (m[K.A_FREE_LISTS:] >= 0).any()          # freed index segments are waiting for reuse


def test_pickled_engine_continues_like_the_original():
    events = long_stream(seed=5, n=800)
    params = Params(k=4, w=10, similarity="dice")
    straight = feed(SwoopEngine(params), events, 800)
    engine = SwoopEngine(params)
    first = feed(engine, events[:411], 100)
    revived = pickle.loads(pickle.dumps(engine))
    assert first + feed(revived, events[411:], 100) == straight


def test_a_state_pickled_with_the_four_column_stock_loads_and_continues():
    # the stock before dominance counts: S without its count column, E holding the
    # whole pairs in end time order (e, score, -seq_i, -seq_j), the cleanup scratch ints
    events = long_stream(seed=6, n=800)
    params = Params(k=4, w=10, similarity="dice")
    straight = feed(SwoopEngine(params), events, 800)
    engine = SwoopEngine(params)
    first = feed(engine, events[:433], 100)
    state = engine.__getstate__()
    sc, e, i, j, counts = state["s"]
    assert counts.any()                      # a stock where the counts are not all zero
    order = np.lexsort((-j, -i, sc, e))
    old = dict(state, s=[sc, e, i, j], e=[a[order].copy() for a in (sc, e, i, j)],
               s_dead=np.zeros(len(sc), np.int64))
    revived = SwoopEngine.__new__(SwoopEngine)
    revived.__setstate__(old)
    assert revived.dominance() == engine.dominance()
    assert revived.end_index() == engine.end_index()
    assert first + feed(revived, events[433:], 100) == straight


def _tokens_as(events, kind: str) -> list:
    """``events`` with their int tokens as strs, or as ints beyond the direct table (hashed)."""
    def convert(x):
        return f"w{x}" if kind == "str" else x * 10**12 + 7 if kind == "hashed" else x
    return [ev if isinstance(ev, Advance) else Record(ev.id, [convert(x) for x in ev.tokens],
                                                      ev.ts, ev.side) for ev in events]


@pytest.mark.parametrize("cls, join, kind", [
    (SwoopEngine, "self", "int"), (SwoopEngine, "rs", "str"), (SwoopEngine, "self", "hashed"),
    (TinyArena, "rs", "int")])
def test_pickled_after_every_batch_the_engine_is_small_and_matches_the_oracle(cls, join, kind):
    # what `streamspec stream` does to the engine in Spark's group state: pickle after every
    # micro-batch, go on from the copy.  Live, the engine holds a 12 MB arena (1M spare
    # entries) and a 512 KB direct token table; its pickle keeps the window's share of both.
    events = _tokens_as(long_stream(seed=7, n=900, rs=join == "rs"), kind)
    params = Params(k=3, w=10, similarity="cosine", join=join)
    engine, got, sizes = cls(params), [], []
    for a in range(0, len(events), 60):
        got.extend(engine.process(events[a:a + 60]))
        blob = pickle.dumps(engine, protocol=pickle.HIGHEST_PROTOCOL)
        sizes.append(len(blob))
        engine = pickle.loads(blob)
    assert got == emitted(events, params)
    assert max(sizes) < 64_000, sizes
    live = cls(params)                  # never pickled: the same stream in one go
    assert list(live.process(events)) == got
    assert len(pickle.dumps(live)) < 64_000
    assert live.a_rec.nbytes + live.a_e.nbytes > 10**7 or cls is TinyArena
