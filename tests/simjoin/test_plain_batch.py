"""The spec boundary's one-pass check of a ``RecordBatch`` (spec/_simjoin_batch.py):
``plain_batch`` is true exactly when the vectorised checks of ``process`` would find
every record in order, finite and exact, with increasing ids above every id seen and
a ``tok_ptr`` that spans the tokens; a batch that is not plain takes the vectorised
path, so records, late drops and errors come out as they did."""
from __future__ import annotations

import math

import numpy as np
import pytest

from streamspec.engines.simjoin.swoop import SwoopEngine
from streamspec.spec._simjoin_batch import plain_batch
from streamspec.spec.errors import InvalidRecord, MalformedRecord, OutOfOrder
from streamspec.spec.simjoin import Params, RecordBatch


def numpy_plain(tf, t0, ids, hi, ptr, n_tok):
    """The same question asked as the vectorised path asks it."""
    if not (np.isfinite(tf) & (np.abs(tf) <= 2 ** 53)).all():
        return False
    prev = np.maximum.accumulate(np.concatenate(([tf[0] if t0 is None else t0], tf)))[:-1]
    ids_ok = ids.size == 0 or ((hi is None or int(ids[0]) > hi) and bool((ids[1:] > ids[:-1]).all()))
    return bool((tf >= prev).all()) and ids_ok and ptr[-1] - ptr[0] == n_tok \
        and bool((np.diff(ptr) >= 0).all())


def ask(tf, t0, ids, hi, ptr, n_tok):
    return plain_batch(np.asarray(tf, np.float64), 0.0 if t0 is None else t0, t0 is not None,
                       np.asarray(ids, np.int64), 0 if hi is None else hi, hi is not None,
                       np.asarray(ptr, np.int64), n_tok)


def test_plain_batch_agrees_with_numpy():
    rng = np.random.default_rng(7)
    specials = [math.nan, math.inf, -math.inf, 2.0 ** 53, 2.0 ** 53 + 2, -(2.0 ** 53) - 2]
    for _ in range(3000):
        n = int(rng.integers(1, 6))
        tf = np.sort(rng.integers(0, 5, n)).astype(np.float64)
        if rng.random() < 0.3:
            tf[rng.integers(n)] = rng.integers(0, 5)
        if rng.random() < 0.1:
            tf[rng.integers(n)] = specials[rng.integers(len(specials))]
        t0 = None if rng.random() < 0.3 else float(rng.integers(0, 3))
        ids = np.cumsum(rng.integers(0 if rng.random() < 0.2 else 1, 3, n)) + int(rng.integers(-2, 3))
        hi = None if rng.random() < 0.3 else int(rng.integers(-3, 3))
        sizes = rng.integers(-1 if rng.random() < 0.1 else 0, 3, n)
        ptr = np.concatenate(([int(rng.integers(0, 3))], sizes)).cumsum()
        n_tok = int(ptr[-1] - ptr[0]) + (int(rng.integers(-1, 2)) if rng.random() < 0.2 else 0)
        assert ask(tf, t0, ids, hi, ptr, n_tok) == numpy_plain(tf, t0, ids, hi, ptr, n_tok), \
            (tf, t0, ids, hi, ptr, n_tok)


def batch(ids, ts, sets, dtype=np.int64):
    ptr = np.concatenate(([0], np.cumsum([len(s) for s in sets]))).astype(dtype)
    tok = np.array([t for s in sets for t in s], np.int64)
    return RecordBatch(np.asarray(ids, dtype), np.asarray(ts), ptr, tok, None)


SETS = [[1, 2, 3], [1, 2, 4], [2, 3, 4], [1, 2, 3, 4], [5, 6], [1, 2, 3]]


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_batches_plain_or_not_give_the_same_outputs(dtype):
    """The stream as one plain batch, as batches of other dtypes (the vectorised path),
    and with a late record dropped: the same top-k lists."""
    ids, ts = [10, 11, 12, 13, 14, 15], [0.0, 1.0, 1.0, 2.0, 3.0, 4.0]
    one = list(SwoopEngine(Params(k=2, w=3)).process(batch(ids, ts, SETS)))
    e = SwoopEngine(Params(k=2, w=3))
    two = list(e.process(batch(ids[:3], ts[:3], SETS[:3], dtype))) \
        + list(e.process(batch(ids[3:], ts[3:], SETS[3:], dtype)))
    assert one == two and one


def test_not_plain_batches_raise_as_before():
    e = SwoopEngine(Params(k=2, w=3))
    list(e.process(batch([10, 11], [0.0, 1.0], SETS[:2])))
    with pytest.raises(OutOfOrder):
        list(e.process(batch([12], [0.5], SETS[2:3])))
    with pytest.raises(InvalidRecord):
        list(e.process(batch([11], [2.0], SETS[2:3])))          # a repeated id
    with pytest.raises(MalformedRecord):
        list(e.process(batch([12], [math.nan], SETS[2:3])))
    list(e.process(batch([5], [2.0], SETS[2:3])))               # below the ids seen, new: fine
    assert e.n_records == 3
    d = SwoopEngine(Params(k=2, w=3, lateness="drop"))
    list(d.process(batch([10, 11], [0.0, 1.0], SETS[:2])))
    list(d.process(batch([12, 13], [0.5, 2.0], SETS[2:4])))
    assert d.dropped_late == 1 and d.n_records == 3
