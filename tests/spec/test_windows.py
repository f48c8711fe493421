from hypothesis import given, strategies as st
import pytest

from streamspec.spec.errors import InvalidParameter
from streamspec.spec.windows import SlidingWindows


@given(r=st.integers(1, 20), s=st.integers(1, 20), t0=st.integers(-50, 50), t=st.integers(-100, 200))
def test_window_counts_match_definition(r, s, t0, t):
    w = SlidingWindows(r, s, t0)
    brute_due = sum(1 for n in range(400) if w.end(n) <= t)
    brute_started = sum(1 for n in range(400) if w.start(n) <= t)
    assert w.due_before(t) == brute_due
    assert w.started_by(t) == brute_started
    assert list(w.containing(t)) == [n for n in range(400) if w.start(n) <= t < w.end(n)]


def test_gcd_slots():
    w = SlidingWindows(5, 2)
    assert (w.g, w.slots_per_window, w.slots_per_slide) == (1, 5, 2)
    w = SlidingWindows(1000, 50)
    assert (w.g, w.slots_per_window, w.slots_per_slide) == (50, 20, 1)


@pytest.mark.parametrize("r,s", [(0, 1), (1, 0), (-3, 2), (True, 1), (1.5, 1)])
def test_bad_window_parameters(r, s):
    with pytest.raises(InvalidParameter):
        SlidingWindows(r, s)
