"""Project-wide test fixtures: the one Spark session (starting Spark is expensive: one per
test process; the README's test command runs two, ``pytest -n 2``, one per core), and the
heap frozen around each test.

Every test marked ``spark`` in a process shares this session-scoped ``spark`` fixture:
``local[2]``, two shuffle partitions, adaptive execution off (the partition
counts a test asks for are the ones it gets), no UI.  Executors run this
interpreter (``streamspec.pipeline.spark.session`` sets ``PYSPARK_PYTHON``).  Property
tests over Spark use ``streamspec.conformance.profiles.spark_settings()`` (few examples).
"""
from __future__ import annotations

import gc

import pytest

from streamspec.conformance import profiles

# The project's own run: one hypothesis profile (STREAMSPEC_PROFILE, default dev) for every test.
profiles.load()

SPARK_CONF = {
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.adaptive.enabled": "false",
    "spark.ui.enabled": "false",
    "spark.default.parallelism": "2",
}


@pytest.fixture(scope="session")
def spark():
    from streamspec.pipeline.spark import session
    spark = session("local[2]", app_name="streamspec-tests", conf=SPARK_CONF)
    yield spark
    spark.stop()


@pytest.fixture(autouse=True)
def _older_heap_frozen(request):
    """Every object alive before a test (modules, numba's dispatchers, the Spark session,
    hypothesis' caches: most of a worker's heap late in a run, some 800,000 objects) is
    frozen while the test runs (``gc.freeze()``, constant time) and unfrozen after.  A
    collection inside the test, the benchmark harness's ``gc.collect()`` before each timed
    round above all (``bench.heap``), walks only what the test made: 474 such passes over
    the whole heap took 590 s of an ``-n 2`` run at load 8
    (``bench/results/ci/gc-and-numba.md``).  Nothing stays frozen for good, so no garbage
    outlives its collection by more than the test.  Tests of the collector's own handling
    (which must see an unfrozen process) are marked ``own_gc``."""
    if request.node.get_closest_marker("own_gc"):
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()

