"""Project-wide test fixtures: the one Spark session (starting Spark is expensive: one per
test process; the README's test command runs two, ``pytest -n 2``, one per core).

Every test marked ``spark`` in a process shares this session-scoped ``spark`` fixture:
``local[2]``, two shuffle partitions, adaptive execution off (the partition
counts a test asks for are the ones it gets), no UI.  Executors run this
interpreter (``streamspec.pipeline.spark.session`` sets ``PYSPARK_PYTHON``).  Property
tests over Spark use ``streamspec.conformance.profiles.spark_settings()`` (few examples).
"""
from __future__ import annotations

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
