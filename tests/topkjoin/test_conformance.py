"""The top-k join conformance suite, run on every registered engine (``--engine`` narrows it).

Every engine is compared with the oracle step by step on the cases where the
note proves it exact (``exact_when``: static remote data, K+N covering the
window, unlimited budget); on every case the invariants are checked (budget,
window ids, ranking, scores from the replica, window marks).
"""
from hypothesis import given

from conformance import topkjoin as suite
from conformance.runner import ConformanceFailure, assert_conforms, describe_failure

PROBLEM = "topkjoin"


@given(case=suite.cases())
def test_matches_oracle_step_by_step(engine_cls, case):
    try:
        assert_conforms(engine_cls, case)
    except ConformanceFailure as failure:
        raise AssertionError(describe_failure(engine_cls, failure)) from None


def test_every_engine_is_exact_on_static_remote_data(engine_cls):
    # the note: "with a static remote dataset every engine equals the oracle"
    assert "static" in engine_cls.exact_when


@given(bad=suite.invalid_cases())
def test_rejects_bad_records_without_state_change(engine_cls, bad):
    case, position, record, error = bad
    mismatch = suite.check_invalid(engine_cls, case, position, record, error)
    assert mismatch is None, str(mismatch)
