"""The contract pieces: parameters, scoring, remote datasets, the fetch budget, metrics."""
import math
import pickle

import pytest

from streamspec.spec.errors import InvalidParameter, InvalidRecord, MalformedRecord, OutOfOrder
from streamspec.spec.topkjoin import Item, Params
from streamspec.spec.topkjoin_quality import ndcg_at_k, precision_at_k, quality
from streamspec.spec.topkjoin_remote import (BudgetExceeded, CallableDataset, FetchCounter, SqliteDataset,
                                  TimelineDataset)
from streamspec.reference.topkjoin import OracleEngine, evaluate


def test_paper_ndcg_worked_example():
    oracle = list("ABCDEF")  # relevances 6..1
    assert ndcg_at_k(list("ADF"), oracle, 3, depth=6) == pytest.approx(0.754, abs=5e-4)
    assert ndcg_at_k(list("FCB"), oracle, 3, depth=6) == pytest.approx(0.288, abs=5e-4)
    assert precision_at_k(list("ADF"), oracle, 3) == pytest.approx(1 / 3)
    assert precision_at_k(list("FCB"), oracle, 3) == pytest.approx(2 / 3)


def test_metrics_edges():
    assert ndcg_at_k([1, 2], [1, 2], 2) == 1.0
    assert ndcg_at_k([2, 1], [1, 2], 2) < 1.0
    assert precision_at_k([2, 1], [1, 2], 2) == 1.0
    assert precision_at_k([1], [1], 5) == 1.0          # min(K, |O|)
    assert ndcg_at_k([], [], 3) == precision_at_k([], [], 3) == 1.0
    assert ndcg_at_k([], [1], 3) == precision_at_k([], [1], 3) == 0.0


def test_quality_counts_missing_evaluations_as_zero():
    p = Params(omega=2, beta=2, k=1)
    items = [Item(1, 1.0, 0), Item(2, 1.0, 2), Item(1, 1.0, 4)]
    ref = evaluate(items, p)
    q = quality(ref[:2], ref, 1)
    assert (q.evaluations, q.ndcg, q.precision) == (3, 2.0, 2.0)
    assert math.isclose(q.mean_ndcg, 2 / 3)


@pytest.mark.parametrize("bad", [dict(omega=0), dict(beta=-1), dict(k=0), dict(n=-1),
                                 dict(budget=-2), dict(aggregate="max"), dict(weights=(1, -1)),
                                 dict(stream_range=(1, 1)), dict(remote_range=(0, math.inf)),
                                 dict(t0=1.5), dict(remote=object()),
                                 dict(score=lambda s, v: s - v)])
def test_invalid_parameters(bad):
    kw = dict(omega=10, beta=5, k=3) | bad
    with pytest.raises(InvalidParameter):
        Params(**kw)


def test_monotone_user_score_is_accepted():
    p = Params(omega=10, beta=5, k=2, score=lambda s, v: s * 2 + max(v, 0))
    assert p.scoring()(1.0, 3.0) == 5.0


def test_linear_score_normalises_with_the_ranges():
    f = Params(omega=1, beta=1, k=1, stream_range=(1, 2), remote_range=(0, 26)).scoring()
    assert f(2, 18) == pytest.approx(0.7 + 0.3 * 18 / 26)   # a row of the authors' Java output


def _rows():
    return [("a", 10, 1.0), ("a", 20, 2.0), ("b", 15, 5.0), (7, 5, 9.0)]


@pytest.fixture(params=["memory", "sqlite", "callable"])
def dataset(request, tmp_path):
    mem = TimelineDataset.from_rows(_rows())
    if request.param == "memory":
        return mem
    if request.param == "sqlite":
        path = str(tmp_path / "remote.db")
        SqliteDataset.write(path, _rows())
        return SqliteDataset(path)
    return CallableDataset(mem.value)


