"""Issue 15: the AcquaTop engines' state does not grow with the number of distinct ids seen.

Sizes are asserted, not timings: after a stream where every item has a fresh
id, the id index, the per-key arrays and the replica hold at most a constant
times the ids live in the window (plus K+N per active window and the bounded
departed store); evicting ids changes no answer (the same engine with
eviction off, and the oracle where ``exact_when`` makes the engine exact); pickling
after evictions round-trips.
"""
from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings

from streamspec.conformance import topkjoin as conf
from streamspec.conformance.strategies.topkjoin import cases, random_case
from streamspec.engines.topkjoin import acquatop, replica
from streamspec.engines.topkjoin.acquatop import AcquaTopEngine
from streamspec.engines.topkjoin.replica import DepartedEntries
from streamspec.reference.topkjoin import evaluate
from streamspec.spec.registry import Registry
from streamspec.spec.topkjoin import Item, ItemBatch, Params
from streamspec.spec.topkjoin_remote import CallableDataset, TimelineDataset
from streamspec.spec.vertices import MIN_DIRECT, IdIndex

ENGINES = [cls for cls in Registry.engines("topkjoin") if issubclass(cls, AcquaTopEngine)]
OMEGA, BETA, RATE = 1000, 600, 200          # 200 items per window, one item every 5 ms


