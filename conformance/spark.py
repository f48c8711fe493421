"""Spark fuzzing: many seeds, many executors.

``fuzz(spark, engine_cls, seeds)`` spreads integer seeds over Spark
partitions; each executor builds a stream from each seed with the problem's
plain ``random``-based generator (``conformance.<problem>.random_case``) and
checks the engine against the oracle step by step (``check``).  Failures come
back to the driver with their seed and the case as JSON lines (``dump``), so
one seed replays anywhere::

    python -m streamspec.conformance.spark --engine bic --seeds 2000 --partitions 8

A failing seed is saved as a reproducer and replayed with
``streamspec conform connectivity --engine bic --replay FILE``.

``partitioned_mismatch`` checks the other Spark property, for every problem:
the pipeline's Spark replay of a case spread over partitions (exact time or
record ranges where the problem allows them, keys otherwise) equals the
oracle, for any partition count.  Each problem's conformance module defines
it (``conformance.<problem>.partitioned_mismatch``); ``partitioned_failures``
runs it over seeds::

    python -m streamspec.conformance.spark --problem simjoin --engine swoop --partitioned 3
"""
from __future__ import annotations

import argparse
import sys
import traceback

import attrs

from streamspec.conformance.runner import Mismatch, save_reproducer, suite


@attrs.frozen(order=True)
class SeedFailure:
    """One failing seed: what went wrong and the case to replay."""

    seed: int
    message: str
    reproducer: str = attrs.field(eq=False, order=False)   # JSON lines (``suite.dump``)


def check_seeds(engine_cls, problem: str):
    """The executor side: ``seeds -> failures`` (a ``mapPartitions`` function)."""
    def run(seeds):
        checks = suite(problem)
        for seed in seeds:
            case = None
            try:
                case = checks.random_case(seed)
                mismatch = checks.check(engine_cls, case)
            except Exception as err:  # a crash is a failure of that seed, not of the run
                detail = traceback.format_exception_only(type(err), err)[-1].strip()
                yield (seed, f"raised {detail}", checks.dump(case) if case is not None else "")
                continue
            if mismatch is not None:
                yield (seed, str(mismatch), checks.dump(case))
    return run


def fuzz(spark, engine_cls, seeds, partitions: int | None = None) -> list[SeedFailure]:
    """Check ``engine_cls`` on the case of every seed; the failures, by seed."""
    seeds = [int(s) for s in seeds]
    if not seeds:
        return []
    partitions = partitions or spark.sparkContext.defaultParallelism
    rdd = spark.sparkContext.parallelize(seeds, min(partitions, len(seeds)))
    found = rdd.mapPartitions(check_seeds(engine_cls, engine_cls.problem)).collect()
    return sorted(SeedFailure(*f) for f in found)


def partitioned_mismatch(spark, engine_cls, case, partitions: int) -> Mismatch | None:
    """The problem's Spark replay of ``case`` over ``partitions`` (exact time or record ranges,
    or keys) against the oracle: ``conformance.<problem>.partitioned_mismatch``."""
    return suite(engine_cls.problem).partitioned_mismatch(spark, engine_cls, case, partitions)


def partitioned_failures(spark, engine_cls, seeds, partitions: int) -> list[SeedFailure]:
    """``partitioned_mismatch`` on the case of every seed; the failures, by seed."""
    checks = suite(engine_cls.problem)
    failures = []
    for seed in seeds:
        case = checks.random_case(int(seed))
        mismatch = partitioned_mismatch(spark, engine_cls, case, partitions)
        if mismatch is not None:
            failures.append(SeedFailure(int(seed), str(mismatch), checks.dump(case)))
    return failures


def main(argv: list[str] | None = None) -> int:
    from streamspec.pipeline.spark import session
    from streamspec.spec.registry import Registry

    parser = argparse.ArgumentParser(prog="python -m streamspec.conformance.spark",
                                     description="fuzz an engine against the oracle on Spark")
    parser.add_argument("--problem", default="connectivity")
    parser.add_argument("--engine", required=True)
    parser.add_argument("--seeds", type=int, default=1000, help="how many seeds (default 1000)")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--partitions", type=int, default=None)
    parser.add_argument("--partitioned", type=int, default=None, metavar="P",
                        help="instead: replay each seed's case through the pipeline over P "
                             "partitions against the oracle (default: off)")
    parser.add_argument("--master", default=None)
    args = parser.parse_args(argv)
    engine_cls = Registry.get(args.problem, args.engine)
    spark = session(args.master, app_name=f"streamspec fuzz {args.problem}.{args.engine}")
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    failures = (partitioned_failures(spark, engine_cls, seeds, args.partitioned)
                if args.partitioned else fuzz(spark, engine_cls, seeds, args.partitions))
    print(f"{args.problem}.{args.engine}: {len(seeds)} seeds, {len(failures)} failing")
    for failure in failures[:10]:
        print(f"seed {failure.seed}: {failure.message}")
        if failure.reproducer:
            path, command = save_reproducer(engine_cls, suite(args.problem).load(failure.reproducer))
            print(f"  saved {path}\n  replay: {command}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