def test_value_is_latest_entry_strictly_before_tau(dataset):
    assert dataset.value("a", 10) == 0.0      # default before the first entry
    assert dataset.value("a", 11) == 1.0
    assert dataset.value("a", 20) == 1.0      # strictly before
    assert dataset.value("a", 21) == 2.0
    assert dataset.value("b", 100) == 5.0
    assert dataset.value(7, 6) == 9.0
    assert dataset.value("zzz", 100) == 0.0
    clone = pickle.loads(pickle.dumps(dataset)) if not isinstance(dataset, CallableDataset) else dataset
    assert clone.value("a", 21) == 2.0


def test_fetch_counter_enforces_the_budget_for_every_dataset(dataset):
    fc = FetchCounter(dataset, budget=2)
    fc.begin(21)
    assert fc.fetch("a") == 2.0 and fc.fetch("b") == 5.0
    with pytest.raises(BudgetExceeded):
        fc.fetch("a")
    fc.begin(30)
    assert fc.fetch("a") == 2.0
    assert fc.per_evaluation == [2, 1]
    assert fc.load("a", 11) == 1.0 and fc.count == 1   # the bulk load is not counted
    unbounded = FetchCounter(dataset, budget=None)
    unbounded.begin(5)
    for _ in range(10):
        unbounded.fetch("a")


def test_sqlite_missing_table_is_a_parameter_error(tmp_path):
    import sqlite3
    path = tmp_path / "empty.db"
    sqlite3.connect(path).close()
    with pytest.raises(InvalidParameter):
        SqliteDataset(str(path))


def test_records_are_validated():
    p = Params(omega=10, beta=5, k=2)
    e = OracleEngine(p)
    list(e.process([Item(1, 1.0, 5)]))
    with pytest.raises(OutOfOrder) as err:
        list(e.process([Item(1, 1.0, 6), Item(1, 1.0, 4)]))
    assert err.value.index == 2
    with pytest.raises(InvalidRecord):
        list(e.process([Item("x", 1.0, 7)]))
    with pytest.raises(InvalidRecord):
        list(e.process([Item(1, float("inf"), 7)]))
    with pytest.raises(MalformedRecord):
        list(e.process([(1, 7)]))
    with pytest.raises(MalformedRecord):
        list(e.process([(1, "one", 7)]))


def test_windows_evaluated_across_gaps_and_at_flush():
    p = Params(omega=10, beta=5, k=2,
               remote=TimelineDataset({1: [(0, 1.0)], 2: [(12, 3.0)]}), remote_range=(0, 3))
    items = [Item(1, 1.0, 0), Item(2, 1.0, 3), Item(1, 2.0, 11), Item(2, 1.0, 40)]
    ev = evaluate(items, p)
    assert [e.window for e in ev] == list(range(9))
    assert ev[0].ids == (1, 2) and ev[1].ids == (1,)   # [5, 15): 1 with x=2; 2's value changes at 12
    assert ev[3].answer == () and ev[8].ids == (2,)
    e = OracleEngine(p)
    assert list(e.process(items)) + e.flush() == ev


@pytest.mark.parametrize("name", ["at-tsm", "wsj-rnd", "topkn", "oracle"])
def test_engine_state_pickles_mid_stream(name):
    from streamspec.conformance.strategies.topkjoin import random_case
    from streamspec.spec.registry import Registry
    case = random_case(7, max_items=80)
    cls = Registry.get("topkjoin", name)
    half = len(case.items) // 2
    a = cls(case.params)
    first = list(a.process(case.items[:half]))
    b = pickle.loads(pickle.dumps(a))
    rest_a = list(a.process(case.items[half:])) + a.flush()
    rest_b = list(b.process(case.items[half:])) + b.flush()
    assert rest_a == rest_b
    assert [e.window for e in first + rest_a] == [e.window for e in evaluate(case.items, case.params)]


def test_latest_aggregate_uses_the_last_item():
    p = Params(omega=10, beta=10, k=3, aggregate="latest", stream_range=(0, 10))
    ev = evaluate([Item(1, 5.0, 0), Item(2, 3.0, 1), Item(1, 1.0, 2)], p)
    assert ev[0].ids == (2, 1)
