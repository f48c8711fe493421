"""The connectivity conformance suite, run on every registered engine (``--engine`` narrows it).

Examples per engine come from the hypothesis profile (``STREAMSPEC_PROFILE``:
``ci`` = 1000, ``deep`` = 20000), with the contract checks (pickling
mid-stream, watermarks, strategy coverage: ``contract_tests``).  A failure
prints the shrunk stream as JSON lines and the command that replays it.
"""
from streamspec.conformance.testing import conformance_tests, contract_tests

PROBLEM = "connectivity"
test_matches_oracle_step_by_step, test_rejects_bad_records_without_state_change = \
    conformance_tests(PROBLEM)
(test_state_survives_pickling_mid_stream, test_watermark_then_flush_equals_flush,
 test_strategy_draws_every_feature) = contract_tests(PROBLEM)
