"""Spark fuzzing of simjoin (docs/conformance.md): seeds checked on executors, and the
pipeline's partitioned replays (record ranges from the driver's frame, record ranges whose
tasks read Parquet row groups, keys) against the oracle for 1 to 4 partitions."""
from __future__ import annotations

import pytest

from streamspec.conformance.broken.simjoin import ClosedWindowEnd, ScoreOnlyOrder
from streamspec.conformance.simjoin import check, random_case
from streamspec.conformance.spark import fuzz, partitioned_failures, partitioned_mismatch
from streamspec.pipeline.jobs import simjoin as job
from streamspec.spec.registry import Registry
from streamspec.spec.simjoin import Record

pytestmark = pytest.mark.spark

# seeds whose cases have enough records for every partition count to cut them (checked below)
SEEDS_AND_PARTITIONS = [(3, 1), (0, 2), (10, 2), (17, 2), (4, 3), (16, 3), (11, 4), (19, 4)]


def records(case) -> list:
    return [e for e in case.events if isinstance(e, Record)]


def test_the_cases_are_worth_cutting():
    for seed, partitions in SEEDS_AND_PARTITIONS:
        case = random_case(seed)
        assert len(records(case)) >= 4 * partitions, seed
    joins = {random_case(s).params.join for s, _ in SEEDS_AND_PARTITIONS}
    assert joins == {"self", "rs"}


def test_exact_engines_pass_the_spark_fuzz(spark):
    for name in ("swoop", "base"):
        assert fuzz(spark, Registry.get("simjoin", name), range(60), partitions=4) == []


def test_partitioned_replays_equal_the_oracle(spark):
    swoop = Registry.get("simjoin", "swoop")
    for seed, partitions in SEEDS_AND_PARTITIONS:
        assert partitioned_mismatch(spark, swoop, random_case(seed), partitions) is None, seed


def test_string_ids_and_tokens_through_every_replay(spark):
    # "r0".."r28" sort so that the ranges' id spans meet: the task-read paths then check
    # ids across ranges with a Spark aggregation before they trust the replay
    import attrs
    case = random_case(11)
    events = [attrs.evolve(e, id=f"r{e.id}", tokens=[f"w{x}" for x in e.tokens])
              if isinstance(e, Record) else e for e in case.events]
    swoop = Registry.get("simjoin", "swoop")
    assert partitioned_mismatch(spark, swoop, attrs.evolve(case, events=events), 3) is None


def test_broken_engines_are_caught_by_the_partitioned_check(spark):
    for broken in (ClosedWindowEnd, ScoreOnlyOrder):
        wrong = [s for s in range(60) if check(broken, _records_only(random_case(s))) is not None]
        assert wrong, broken.name
        failures = partitioned_failures(spark, broken, wrong[:2], 3)
        assert [f.seed for f in failures] == wrong[:2], broken.name
        assert all("differs" in f.message or "rows" in f.message for f in failures)


def test_a_replay_without_its_halo_is_caught(spark, monkeypatch):
    # the pipeline's own mistake, not the engine's: a range that starts its engine at its
    # first record misses the pairs with the records before it
    swoop = Registry.get("simjoin", "swoop")
    case = random_case(3)
    assert partitioned_mismatch(spark, swoop, case, 3) is None
    monkeypatch.setattr(job, "halo_start", lambda ts, w, lo: lo)
    found = partitioned_mismatch(spark, swoop, case, 3)
    assert found is not None and "record ranges" in found.step


def _records_only(case):
    """``case`` without its ``Advance`` events (the pipeline's input has records only)."""
    import attrs
    events = records(case)
    return attrs.evolve(case, events=events, chunks=[len(events)] if events else [])
