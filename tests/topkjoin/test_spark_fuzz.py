"""Spark fuzzing of the top-k join: random cases as keys of one keyed input, replayed by the
pipeline over several partition counts, each key against the oracle and the single-process run
(``streamspec.conformance.topkjoin.partitioned_mismatch``)."""
from __future__ import annotations

from collections import Counter

import pytest

from streamspec.conformance.broken.topkjoin import BROKEN_COLUMNAR, CountsOnColumns
from streamspec.conformance.spark import partitioned_failures, partitioned_mismatch
from streamspec.conformance.topkjoin import (Case, check, keyed_streams, must_be_exact,
                                             random_case)
from streamspec.reference.topkjoin import evaluate
from streamspec.spec.registry import Registry
from streamspec.spec.topkjoin import ItemBatch


def _columnar(engine_cls, items, params):
    engine = engine_cls(params)
    batch = ItemBatch.of(items)
    return list(engine.process(batch)) + engine.flush()


def _half_values(seeds):
    """Seeds whose stream has an x of 0.5 in a window's top-K (where truncation shows)."""
    return [s for s in seeds if random_case(s).items
            and _columnar(CountsOnColumns, random_case(s).items, random_case(s).params)
            != evaluate(random_case(s).items, random_case(s).params)]


def test_keyed_streams_are_subsequences_of_the_case_in_order():
    case = random_case(12)
    streams = keyed_streams(case)
    assert streams[0] == case.items
    dealt = [it for k in (1, 2, 3) for it in streams.get(k, [])]
    assert Counter(dealt) == Counter(case.items)
    for k in (1, 2, 3):
        rest = iter(case.items)      # a subsequence: each item found after the previous one
        assert all(any(it == other for other in rest) for it in streams.get(k, []))
    assert streams[4][0].ts == case.items[0].ts + case.params.omega + case.params.beta + 1
    assert keyed_streams(case) == streams             # seeded by the case: replayable


def test_the_columnar_breakage_passes_the_step_by_step_check():
    """What the Spark check adds: ``check`` feeds ``Item`` lists, so it never sees the bug."""
    seeds = _half_values(range(60))[:6]
    assert seeds
    assert all(check(CountsOnColumns, random_case(s)) is None for s in seeds)


@pytest.mark.spark
@pytest.mark.parametrize("engine,runs", [
    ("oracle", [(1, 1), (2, 2), (5, 3), (8, 5)]),
    ("at-tsm", [(3, 2), (9, 4)]),
    ("at-asm", [(4, 3), (13, 1)]),
    ("wsj-rnd", [(6, 2), (21, 3)]),
    ("topkn", [(7, 4), (10, 2)]),
])
def test_keyed_replay_over_partitions_agrees_with_the_oracle(spark, engine, runs):
    engine_cls = Registry.get("topkjoin", engine)
    for seed, partitions in runs:
        case = random_case(seed)
        assert partitioned_mismatch(spark, engine_cls, case, partitions) is None, (seed, partitions)


def test_some_fuzzed_keys_are_exact_cases_for_approximate_engines():
    # the oracle comparison is not vacuous for approximate engines: some keys of the seeds
    # above fall under their exactness conditions (no Spark needed to see it)
    at_tsm = Registry.get("topkjoin", "at-tsm")
    exact = [must_be_exact(at_tsm, Case(random_case(s).params, items, [len(items)]))
             for s in (3, 9, 4, 13, 6, 21, 7, 10) for items in keyed_streams(random_case(s)).values()]
    assert any(exact) and not all(exact)


@pytest.mark.spark
def test_the_spark_check_catches_the_columnar_breakage(spark):
    for seed, partitions in zip(_half_values(range(60))[:2], (2, 3)):
        found = partitioned_mismatch(spark, BROKEN_COLUMNAR[0], random_case(seed), partitions)
        assert found is not None and "differs from" in found.message, seed


@pytest.mark.spark
def test_partitioned_failures_dispatches_to_topkjoin(spark):
    oracle = Registry.get("topkjoin", "oracle")
    assert partitioned_failures(spark, oracle, range(30, 33), 2) == []
    failures = partitioned_failures(spark, CountsOnColumns, _half_values(range(60))[:1], 2)
    assert len(failures) == 1 and failures[0].reproducer.startswith('{"problem": "topkjoin"')
