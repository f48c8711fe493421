"""The conformance tests every problem runs, built once here.

The shipped modules ``streamspec.conformance.test_<problem>`` (what
``pytest --pyargs streamspec.conformance --engine NAME`` runs) and the
project's ``tests/<problem>/test_conformance.py`` set ``PROBLEM`` and bind the
tests this module builds; the pytest plugin then parametrizes them over the
registered engines (``--engine`` narrows them)::

    PROBLEM = "connectivity"
    test_matches_oracle_step_by_step, test_rejects_bad_records_without_state_change = \\
        conformance_tests(PROBLEM)
    (test_state_survives_pickling_mid_stream, test_watermark_then_flush_equals_flush,
     test_strategy_draws_every_feature) = contract_tests(PROBLEM)

``assert_broken_engine_is_caught`` is the check that the suite itself works:
a deliberately broken engine must be caught, and its saved reproducer must
replay to a failure while the oracle passes it.
"""
from __future__ import annotations

from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from streamspec.conformance import contracts, profiles, runner
from streamspec.spec.registry import Registry


def conformance_tests(problem: str):
    """The step-by-step comparison with the oracle and the bad-record test of ``problem``."""
    suite = runner.suite(problem)
    settings = profiles.suite_settings()

    @settings
    @given(case=suite.cases())
    def test_matches_oracle_step_by_step(engine_cls, case):
        try:
            runner.assert_conforms(engine_cls, case)
        except runner.ConformanceFailure as failure:
            raise AssertionError(runner.describe_failure(engine_cls, failure)) from None

    @settings
    @given(bad=suite.invalid_cases())
    def test_rejects_bad_records_without_state_change(engine_cls, bad):
        case, position, record, error = bad
        mismatch = suite.check_invalid(engine_cls, case, position, record, error)
        assert mismatch is None, str(mismatch)

    return test_matches_oracle_step_by_step, test_rejects_bad_records_without_state_change


CONTRACT_EXAMPLES = 100     # per engine and contract check, whatever the profile (at most)
FEATURE_EXAMPLES = 500      # cases drawn (no engine runs) to find every feature


def contract_settings() -> settings:
    """The active profile's settings with at most ``CONTRACT_EXAMPLES`` examples."""
    active = profiles.suite_settings()
    return settings(active, max_examples=min(active.max_examples, CONTRACT_EXAMPLES))


def contract_tests(problem: str):
    """The contract checks of ``problem``: pickling mid-stream, watermarks, strategy coverage.

    The engine checks run ``min(profile's examples, CONTRACT_EXAMPLES)`` examples per
    engine (100 under ``ci``): they re-run what the step-by-step test covers, only
    with a pickle round trip or watermarks in between.  The coverage test draws
    ``FEATURE_EXAMPLES`` cases, derandomized, and runs no engine."""
    suite = runner.suite(problem)
    checked = contract_settings()

    @checked
    @given(case=suite.cases(), cut=st.integers(0, 8))
    def test_state_survives_pickling_mid_stream(engine_cls, case, cut):
        """Engine state is picklable (DESIGN.md): pickled after chunk ``cut``, the original
        and its unpickled copy go on exactly as an engine never pickled, through flush."""
        mismatch = contracts.check_pickling(engine_cls, case, cut)
        assert mismatch is None, f"{runner.engine_label(engine_cls)}: {mismatch}"

    @checked
    @given(case=suite.cases())
    def test_watermark_then_flush_equals_flush(engine_cls, case):
        mismatch = suite.check_watermark(engine_cls, case)
        assert mismatch is None, f"{runner.engine_label(engine_cls)}: {mismatch}"

    test_watermark_then_flush_equals_flush.__doc__ = suite.check_watermark.__doc__

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

    return (test_state_survives_pickling_mid_stream, test_watermark_then_flush_equals_flush,
            test_strategy_draws_every_feature)


def assert_broken_engine_is_caught(broken, failures_dir, examples: int = 300) -> None:
    """Fuzz ``broken`` (registered for the duration); it must fail and replay to a failure."""
    runner_dir = runner.FAILURES_DIR
    runner.FAILURES_DIR = failures_dir
    Registry.register(broken)
    try:
        report = runner.run(broken, examples=examples)
    finally:
        Registry.unregister(broken)
        runner.FAILURES_DIR = runner_dir
    assert report is not None, f"{broken.name} slipped through the conformance suite"
    assert f"--engine {broken.name} --replay" in report
    saved = list(failures_dir.glob("*.jsonl"))
    assert len(saved) == 1
    assert runner.replay(broken, saved[0]) is not None
    assert runner.replay(Registry.get(broken.problem, "oracle"), saved[0]) is None


def assert_pickling_breakage_is_caught(broken, examples: int = 100) -> None:
    """``broken`` agrees with the oracle when never pickled (the step-by-step check passes
    ``examples`` examples), but the pickling check must catch it within ``examples``
    derandomized examples (not shrunk: only catching it matters here)."""
    assert runner.run(broken, examples=examples) is None, f"{broken.name} fails the main check"
    caught = []

    @settings(max_examples=examples, derandomize=True, database=None, deadline=None,
              suppress_health_check=profiles.SLOW, phases=[Phase.generate])
    @given(case=runner.suite(broken.problem).cases(), cut=st.integers(0, 8))
    def fuzz(case, cut):
        mismatch = contracts.check_pickling(broken, case, cut)
        if mismatch is not None:
            caught.append(mismatch)
            raise AssertionError(str(mismatch))

    try:
        fuzz()
    except AssertionError:
        pass
    assert caught, f"{broken.name} slipped through the pickling check"
