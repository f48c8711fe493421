"""msf's fused one-edge triggering call (``MsfEngine._trigger``, the driver's
``ConnectivityEngine._trigger`` hook): feed, windows due, the window's answers and
the edge in one kernel call, the row's tuple reused while the answers repeat.  It
must be invisible: the oracle's windows and errors, through every branch (no window
due, one, several; fresh ids; ids outside the direct table; the switch to link-cut
trees on a triggering edge; pickles, also of engines from before the hook)."""
from __future__ import annotations

import pickle
import random

import numpy as np
import pytest

from streamspec.engines.connectivity import _msf_kernels as kernels
from streamspec.engines.connectivity import _msf_layout as layout
from streamspec.engines.connectivity.msf import MsfEngine
from streamspec.reference.connectivity import evaluate
from streamspec.spec.connectivity import EdgeBatch, Params
from streamspec.spec.errors import OutOfOrder


def _batch(edges) -> EdgeBatch:
    return EdgeBatch(*(np.asarray(col, dtype=np.int64) for col in zip(*edges)))


def _one_by_one(engine, edges, every=None):
    out = []
    for i, e in enumerate(edges):
        out += list(engine.process(_batch([e])))
        if every is not None:
            every(i)
    return out


@pytest.mark.parametrize("seed", range(12))
def test_one_edge_calls_equal_the_oracle(seed):
    rnd = random.Random(seed)
    n = rnd.randrange(20, 300)
    k = rnd.choice([3, 8, 30])
    t, edges = 0, []
    for _ in range(n):
        t += rnd.choice([0, 0, 1, 1, 2, 7])         # gaps make several windows due at once
        a = rnd.randrange(k) if rnd.random() < 0.9 else (1 << 41) + rnd.randrange(3)
        edges.append((a, rnd.randrange(k), t))
    workload = [(0, 1), (2, 2), (1, k - 1), (1 << 41, 0), (5, 6)]
    params = Params(r=rnd.randrange(1, 9), s=rnd.randrange(1, 4), workload=workload)
    engine = MsfEngine(params, hold_back=False)
    got = _one_by_one(engine, edges)
    assert got + engine.flush() == evaluate(edges, params)
    for w in got:
        assert type(w.answers) is tuple and all(type(a) is bool for a in w.answers)


def test_repeated_rows_reuse_one_tuple_and_new_rows_make_new_ones():
    params = Params(r=4, s=1, workload=[(1, 2), (3, 4)])
    edges = [(1, 2, 0), (1, 2, 1), (1, 2, 2), (1, 2, 3), (1, 2, 4), (3, 4, 5), (3, 4, 6),
             (1, 2, 7), (5, 5, 8), (5, 5, 9), (5, 5, 10), (5, 5, 11), (5, 5, 12), (5, 5, 13)]
    engine = MsfEngine(params, hold_back=False)
    got = _one_by_one(engine, edges)
    assert got + engine.flush() == evaluate(edges, params)
    rows = [w.answers for w in got]
    assert len(set(rows)) > 1
    for a, b in zip(rows, rows[1:]):
        assert (a is b) == (a == b)                      # a repeated row: the same tuple


def test_errors_in_a_trigger_change_nothing():
    params = Params(r=2, s=1, workload=[(1, 2)])
    engine = MsfEngine(params, hold_back=False)
    head = [(1, 2, 0), (2, 3, 1)]
    _one_by_one(engine, head)
    state = (engine._seen, engine.last_t, engine.next_window, engine.n_vertices,
             engine._trigger_row, engine._Q.tolist(), engine._st.tolist())
    with pytest.raises(OutOfOrder):
        list(engine.process(_batch([(7, 8, 0)])))
    assert (engine._seen, engine.last_t, engine.next_window, engine.n_vertices,
            engine._trigger_row, engine._Q.tolist(), engine._st.tolist()) == state
    assert engine.vertices.lookup([7, 8]).tolist() == [-1, -1]
    tail = [(1, 9, 2), (9, 9, 3)]
    fresh = MsfEngine(params, hold_back=False)
    done = len(_one_by_one(fresh, head))
    assert _one_by_one(engine, tail) + engine.flush() == evaluate(head + tail, params)[done:]


