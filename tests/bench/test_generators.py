"""The seeded stream generators: reproducible, shaped as documented."""
import numpy as np
import pytest

from streamspec.bench.connectivity.generators import (powerlaw_stream, rmat_endpoints, rmat_stream,
                                           timestamps, workload)


@pytest.mark.parametrize("make", [rmat_stream, powerlaw_stream])
def test_same_seed_same_stream_other_seed_other_stream(make):
    a, b, c = make(1000, 5000, 10, seed=3), make(1000, 5000, 10, seed=3), make(1000, 5000, 10, seed=4)
    for col in "uvt":
        assert np.array_equal(getattr(a, col), getattr(b, col))
    assert not np.array_equal(a.u, c.u)


@pytest.mark.parametrize("make", [rmat_stream, powerlaw_stream])
def test_ids_in_range_no_self_loops_fixed_rate(make):
    s = make(1000, 10_007, 100, seed=1, t0=50)
    assert len(s) == 10_007
    assert s.u.dtype == s.v.dtype == s.t.dtype == np.int64
    assert s.u.min() >= 0 and s.v.min() >= 0 and max(s.u.max(), s.v.max()) < 1000
    assert not np.any(s.u == s.v)
    _, counts = np.unique(s.t, return_counts=True)
    assert s.t[0] == 50 and np.all(np.diff(s.t) >= 0)
    assert np.all(counts[:-1] == 100) and counts[-1] == 7


def test_self_loops_kept_when_asked():
    s = rmat_stream(4, 5000, 10, seed=0, self_loops=True)
    assert np.any(s.u == s.v)


@pytest.mark.parametrize("make", [rmat_stream, powerlaw_stream])
def test_degrees_are_heavy_tailed(make):
    s = make(1 << 14, 200_000, 1000, seed=2)
    degree = np.bincount(np.concatenate([s.u, s.v]))
    top = np.sort(degree)[::-1]
    # a heavy tail: the top 1% of ids carry far more than 1% of the endpoints
    assert top[: len(top) // 100].sum() > 0.1 * top.sum()
    assert top[0] > 20 * np.mean(degree[degree > 0])


def test_rmat_quadrants_follow_probabilities():
    rng = np.random.default_rng(0)
    u, v = rmat_endpoints(rng, 100_000, 1, (0.5, 0.3, 0.15, 0.05), noise=0.0)
    freq = np.bincount(u * 2 + v, minlength=4) / len(u)
    assert np.allclose(freq, [0.5, 0.3, 0.15, 0.05], atol=0.01)


def test_rmat_rejects_bad_probabilities():
    with pytest.raises(ValueError):
        rmat_endpoints(np.random.default_rng(0), 10, 3, (0.5, 0.5, 0.5, 0.0))


def test_timestamps():
    assert timestamps(7, 3, t0=10).tolist() == [10, 10, 10, 11, 11, 11, 12]
    with pytest.raises(ValueError):
        timestamps(3, 0)


def test_slides_cut_on_slide_boundaries():
    s = rmat_stream(100, 1000, 10, seed=0)          # times 0..99
    batches = list(s.slides(7))
    assert sum(len(b) for b in batches) == 1000
    for k, b in enumerate(batches):
        assert b.t.min() >= 7 * k and b.t.max() < 7 * (k + 1)


def test_slides_skip_empty_slides():
    s = rmat_stream(100, 20, 10, seed=0)
    t = s.t.copy()
    t[10:] += 50                                     # a gap of several slides
    gappy = type(s)(s.u, s.v, t)
    batches = list(gappy.slides(5))
    assert [len(b) for b in batches] == [10, 10]


def test_workload_distinct_non_adjacent_top_degree():
    s = rmat_stream(2000, 20_000, 100, seed=5)
    q = workload(s, 50, seed=1, top=100)
    assert len(q) == 50 and all(a != b for a, b in q)
    edges = set(zip(s.u.tolist(), s.v.tolist()))
    assert not any((a, b) in edges or (b, a) in edges for a, b in q)
    degree = np.bincount(np.concatenate([s.u, s.v]))
    top = set(np.argsort(-degree, kind="stable")[:100].tolist())
    assert all(a in top and b in top for a, b in q)
    assert workload(s, 50, seed=1, top=100) == q


def test_workload_uniform_pool():
    s = rmat_stream(50, 500, 10, seed=5)
    present = set(np.concatenate([s.u, s.v]).tolist())
    q = workload(s, 20, seed=0, top=None)
    assert all(a in present and b in present and a != b for a, b in q)
