"""The columnar batch of kws (``streamspec.spec.kws.TupleBatch``, issue 11): every engine
gives the oracle's outputs for batches as for events, the batch's first error is the
event path's (same type, same record) and a refused batch changes nothing."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from streamspec.conformance import kws as suite
from streamspec.conformance.strategies.kws import cases, invalid_cases
from streamspec.spec.errors import InvalidRecord, MalformedRecord, OutOfOrder
from streamspec.spec.kws import Delete, Insert, KwsEngine, Params, TupleBatch
from streamspec.spec.kws_schema import Relation, Schema
from streamspec.spec.registry import Registry

ENGINES = ("oracle", "forest", "fullmesh", "partialmesh")


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=60, deadline=None)
@given(case=cases())
def test_batches_give_the_oracles_outputs(engine, case):
    assert suite.check_batch(Registry.get("kws", engine), case) is None


@settings(max_examples=150, deadline=None)
@given(bad=invalid_cases(), lead=st.integers(0, 3))
def test_a_bad_row_is_the_event_paths_error_and_changes_nothing(bad, lead):
    case, position, record, error = bad
    found = suite.check_batch_invalid(Registry.get("kws", "fullmesh"), case, position, record,
                                      error, lead)
    assert found is None, found


def test_a_deletion_before_a_duplicate_insert_of_its_tid_deletes_the_live_tuple():
    """A batch deleting an alive tuple, then inserting its tid again: the deletion is valid
    (the tid is alive from an earlier call), the insert is the duplicate, as on the event
    path (found by hypothesis: the batch named the deletion, its tid taken for the batch's)."""
    p = Params(Schema((Relation("R", ("a", "s")),), ()), ("k0",), 1, None)
    first = Insert("R", 0, (("a", 0), ("s", "")), 0)
    rows = [Delete(0, 0), Insert("R", 0, (("a", 1), ("s", "")), 0), Insert("R", 1, (("a", 0), ("s", "")), 0)]
    for batch in (TupleBatch.from_events(rows), rows):
        eng = Registry.get("kws", "fullmesh")(p)
        list(eng.process([first]))
        with pytest.raises(InvalidRecord, match="duplicate tid 0") as err:
            list(eng.process(batch))
        assert err.value.index == 2


def test_the_first_bad_row_wins_and_columns_may_be_arrays():
    schema = Schema((Relation("R", ("a", "s")), Relation("S", ("a",))), ())
    p = Params(schema, "x", 2, 5)
    t = np.array([1, 2, 2, 3, 4])
    values = {"R": {"a": np.array([1.0, np.nan, 3.0]), "s": ["x y", None, True]},
              "S": {"a": np.array([7, 8])}}
    batch = TupleBatch.of(t, np.arange(5), ["R", "S", "R", "S", "R"], values)
    # row 4 has a bool value (values come last) but row 3's tid repeats row 0's first
    dup = TupleBatch.of(t, [0, 1, 2, 0, 4], batch.relation, values)
    with pytest.raises(InvalidRecord, match="duplicate tid 0") as info:
        list(KwsEngine(p).process(dup))
    assert info.value.index == 3
    with pytest.raises(InvalidRecord, match="attribute 's': boolean") as info:
        list(KwsEngine(p).process(batch))
    assert info.value.index == 4
    late = TupleBatch.of([1, 3, 2], [0, 1, 2], ["Q", "R", "R"], {})
    with pytest.raises(InvalidRecord, match="unknown relation 'Q'") as info:
        list(KwsEngine(p).process(late))      # row 0, before the time going back at row 2
    with pytest.raises(OutOfOrder, match="event time 2 is earlier than 3") as info:
        list(KwsEngine(p).process(TupleBatch.of([1, 3, 2], [0, 1, 2], ["R", "R", "R"])))
    assert info.value.index == 2
    with pytest.raises(MalformedRecord, match="differ in length"):
        TupleBatch.of([1, 2], [0], ["R", "R"])
    other = TupleBatch.of([1, 2], [0, 1], ["S", "R"], {"S": {"a": [1], "s": [None]},
                                                        "R": {"s": ["x"], "b": [None]}})
    engine = Registry.get("kws", "oracle")(p)
    assert list(engine.process(other)) == []     # other relations' columns: nulls are fine
    with pytest.raises(InvalidRecord, match="relation 'S' has no attribute 's'") as info:
        list(engine.process(TupleBatch.of([3, 3], [5, 6], ["S", "S"],
                                          {"S": {"s": [None, "v"]}})))
    assert info.value.index == 3


def test_events_round_trip_and_deletions_in_a_batch():
    schema = Schema((Relation("R", ("a", "s")),), ())
    events = [Insert("R", 1, {"a": 1, "s": "x"}, 0), Insert("R", "b", {"a": None, "s": "x y"}, 0),
              Delete(1, 2), Insert("R", 3, {"s": "y"}, 4)]
    batch = TupleBatch.from_events(events)
    assert batch.events() == [Insert("R", 1, {"a": 1, "s": "x"}, 0), Insert("R", "b", {"s": "x y"}, 0),
                              Delete(1, 2), Insert("R", 3, {"s": "y"}, 4)]
    p = Params(schema, "x,y", 2, None)
    one, two = Registry.get("kws", "fullmesh")(p), Registry.get("kws", "fullmesh")(p)
    assert list(one.process(batch)) + one.flush() == list(two.process(events)) + two.flush()
    engine = KwsEngine(p)
    with pytest.raises(InvalidRecord, match="deletion of unknown or dead tid 3") as info:
        list(engine.process(TupleBatch.from_events([Delete(3, 0), Insert("R", 3, {}, 0)])))
    assert info.value.index == 0         # deleting before the insert of the same batch
