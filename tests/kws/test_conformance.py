"""The S-KWS conformance suite, run on every registered kws engine (``--engine`` narrows it).

Examples per engine come from the hypothesis profile (``STREAMSPEC_PROFILE``).
A failure prints the shrunk stream as JSON lines and the command that replays it.
"""
from streamspec.conformance.testing import conformance_tests

PROBLEM = "kws"
test_matches_oracle_step_by_step, test_rejects_bad_records_without_state_change = \
    conformance_tests(PROBLEM)
