"""The bench's ``java_compat`` switch (the authors' Java behaviour, ``bench/topkjoin/java_compat.py``).

The slide-presence rewrite must give, under ``sum``, the Java's mention value
(the number of the window's slides in which the id is mentioned) with the same
joining ids and last-mention times; the exact engines must still equal the
oracle on it; the Java's WBM and AT-TSM diagnostics must follow the rules its
docstring states.
"""
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamspec.bench.topkjoin.java_compat import (JavaAtTsmEngine, JavaWsjWbmEngine, java_change_rates,
                                        java_wbm, slide_presence)
from streamspec.engines.topkjoin import policies
from streamspec.reference.topkjoin import aggregate, evaluate
from streamspec.spec.registry import Registry
from streamspec.spec.topkjoin import ItemBatch, Params
from streamspec.spec.topkjoin_remote import TimelineDataset
from streamspec.spec.windows import SlidingWindows


def _stream(draw_ids, draw_gaps, t0):
    ts = t0 + np.cumsum(np.asarray(draw_gaps, np.int64))
    return np.asarray(draw_ids, np.int64), ts.astype(np.int64)


@settings(deadline=None, max_examples=150)
@given(st.integers(1, 12), st.integers(1, 12), st.integers(-5, 5),
       st.lists(st.tuples(st.integers(0, 4), st.integers(0, 6)), max_size=60))