def test_the_switch_to_link_cut_trees_on_a_triggering_edge():
    # CHECK inserts in one call, then the next insert is a window's triggering edge:
    # the guard (st[SWITCH] lowered) fires inside the fused call, after the answers
    k, n = 600, kernels.CHECK + 200
    edges = [(i % k, (i + 1) % k, (i + 4) // 10) for i in range(n)]
    params = Params(50, 5, [(0, k // 2), (1, k // 3), (7, 7)])
    engine = MsfEngine(params, hold_back=False)
    got = list(engine.process(_batch(edges[:kernels.CHECK])))
    engine._st[layout.SWITCH] = 0
    assert not engine.link_cut
    assert engine.windows.due_before(edges[kernels.CHECK][2]) == engine.next_window + 1
    got += list(engine.process(_batch(edges[kernels.CHECK:kernels.CHECK + 1])))
    assert engine.link_cut and engine._trigger_args is None
    got += _one_by_one(engine, edges[kernels.CHECK + 1:])
    assert got + engine.flush() == evaluate(edges, params)


def test_pickles_mid_stream_also_from_before_the_fused_call():
    rnd = random.Random(3)
    edges = [(rnd.randrange(9), rnd.randrange(9), i // 3) for i in range(200)]
    params = Params(r=6, s=2, workload=[(0, 1), (2, 3), (4, 4)])
    expected = evaluate(edges, params)
    engine = MsfEngine(params, hold_back=False)
    got = _one_by_one(engine, edges[:90])
    copy = pickle.loads(pickle.dumps(engine))
    state = dict(pickle.loads(pickle.dumps(engine)).__dict__)
    for name in ("_trigger_answers", "_trigger_row", "_trigger_args"):
        state.pop(name, None)               # an engine pickled before the fused call
    state["_st"], state["_Q"] = state["_st"][:11].copy(), state["_Q"][:3].copy()
    old = MsfEngine.__new__(MsfEngine)
    old.__setstate__(state)
    assert old._trigger_args is not None and old._trigger_args[0] is old._V
    assert copy._trigger_args[0] is copy._V and copy._trigger_args[1] is copy._st
    rest = _one_by_one(engine, edges[90:]) + engine.flush()
    assert got + rest == expected
    assert _one_by_one(copy, edges[90:]) + copy.flush() == rest
    assert _one_by_one(old, edges[90:]) + old.flush() == rest


def _state(engine):
    # everything a later answer depends on (Q's row 2 caches bottlenecks, lower bounds
    # that a dry answer may raise as the triggering call's would)
    Q = engine._Q.copy()
    Q[2] = 0
    return (engine._V.tolist(), engine._st.tolist(), Q.tolist(), engine.next_window,
            engine.last_t, engine._seen, engine._trigger_row, engine.vertices.size,
            engine.vertices._direct.tolist())


@pytest.mark.parametrize("seed", range(8))
def test_batches_then_single_edges_with_the_prewarm_equal_the_oracle(seed, monkeypatch):
    # the pre-warm after every batch of 2 or more edges (PREWARM lowered), then
    # one-edge calls (triggers among them): the oracle's windows, and each dry call
    # leaves the state as it found it
    from streamspec.spec import connectivity
    monkeypatch.setattr(connectivity, "PREWARM", 2)
    rnd = random.Random(100 + seed)
    k = rnd.choice([3, 8, 30])
    t, edges = 0, []
    for _ in range(rnd.randrange(50, 400)):
        t += rnd.choice([0, 0, 1, 1, 2, 7])
        edges.append((rnd.randrange(k), rnd.randrange(k), t))
    params = Params(r=rnd.randrange(1, 9), s=rnd.randrange(1, 4),
                    workload=[(0, 1), (2, 2), (1, k - 1), (5, 6)])
    engine = MsfEngine(params, hold_back=False)
    dry = []
    real = MsfEngine._prewarm

    def spy(self, batch):
        before = _state(self)
        real(self, batch)
        assert _state(self) == before
        dry.append(batch)
    monkeypatch.setattr(MsfEngine, "_prewarm", spy)
    got, i = [], 0
    while i < len(edges):
        n = rnd.choice([1, 1, 2, 5, 20])
        got += list(engine.process(_batch(edges[i:i + n])))
        i += n
    assert got + engine.flush() == evaluate(edges, params)
    assert dry                                  # the pre-warm ran


def test_a_dry_call_answers_the_next_window_and_changes_nothing():
    params = Params(r=4, s=2, workload=[(1, 2), (3, 4), (1, 4)])
    engine = MsfEngine(params, hold_back=False)
    list(engine.process(_batch([(1, 2, 0), (3, 4, 1), (2, 3, 2), (5, 6, 3)])))
    before = _state(engine)
    engine._prewarm(_batch([(5, 6, 3)]))
    assert _state(engine) == before
    # the row it answered is window 0's, which the triggering edge then reports
    dry_row = engine._trigger_answers.tolist()
    (w,) = list(engine.process(_batch([(7, 7, 4)])))
    assert w.index == 0 and [list(w.answers)] == dry_row == [[True, True, True]]
