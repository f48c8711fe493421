"""streamspec.conformance.spark: seeds fuzzed on executors; partitioned replays against the oracle."""
from __future__ import annotations

import pytest

from streamspec.conformance.broken.connectivity import ClosedWindowEnd, NoExpiry
from streamspec.conformance.connectivity import check, load, random_case
from streamspec.conformance.spark import SeedFailure, check_seeds, fuzz, partitioned_mismatch
from streamspec.reference.connectivity import OracleEngine, evaluate
from streamspec.spec.registry import Registry

SEEDS = range(40)


def single_process(engine_cls, case):
    engine = engine_cls(case.params)
    return list(engine.process(case.edges)) + list(engine.flush())


class Crashes(OracleEngine):
    name = "crashes"

    def _run(self, u, v, t, upto):
        raise RuntimeError("kernel fell over")


def test_check_seeds_reports_crashes_with_their_case():
    got = list(check_seeds(Crashes, "connectivity")(range(30)))
    assert got and all("RuntimeError: kernel fell over" in message for _, message, _ in got)
    seed, _, text = got[0]
    assert load(text).edges == random_case(seed).edges


@pytest.mark.spark
def test_exact_engines_pass_the_spark_fuzz(spark):
    for name in ("rwc", "bic"):
        assert fuzz(spark, Registry.get("connectivity", name), SEEDS, partitions=4) == []


@pytest.mark.spark
def test_a_broken_engine_fails_with_replayable_seeds(spark):
    failures = fuzz(spark, NoExpiry, SEEDS, partitions=3)
    local = [s for s in SEEDS if check(NoExpiry, random_case(s)) is not None]
    assert [f.seed for f in failures] == local and local
    first = failures[0]
    assert isinstance(first, SeedFailure) and load(first.reproducer).edges == random_case(first.seed).edges


@pytest.mark.spark
def test_partitioned_replay_against_the_oracle(spark):
    bic = Registry.get("connectivity", "bic")
    for seed, partitions in [(1, 3), (2, 1), (5, 4)]:
        assert partitioned_mismatch(spark, bic, random_case(seed), partitions) is None
    wrong = [s for s in range(40) if single_process(ClosedWindowEnd, random_case(s))
             != evaluate(random_case(s).edges, random_case(s).params)][:2]
    assert wrong
    for seed in wrong:
        assert partitioned_mismatch(spark, ClosedWindowEnd, random_case(seed), 2) is not None
