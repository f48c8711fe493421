"""The bench-only peers (bench/simjoin/peers.py) produce the oracle's outputs
(reference/simjoin.py) step by step on small seeded streams, ties included:
small token alphabets, equal timestamps, gaps longer than the window,
advances, empty sets, and the two-stream join."""
import random

import pytest

from streamspec.bench.simjoin.generators import tweet_like
from streamspec.bench.simjoin.peers import PEERS, ScipyBruteForce, SetSimilaritySearchPeer
from streamspec.bench.simjoin.throughput import window_slice
from streamspec.reference.simjoin import evaluate
from streamspec.spec.errors import InvalidParameter
from streamspec.spec.simjoin import SIMILARITIES, Advance, Params, Record


def stream(seed: int, n: int = 60, alphabet: int = 8, rs: bool = False) -> list:
    rng = random.Random(seed)
    events, t = [], 0
    for i in range(n):
        t += rng.choice((0, 0, 1, 1, 2, 7))          # equal times are common, some gaps
        if rng.random() < 0.1:
            events.append(Advance(t))
            continue
        size = rng.choice((0, 1, 2, 2, 3, 3, 4, 5))
        tokens = [rng.randrange(alphabet) for _ in range(size)]     # duplicates collapse
        events.append(Record(f"r{i}", tokens, t, rng.choice("RS") if rs else None))
    return events


def cases(similarities):
    for seed in range(4):
        for sim in similarities:
            for k, w in ((1, 4), (3, 6), (5, 10)):
                yield seed, sim, k, w


@pytest.mark.parametrize("seed, sim, k, w", list(cases(SIMILARITIES)))
def test_scipy_bruteforce_equals_the_oracle(seed, sim, k, w):
    params = Params(k=k, w=w, similarity=sim)
    events = stream(seed)
    want = [o for o in evaluate(events, params) if o is not None]
    assert list(ScipyBruteForce(params).process(events)) == want


@pytest.mark.parametrize("seed, sim, k, w", list(cases(("jaccard", "cosine"))))
def test_setsimilaritysearch_equals_the_oracle_ties_included(seed, sim, k, w):
    params = Params(k=k, w=w, similarity=sim)
    events = stream(seed)
    want = [o for o in evaluate(events, params) if o is not None]
    assert list(SetSimilaritySearchPeer(params).process(events)) == want


@pytest.mark.parametrize("peer", list(PEERS.values()), ids=list(PEERS))
def test_two_stream_join(peer):
    for seed in range(3):
        params = Params(k=3, w=8, similarity="jaccard", join="rs")
        events = stream(seed, rs=True)
        want = [o for o in evaluate(events, params) if o is not None]
        assert list(peer(params).process(events)) == want


@pytest.mark.parametrize("peer", list(PEERS.values()), ids=list(PEERS))
def test_warm_then_process_continues_the_oracle(peer):
    """The benchmark fills the window with ``warm``; the outputs after it are the oracle's."""
    batch = tweet_like(300, seed=5, vocab=200, mean_size=5.0, dup=0.3, recent=20)
    params = Params(k=4, w=40)
    events = [Record(int(batch.id[i]), batch.tok[batch.tok_ptr[i]:batch.tok_ptr[i + 1]].tolist(),
                     int(batch.ts[i])) for i in range(len(batch))]
    want = [o for o in evaluate(events, params)[100:] if o is not None]
    engine = peer(params)
    engine.warm(window_slice(batch, 0, 100))
    assert list(engine.process(window_slice(batch, 100, 300))) == want
    assert want


def test_setsimilaritysearch_refuses_other_similarities():
    with pytest.raises(InvalidParameter, match="setsimilaritysearch supports"):
        SetSimilaritySearchPeer(Params(k=2, w=5, similarity="dice"))
