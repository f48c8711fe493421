"""The simjoin contract: similarity functions, bounds, parameters, validation."""
import math

import numpy as np

import pytest
from hypothesis import given, strategies as st

from streamspec.reference.simjoin import OracleEngine
from streamspec.spec._simjoin_similarity import KIND, min_overlap, positional_upper_bound, similarity
from streamspec.spec.errors import InvalidParameter, InvalidRecord, OutOfOrder
from streamspec.spec.simjoin import Advance, Params, Record, TopK

sizes = st.integers(1, 40)


@given(kind=st.sampled_from(sorted(KIND.values())), lr=sizes, ls=sizes, data=st.data())
def test_min_overlap_is_exact_against_the_float_scores(kind, lr, ls, data):
    m = min(lr, ls)
    tau = similarity(kind, lr, ls, data.draw(st.integers(0, m)))
    tau = data.draw(st.sampled_from([tau, math.nextafter(tau, math.inf), math.nextafter(tau, -math.inf)]))
    need = min_overlap(kind, lr, ls, tau)
    for o in range(1, m + 1):
        assert (o >= need) == (similarity(kind, lr, ls, o) >= tau)
    assert 1 <= need <= m + 1


@given(kind=st.sampled_from(sorted(KIND.values())), lr=sizes, ls=sizes, data=st.data())
def test_positional_upper_bound_holds(kind, lr, ls, data):
    """A set missing rho-1 tokens of r is no more similar than ub(|r|, rho) (Theorem 1)."""
    rho = data.draw(st.integers(1, lr))
    o = data.draw(st.integers(0, min(ls, lr - rho + 1)))
    assert similarity(kind, lr, ls, o) <= positional_upper_bound(kind, lr, rho) + 1e-12


def test_similarity_table():
    assert similarity(KIND["jaccard"], 3, 3, 2) == 2 / 4
    assert similarity(KIND["cosine"], 4, 9, 3) == 3 / 6
    assert similarity(KIND["dice"], 3, 5, 2) == 4 / 8
    assert similarity(KIND["overlap"], 3, 5, 2) == 2.0
    assert similarity(KIND["hamming"], 3, 5, 2) == -4.0
    assert min_overlap(KIND["jaccard"], 3, 3, -math.inf) == 1


@pytest.mark.parametrize("kw", [dict(k=0, w=1), dict(k=1, w=0), dict(k=1, w=float("nan")),
                                dict(k=1, w=1, similarity="edit"), dict(k=1, w=1, join="left"),
                                dict(k=True, w=1), dict(k=1, w=float("inf"))])
def test_bad_parameters(kw):
    with pytest.raises(InvalidParameter):
        Params(**kw)


def test_out_of_order_names_the_record_and_changes_nothing():
    engine = OracleEngine(Params(k=1, w=10))
    list(engine.process([Record(1, "ab" and ["a", "b"], 5)]))
    with pytest.raises(OutOfOrder) as err:
        list(engine.process([Record(2, ["a"], 6), Record(3, ["a"], 4)]))
    assert err.value.index == 2
    assert list(engine.process([Record(2, ["a", "b"], 6)])) == [TopK(6.0, ((2, 1, 1.0, 15.0),))]


def test_lateness_drop_counts():
    engine = OracleEngine(Params(k=1, w=10, lateness="drop"))
    out = list(engine.process([Record(1, ["a"], 5), Advance(3), Record(2, ["a"], 4), Record(3, ["a"], 6)]))
    assert engine.dropped_late == 2
    assert out == [TopK(6.0, ((3, 1, 1.0, 15.0),))]


def test_duplicate_id_and_empty_sets():
    engine = OracleEngine(Params(k=2, w=10))
    assert list(engine.process([Record(1, [], 0), Record(2, [], 0)])) == []
    with pytest.raises(InvalidRecord):
        list(engine.process([Record(1, ["a"], 1)]))


def test_two_stream_join_pairs_only_r_with_s():
    engine = OracleEngine(Params(k=3, w=10, join="rs"))
    out = list(engine.process([Record(1, ["a"], 0, "R"), Record(2, ["a"], 0, "R"), Record(3, ["a"], 1, "S")]))
    assert out[-1].pairs == ((3, 1, 1.0, 10.0), (3, 2, 1.0, 10.0))


@given(batches=st.lists(st.lists(st.one_of(st.integers(-5, 60), st.integers(0, 300_000),
                                           st.integers(0, 2**40)), max_size=40), max_size=6))
def test_int_tokens_are_numbered_by_first_appearance(batches):
    from streamspec.spec._simjoin_tokens import TokenNumbering
    numbering, model = TokenNumbering(), {}
    for batch in batches:
        got = numbering.add_ints(np.asarray(batch, dtype=np.int64)).tolist()
        assert got == [model.setdefault(x, len(model)) for x in batch]


def test_int_tokens_across_table_growth():
    from streamspec.spec._simjoin_tokens import TokenNumbering
    rng = np.random.default_rng(5)
    numbering, model = TokenNumbering(), {}
    for lo, hi, n in ((0, 300_000, 500), (100_000, 400_000, 200_000), (-5, 500_000, 1000),
                      (0, 2_000_000, 600_000)):
        batch = rng.integers(lo, hi, n)
        got = numbering.add_ints(batch).tolist()
        assert got == [model.setdefault(x, len(model)) for x in batch.tolist()]


def test_int_tokens_hashed_far_from_the_table_and_pickled():
    import pickle

    from streamspec.spec._simjoin_tokens import TokenNumbering
    rng = np.random.default_rng(7)
    numbering, model = TokenNumbering(), {}
    extremes = np.array([-2**63, 2**63 - 1, -1, 0, 2**62, -2**62], np.int64)
    for n, batch in enumerate((extremes, rng.integers(-2**63, 2**63 - 1, 5000, dtype=np.int64),
                               rng.integers(2**40, 2**40 + 3000, 20_000), extremes,
                               rng.integers(0, 70_000, 30_000))):
        if n == 3:
            numbering = pickle.loads(pickle.dumps(numbering))
        got = numbering.add_ints(batch).tolist()
        assert got == [model.setdefault(x, len(model)) for x in batch.tolist()]
