"""Per-slot partial aggregates (numba folding) against a brute-force window aggregation."""
import numpy as np
from hypothesis import given, settings, strategies as st

from streamspec.engines.topkjoin.window_aggregates import SlotAggregates


@settings(deadline=None, max_examples=200)
@given(omega=st.integers(1, 12), beta=st.integers(1, 12), how=st.sampled_from(["sum", "latest"]),
       rows=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3), st.integers(0, 5)), max_size=60),
       cuts=st.lists(st.integers(0, 60), max_size=6))
def test_windows_equal_brute_force_whatever_the_batches(omega, beta, how, rows, cuts):
    ids = np.array([r[0] for r in rows], np.int64)
    xs = np.array([float(r[1]) for r in rows])
    ts = np.cumsum([r[2] for r in rows]).astype(np.int64) + 100
    t0 = 100
    aggs = SlotAggregates(t0, omega, beta, how)
    bounds = sorted({0, len(rows), *(c for c in cuts if c <= len(rows))})
    for a, b in zip(bounds[:-1], bounds[1:]):       # batches may split a slot
        aggs.ingest(ids[a:b], xs[a:b], ts[a:b])
    last = int(ts[-1]) if len(rows) else t0
    for i in range((last - t0) // beta + 1):
        start, end = t0 + i * beta, t0 + i * beta + omega
        want: dict = {}
        for d, x, t in zip(ids.tolist(), xs.tolist(), ts.tolist()):
            if start <= t < end:
                v, _ = want.get(d, (0.0, 0))
                want[d] = (v + x if how == "sum" else x, t)
        got_ids, got_vals, got_ts = aggs.window(i)
        assert got_ids.tolist() == sorted(want)
        assert got_vals.tolist() == [want[d][0] for d in sorted(want)]
        assert got_ts.tolist() == [want[d][1] for d in sorted(want)]
        aggs.drop_before_window(i + 1)
