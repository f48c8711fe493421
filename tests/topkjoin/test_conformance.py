"""The top-k join conformance suite, run on every registered engine (``--engine`` narrows it).

Every engine is compared with the oracle step by step on the cases where the
note proves it exact (``exact_when``: static remote data, K+N covering the
window, unlimited budget); on every case the invariants are checked (budget,
window ids, ranking, scores from the replica, window marks); then the contract
checks (``contract_tests``).
"""
from streamspec.conformance.test_topkjoin import test_every_engine_is_exact_on_static_remote_data  # noqa: F401
from streamspec.conformance.testing import conformance_tests, contract_tests

PROBLEM = "topkjoin"
test_matches_oracle_step_by_step, test_rejects_bad_records_without_state_change = \
    conformance_tests(PROBLEM)
(test_state_survives_pickling_mid_stream, test_watermark_then_flush_equals_flush,
 test_strategy_draws_every_feature) = contract_tests(PROBLEM)
