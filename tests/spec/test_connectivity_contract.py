"""The spec boundary: validation, lateness, watermarks, ad-hoc queries, pickling."""
import pickle

import numpy as np
import pytest

from streamspec.reference.connectivity import OracleEngine, evaluate
from streamspec.spec.connectivity import Edge, EdgeBatch, Params, WindowResult
from streamspec.spec.errors import (InvalidParameter, InvalidRecord, MalformedRecord, NoWindowYet,
                         OutOfOrder, StreamspecError)

STREAM = [(0, 1, 0), (1, 2, 1), (2, 3, 3), (3, 3, 3), (4, 5, 6), (0, 5, 9)]
WORKLOAD = [(0, 2), (3, 3), (4, 5), (7, 7)]


def run(params, edges):
    engine = OracleEngine(params)
    return list(engine.process(edges)) + list(engine.flush())


@pytest.mark.parametrize("kwargs", [dict(r=0, s=1), dict(r=2, s=-1), dict(r=2, s=1, lateness="late"),
                                    dict(r=2, s=1, workload=[(1, "a")]), dict(r=2, s=1, workload=[(1,)]),
                                    dict(r=2, s=1, t0=1.5), dict(r=2, s=1, workload=[(None, 1)])])
def test_bad_parameters(kwargs):
    with pytest.raises(InvalidParameter):
        Params(**kwargs)


@pytest.mark.parametrize("bad,error", [((0, 1), MalformedRecord), ((0, 1, "x"), MalformedRecord),
                                       ((0, 1, 2.0), MalformedRecord), (("a", 1, 5), InvalidRecord),
                                       ((0, 1, 2), OutOfOrder), ((True, 1, 5), InvalidRecord)])
def test_bad_record_is_typed_located_and_changes_nothing(bad, error):
    params = Params(r=3, s=2, workload=WORKLOAD)
    engine = OracleEngine(params)
    out = list(engine.process(STREAM[:3]))
    with pytest.raises(error) as info:
        list(engine.process([STREAM[3], bad]))
    assert info.value.index == 4           # position in the whole stream, bad record included
    assert "record 4" in str(info.value)
    out += list(engine.process(STREAM[3:])) + list(engine.flush())
    assert out == evaluate(STREAM, params)


def test_error_location_and_pickling():
    err = OutOfOrder("edge time 2 is earlier than 3", index=7).at("edges.txt:9")
    assert str(err) == "edges.txt:9: edge time 2 is earlier than 3"
    again = pickle.loads(pickle.dumps(err))
    assert (type(again), again.index, again.location, str(again)) == (OutOfOrder, 7, "edges.txt:9", str(err))


def test_origin_after_first_edge_is_an_error():
    with pytest.raises(OutOfOrder):
        list(OracleEngine(Params(r=2, s=1, t0=1)).process(STREAM))


def test_lateness_drop_counts_late_edges():
    params = Params(r=3, s=2, workload=WORKLOAD, lateness="drop")
    engine = OracleEngine(params)
    late = STREAM[:3] + [(7, 7, 1)] + STREAM[3:]
    out = list(engine.process(late)) + list(engine.flush())
    assert engine.dropped_late == 1
    assert out == evaluate(STREAM, params)


def test_every_window_is_emitted_across_gaps_and_at_flush():
    params = Params(r=2, s=1, workload=[(0, 1)])
    out = run(params, [(0, 1, 0), (0, 1, 10)])
    assert [w.index for w in out] == list(range(11))
    assert [w.answers for w in out] == [(True,)] + [(False,)] * 8 + [(True,), (True,)]
    assert out[3] == WindowResult(3, 3, 5, (False,))


def test_windows_are_emitted_when_due_not_earlier():
    params = Params(r=3, s=2, workload=WORKLOAD)
    engine = OracleEngine(params)
    assert list(engine.process(STREAM[:2])) == []
    with pytest.raises(NoWindowYet):
        engine.connected(0, 1)
    first = list(engine.process(STREAM[2:3]))   # t=3 >= end(0)=3
    assert [w.index for w in first] == [0]
    assert engine.connected(0, 2) is True and engine.connected(2, 3) is False
    assert engine.connected(99, 99) is False


