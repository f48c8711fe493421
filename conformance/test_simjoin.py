"""The shipped simjoin conformance suite: every registered engine against the oracle.

Run it on an installed engine with
``pytest --pyargs streamspec.conformance --engine NAME`` (``STREAMSPEC_PROFILE``
picks the examples per check: dev 200, ci 1000, deep 20000;
``STREAMSPEC_EXAMPLES=N`` overrides).  The tests are the checks of
``streamspec.conformance.checks`` (``streamspec conform simjoin`` runs the same),
bound by ``streamspec.conformance.testing.bind``; the project's own run binds the
same ones in ``tests/simjoin/test_conformance.py``.
"""
from streamspec.conformance.testing import bind

PROBLEM = "simjoin"
bind(globals(), PROBLEM)
