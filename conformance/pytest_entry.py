"""The ``pytest11`` entry point: inert unless the conformance suite is asked for.

pytest loads entry-point plugins in every run of every project in the
environment, so this module does nothing by itself: it registers the real
plugin (``streamspec.conformance.plugin``, which adds ``--engine`` and
parametrizes the suite) only when the run asks for streamspec's suite:

- ``--engine NAME`` is on the command line (or in ``addopts``);
- ``STREAMSPEC_PROFILE`` is set;
- the run names the shipped suite (``pytest --pyargs streamspec.conformance``).

It imports nothing beyond pytest, so it cannot fail in an environment without
hypothesis or Spark; ``-p streamspec.conformance.plugin`` loads the plugin
explicitly (the project's own test run does).
"""
from __future__ import annotations

import os

import pytest

PLUGIN = "streamspec.conformance.plugin"


def asked(args) -> bool:
    """Does this pytest invocation ask for the streamspec conformance suite?"""
    if os.environ.get("STREAMSPEC_PROFILE"):
        return True
    return any(a == "--engine" or a.startswith("--engine=") or "streamspec.conformance" in a
               or "streamspec/conformance" in a for a in map(str, args))


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    if asked(args):
        early_config.pluginmanager.import_plugin(PLUGIN)