def test_advance_to_is_a_watermark():
    params = Params(r=3, s=2, workload=WORKLOAD)
    engine = OracleEngine(params)
    list(engine.process(STREAM[:2]))
    assert [w.index for w in engine.advance_to(7)] == [0, 1, 2]
    with pytest.raises(OutOfOrder):
        list(engine.process([(0, 1, 5)]))
    assert [w.index for w in engine.advance_to(7)] == []


def test_flush_ends_the_stream():
    engine = OracleEngine(Params(r=3, s=2))
    list(engine.process(STREAM))
    engine.flush()
    with pytest.raises(StreamspecError):
        list(engine.process(STREAM))
    with pytest.raises(StreamspecError):
        engine.advance_to(100)


def test_adhoc_query_of_the_wrong_vertex_type():
    engine = OracleEngine(Params(r=3, s=2, workload=WORKLOAD))
    list(engine.process(STREAM))
    with pytest.raises(InvalidRecord):
        engine.connected("a", 1)


def test_columnar_and_object_inputs_agree_and_pickle_midstream():
    params = Params(r=3, s=2, workload=WORKLOAD)
    u, v, t = (np.array(c) for c in zip(*STREAM))
    engine = OracleEngine(params)
    out = list(engine.process(EdgeBatch(u[:4], v[:4], t[:4])))
    engine = pickle.loads(pickle.dumps(engine))
    out += list(engine.process([Edge(*e) for e in STREAM[4:]])) + list(engine.flush())
    assert out == evaluate(STREAM, params)


def test_lazy_iterables_are_consumed_in_batches():
    params = Params(r=3, s=2, workload=WORKLOAD)
    assert list(OracleEngine(params).process(iter(STREAM))) == evaluate(STREAM, params)[:4]


def test_eager_engine_emits_the_same_and_refuses_adhoc_queries():
    from streamspec.spec.errors import AdHocUnavailable
    params = Params(r=3, s=2, workload=WORKLOAD)
    held, eager = OracleEngine(params), OracleEngine(params, hold_back=False)
    for e in STREAM:
        assert list(held.process([e])) == list(eager.process([e]))
        assert not eager._pending[2].size          # nothing waits: applied on arrival
    assert held.flush() == eager.flush()
    with pytest.raises(AdHocUnavailable):
        eager.connected(0, 1)


def test_flush_with_r_below_s_never_applies_edges_outside_every_window():
    params = Params(r=2, s=5, workload=[(0, 1), (1, 2)])
    engine = OracleEngine(params)
    edges = [(0, 1, 0), (1, 2, 3)]                 # t=3 lies between window 0 [0,2) and window 1 [5,7)
    out = list(engine.process(edges)) + list(engine.flush())
    assert out == evaluate(edges, params)
    assert engine.connected(0, 1) is True and engine.connected(1, 2) is False


@pytest.mark.parametrize("columnar", [False, True])
def test_edge_before_the_origin_after_a_low_watermark_is_an_error(columnar):
    # advance_to(5) fixes the windows from t0=10 but no edge has come: an edge
    # at 7 lies before window 0 and must be refused, not applied
    params = Params(r=4, s=2, t0=10, workload=[(1, 2)])
    engine = OracleEngine(params)
    assert engine.advance_to(5) == []
    edges = [(1, 2, 11), (1, 2, 7)]
    batch = EdgeBatch(*(np.asarray(c, dtype=np.int64) for c in zip(*edges))) if columnar else edges
    with pytest.raises(OutOfOrder) as info:
        list(engine.process(batch))
    assert info.value.index == 1
    later = [(3, 4, 12), (1, 2, 13)]
    out = list(engine.process(later)) + engine.flush()
    assert out == evaluate(later, params)
    engine = OracleEngine(params)
    engine.advance_to(5)
    with pytest.raises(OutOfOrder, match="before the origin"):
        list(engine.process([(1, 2, 7)]))
