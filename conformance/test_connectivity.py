"""The shipped connectivity conformance suite: every registered engine against the oracle.

Run it on an installed engine with
``pytest --pyargs streamspec.conformance --engine NAME`` (``STREAMSPEC_PROFILE``
picks the examples: dev 200, ci 1000, deep 20000).  The tests are built by
``streamspec.conformance.testing``; the project's own run binds the same ones in
``tests/connectivity/test_conformance.py``.
"""
from streamspec.conformance.testing import conformance_tests, contract_tests

PROBLEM = "connectivity"
test_matches_oracle_step_by_step, test_rejects_bad_records_without_state_change = \
    conformance_tests(PROBLEM)
(test_state_survives_pickling_mid_stream, test_watermark_then_flush_equals_flush,
 test_strategy_draws_every_feature) = contract_tests(PROBLEM)
