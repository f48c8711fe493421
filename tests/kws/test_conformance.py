"""The S-KWS conformance suite, run on every registered kws engine (``--engine`` narrows it).

Examples per engine come from the hypothesis profile (``STREAMSPEC_PROFILE``).
A failure prints the shrunk stream as JSON lines and the command that replays it.
"""
from hypothesis import given

from conformance import kws as suite
from conformance.runner import ConformanceFailure, assert_conforms, describe_failure

PROBLEM = "kws"


@given(case=suite.cases())
def test_matches_oracle_step_by_step(engine_cls, case):
    try:
        assert_conforms(engine_cls, case)
    except ConformanceFailure as failure:
        raise AssertionError(describe_failure(engine_cls, failure)) from None


@given(bad=suite.invalid_cases())
def test_rejects_bad_records_without_state_change(engine_cls, bad):
    case, position, record, error = bad
    mismatch = suite.check_invalid(engine_cls, case, position, record, error)
    assert mismatch is None, str(mismatch)
