"""The DuckDB peer (``bench/kws/duckdb_peer.py``, issue 14) is checked like an engine:
step by step against the oracle on the conformance strategies (every feature they
draw: both lifespan models, schema changes, deletions, ties, gaps, self joins), and
on the spec's join equality (Python ``==`` over mixed value types)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings

pytest.importorskip("duckdb", reason="duckdb is a [test] dependency")

from streamspec.bench.kws.duckdb_peer import DuckDbPeer  # noqa: E402
from streamspec.conformance import kws as suite  # noqa: E402
from streamspec.conformance.strategies.kws import cases, invalid_cases  # noqa: E402
from streamspec.reference.kws import evaluate  # noqa: E402
from streamspec.spec.kws import Appear, Delete, Insert, Params  # noqa: E402
from streamspec.spec.kws_schema import JoinEdge, Relation, Schema  # noqa: E402


# each example re-runs every CN as SQL at every instant: 0.1-3 s per example
@settings(max_examples=30, deadline=None)
@given(case=cases())
def test_the_peer_matches_the_oracle_step_by_step(case):
    assert suite.check(DuckDbPeer, case) is None


@settings(max_examples=15, deadline=None)
@given(bad=invalid_cases())
def test_a_bad_record_is_refused_and_changes_nothing(bad):
    case, position, record, error = bad
    assert suite.check_invalid(DuckDbPeer, case, position, record, error) is None


def _run(params, events):
    peer = DuckDbPeer(params)
    return list(peer.process(events)) + peer.flush()


def test_join_values_are_equal_as_python_values():
    schema = Schema((Relation("R", ("a", "s")), Relation("S", ("b", "s"))),
                    (JoinEdge("e", "R", "a", "S", "b"),))
    p = Params(schema, ("x", "y"), 2, 10)
    events = [Insert("R", 1, {"a": 1, "s": "x"}, 0),
              Insert("S", 2, {"b": 1.0, "s": "y"}, 0),      # 1 == 1.0: joins
              Insert("S", 3, {"b": "1", "s": "y"}, 0),      # "1" != 1: does not
              Insert("S", 4, {"b": None, "s": "y"}, 1),     # null never joins
              Insert("R", 5, {"a": None, "s": "x"}, 1)]
    out = _run(p, events)
    assert out == evaluate(p, events)
    assert [o for o in out if isinstance(o, Appear)] == [Appear(0, (1, 2), (("e", 1, 2),), 10)]


def test_a_deletion_ends_the_result_and_a_self_join_needs_two_rows():
    schema = Schema((Relation("P", ("id", "boss", "s")),),
                    (JoinEdge("b", "P", "boss", "P", "id"),))
    p = Params(schema, ("x", "y"), 3, None)
    events = [Insert("P", "a", {"id": 1, "boss": 1, "s": "x y"}, 0),   # its own boss: one row
              Insert("P", "b", {"id": 2, "boss": 1, "s": "x"}, 1),
              Insert("P", "c", {"id": 3, "boss": 2, "s": "y"}, 2),
              Delete("b", 3)]
    assert _run(p, events) == evaluate(p, events)
