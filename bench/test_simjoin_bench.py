"""pytest-benchmark suite for the continuous top-k set similarity join (SWOOP Section 7).

Group ``simjoin-ci-tweet``: a TWEET-like stream (``streamspec.bench.simjoin.generators``,
3,000 sets after a window of 1,000 sets, k = 10, Jaccard), fed in one
``RecordBatch`` per round to a fresh engine that already holds the window:
SWOOP, its ablations, SCase and the paper's baseline, measured in the same
run so ``python -m streamspec.bench.ratios`` compares medians within the group.
Run: ``pytest bench/test_simjoin_bench.py -m bench --benchmark-json=bench.json
--benchmark-timer=time.process_time``.
"""
from __future__ import annotations

import functools

import pytest

from streamspec.bench.simjoin.generators import tweet_like
from streamspec.bench.simjoin.throughput import window_slice
from streamspec.spec.errors import StreamspecError
from streamspec.spec.registry import Registry
from streamspec.spec.simjoin import Params

pytestmark = pytest.mark.bench

W, SETS, K = 1000, 3000, 10
PROBLEM = "simjoin"
# --engine NAME measures NAME instead of ENGINES, beside the baselines (bench/conftest.py)
ENGINES = ["swoop", "swoop-noindex", "swoop-noincrement", "swoop-noheap"]
BASELINES = ["scase", "base"]


@functools.lru_cache(maxsize=None)
def stream():
    return tweet_like(W + SETS, seed=5)


def filled(name: str):
    try:
        Registry.get("simjoin", name)
    except StreamspecError as err:
        pytest.skip(f"engine {name!r}: {err}")
    engine = Registry.create("simjoin", name, Params(k=K, w=W))
    list(engine.process(window_slice(stream(), 0, W)))
    return (engine,), {}


def run(engine):
    return sum(1 for _ in engine.process(window_slice(stream(), W, W + SETS)))


def test_tweet_stream(benchmark, subject):
    benchmark.group = "simjoin-ci-tweet"
    benchmark.extra_info.update(subject=subject, window=W, sets=SETS, k=K)
    filled(subject)   # warm-up: compiles the kernels outside the timing
    changes = benchmark.pedantic(run, setup=lambda: filled(subject), rounds=3, iterations=1)
    assert changes > 0