def test_slide_presence_sum_is_the_number_of_slides_with_a_mention(omega, beta, t0, pairs):
    ids, ts = _stream([p[0] for p in pairs], [p[1] for p in pairs], t0)
    new_ids, x, new_ts = slide_presence(ids, ts, t0, omega, beta)
    assert np.all(np.diff(new_ts) >= 0)
    assert set(np.unique(x).tolist()) <= {0.0, 1.0}
    w = SlidingWindows(omega, beta, t0)
    for i in range(w.started_by(int(ts[-1])) if ts.size else 0):
        lo, hi = w.start(i), w.end(i)
        inside = (ts >= lo) & (ts < hi)
        expected = {}
        last = {}
        for u, t in zip(ids[inside].tolist(), ts[inside].tolist()):
            expected.setdefault(u, set()).add((t - t0) // beta)
            last[u] = t
        got_in = (new_ts >= lo) & (new_ts < hi)
        rows = list(zip(new_ids[got_in].tolist(), x[got_in].tolist(), new_ts[got_in].tolist()))
        assert aggregate(rows, "sum") == {u: float(len(s)) for u, s in expected.items()}
        assert {u: t for u, _, t in rows} == last      # the last item is the last mention


def test_slide_presence_is_one_or_two_in_the_papers_windows():
    rng = np.random.default_rng(3)
    ts = np.sort(rng.integers(0, 20 * 60_000, size=2000))
    ids = rng.integers(0, 40, size=ts.size)
    new_ids, x, new_ts = slide_presence(ids, ts, 0, 100_000, 60_000)
    w = SlidingWindows(100_000, 60_000, 0)
    values = set()
    for i in range(15):
        m = (new_ts >= w.start(i)) & (new_ts < w.end(i))
        values |= set(aggregate(zip(new_ids[m].tolist(), x[m].tolist(), new_ts[m].tolist()),
                                "sum").values())
    assert values == {1.0, 2.0}


@pytest.mark.parametrize("engine", ["mintopk", "at-tsm", "at-bsm", "wsj-wbm", "wst"])
def test_exact_engines_equal_the_oracle_on_the_rewritten_stream(engine):
    """Static remote data: every engine is exact (``exact_when``: static), also on the Java's values."""
    rng = np.random.default_rng(11)
    ts = np.sort(rng.integers(0, 3000, size=400)).astype(np.int64)
    ids = rng.integers(0, 25, size=ts.size).astype(np.int64)
    ids, x, ts = slide_presence(ids, ts, 0, 100, 60)
    remote = TimelineDataset({k: [(-1, float(rng.integers(0, 9)))] for k in range(25)})
    params = Params(omega=100, beta=60, k=3, n=2, budget=2, t0=0, remote=remote,
                    stream_range=(1.0, 2.0), remote_range=(0.0, 8.0))
    e = Registry.get("topkjoin", engine)(params)
    got = list(e.process(ItemBatch(ids, x, ts))) + e.flush()
    want = evaluate(list(zip(ids.tolist(), x.tolist(), ts.tolist())), params)
    assert [(g.window, g.ids, g.scores) for g in got] == [(o.window, o.ids, o.scores) for o in want]


def test_java_change_rates_count_close_pairs_with_different_values():
    remote = TimelineDataset({
        "a": [(0, 1.0), (60_000, 2.0), (120_000, 2.0), (250_000, 3.0)],  # 1 close change / 4 rows
        "b": [(0, 5.0), (60_000, 5.0)],                                    # never changes: absent
        "c": [(0, 1.0), (30_000, 2.0), (60_000, 3.0)]})                    # 3 close pairs / 3 rows
    assert java_change_rates(remote) == {"a": 0.25, "c": 1.0}


def _java_engine(rates, last_refresh):
    return SimpleNamespace(params=SimpleNamespace(omega=100_000, beta=60_000),
                           last_refresh=np.asarray(last_refresh, np.int64),
                           java_rate=lambda d: rates.get(int(d), 0.0), fillers=set())


def test_java_wbm_ranks_stale_by_the_javas_lifetime_then_fills():
    # intervals: key 0 two minutes, key 1 four, key 3 one; key 2 never changes (no candidate)
    engine = _java_engine({0: 0.5, 1: 0.25, 3: 1.0}, [0, 0, 0, 0])
    tau = 200_000
    # L = trunc((ts + 100 - tau) / beta): key 0 mentioned at tau - 1000 -> 0; key 3 at 110 000 -> -1
    last_ts = np.array([tau - 1000, tau - 1000, tau - 1000, 110_000])
    ctx = policies.Context(2, tau - 100_000, tau, 2, 5, last_ts)
    assert java_wbm(engine, [0, 1, 2, 3], ctx) == [0, 3]     # both stale; L 0 before L -1
    assert engine.fillers == set()
    ctx3 = policies.Context(2, tau - 100_000, tau, 3, 5, last_ts)
    assert java_wbm(engine, [0, 1, 2, 3], ctx3) == [0, 3, 1]  # key 1 is fresh: a filler
    assert engine.fillers == {1}
    # equal L: the stalest first-best-before wins (key 3: 60 000 < key 0: 120 000)
    last_ts[3] = tau - 1000
    assert java_wbm(engine, [0, 1, 2, 3], ctx) == [3, 0]


def _params(remote, budget=2):
    return Params(omega=100, beta=60, k=2, n=1, budget=budget, t0=0, remote=remote,
                  stream_range=(1.0, 2.0), remote_range=(0.0, 9.0))


def test_java_wbm_filler_refreshes_do_not_reach_the_arrivals():
    remote = TimelineDataset({1: [(-1, 1.0), (50, 7.0)], 2: [(-1, 1.0), (50, 8.0)]})
    e = JavaWsjWbmEngine(_params(remote))
    assert list(e.process(ItemBatch(np.array([1, 2]), np.ones(2), np.array([10, 20])))) == []
    d1, d2 = e.keys.lookup(np.array([1, 2])).tolist()

    def elect(engine, cands, ctx):   # key 2 elected as a filler, key 1 as possibly stale
        engine.fillers = {d2}
        return [d1, d2]
    e.policy = elect
    e.fetcher.begin(100)
    changed = e._refresh(0, 0, 100, np.array([d1, d2]), e.aggs.w_ts)
    assert sorted(changed) == sorted([d1, d2])
    assert e.replica[d1] == 7.0 and e.replica[d2] == 8.0             # the operator's copy
    assert e.arrival_replica[d1] == 7.0 and e.arrival_replica[d2] == 1.0  # MinTopK's copy


def test_java_at_tsm_refreshes_gamma_minus_one():
    rng = np.random.default_rng(5)
    ts = np.sort(rng.integers(0, 2000, size=300)).astype(np.int64)
    ids = rng.integers(0, 20, size=ts.size).astype(np.int64)
    remote = TimelineDataset({k: [(t, float(rng.integers(0, 9))) for t in range(-1, 2100, 150)]
                              for k in range(20)})
    for budget in (1, 3):
        e = JavaAtTsmEngine(_params(remote, budget))
        list(e.process(ItemBatch(ids, np.ones(ids.size), ts))) + e.flush()
        assert max(e.fetcher.per_evaluation) <= budget - 1
    wst = Registry.get("topkjoin", "wst")(_params(remote, 1))
    base = list(wst.process(ItemBatch(ids, np.ones(ids.size), ts))) + wst.flush()
    e1 = JavaAtTsmEngine(_params(remote, 1))
    one = list(e1.process(ItemBatch(ids, np.ones(ids.size), ts))) + e1.flush()
    assert len(base) > 10
    assert [(o.ids, o.scores) for o in one] == [(b.ids, b.scores) for b in base]   # gamma 1 = WST


def _snapshots(users: int = 80, seed: int = 3) -> dict:
    """Follower snapshots shaped like the shared ones (every user snapshotted at
    the same instants, about t0 + 15 s and then once a minute; counts drift),
    so the experiment runs without the data that sits outside the repository."""
    from streamspec.bench.topkjoin import data
    rng = np.random.default_rng(seed)
    times = data.T0 + 15_000 + 60_000 * np.arange(160, dtype=np.int64)
    return {1000 + u: (times, 5000 + np.cumsum(rng.integers(-3, 9, size=times.size)).astype(np.int64))
            for u in range(users)}


def test_experiment_java_compat_flag(tmp_path, monkeypatch):
    """``--java-compat`` runs the Java's setting: {1, 2} values and the two Java diagnostics."""
    from streamspec.bench.topkjoin import experiment
    snapshots = _snapshots()
    monkeypatch.setattr(experiment, "load_snapshots", lambda: snapshots)
    _, ids, x, ts = experiment.dataset(20, 1, snapshots, java_compat=True)
    assert experiment.stream_range(ids, x, ts) == (1.0, 2.0)
    _, ids, x, ts = experiment.dataset(20, 1, snapshots)
    assert experiment.stream_range(ids, x, ts)[1] > 2 and np.all(x == 1)
    monkeypatch.setitem(experiment.GRIDS, "budget", [7])
    assert experiment.main(["budget", "--java-compat", "--datasets", "1", "--results",
                            str(tmp_path)]) == 0
    import csv
    with open(tmp_path / "budget-java.csv") as f:
        rows = list(csv.DictReader(f))
    assert {r["engine"] for r in rows} == set(experiment.ENGINES) | {"wsj-wbm-java", "at-tsm-java"}
    assert all(r["evaluations"] == "150" for r in rows)
    fetches = {r["engine"]: int(r["fetches"]) for r in rows}
    assert fetches["at-tsm-java"] == 6 * 150 and fetches["wsj-wbm-java"] <= 7 * 150
