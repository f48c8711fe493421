"""The galloping searches of swoop's list scans equal the plain binary searches."""
import math

import numpy as np

from streamspec.engines.simjoin._swoop_stock_kernels import (crop_threshold, crop_threshold_from, end_rank,
                                                             end_rank_top)


def test_end_rank_top_equals_end_rank():
    rng = np.random.default_rng(5)
    for _ in range(300):
        ns = int(rng.integers(0, 40))
        e = np.sort(rng.integers(0, 12, ns + 3).astype(np.float64))
        for t in (*rng.integers(-1, 14, 6).astype(np.float64), -math.inf, math.inf):
            assert end_rank_top(t, ns, e) == end_rank(t, ns, e)


def test_crop_threshold_from_any_seed():
    rng = np.random.default_rng(6)
    for _ in range(300):
        ns = int(rng.integers(0, 40))
        k = int(rng.integers(1, 6))
        s = -np.sort(-rng.integers(0, 10, ns + 3).astype(np.float64) / 10)
        e = np.sort(rng.random(ns + 3))
        for limit in (*(rng.integers(-1, 11, 5) / 10), -math.inf, math.inf):
            want = crop_threshold(limit, k, ns, s, e)
            x = int(np.sum(s[:ns] > limit))
            for x0 in range(ns + 1):
                th, xs = crop_threshold_from(limit, x0, k, ns, s, e)
                assert xs == x and (th == want or (math.isinf(th) and math.isinf(want)))
