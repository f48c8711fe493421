"""The conformance tests every problem runs, built once here.

A problem's ``tests/<problem>/test_conformance.py`` sets ``PROBLEM`` and binds
the tests this module builds; the pytest plugin then parametrizes them over the
registered engines (``--engine`` narrows them)::

    PROBLEM = "connectivity"
    test_matches_oracle_step_by_step, test_rejects_bad_records_without_state_change = \\
        conformance_tests(PROBLEM)

``assert_broken_engine_is_caught`` is the check that the suite itself works:
a deliberately broken engine must be caught, and its saved reproducer must
replay to a failure while the oracle passes it.
"""
from __future__ import annotations

from hypothesis import given

from streamspec.conformance import profiles, runner
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
