"""The pytest tests of the conformance suite, built once here from ``checks.CHECKS``.

The shipped modules ``streamspec.conformance.test_<problem>`` (what
``pytest --pyargs streamspec.conformance --engine NAME`` runs) and the
project's ``tests/<problem>/test_conformance.py`` bind them with::

    PROBLEM = "connectivity"
    bind(globals(), PROBLEM)

which defines ``test_<check>`` for every check of ``checks.CHECKS`` (the very
checks ``streamspec conform`` runs, through the same ``runner.run_check``,
with the active profile's examples for each) and
``test_strategy_draws_every_feature``.  The pytest plugin parametrizes the
engine tests over the registered engines (``--engine`` narrows them).

``assert_pickling_breakage_is_caught`` checks the suite itself on a mutant that is
right until pickled (``streamspec.conformance.mutation`` and the mutation gate's
tests do the rest).
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings

from streamspec.conformance import checks, profiles, runner

FEATURE_EXAMPLES = 500      # cases drawn (no engine runs) to find every feature


def check_test(check):
    """The pytest test of one check: the profile's examples, one report per distinct failure."""

    def test(engine_cls):
        reason = runner.not_applicable(engine_cls, check)
        if reason:          # an approximate engine and an oracle check (the suite module says why)
            pytest.skip(reason)
        active = profiles.suite_settings()
        failures, _ = runner.run_check(engine_cls, check, active.max_examples, base=active)
        if failures:
            pytest.fail("\n\n".join(f.text for f in failures), pytrace=False)

    test.__name__ = f"test_{check.name}"
    test.__qualname__ = test.__name__
    test.__doc__ = f"The engine {check.title} (``checks.{check.name}``)."
    return test


def strategy_test(problem: str):
    suite = runner.suite(problem)

    def test_strategy_draws_every_feature(problem_under_test):
        """``cases()`` draws every situation it claims (``FEATURES`` of the problem's
        conformance module) within ``FEATURE_EXAMPLES`` derandomized examples."""
        seen = set()

        @settings(max_examples=FEATURE_EXAMPLES, derandomize=True, database=None, deadline=None,
                  suppress_health_check=profiles.SLOW)
        @given(case=suite.cases())
        def draw(case):
            seen.update(suite.features(case))

        draw()
        assert seen <= suite.FEATURES, f"features() names unknown features {seen - suite.FEATURES}"
        missing = suite.FEATURES - seen
        assert not missing, f"{problem} strategy never drew {sorted(missing)} in {FEATURE_EXAMPLES} cases"

    return test_strategy_draws_every_feature


def bind(namespace: dict, problem: str) -> None:
    """Define the suite's tests of ``problem`` in a test module's ``namespace``."""
    runner.suite(problem)
    namespace.setdefault("PROBLEM", problem)
    for check in checks.CHECKS:
        namespace[f"test_{check.name}"] = check_test(check)
    namespace["test_strategy_draws_every_feature"] = strategy_test(problem)


def assert_pickling_breakage_is_caught(broken, examples: int = 100) -> None:
    """``broken`` agrees with the oracle when never pickled (the step-by-step check with no
    round trips), but the checks with round trips must catch it within ``examples``
    derandomized examples."""
    from hypothesis import strategies as st
    suite = runner.suite(broken.problem)
    caught = []

    def plain(case):
        runner.assert_conforms(broken, case)

    _derandomized(("plain", broken.problem, examples), suite.cases(), examples, plain)
    step = checks.get("step_by_step")

    def fuzz(example):
        mismatch = step.run(suite, broken, example)
        if mismatch is not None:
            caught.append(mismatch)
            raise AssertionError(str(mismatch))

    try:
        _derandomized(("trips", broken.problem, examples),
                      st.tuples(suite.cases(), checks.trips()), examples, fuzz)
    except AssertionError:
        pass
    assert caught, f"{broken.name} slipped through the pickle round trips"


_DRAWN: dict[tuple, tuple[list[bytes], bool]] = {}


def _derandomized(key: tuple, strategy, examples: int, body) -> None:
    """``body`` on the examples of a derandomized hypothesis run of ``strategy`` (``examples``
    of them, generation only: no shrinking), up to the first one ``body`` fails on (its
    exception propagates).

    A derandomized run draws the same sequence whatever ``body`` is, up to the first example
    that fails (nothing else steers hypothesis), so the examples drawn are kept per process
    under ``key`` (pickled) with whether they were the whole run, and the next call with
    ``key`` (the next mutant of the problem) runs ``body`` on those first: when they are the
    whole run, or ``body`` fails among them, that is what hypothesis would have done; else
    hypothesis runs afresh (and longer kept examples replace the shorter)."""
    import pickle

    from hypothesis import Phase
    from hypothesis.control import current_build_context
    kept, whole = _DRAWN.get(key, ([], False))
    for blob in kept:
        body(pickle.loads(blob))
    if whole:
        return
    drawn: list[bytes] = []

    @settings(max_examples=examples, derandomize=True, database=None, deadline=None,
              suppress_health_check=profiles.SLOW, phases=[Phase.generate])
    @given(example=strategy)
    def run(example):
        if not current_build_context().is_final:    # not hypothesis' replay for its report
            drawn.append(pickle.dumps(example))
        body(example)

    try:
        run()
    except BaseException:
        if len(drawn) > len(kept):
            _DRAWN[key] = (drawn, False)
        raise
    _DRAWN[key] = (drawn, True)
