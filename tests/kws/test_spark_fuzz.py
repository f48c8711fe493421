"""Spark fuzzing of kws across partitions (issue 11): the pipeline's time-partitioned and
keyed replays of random cases against the oracle (``conformance.kws.partitioned_mismatch``,
through ``conformance.spark``), for several seeds and partition counts 1..4, and broken
engines it catches.  Small cases: the lane shares 2 cores."""
from __future__ import annotations

import pytest

from streamspec.conformance import kws as suite
from streamspec.conformance.broken.kws import IgnoresWatermarks, NoInstantNetting
from streamspec.conformance.spark import partitioned_failures, partitioned_mismatch
from streamspec.pipeline.jobs import kws as job
from streamspec.reference.kws import evaluate
from streamspec.spec.kws import Insert
from streamspec.spec.registry import Registry

# seeds whose cases have outputs at 3 or more instants: both lifespan models, ties, gaps
# longer than the window, arrivals at a tuple's end, deletions and schema changes
RICH = {10: 1, 147: 2, 267: 3, 271: 4, 11: 2, 58: 3, 82: 4, 258: 1}


def features(seeds) -> set:
    return set().union(*(suite.features(suite.random_case(s)) for s in seeds))


def test_the_rich_seeds_cover_what_partitioning_can_break():
    covered = features(RICH)
    assert {"window_model", "deletion_model", "tie", "gap_longer_than_window",
            "arrival_at_tuple_end", "delete", "add_edge", "remove_relation"} <= covered
    case = suite.random_case(147)
    streams = suite.keyed_streams(case)
    assert len(streams) == 3 and streams["k0"] == case.events
    tids = [{e.tid for e in s if isinstance(e, Insert)} for s in streams.values()]
    assert tids[1] <= tids[0] and tids[1]          # keys share tids: each key its own


@pytest.mark.spark
@pytest.mark.parametrize("engine", ["fullmesh", "forest", "partialmesh"])
def test_partitioned_replays_equal_the_oracle(spark, engine):
    engine_cls = Registry.get("kws", engine)
    seeds = RICH if engine == "fullmesh" else dict(list(RICH.items())[:3])
    for seed, partitions in seeds.items():
        assert partitioned_mismatch(spark, engine_cls, suite.random_case(seed), partitions) is None


@pytest.mark.spark
def test_partitioned_failures_over_seeds(spark):
    fullmesh = Registry.get("kws", "fullmesh")
    assert partitioned_failures(spark, fullmesh, range(6), 3) == []


def lost_by_ranges(case, partitions) -> bool:
    """Whether the broken engine's time ranges, replayed in-process, miss outputs."""
    got = []
    for lo, hi in job.time_ranges(case.events, partitions):
        events = job.range_events(case.events, lo, hi, case.params.window)
        got += job.run_range(IgnoresWatermarks, case.params, events, lo, hi)
    return sorted(got, key=repr) != sorted(evaluate(case.params, case.events), key=repr)


@pytest.mark.spark
def test_a_watermark_bug_only_partitioning_shows_is_caught(spark):
    """``IgnoresWatermarks`` passes the single-process check on every case here; only
    cutting time into ranges (each closed by a watermark) shows it."""
    cases = [(s, suite.random_case(s)) for s in RICH]
    wrong = [(s, c) for s, c in cases if c.params.window is not None and lost_by_ranges(c, 3)][:2]
    assert wrong
    for seed, case in wrong:
        assert suite.check(IgnoresWatermarks, case) is None
        found = partitioned_mismatch(spark, IgnoresWatermarks, case, 3)
        assert found is not None and "missing" in found.message, seed
        assert partitioned_mismatch(spark, IgnoresWatermarks, case, 1) is None   # one task flushes


@pytest.mark.spark
def test_a_broken_engine_fails_with_replayable_seeds(spark):
    seeds = [s for s in range(100) if suite.check(NoInstantNetting, suite.random_case(s))][:2]
    assert seeds
    failures = partitioned_failures(spark, NoInstantNetting, seeds, 2)
    assert [f.seed for f in failures] == seeds
    assert suite.load(failures[0].reproducer) == suite.random_case(seeds[0])
