"""The spec's record of used tids answers exactly like a set, whatever the order."""
from hypothesis import given, settings, strategies as st

from streamspec.spec._kws_tids import SeenTids

tids = st.one_of(st.integers(-5, 40), st.integers(10**12, 10**12 + 5), st.sampled_from("abc"))


@settings(deadline=None)
@given(seq=st.lists(tids, max_size=80), probes=st.lists(tids, max_size=20),
       run=st.integers(0, 50))
def test_seen_tids_is_a_set(seq, probes, run):
    seen, model = SeenTids(), set()
    for tid in list(range(run)) + seq:            # a run of sequence numbers, then anything
        assert (tid in seen) == (tid in model)
        if tid not in model:
            seen.add(tid)
            model.add(tid)
    assert all((p in seen) == (p in model) for p in probes + seq)
    assert len(seen) == len(model)


def test_increasing_ids_cost_one_run_per_gap():
    seen = SeenTids()
    for tid in list(range(10_000)) + list(range(20_000, 30_000)):
        seen.add(tid)
    assert (seen._lo, seen._hi, seen._others) == ([0, 20_000], [9_999, 29_999], set())
    assert 9_999 in seen and 10_000 not in seen and 20_000 in seen
