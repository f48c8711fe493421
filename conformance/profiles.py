"""Hypothesis profiles, chosen by the ``STREAMSPEC_PROFILE`` environment variable.

- ``dev`` (default): 200 examples, random seed: quick local runs.
- ``ci``: 1000 examples per engine, derandomized so CI is repeatable.
- ``spark``: 15 examples, for tests that start Spark jobs.
- ``deep``: 20000 examples per engine (the deep conformance lane).

Every profile has ``deadline=None``: the first call of an engine compiles numba kernels.
"""
from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILES = {
    "dev": dict(max_examples=200),
    "ci": dict(max_examples=1000, derandomize=True, print_blob=True),
    "spark": dict(max_examples=15, derandomize=True),
    "deep": dict(max_examples=20000),
}
SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

for _name, _kw in PROFILES.items():
    settings.register_profile(_name, deadline=None, suppress_health_check=SLOW, **_kw)


def active() -> str:
    return os.environ.get("STREAMSPEC_PROFILE", "dev")


def load() -> str:
    name = active()
    if name not in PROFILES:
        raise ValueError(f"STREAMSPEC_PROFILE={name!r}: expected one of {sorted(PROFILES)}")
    settings.load_profile(name)
    return name


def spark_settings():
    """Settings for tests that run Spark jobs, whatever the active profile."""
    return settings(settings.get_profile("spark"))
