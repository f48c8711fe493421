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


def test_key_index_table_stays_half_free_through_growth_compaction_and_reserve():
    """The hash table holds every id at most half full whatever the calls (growth past the
    reserve, compaction, a smaller reserve), negative and colliding keys included."""
    rng = np.random.default_rng(15)
    index, theirs = KeyIndex(), IdIndex(int)
    for step in range(30):
        batch = rng.integers(-(1 << 40), 1 << 40, int(rng.integers(1, 500)))
        batch[::7] = (batch[::7] >> 20) << 40          # same low bits: probes collide
        assert index.add(batch).tolist() == theirs.add(batch).tolist()
        assert index._slots.size >= 2 * index.size
        assert index.externals(0, index.size)[index.lookup(batch)].tolist() == batch.tolist()
        if step % 5 == 4:
            keep = np.flatnonzero(rng.random(index.size) < 0.3)
            index.compact(keep)
            theirs.compact(keep)
            index.reserve(index.size + 10)
            assert index._slots.size >= 2 * index._column.size and index.held() == index._slots.size
            assert index.lookup(batch).tolist() == theirs.lookup(batch).tolist()


def test_key_index_reads_pickles_of_the_sorted_array_index():
    """A ``KeyIndex`` pickled before the hash table (direct table, sorted ``_keys``/``_ids``
    and the column) unpickles with the same dense ids."""
    old = KeyIndex.__new__(KeyIndex)
    old.__setstate__({"kind": int, "size": 3, "_external": None,
                      "_direct": ("prefix", 0, "<i8", np.zeros(0, np.int64)),
                      "_keys": np.array([7, 5 << 30, 1 << 40]), "_ids": np.array([1, 0, 2]),
                      "_column": np.array([5 << 30, 7, 1 << 40], np.int64)})
    assert old.lookup([7, 1 << 40, 5 << 30, 8]).tolist() == [1, 2, 0, -1]
    assert old.add(np.array([8, 7])).tolist() == [3, 1]
