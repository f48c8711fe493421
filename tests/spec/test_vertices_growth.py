"""``IdIndex``'s growth (issue 28): the large calls grow the direct table and the hash
table's room ahead, so that a small call between them (a window's triggering edge) pays no
rebuild of either; the numbering is the same wherever an id lives."""
from __future__ import annotations

import pickle

import numpy as np

from streamspec.spec import vertices
from streamspec.spec.vertices import IdIndex, SparseIds


def number(model: dict, batch) -> list:
    """The numbering ``IdIndex`` promises: a call's fresh ids by increasing value."""
    for x in sorted({x for x in batch if x not in model}):
        model[x] = len(model)
    return [model[x] for x in batch]


def check(index: IdIndex, model: dict) -> None:
    keys = np.fromiter(model, np.int64, len(model))
    assert index.lookup(keys).tolist() == list(model.values())
    assert index.size == len(model)
    assert [index.external(g) for g in model.values()] == list(model)


def test_small_calls_between_large_ones_pay_no_growth_and_number_as_before():
    # ids spread over a space the table may cover only in part (DENSITY): the large
    # calls grow it by doublings, the hash table holds the rest with room to spare
    rng = np.random.default_rng(7)
    index, model = IdIndex(int), {}
    space = 1 << 24
    held_by_hash = 0
    for k in range(16):
        big = rng.integers(0, space, 4000)
        assert index.add(big).tolist() == number(model, big.tolist())
        table, column = index._direct, index._sparse._column
        for _ in range(3):      # one-edge calls (a triggering edge), list and array
            edge = rng.integers(0, space, 2).tolist()
            got = index.add(edge if k % 2 else np.asarray(edge, np.int64)).tolist()
            assert got == number(model, edge)
        assert index._direct is table and index._sparse._column is column
        held_by_hash = max(held_by_hash, len(index._sparse))
    check(index, model)
    assert held_by_hash > 10_000 and index._direct.size > vertices.MIN_DIRECT


def test_a_stream_fed_edge_by_edge_still_grows_its_table():
    # no large call ever comes: the small calls' ids add up until one may pay
    index, model = IdIndex(int), {}
    for lo in range(0, 140_000, 16):
        calls = list(range(lo + 15, lo - 1, -1))          # 16 fresh ids, then known ones
        assert index.add(calls).tolist() == number(model, calls)
        assert index.add(calls[:2]).tolist() == [model[x] for x in calls[:2]]
    check(index, model)
    assert index._direct.size >= 140_000 > 2 * vertices.MIN_DIRECT
    assert len(index._sparse) < 20_000


def test_a_large_call_grows_the_table_ahead_of_its_ids():
    index = IdIndex(int)
    index.add(np.arange(40_000))
    assert index._direct.size == vertices.MIN_DIRECT
    index.add(np.arange(40_000, 45_000))        # over half the table: doubled ahead
    table = index._direct
    assert table.size == 2 * vertices.MIN_DIRECT
    assert index.add([100_000, 3]).tolist() == [45_000, 3]
    assert index._direct is table and len(index._sparse) == 0


def test_sparse_ids_leave_room_for_another_call_of_the_same_size():
    sparse = SparseIds()
    sparse.insert(np.arange(100, dtype=np.int64) << 40, np.arange(100), room=300)
    assert sparse.capacity() >= 400
    column = sparse._column
    sparse.insert(np.arange(100, 350, dtype=np.int64) << 40, np.arange(100, 350))
    assert sparse._column is column
    keys = np.arange(350, dtype=np.int64) << 40
    assert sparse.lookup(keys).tolist() == list(range(350))
    back = pickle.loads(pickle.dumps(sparse))
    assert back.lookup(keys).tolist() == list(range(350)) and len(back) == 350


def test_pickles_after_growth_and_without_the_run_counter_load_and_go_on():
    rng = np.random.default_rng(3)
    index, model = IdIndex(int), {}
    for n in (5000, 2, 5000, 2):
        batch = rng.integers(0, 1 << 22, n)
        assert index.add(batch).tolist() == number(model, batch.tolist())
    index.add([5])
    number(model, [5])
    state = index.__getstate__()
    state.pop("_run", None)                 # pickled before the counter existed
    old = IdIndex.__new__(IdIndex)
    old.__setstate__(pickle.loads(pickle.dumps(state)))
    for back in (old, pickle.loads(pickle.dumps(index))):
        check(back, dict(model))
        assert np.array_equal(back._direct, index._direct)
    more = rng.integers(0, 1 << 23, 3000).tolist() + [-4, 1 << 50]
    expect = number(model, more)
    assert old.add(np.asarray(more, np.int64)).tolist() == expect
    assert index.add(np.asarray(more, np.int64)).tolist() == expect
    check(old, model)


def _state(index: IdIndex) -> tuple:
    # (not ``_run``: a small call with every id inside the table does not count in it,
    # the numpy path's does; the growth it allows is compared through the table)
    keys, ids = index._sparse.pairs()
    order = np.argsort(keys)
    return (index.size, index._direct.tolist(), keys[order].tolist(),
            ids[order].tolist(), index._sparse.capacity(), list(index._external))


def test_small_calls_with_ids_outside_the_table_as_the_general_path():
    # the plain-Python path of a few ints some of which lie outside the direct table
    # (_add_small_outside) leaves exactly the state the numpy path leaves: numbering,
    # the table's growth, the hash table's ids and room
    rng = np.random.default_rng(11)
    small, general, model = IdIndex(int), IdIndex(int), {}
    for k in range(300):
        if k % 50 == 0:
            big = rng.integers(0, 1 << 22, 2000)
            assert small.add(big).tolist() == general.add(big).tolist() == number(model, big.tolist())
        n = int(rng.integers(1, 5))
        ids = rng.integers(-5, 1 << 22, n).tolist()
        if rng.random() < 0.3:
            ids += [ids[0], int(rng.choice(list(model)))] if model else [ids[0]]
        got = small.add(ids).tolist()
        assert got == general.add(np.asarray(ids, np.int64)).tolist() == number(model, ids)
        assert _state(small) == _state(general)
    check(small, model)
    assert len(small._sparse) > 100
