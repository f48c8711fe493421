"""pytest-benchmark suites for sliding-window connectivity (BIC TR Section 7).

Each group holds BIC and its baselines on the same stream, measured in the
same run, so ``python -m streamspec.bench.ratios`` can compare medians within the group:

- ``connectivity-ci-stream``: a whole R-MAT stream (500K edges, windows of
  100K edges, 20 slides per window, 100 queries), fed as ``measure`` feeds it
  (``hold_back=False``; per window, its triggering edge, then the rest of the
  slide): BIC, RWC, D-Tree, MSF (issue 13's maximum spanning forest) and
  scipy per-window recomputation.
- ``connectivity-ci-small``: a stream small enough for networkx (25K edges,
  windows of 5K edges, K = 20): the same engines plus networkx per window.
  (The slow fully dynamic baselines ``ettree`` and ``hdt`` are measured by
  ``python -m streamspec.bench.connectivity.competitors`` instead.)
- ``connectivity-ci-window``: one window in steady state, the paper's latency
  (a round = the ``process`` call with the window's triggering edge: its
  queries and that edge's insert; the rest of the slide goes in, untimed, in
  the round's setup); the median is the typical window latency (BIC answers
  most windows without rebuilding anything, RWC rebuilds the whole window).
  BIC runs as it ships: its backward build is deferred out of the triggering
  call (``bic:build=deferred``), so no round holds one; the build-inside
  placement (the paper's) is measured by ``python -m
  streamspec.bench.connectivity.targets`` (``measure``'s ``build="inside"``), or
  here by naming it (``streamspec bench connectivity --engine bic:build=inside``).

Engines come from the registry; one that is not registered is skipped with
its reason, and ``streamspec.bench.ratios`` then reports its floors as missing.
The subjects are ``ENGINES`` (BIC and MSF) beside the baselines (``BASELINES``:
RWC, scipy, D-Tree; networkx in the small group); ``--engine NAME`` measures
that engine instead of ``ENGINES``, still beside the baselines
(``bench/conftest.py``).
Run: ``pytest bench/ -m bench --benchmark-json=bench.json`` (about a minute
on a quiet machine), then ``python -m streamspec.bench.ratios bench.json``.  On a busy
shared machine add ``--benchmark-timer=time.process_time`` (and
``--benchmark-disable-gc`` to keep collector passes out of the rounds;
``measure`` freezes the GC after warm-up instead).
"""
from __future__ import annotations

import functools

import pytest

from streamspec.spec.connectivity import Params
from streamspec.spec.errors import StreamspecError
from streamspec.spec.registry import Registry

from streamspec.bench.connectivity.generators import rmat_stream, workload
from streamspec.bench.connectivity.measure import pieces, warm_up
from streamspec.bench.connectivity.peers import PEERS, create

pytestmark = pytest.mark.bench

PROBLEM = "connectivity"
ENGINES = ["bic", "msf"]
BASELINES = ["rwc", "scipy", "dtree"]


@functools.lru_cache(maxsize=None)
def case(name: str):
    """(stream, params) of a group; cached so every subject sees the same arrays."""
    if name == "stream":
        stream = rmat_stream(50_000, 500_000, 1000, seed=7)
        r, s = 100, 5
    elif name == "small":
        stream = rmat_stream(5_000, 25_000, 50, seed=8)
        r, s = 100, 5
    else:
        raise KeyError(name)
    return stream, Params(r=r, s=s, workload=workload(stream, 100, seed=0))


def available(name: str) -> str:
    if name not in PEERS:
        try:
            Registry.get("connectivity", name)
        except StreamspecError as err:
            pytest.skip(f"engine {name!r}: {err}")
    warm_up(name)
    return name


def replay(name, stream, params):
    engine = create(name, params, hold_back=False)
    windows = 0
    for lo, hi in pieces(stream, params):
        windows += sum(1 for _ in engine.process(stream.batch(lo, lo + 1)))
        windows += sum(1 for _ in engine.process(stream.batch(lo + 1, hi)))
    return windows + len(engine.flush())


def expected_windows(stream, params) -> int:
    return (int(stream.t[-1]) - int(stream.t[0])) // params.s + 1


def test_stream(benchmark, subject):
    """Whole stream, slide by slide: throughput of the engine against its baselines."""
    name = available(subject)
    stream, params = case("stream")
    benchmark.group = "connectivity-ci-stream"
    benchmark.extra_info.update(subject=name, edges=len(stream), r=params.r, s=params.s)
    windows = benchmark.pedantic(replay, args=(name, stream, params), rounds=3, iterations=1)
    assert windows == expected_windows(stream, params)


@pytest.mark.baselines("rwc", "scipy", "dtree", "networkx")
def test_small(benchmark, subject):
    """A stream small enough that networkx per window finishes in about a second."""
    name = available(subject)
    stream, params = case("small")
    benchmark.group = "connectivity-ci-small"
    benchmark.extra_info.update(subject=name, edges=len(stream), r=params.r, s=params.s)
    windows = benchmark.pedantic(replay, args=(name, stream, params), rounds=3, iterations=1)
    assert windows == expected_windows(stream, params)


@pytest.mark.baselines("rwc", "scipy")
def test_window(benchmark, subject):
    """One steady-state window per round: its median is the typical window latency."""
    name = available(subject)
    stream, params = case("stream")
    cuts = pieces(stream, params)
    k = params.r // params.s
    engine = create(name, params, hold_back=False)
    for lo, hi in cuts[:k + 1]:                   # fill the first window and evaluate it
        list(engine.process(stream.batch(lo, hi)))
    upcoming = iter(cuts[k + 1:])
    rounds = 3 * k                                # three chunks' worth of windows
    rest = [None]

    def trigger():
        if rest[0] is not None:                   # the previous slide's inserts, untimed
            list(engine.process(rest[0]))
        lo, hi = next(upcoming)
        rest[0] = stream.batch(lo + 1, hi)
        return (stream.batch(lo, lo + 1),), {}

    def evaluate(edge):
        return sum(1 for _ in engine.process(edge))

    benchmark.group = "connectivity-ci-window"
    benchmark.extra_info.update(subject=name, window_edges=params.r * 1000, slides_per_window=k)
    produced = benchmark.pedantic(evaluate, setup=trigger, rounds=rounds, iterations=1)
    assert produced == 1
