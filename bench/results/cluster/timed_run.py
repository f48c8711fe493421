"""``streamspec run`` with the driver's phases timed (bench/results/cluster/cluster-cost.md).

Wraps the job skeleton's steps (``pipeline.job.run``: session, check_output,
check_task_paths, the range scan's replay, materialise, the write, the summary) and prints
``# phase NAME START END`` (seconds since this process started) on stderr; the job runs
unchanged otherwise.  ``MEASURE_OLD_CHECK=1``: the executors' path check as it was
before the cut (``old_check``), for before/after runs in one session.  ``python bench/results/cluster/timed_run.py run connectivity ...``
"""
import functools
import os
import sys
import time

T0 = time.time()


def say(name, a, b):
    print(f"# phase {name} {a - T0:.2f} {b - T0:.2f}", file=sys.stderr, flush=True)


def timed(module, attr, name=None):
    fn = getattr(module, attr)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        a = time.time()
        try:
            return fn(*args, **kwargs)
        finally:
            say(name or attr, a, time.time())
    setattr(module, attr, wrapper)


def old_check(spark):
    """``check_task_paths`` as it was before the cut (``...mapPartitions(probe).distinct()``):
    during the check, ``mapPartitions`` returns its RDD ``distinct()``-ed again."""
    from pyspark.rdd import RDD
    check, plain = spark.check_task_paths, RDD.mapPartitions

    def once(self, f, *a, **k):     # the probe's mapPartitions only (distinct() calls it too)
        RDD.mapPartitions = plain
        return plain(self, f, *a, **k).distinct()

    def with_distinct(*args, **kwargs):
        RDD.mapPartitions = once
        try:
            return check(*args, **kwargs)
        finally:
            RDD.mapPartitions = plain
    spark.check_task_paths = with_distinct


def main():
    a = time.time()
    from streamspec.pipeline import cli, io, range_scan, spark
    from streamspec.pipeline.jobs import connectivity
    say("imports", a, time.time())
    for attr in ("session", "check_task_paths", "materialise", "checkpoint_dir"):
        timed(spark, attr)
    timed(range_scan, "materialise", "materialise(range)")
    for attr in ("check_output", "write_parquet_atomic", "recover_output"):
        timed(io, attr)
    timed(range_scan, "replay", "range_scan.replay")
    for attr in ("prepare", "summarize"):
        timed(connectivity, attr)
    if os.environ.get("MEASURE_OLD_CHECK") == "1":
        old_check(spark)
    code = cli.main(sys.argv[1:])
    say("end", T0, time.time())
    return code


if __name__ == "__main__":
    sys.exit(main())
