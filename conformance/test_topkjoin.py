"""The shipped top-k join (topkjoin) conformance suite: every registered engine against the oracle.

Run it on an installed engine with
``pytest --pyargs streamspec.conformance --engine NAME`` (``STREAMSPEC_PROFILE``
picks the examples per check: dev 200, ci 1000, deep 20000;
``STREAMSPEC_EXAMPLES=N`` overrides).  The tests are the checks of
``streamspec.conformance.checks`` (``streamspec conform topkjoin`` runs the same),
bound by ``streamspec.conformance.testing.bind``; the project's own run binds the
same ones in ``tests/topkjoin/test_conformance.py``.
"""
from streamspec.conformance.testing import bind

PROBLEM = "topkjoin"
bind(globals(), PROBLEM)


def test_every_engine_is_exact_on_static_remote_data(engine_cls):
    """The problem's rule: "with a static remote dataset every engine equals the oracle"."""
    assert "static" in engine_cls.exact_when
