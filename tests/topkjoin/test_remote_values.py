"""Batched remote access (issue 15): ``values(keys, tau)`` equals ``value`` key by key for
every dataset, a dataset with ``value`` only still works, and ``fetch_many`` spends one unit
of the per-evaluation budget per key (paper §5: gamma counts remote accesses)."""
from __future__ import annotations

import numpy as np
import pytest

from streamspec.spec.errors import InvalidParameter
from streamspec.spec.topkjoin_remote import (BudgetExceeded, CallableDataset, FetchCounter,
                                             SqliteDataset, TimelineDataset, values)

ROWS = [(k, t, float((k * 7 + t) % 13)) for k in range(0, 40, 3) for t in range(0, 500, 70)]
ROWS += [(3, 140, 99.0), (3, 140, 98.0)]     # equal (key, time): the later row wins


def fn(key, tau):
    return float((int(key) * 31 + int(tau) // 50) % 17)


def many(keys, tau):
    return ((np.asarray(keys, np.int64) * 31 + int(tau) // 50) % 17).astype(np.float64)


class ValueOnly:
    """A user dataset from before ``values``: ``value`` only."""

    def __init__(self):
        self.calls = []

    def value(self, key, tau):
        self.calls.append((key, tau))
        return fn(key, tau)


def datasets(tmp_path):
    path = tmp_path / "remote.db"
    SqliteDataset.write(str(path), ROWS)
    return [TimelineDataset.from_rows(ROWS, default=-1.0), SqliteDataset(str(path), default=-1.0),
            CallableDataset(fn), CallableDataset(fn, many), ValueOnly()]


@pytest.mark.parametrize("which", range(5))
def test_values_equal_value_key_by_key(which, tmp_path):
    dataset = datasets(tmp_path)[which]
    keys = [0, 3, 5, 3, 39, 1000, 12, 0]        # repeats, unknown keys
    for tau in (-5, 0, 1, 70, 71, 140, 141, 499, 10_000):
        want = [dataset.value(k, tau) for k in keys]
        assert values(dataset, keys, tau).tolist() == want
        assert values(dataset, np.asarray(keys, np.int64), tau).tolist() == want


def test_values_of_a_value_only_dataset_call_value_in_key_order():
    dataset = ValueOnly()
    values(dataset, np.array([5, 2, 9], np.int64), 100)
    assert dataset.calls == [(5, 100), (2, 100), (9, 100)]
    assert all(type(k) is int for k, _ in dataset.calls)      # Python keys, as ``fetch`` gives


def test_callable_batch_function_is_checked():
    with pytest.raises(InvalidParameter):
        CallableDataset(fn, many=3)
    bad = CallableDataset(fn, lambda keys, tau: np.full(len(keys), np.nan))
    with pytest.raises(InvalidParameter, match="not finite"):
        bad.values([1, 2], 10)
    short = CallableDataset(fn, lambda keys, tau: np.zeros(1))
    with pytest.raises(InvalidParameter, match="shape"):
        short.values([1, 2], 10)


def test_fetch_many_counts_one_unit_per_key_and_refuses_like_fetch():
    counter = FetchCounter(CallableDataset(fn, many), budget=3)
    counter.begin(100)
    assert counter.fetch_many([1, 2]).tolist() == [fn(1, 100), fn(2, 100)]
    assert counter.count == 2
    with pytest.raises(BudgetExceeded, match="fetch 4 of 5"):
        counter.fetch_many([4, 5])                 # the third fetch is allowed, the fourth not
    assert counter.count == 3
    counter.begin(200)
    assert counter.per_evaluation == [3, 0]
    assert counter.load_many([1, 2], 0).tolist() == [fn(1, 0), fn(2, 0)]
    assert counter.count == 0                      # the bulk load is not counted


def test_unbounded_fetch_many_and_pickled_callable_without_batch_function():
    import pickle
    counter = FetchCounter(CallableDataset(fn), budget=None)
    counter.begin(50)
    assert counter.fetch_many(list(range(100))).tolist() == [fn(k, 50) for k in range(100)]
    assert counter.count == 100
    old = CallableDataset(fn)
    del old.__dict__["many"]                       # as pickled before ``many`` existed
    assert pickle.loads(pickle.dumps(old)).values([1], 5).tolist() == [fn(1, 5)]


def test_fetch_log_is_bounded_and_its_totals_cover_every_evaluation(monkeypatch):
    """Issue 15: the log keeps the first evaluations' counts in ``LOG_RUNS`` runs (a
    preallocated array, so its bytes do not grow with the stream); past that it refuses to
    answer rather than answer partly, and ``evaluations``/``fetched``/``most`` count all."""
    import pickle

    from streamspec.spec import topkjoin_remote as remote
    monkeypatch.setattr(remote, "LOG_RUNS", 4)
    counter = FetchCounter(CallableDataset(fn), budget=None)
    counts = [2, 2, 0, 5, 5, 5, 1]                       # runs (2,2) (0,1) (5,3) (1,1)
    for tau, c in enumerate(counts):
        counter.begin(10 * tau)
        for _ in range(c):
            counter.fetch(7)
    assert counter.log == counts[:-1] and counter.per_evaluation == counts
    counter.begin(100)                                   # closes the 7th: a fourth run
    assert counter.runs.tolist() == [[2, 2], [0, 1], [5, 3], [1, 1]]
    counter.fetch_many([1, 2, 3])
    counter.begin(110)                                   # a fifth run: the log stops
    counter.begin(120)
    assert not counter.complete and counter.runs.shape == (4, 2)
    assert counter._runs.shape == (4, 2)                 # no row was added
    with pytest.raises(remote.FetchLogTruncated, match="first 7 of 9 evaluations"):
        counter.per_evaluation
    assert (counter.evaluations, counter.fetched, counter.most) == (9, 23, 5)
    copy = pickle.loads(pickle.dumps(counter))
    assert copy.runs.tolist() == counter.runs.tolist() and not copy.complete
    assert (copy.evaluations, copy.fetched, copy.most) == (9, 23, 5)
    # a counter pickled before the bounded log (``runs`` a list) reads as one
    old = FetchCounter(CallableDataset(fn), budget=3)
    state = {k: v for k, v in old.__dict__.items()
             if k not in ("_runs", "_nruns", "complete", "evaluations", "fetched", "most")}
    state.update(runs=[[3, 2], [1, 1]], tau=50, count=2)
    old.__dict__.clear()
    old.__setstate__(state)
    assert old.per_evaluation == [3, 3, 1, 2]
    assert (old.evaluations, old.fetched, old.most) == (3, 7, 3)
    old.begin(60)
    assert old.runs.tolist() == [[3, 2], [1, 1], [2, 1]]


def test_pipeline_timeline_file_reads_many_keys_as_its_timeline():
    """The job's file-backed remote (``pipeline/io/topkjoin.TimelineFile``) has ``values``:
    equal to ``value`` key by key, and one call to the timeline for the whole batch."""
    import os

    from streamspec.pipeline.io.topkjoin import TimelineFile
    path = os.path.join(os.path.dirname(__file__), "..", "..", "pipeline", "data", "topkjoin",
                        "followers-dfc.csv")
    dataset = TimelineFile(path)
    assert hasattr(dataset, "values")
    keys = sorted(dataset.keys())[:40] + [-1]          # an unknown key reads the default
    lo, hi = min(t for _, t, _ in dataset.rows()), max(t for _, t, _ in dataset.rows())
    for tau in (lo - 1, lo, (lo + hi) // 2, hi, hi + 1):
        assert values(dataset, keys, tau).tolist() == [dataset.value(k, tau) for k in keys]
