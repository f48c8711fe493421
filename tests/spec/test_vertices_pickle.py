"""``IdIndex`` pickles small (Spark's group state) and unpickles to the same mapping."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from streamspec.spec.vertices import IdIndex, packed_direct, unpacked_direct


@pytest.mark.parametrize("ids", [
    [],                                            # empty table
    [3, 1, 2],                                     # a short used prefix
    [0, 60_000],                                   # two slots far apart: pairs
    list(range(5000)) + [2**40, -7],               # prefix plus sorted ints outside the table
])
def test_int_index_round_trips_and_pickles_without_the_tables_spare_capacity(ids):
    index = IdIndex(int)
    index.add(np.asarray(ids, dtype=np.int64))
    back = pickle.loads(pickle.dumps(index))
    assert back._direct.size == index._direct.size
    assert np.array_equal(back._direct, index._direct)
    probe = np.asarray(ids + [5, 70_000, 2**41], dtype=np.int64)
    assert np.array_equal(back.lookup(probe), index.lookup(probe))
    assert back.size == index.size and back._external == index._external
    # numbering goes on where it stopped
    assert np.array_equal(back.add(np.asarray([9_999_999, 4], np.int64)),
                          index.add(np.asarray([9_999_999, 4], np.int64)))
    # the 512 KB table of a few ids is not in the pickle
    assert len(pickle.dumps(index)) < 16 * len(ids) + 4096 + 9 * len(index._external)


def test_a_few_small_ids_pickle_in_a_few_hundred_bytes_not_512_kb():
    index = IdIndex(int)
    index.add(np.asarray([1, 2, 3], np.int64))
    assert index._direct.size >= 1 << 16
    assert len(pickle.dumps(index)) < 1024


def test_str_index_round_trips():
    index = IdIndex(str)
    index.add(["a", "b", "a"])
    back = pickle.loads(pickle.dumps(index))
    assert list(back.lookup(["b", "a", "z"])) == [1, 0, -1]


@pytest.mark.parametrize("table", [np.full(10, -1, np.int64),
                                   np.array([0, 1, -1, -1, -1, -1, -1, 2], np.int64),
                                   np.array([5, -1, 7], np.int32)])
def test_packed_direct_round_trips_dtype_and_capacity(table):
    back = unpacked_direct(packed_direct(table))
    assert back.dtype == table.dtype and np.array_equal(back, table)
