"""``engines.topkjoin.key_index.KeyIndex`` is ``spec.vertices.IdIndex(int)`` with its external
ids in a numpy column (issue 15): the same dense ids for the same calls, compaction and
pickling included, and a column that stays at the capacity reserved."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from streamspec.engines.topkjoin.key_index import KeyIndex
from streamspec.spec.vertices import IdIndex


def batches(seed: int, small: bool):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        size = int(rng.integers(1, 40 if small else 3000))
        hi = 5000 if small else 1 << 40
        yield rng.integers(0, hi, size).astype(np.int64)


@pytest.mark.parametrize("small", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_key_index_numbers_like_id_index(seed, small):
    ours, theirs = KeyIndex(), IdIndex(int)
    rng = np.random.default_rng(seed + 100)
    for i, batch in enumerate(batches(seed, small)):
        arg = batch.tolist() if i % 3 == 0 else batch
        assert ours.add(arg).tolist() == theirs.add(arg).tolist()
        assert ours.size == theirs.size
        if i % 7 == 6:         # evict a random half, as the engine's compaction does
            keep = np.flatnonzero(rng.random(ours.size) < 0.5)
            ours.compact(keep)
            theirs.compact(keep)
        probe = rng.integers(0, 5000 if small else 1 << 40, 50).astype(np.int64)
        probe = np.concatenate((probe, batch[:20]))
        assert ours.lookup(probe).tolist() == theirs.lookup(probe).tolist()
        assert [ours.external(d) for d in range(ours.size)] == theirs._external
        assert ours.externals(0, ours.size).tolist() == theirs._external
    back = pickle.loads(pickle.dumps(ours))
    assert back._column.size == ours.size            # the ids held, not the capacity
    assert back.add(batch).tolist() == ours.add(batch).tolist()


def test_key_index_column_keeps_its_reserved_capacity():
    index = KeyIndex()
    index.reserve(1000)
    index.add(np.arange(1 << 30, (1 << 30) + 700, dtype=np.int64))
    assert index._column.size == 1000               # within the reserve: no regrowth
    index.compact(np.arange(100, 700, dtype=np.int64))
    assert index._column.size == 1000 and index.size == 600
    assert index.lookup([(1 << 30) + 99, (1 << 30) + 100]).tolist() == [-1, 0]
    index.add(np.arange(5 << 30, (5 << 30) + 500, dtype=np.int64))
    assert index.size == 1100 and index._column.size >= 1100
