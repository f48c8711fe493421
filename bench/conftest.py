"""pytest configuration of the shipped benchmark suites (``bench/test_*_bench.py``).

Loaded wherever the suites are collected: ``pytest bench/ -m bench`` in a
checkout, or ``pytest --pyargs streamspec.bench`` against an installed
streamspec (with its ``[bench]`` extra: pytest-benchmark).

- Registers the ``bench`` mark, so ``--strict-markers`` runs and runs outside
  this repository (no ``pyproject.toml`` declaring it) do not warn.
- ``--engine NAME`` (repeatable; ``NAME``, ``PROBLEM.NAME`` or
  ``NAME:key=value``; the option of the conformance plugin, which pytest loads
  as soon as ``--engine`` is on the command line): a suite then measures the
  chosen engines of its problem instead of its default ``ENGINES``, always
  beside its baselines (``BASELINES``, and a test's own
  ``@pytest.mark.baselines(...)``), so ``python -m streamspec.bench.ratios``
  still finds the ratios within each group.  A suite whose problem none of
  the chosen engines belongs to is skipped with that reason.

A suite module declares ``PROBLEM``, ``ENGINES`` (the default subjects) and
``BASELINES``; a test takes the ``subject`` argument (an engine name), which
this file parametrizes.
"""
from __future__ import annotations

import pytest

MARKS = ["bench: pytest-benchmark suites (bench lane)",
         "baselines(*names): the engines a bench test always measures beside the chosen ones"]


def pytest_configure(config):
    for line in MARKS:
        config.addinivalue_line("markers", line)


def chosen(config, problem: str) -> list[str] | None:
    """The ``--engine`` choices of ``problem`` (None when ``--engine`` is not given)."""
    if not config.getoption("--engine", default=None):
        return None
    from streamspec.conformance.plugin import selected_engines
    return [name for _, name in selected_engines(config, problem)]


@pytest.hookimpl(trylast=True)    # after the test's own parametrize marks: the subject varies fastest
def pytest_generate_tests(metafunc):
    if "subject" not in metafunc.fixturenames:
        return
    module = metafunc.module
    problem = getattr(module, "PROBLEM", None)
    if problem is None:
        raise pytest.UsageError(f"{module.__name__} takes `subject` but sets no PROBLEM")
    mark = metafunc.definition.get_closest_marker("baselines")
    baselines = list(mark.args) if mark else list(getattr(module, "BASELINES", []))
    picked = chosen(metafunc.config, problem)
    if picked == []:
        metafunc.parametrize("subject", [pytest.param(None, id="none", marks=pytest.mark.skip(
            reason=f"--engine {metafunc.config.getoption('--engine')} selects no {problem} "
                   f"engine"))])
        return
    engines = list(module.ENGINES) if picked is None else picked
    subjects = list(dict.fromkeys(engines + baselines))     # engines first, no repeats
    metafunc.parametrize("subject", subjects)
