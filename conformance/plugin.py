"""The pytest plugin of the conformance suite.

Loaded explicitly (``-p streamspec.conformance.plugin``, as the project's own
test run does) or by the inert ``pytest11`` entry point
(``streamspec.conformance.pytest_entry``) when a run asks for the suite.  A
third party runs the shipped suite on its engine with
``pytest --pyargs streamspec.conformance --engine NAME``.

- ``--engine NAME`` (repeatable; ``bic`` or ``connectivity.bic``): run the
  conformance tests only on these engines.  Default: every registered engine.
- A test that takes the ``engine_cls`` argument is parametrized over the
  registered engines of its module's ``PROBLEM``.
- Known gaps are data (``conformance/known_gaps.toml``): such an engine's tests
  are marked ``xfail(strict=True)`` with the recorded reason, so they show in
  the report and fail loudly once fixed.  Nothing is skipped silently.
- The report header names the hypothesis profile and the engines under test.
- Hypothesis settings are the suite's own (``profiles.suite_settings()`` on its
  tests); nothing is loaded globally, so other tests in the run keep theirs.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from streamspec.spec.errors import StreamspecError

KNOWN_GAPS = Path(__file__).with_name("known_gaps.toml")


def pytest_addoption(parser):
    group = parser.getgroup("streamspec")
    group.addoption("--engine", action="append", default=[],
                    help="run the conformance suite only on these engines "
                         "(repeatable; NAME or PROBLEM.NAME; default: all registered)")


def pytest_configure(config):
    try:
        import hypothesis  # noqa: F401  (the suite is property-based)
    except ImportError:
        raise pytest.UsageError(
            "the streamspec conformance suite needs hypothesis: pip install 'hypothesis>=6.100' "
            "(or reinstall streamspec, which depends on it)") from None
    from streamspec.conformance import profiles
    try:
        config._streamspec_profile = profiles.active()
        config._streamspec_examples = profiles.examples()
    except ValueError as err:
        raise pytest.UsageError(str(err)) from None
    if config.getoption("--engine"):
        # a wrong --engine is a usage error now, not a collection error in every module
        from streamspec.spec.registry import Registry
        for problem in sorted({p for p, _ in Registry.names()}):
            selected_engines(config, problem)


def pytest_report_header(config):
    from streamspec.spec.registry import Registry
    chosen = config.getoption("--engine") or ["all"]
    engines = ", ".join(f"{p}.{n}" for p, n in Registry.names())
    override = config._streamspec_examples
    examples = f" (STREAMSPEC_EXAMPLES={override})" if override else ""
    return [f"streamspec: hypothesis profile {config._streamspec_profile!r}{examples}, --engine {chosen}",
            f"streamspec: registered engines: {engines}"]


def known_gaps() -> dict:
    if not KNOWN_GAPS.exists():
        return {}
    with KNOWN_GAPS.open("rb") as f:
        return tomllib.load(f)


def selected_engines(config, problem: str) -> list[tuple[str, str]]:
    from streamspec.spec.registry import Registry
    names = Registry.names(problem)
    wanted = config.getoption("--engine")
    if not wanted:
        return names
    picked = [(p, n) for p, n in names if n in wanted or f"{p}.{n}" in wanted]
    # a variant with options (``fullmesh:purge=eager``, ``kws.fullmesh:purge=eager``)
    for w in wanted:
        base, colon, opts = w.partition(":")
        if colon:
            for p, n in names:
                if base in (n, f"{p}.{n}"):
                    try:
                        Registry.get(p, f"{n}:{opts}")
                    except StreamspecError as exc:
                        raise pytest.UsageError(f"--engine {w}: {exc}") from None
                    picked.append((p, f"{n}:{opts}"))
    # the suite's own broken engines (``broken-...``, ``streamspec.conformance.broken``)
    mutants = {w: _mutant(problem, w) for w in wanted if _mutant(problem, w) is not None}
    picked += [(problem, m.name) for m in mutants.values()]
    everything = {n for _, n in Registry.names()} | {f"{p}.{n}" for p, n in Registry.names()}
    unknown = [w for w in wanted if w.partition(":")[0] not in everything and not _is_mutant(w)]
    if unknown:
        raise pytest.UsageError(f"--engine {unknown}: not registered (see `streamspec engines`)")
    return picked


def _is_mutant(wanted: str) -> bool:
    return wanted.rpartition(".")[2].startswith("broken-")


def _mutant(problem: str, wanted: str):
    """The broken engine ``wanted`` names (``broken-x`` or ``PROBLEM.broken-x``), or None."""
    if not _is_mutant(wanted):
        return None
    prefix, dot, name = wanted.rpartition(".")
    if dot and prefix != problem:
        return None
    from streamspec.conformance import broken
    return broken.find(problem, name) if hasattr(broken, "find") else None


def _no_engine_reason(config, problem: str) -> str:
    return f"--engine {config.getoption('--engine')} selects no {problem} engine"


@pytest.fixture
def problem_under_test(request) -> str:
    """The test module's ``PROBLEM``, for suite tests that run no engine (strategy
    coverage): skipped with the reason when ``--engine`` selects none of its engines."""
    problem = getattr(request.module, "PROBLEM", None)
    if problem is None:
        raise pytest.UsageError(f"{request.module.__name__} uses problem_under_test but sets no PROBLEM")
    if request.config.getoption("--engine") and not selected_engines(request.config, problem):
        pytest.skip(_no_engine_reason(request.config, problem))
    return problem


def pytest_generate_tests(metafunc):
    if "engine_cls" not in metafunc.fixturenames:
        return
    from streamspec.spec.registry import Registry
    problem = getattr(metafunc.module, "PROBLEM", None)
    if problem is None:
        raise pytest.UsageError(f"{metafunc.module.__name__} uses engine_cls but sets no PROBLEM")
    gaps = known_gaps().get(problem, {})
    params = []
    for p, n in selected_engines(metafunc.config, problem):
        marks = []
        if n in gaps:
            marks.append(pytest.mark.xfail(reason=f"known gap: {gaps[n]}", strict=True))
        from streamspec.conformance.cli import resolve
        params.append(pytest.param(resolve(p, n), id=n, marks=marks))
    if not params:   # --engine names no engine of this problem: say so, not a bare empty set
        params = [pytest.param(None, id="none", marks=pytest.mark.skip(
            reason=_no_engine_reason(metafunc.config, problem)))]
    metafunc.parametrize("engine_cls", params)
