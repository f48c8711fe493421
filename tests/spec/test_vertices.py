import numpy as np
from hypothesis import given, strategies as st

import pickle

from streamspec.spec.vertices import IdIndex, SparseIds

ints = st.one_of(st.integers(-5, 60), st.integers(0, 300_000), st.integers(-2**62, 2**62))


@given(batches=st.lists(st.lists(ints, max_size=30), max_size=6), as_array=st.booleans())
def test_int_ids_are_dense_and_stable(batches, as_array):
    # lists of up to 32 ids take the plain-Python path, arrays the numpy ones
    index, model = IdIndex(int), {}
    for batch in batches:
        got = index.add(np.asarray(batch, dtype=np.int64) if as_array else batch).tolist()
        fresh = sorted({x for x in batch if x not in model})
        assert [got[batch.index(x)] for x in fresh] == list(range(len(model), len(model) + len(fresh)))
        for x, g in zip(batch, got):
            assert model.setdefault(x, g) == g
        assert sorted(model.values()) == list(range(len(model)))
        assert index.lookup(list(model)).tolist() == list(model.values())
        assert all(index.external(g) == x for x, g in model.items())
    assert index.lookup([10**15 + 7]).tolist() == [model.get(10**15 + 7, -1)]


@given(batches=st.lists(st.lists(st.sampled_from("abcdefg"), max_size=10), max_size=4))
def test_str_ids_number_by_first_appearance(batches):
    index, order = IdIndex(str), []
    for batch in batches:
        index.add(batch)
        for x in batch:
            if x not in order:
                order.append(x)
    assert index.lookup(order).tolist() == list(range(len(order)))


def test_earlier_ids_come_first():
    index = IdIndex(int)
    index.add([900, 5])            # e.g. the workload's vertices
    assert index.add(np.arange(10)).tolist()[:6] == [2, 3, 4, 5, 6, 0]
    assert index.lookup([5, 900]).tolist() == [0, 1]   # one call: increasing value


def test_large_batches_of_mostly_known_ids_keep_their_numbers():
    rng = np.random.default_rng(3)
    index, external = IdIndex(int), []
    for n in (200_000, 50_000, 300_000):     # fresh ids many, then few, then many again
        batch = rng.integers(0, 1 << 20, n)
        got = index.add(batch)
        assert (np.asarray(index._external)[got] == batch).all()
        assert index.size == len(set(index._external))


def test_sparse_ids_outside_the_table_look_up_in_any_order():
    """Ids far past the direct table live in the hash table (``SparseIds``): numbered in
    increasing value per batch like the others, looked up in the caller's order."""
    rng = np.random.default_rng(5)
    index, model = IdIndex(int), {}
    for n in (3_000, 500, 4_000):
        batch = rng.integers(1 << 40, 1 << 41, n)
        batch[::7] = batch[0]                        # repeats inside a batch
        for x, g in zip(batch.tolist(), index.add(batch).tolist()):
            assert model.setdefault(x, g) == g
    probe = np.concatenate([rng.permutation(np.fromiter(model, np.int64)),
                            rng.integers(1 << 41, 1 << 42, 100)])   # unseen ones too
    assert index.lookup(probe).tolist() == [model.get(x, -1) for x in probe.tolist()]
    assert pickle.loads(pickle.dumps(index)).lookup(probe).tolist() == index.lookup(probe).tolist()


def test_an_index_pickled_with_the_sorted_array_loads_into_the_hash_table():
    """Before the hash table the ints outside the direct table were sorted ``_keys`` /
    ``_ids`` arrays; such a pickle (Spark group state) must load and go on numbering."""
    index = IdIndex(int)
    index.add(np.array([3, 1 << 40, -7, 5 << 33], dtype=np.int64))
    state = index.__getstate__()
    keys, ids = state.pop("_sparse").pairs()
    order = np.argsort(keys)
    state.update(_keys=keys[order], _ids=ids[order])
    old = IdIndex.__new__(IdIndex)
    old.__setstate__(state)
    assert isinstance(old._sparse, SparseIds) and not hasattr(old, "_keys")
    probe = [-7, 3, 1 << 40, 5 << 33, 9 << 50]
    assert old.lookup(probe).tolist() == index.lookup(probe).tolist() == [0, 1, 3, 2, -1]
    assert old.add(np.array([9 << 50, -7], dtype=np.int64)).tolist() == [4, 0]
