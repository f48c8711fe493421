"""The S-KWS (kws) conformance suite in the project's own run, on every registered engine
(``--engine`` narrows it): the checks of ``streamspec.conformance.checks`` (step by step
against the oracle with pickle round trips, bad records, watermarks), the profile's
examples each (``STREAMSPEC_PROFILE``), and the strategy's coverage.  A failure writes
one reproducer per distinct failure and prints the command that replays it.
"""
from streamspec.conformance.testing import bind

PROBLEM = "kws"
bind(globals(), PROBLEM)