def changing(key, tau):
    """Every key's remote value changes every 300 ms (module level: picklable)."""
    return float((int(key) * 7 + int(tau) // 300) % 11)


def params(remote=None, budget=3) -> Params:
    return Params(omega=OMEGA, beta=BETA, k=3, n=4, budget=budget, t0=0,
                  remote=remote or CallableDataset(changing), stream_range=(0.0, 40.0),
                  remote_range=(0.0, 10.0))


def fresh_stream(items: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    ids = (rng.permutation(items).astype(np.int64) * 2654435761) % (1 << 40) + (1 << 20)
    x = rng.integers(1, 10, items).astype(np.float64)
    ts = np.arange(items, dtype=np.int64) * (OMEGA // RATE)
    return ids, x, ts


def recurring_items(count: int, domain: int, seed: int) -> list[Item]:
    """Ids that come in bursts and stay away for several windows, then come back."""
    rng = np.random.default_rng(seed)
    out, t = [], 0
    for _ in range(count):
        group = int(rng.integers(0, domain // 40))
        key = group * 40 + int(rng.integers(0, 40))        # one group of 40 ids at a time
        out.append(Item(key, float(rng.integers(1, 4)), t))
        t += int(rng.integers(0, 9))
    return out


def feed(engine, ids, x, ts, batch: int, check=None):
    out = []
    for a in range(0, ids.size, batch):
        out.extend(engine.process(ItemBatch(ids[a:a + batch], x[a:a + batch], ts[a:a + batch])))
        if check:
            check(engine)
    return out + engine.flush()


@pytest.mark.parametrize("acqua", ENGINES, ids=lambda c: c.name)
def test_fresh_ids_keep_the_state_bounded(acqua):
    ids, x, ts = fresh_stream(20_000)
    batch = RATE * BETA // OMEGA           # one slide's items
    p = params()
    span = (p.omega - 1) // p.beta + 1
    live = RATE * (OMEGA + BETA) // OMEGA + batch   # items of the windows not yet evaluated
    bound = 2 * (live + (p.k + p.n) * span) + acquatop.COMPACT_SLACK
    most = {}

    def check(e):
        s = e.state_sizes()
        for name, value in s.items():
            most[name] = max(most.get(name, 0), value)
        assert s["ids"] == s["external"] == s["replica"] <= bound
        assert s["per_key_capacity"] <= 2 * bound
        # the hash table: at most half full at the reserved capacity, at least half empty
        assert s["id_index"] <= max(64, 4 * s["external_capacity"])
        assert s["departed"] <= replica.capacity(bound)
        assert s["list"] <= (p.k + p.n) * span
        assert s["block_rows"] <= live

    feed(acqua(p), ids, x, ts, batch, check)
    assert most["ids"] < ids.size // 20          # 20 000 ids seen, a window's worth held


@pytest.mark.parametrize("acqua", ENGINES, ids=lambda c: c.name)
def test_eviction_changes_no_answer(acqua, monkeypatch):
    items = recurring_items(6000, 400, seed=3)
    monkeypatch.setattr(acquatop, "EVICT", False)               # never evicts
    kept = acqua(params())
    want = list(kept.process(items)) + kept.flush()
    monkeypatch.setattr(acquatop, "EVICT", True)
    monkeypatch.setattr(acquatop, "LOAD_SLACK", False)
    monkeypatch.setattr(acquatop, "COMPACT_SLACK", 8)
    evicting = acqua(params())
    got = []
    for a in range(0, len(items), 97):
        got.extend(evicting.process(items[a:a + 97]))
    got.extend(evicting.flush())
    assert got == want
    assert kept.keys.size == len({it.id for it in items})
    assert evicting.keys.size < kept.keys.size      # ids were evicted (and came back)
    if acqua.name in ("mintopk", "wst"):          # never fetch: nothing to remember
        assert len(evicting.departed) == 0
    else:
        assert 0 < len(evicting.departed) <= replica.RETAIN


@pytest.mark.parametrize("acqua", ENGINES, ids=lambda c: c.name)
def test_evicted_ids_come_back_exact_on_static_data(acqua, monkeypatch):
    monkeypatch.setattr(acquatop, "LOAD_SLACK", False)
    monkeypatch.setattr(acquatop, "COMPACT_SLACK", 4)
    monkeypatch.setattr(replica, "capacity", lambda held: 2)   # departed cells forgotten at once
    remote = TimelineDataset({k: [(-1, float(k % 5))] for k in range(0, 400, 3)})
    p = params(remote, budget=2)
    items = recurring_items(3000, 400, seed=5)
    engine = acqua(p)
    got = []
    for a in range(0, len(items), 50):
        got.extend(engine.process(items[a:a + 50]))
    got.extend(engine.flush())
    assert got == evaluate(items, p)
    assert engine.keys.size < 400


@pytest.mark.parametrize("acqua", ENGINES, ids=lambda c: c.name)
def test_pickling_after_evictions_round_trips(acqua, monkeypatch):
    monkeypatch.setattr(acquatop, "LOAD_SLACK", False)
    monkeypatch.setattr(acquatop, "COMPACT_SLACK", 8)
    items = recurring_items(4000, 400, seed=7)
    whole = acqua(params())
    want = list(whole.process(items)) + whole.flush()
    engine = acqua(params())
    got = []
    for a in range(0, 2500, 100):
        got.extend(engine.process(items[a:a + 100]))
    assert engine.keys.size < len({it.id for it in items[:2500]})
    engine = pickle.loads(pickle.dumps(engine))
    got.extend(engine.process(items[2500:]))
    got.extend(engine.flush())
    assert got == want


@settings(max_examples=60, deadline=None)
@given(case=cases(max_items=40))
def test_conformance_with_eviction_at_every_batch(case):
    """The conformance check (oracle where ``exact_when`` makes the engine exact, invariants always)
    with ids evicted as soon as they leave and departed cells forgotten at once."""
    saved = acquatop.COMPACT_SLACK, acquatop.LOAD_SLACK, replica.capacity
    acquatop.COMPACT_SLACK, acquatop.LOAD_SLACK, replica.capacity = 1, False, (lambda held: 0)
    try:
        for engine_cls in ENGINES:
            assert conf.check(engine_cls, case) is None, engine_cls.name
    finally:
        acquatop.COMPACT_SLACK, acquatop.LOAD_SLACK, replica.capacity = saved


@pytest.mark.parametrize("seed", range(6))
def test_random_cases_equal_without_eviction(seed, monkeypatch):
    case = random_case(seed, max_items=300)
    want = {cls.name: conf.run_engine(cls, case) for cls in ENGINES}
    monkeypatch.setattr(acquatop, "LOAD_SLACK", False)
    monkeypatch.setattr(acquatop, "COMPACT_SLACK", 1)
    for cls in ENGINES:
        assert conf.run_engine(cls, case) == want[cls.name], cls.name


def test_departed_entries_forget_the_earliest_departures_first():
    store = DepartedEntries(capacity=3)
    store.put([30, 10, 20], np.array([3.0, 1.0, 2.0]), np.array([5, 9, 7]), np.array([1, 0, 2]))
    store.put([40, 5], np.array([4.0, 0.5]), np.array([9, 1]), np.array([0, 0]))
    # 40 and 5 left last; of the three before, 10 was fetched last (t=9)
    assert store.keys.tolist() == [5, 10, 40]
    found, value, last, changes = store.take([40, 30, 10])
    assert found.tolist() == [True, False, True]
    assert value.tolist() == [4.0, 1.0] and last.tolist() == [9, 9] and changes.tolist() == [0, 0]
    assert store.keys.tolist() == [5]


def test_departed_entries_with_str_keys():
    store = DepartedEntries(capacity=2)
    store.put(["b", "a"], np.array([2.0, 1.0]), np.array([3, 3]), np.array([1, 1]))
    found, value, _, _ = store.take(["a", "c"])
    assert found.tolist() == [True, False] and value.tolist() == [1.0]
    assert len(store) == 1


@pytest.mark.parametrize("capacity", [8, 200])
@pytest.mark.parametrize("seed", range(6))
def test_departed_entries_keep_what_the_policy_says_in_place(seed, capacity):
    """``put`` in place (no concatenated copies) keeps exactly the policy's cells: the
    ``capacity`` best by (departed later, fetched later, smaller key), in key order, also
    when one put brings more keys than the capacity; the preallocated cells stay the same
    arrays (issue 15: a compaction's temporaries)."""
    rng = np.random.default_rng(seed)
    store = DepartedEntries(capacity=capacity)
    cells = [id(c) for c in store._cells]
    held: dict[int, tuple] = {}          # key -> (value, last, changes, put number)
    for put in range(1, 12):
        # a few keys (the kernel's scan), or more than 64 to forget (its sorts)
        m = int(rng.integers(1, 1.6 * capacity))
        keys = [int(k) for k in rng.choice(np.setdiff1d(np.arange(5 * capacity), list(held)),
                                           m, replace=False)]
        vals, last, changes = rng.random(m), rng.integers(0, 5, m), rng.integers(0, 3, m)
        store.put(keys, vals, last, changes)
        held.update({k: (v, lr, c, put) for k, v, lr, c in zip(keys, vals, last, changes)})
        best = sorted(held, key=lambda k: (-held[k][3], -held[k][1], k))[:capacity]
        held = {k: held[k] for k in best}
        assert store.keys.tolist() == sorted(held)
        assert store.value.tolist() == [held[k][0] for k in sorted(held)]
        assert store.last.tolist() == [held[k][1] for k in sorted(held)]
        assert store.changes.tolist() == [held[k][2] for k in sorted(held)]
        assert store.left.tolist() == [held[k][3] for k in sorted(held)]
        assert [id(c) for c in store._cells] == cells
        if put % 4 == 0:                  # some come back
            back = sorted(held)[::3]
            found, *_ = store.take(back + [10 ** 9])       # and a key never put
            assert found.tolist() == [True] * len(back) + [False]
            held = {k: v for k, v in held.items() if k not in back}


@pytest.mark.parametrize("values", [[5, 70_000, 3, 1 << 50, 12, 9], ["e", "a", "zz", "b", "q", "c"]])
def test_id_index_compaction(values):
    index = IdIndex(type(values[0]))
    dense = index.add(values)
    keep = np.array([1, 3, 4], np.int64)
    kept = [index.external(d) for d in keep.tolist()]
    gone = [v for v, d in zip(values, dense.tolist()) if d not in keep]
    index.compact(keep)
    assert index.size == 3
    assert [index.external(j) for j in range(3)] == kept    # same order, renumbered 0..
    assert index.lookup(kept).tolist() == [0, 1, 2]
    assert index.lookup(gone).tolist() == [-1] * 3
    again = index.add(gone[:2])
    assert again.tolist() == [3, 4]                        # numbering goes on from the kept ids
    twin = pickle.loads(pickle.dumps(index))
    assert twin.lookup(kept + gone[:2]).tolist() == index.lookup(kept + gone[:2]).tolist()


def test_id_index_compaction_shrinks_the_direct_table():
    index = IdIndex(int)
    index.add(np.arange(1_000_000, dtype=np.int64))
    assert index.direct_table().size >= 1_000_000
    index.compact(np.array([7, 999_999], np.int64))
    assert index.direct_table().size == MIN_DIRECT
    assert index.lookup([7, 999_999, 8]).tolist() == [0, 1, -1]
