"""Hypothesis profiles of the conformance suite, chosen by ``STREAMSPEC_PROFILE``.

- ``dev`` (default): 200 examples, random seed: quick local runs.
- ``ci``: 1000 examples per engine, derandomized so CI is repeatable.
- ``spark``: 15 examples, for tests that start Spark jobs.
- ``deep``: 20000 examples per engine (the deep conformance lane).

``STREAMSPEC_EXAMPLES=N`` (a positive integer) overrides the profile's number
of examples for the suite's tests, e.g. for a quick smoke run of the shipped
suite on a new engine.

They are registered namespaced (``streamspec.dev``, ``streamspec.ci``, ...) and
never loaded globally by the installed plugin: the suite's own tests carry their
settings (``suite_settings()``), so installing streamspec changes no other
project's hypothesis settings.  The project's own test run loads one for all its
tests (``tests/conftest.py``).  Every profile has ``deadline=None``: the first
call of an engine compiles numba kernels.
"""
from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PREFIX = "streamspec."
PROFILES = {
    "dev": dict(max_examples=200),
    "ci": dict(max_examples=1000, derandomize=True, print_blob=True),
    "spark": dict(max_examples=15, derandomize=True),
    "deep": dict(max_examples=20000),
}
SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

for _name, _kw in PROFILES.items():
    settings.register_profile(PREFIX + _name, deadline=None, suppress_health_check=SLOW, **_kw)


def active() -> str:
    """The short name of the profile ``STREAMSPEC_PROFILE`` selects (``streamspec.`` optional)."""
    name = os.environ.get("STREAMSPEC_PROFILE") or "dev"
    short = name.removeprefix(PREFIX)
    if short not in PROFILES:
        raise ValueError(f"STREAMSPEC_PROFILE={name!r}: expected one of "
                         f"{', '.join(sorted(PROFILES))}")
    return short


def examples() -> int | None:
    """``STREAMSPEC_EXAMPLES`` as a positive int, or None when unset."""
    text = os.environ.get("STREAMSPEC_EXAMPLES")
    if not text:
        return None
    if not text.strip().isdigit() or int(text) < 1:
        raise ValueError(f"STREAMSPEC_EXAMPLES={text!r}: expected a positive integer")
    return int(text)


def suite_settings() -> settings:
    """The active profile's settings (``STREAMSPEC_EXAMPLES`` overriding its number of
    examples), to decorate the suite's own property tests with."""
    active_settings = settings.get_profile(PREFIX + active())
    n = examples()
    return settings(active_settings, max_examples=n) if n else settings(active_settings)


def load() -> str:
    """Load the active profile globally (the project's own test run only); its name."""
    name = active()
    settings.load_profile(PREFIX + name)
    return name


def spark_settings():
    """Settings for tests that run Spark jobs, whatever the active profile."""
    return settings(settings.get_profile(PREFIX + "spark"))
