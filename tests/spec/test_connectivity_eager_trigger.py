"""The eager one-call path of ``ConnectivityEngine._feed_int64`` (``hold_back=False``,
int64 ``EdgeBatch`` columns): the edges go straight to the engine's ``_run`` and a
one-window result is built inline, without ``_accept`` / ``_evaluate``.  It must
be invisible: the windows, their ``WindowResult`` fields (answers a tuple of
Python bools), the errors and the state after an error are those of the general
path and of the oracle, fed the way ``bench/connectivity/measure.py`` feeds a
stream (each window's triggering edge alone, then the rest of its slide)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from streamspec.reference.connectivity import OracleEngine, evaluate
from streamspec.spec.connectivity import Edge, EdgeBatch, Params
from streamspec.spec.errors import InvalidRecord, OutOfOrder
from streamspec.spec.registry import Registry


def _batch(edges) -> EdgeBatch:
    return EdgeBatch(*(np.asarray(col, dtype=np.int64) for col in zip(*edges)))


def _measure_calls(edges, params):
    """The stream cut as ``measure.pieces`` cuts it: at window ends, each piece
    fed as its first edge alone (the trigger) then the rest."""
    t0 = edges[0][2] if params.t0 is None else params.t0
    calls, lo = [], 0
    for i in range(1, len(edges) + 1):
        if i == len(edges) or (edges[i][2] - t0 - params.r) // params.s != \
                (edges[i - 1][2] - t0 - params.r) // params.s:
            piece = edges[lo:i]
            calls.append(piece[:1])
            if len(piece) > 1:
                calls.append(piece[1:])
            lo = i
    return calls


class _ZeroOneOracle(OracleEngine):
    """An engine whose hook returns 0/1 rows (uint8): the results must hold bools."""

    name = "oracle-uint8"

    def _run(self, u, v, t, upto):
        return super()._run(u, v, t, upto).astype(np.uint8)


class _CopyingOracle(OracleEngine):
    """An engine that keeps none of its hook's columns (copies them), so its
    one-edge calls take the driver's reused columns (``retains_columns``)."""

    name = "oracle-copying"
    retains_columns = False

    def _run(self, u, v, t, upto):
        return super()._run(u.copy(), v.copy(), t.copy(), upto)


@st.composite
def streams(draw):
    n = draw(st.integers(1, 50))
    gaps = draw(st.lists(st.sampled_from([0, 0, 1, 2, 9]), min_size=n, max_size=n))
    t = np.cumsum(gaps).tolist()
    ids = st.one_of(st.integers(0, 12), st.integers(1 << 41, (1 << 41) + 2))
    edges = [(draw(ids), draw(ids), ti) for ti in t]
    return edges


@settings(deadline=None, max_examples=150)
@given(edges=streams(), r=st.integers(1, 7), s=st.integers(1, 5),
       engine=st.sampled_from([OracleEngine, _ZeroOneOracle, _CopyingOracle]))
def test_trigger_calls_equal_the_oracle(edges, r, s, engine):
    workload = [(0, 1), (2, 2), (edges[0][0], edges[-1][1]), (1 << 41, 3)]
    params = Params(r=r, s=s, workload=workload)
    eager = engine(params, hold_back=False)
    held = engine(params)
    out, out_held = [], []
    for call in _measure_calls(edges, params):
        out += list(eager.process(_batch(call)))
        out_held += list(held.process(_batch(call)))
    out += eager.flush()
    out_held += held.flush()
    expected = evaluate(edges, params)
    assert out == expected == out_held
    for w in out:
        assert type(w.answers) is tuple and all(type(a) is bool for a in w.answers)
        assert (w.start, w.end) == (edges[0][2] + w.index * s, edges[0][2] + w.index * s + r)
    assert eager.n_vertices == held.n_vertices
    assert eager._seen == len(edges)


def test_a_trigger_across_empty_slides_answers_every_window():
    params = Params(r=4, s=2, workload=[(1, 2), (2, 3)])
    edges = [(1, 2, 0), (2, 3, 1), (3, 4, 15)]      # t=15 makes windows 0..5 due at once
    e = OracleEngine(params, hold_back=False)
    assert list(e.process(_batch(edges[:2]))) == []
    out = list(e.process(_batch(edges[2:])))
    assert [w.index for w in out] == [0, 1, 2, 3, 4, 5]
    assert out[0].answers == (True, True) and out[1].answers == (False, False)
    assert out + e.flush() == evaluate(edges, params)


@pytest.mark.parametrize("name", [n for p, n in Registry.names() if p == "connectivity"])
def test_every_engine_one_edge_triggers(name):
    """Every registered engine through the eager path, on a stream with repeated
    edges, self-loops, a gap, and fresh vertices arriving in trigger calls."""
    rng = np.random.default_rng(7)
    t = np.sort(rng.integers(0, 60, 120))
    t[70:] += 30                                    # a gap longer than the window
    u, v = rng.integers(0, 25, 120), rng.integers(0, 25, 120)
    v[::11] = u[::11]                                # self-loops
    edges = list(zip(u.tolist(), v.tolist(), t.tolist()))
    params = Params(r=6, s=4, workload=[(0, 1), (3, 3), (5, 24), (2, 99)])
    engine = Registry.create("connectivity", name, params, hold_back=False)
    out = []
    for call in _measure_calls(edges, params):
        out += list(engine.process(_batch(call)))
    out += engine.flush()
    assert out == evaluate(edges, params)


@pytest.mark.parametrize("engine", [OracleEngine, _CopyingOracle])
def test_errors_in_a_one_edge_call_name_the_record_and_change_nothing(engine):
    params = Params(r=4, s=2, workload=[(1, 2)])
    e = engine(params, hold_back=False)
    head = [(1, 2, 0), (2, 3, 3)]
    out = list(e.process(_batch(head)))
    state = (e._seen, e.last_t, e.next_window, e.n_vertices)
    with pytest.raises(OutOfOrder) as info:
        list(e.process(_batch([(7, 8, 2)])))        # earlier than t=3, fresh ids
    assert info.value.index == len(head)
    assert (e._seen, e.last_t, e.next_window, e.n_vertices) == state
    assert e.vertices.lookup([7, 8]).tolist() == [-1, -1]
    with pytest.raises(InvalidRecord) as info:
        list(e.process([Edge("x", 1, 5)]))         # a str id in an int stream
    assert info.value.index == len(head)
    assert (e._seen, e.last_t, e.next_window, e.n_vertices) == state
    tail = [(2, 1, 4), (9, 9, 5)]
    for edge in tail:
        out += list(e.process(_batch([edge])))
    assert out + e.flush() == evaluate(head + tail, params)


def test_reused_one_edge_columns_number_fresh_ids_as_the_general_path_and_survive_pickling():
    """The reused columns (``retains_columns = False``): both ends fresh in
    decreasing value, one end fresh, a fresh self-loop, a known pair; a pickled
    copy mid-stream goes on with columns of its own."""
    import pickle
    params = Params(r=3, s=1, workload=[(5, 9), (9, 9), (4, 4)])
    edges = [(5, 6, 0), (9, 7, 1), (9, 5, 2), (4, 4, 3), (6, 5, 4), (11, 10, 5), (4, 9, 9)]
    reused, general = _CopyingOracle(params, hold_back=False), OracleEngine(params, hold_back=False)
    assert reused._one_edge is not None and general._one_edge is None
    out, ref = [], []
    for i, edge in enumerate(edges):
        out += list(reused.process(_batch([edge])))
        ref += list(general.process(_batch([edge])))
        assert reused.vertices.lookup(list(range(12))).tolist() == \
            general.vertices.lookup(list(range(12))).tolist()
        if i == 3:
            copy, done = pickle.loads(pickle.dumps(reused)), len(out)
            assert not any(np.shares_memory(a, b) for a, b in zip(copy._one_edge, reused._one_edge))
    expected = evaluate(edges, params)
    assert out + reused.flush() == ref + general.flush() == expected
    resumed = []
    for edge in edges[4:]:
        resumed += list(copy.process(_batch([edge])))
    assert resumed + copy.flush() == expected[done:]


class _KeepsColumns(OracleEngine):
    """Keeps the very arrays ``_run`` is handed until a window falls due, then
    applies them: right under the default ``retains_columns``, wrong if it
    claimed otherwise (the driver overwrites them on the next one-edge call)."""

    name = "oracle-keeps-columns"

    def _start(self):
        super()._start()
        self._held = []

    def _run(self, u, v, t, upto):
        self._held.append((u, v, t))
        if upto == self.next_window:
            return np.zeros((0, len(self.queries)), dtype=bool)
        held, self._held = self._held, []
        return super()._run(*(np.concatenate(c) for c in zip(*held)), upto)


def test_the_suite_catches_an_engine_that_keeps_its_columns_but_says_it_does_not():
    from streamspec.conformance.connectivity import Case, check
    params = Params(r=3, s=1, workload=[(1, 2), (2, 3), (1, 3)])
    edges = [Edge(1, 2, 0), Edge(2, 3, 1), Edge(3, 4, 2), Edge(1, 5, 3), Edge(5, 6, 4),
             Edge(2, 3, 6), Edge(1, 3, 7)]
    case = Case(params, edges, [1] * len(edges))

    class Claims(_KeepsColumns):
        retains_columns = False

    assert check(_KeepsColumns, case) is None
    problem = check(Claims, case)
    assert problem is not None and "hold_back=False" in problem.message


def test_reused_batch_columns_grow_start_over_and_pickle_empty(monkeypatch):
    """Batches of two edges or more of an eager engine that keeps none of its hook's
    columns take views of one reused buffer (``_ScratchColumns``): sizes growing past
    it, more sizes than it keeps, batches past ``SCRATCH_EDGES`` (allocated), fresh ids
    in every batch; the answers equal the general path's, and a pickled copy starts
    with no scratch and goes on alike."""
    import pickle
    from streamspec.spec import connectivity as C
    monkeypatch.setattr(C, "SCRATCH_EDGES", 24)
    monkeypatch.setattr(C, "_SCRATCH_KEPT", 3)
    rng = np.random.default_rng(5)
    edges, t = [], 0
    for n in [2, 3, 2, 7, 5, 30, 4, 24, 9, 2]:
        for _ in range(n):
            edges.append((int(rng.integers(0, 40)), int(rng.integers(0, 40)), t))
            t += int(rng.integers(0, 2))
    params = Params(r=6, s=2, workload=[(1, 2), (3, 3), (0, 39)])
    reused, general = _CopyingOracle(params, hold_back=False), OracleEngine(params, hold_back=False)
    out, ref, lo = [], [], 0
    for n in [2, 3, 2, 7, 5, 30, 4, 24, 9, 2]:
        call = _batch(edges[lo:lo + n])
        out += list(reused.process(call))
        ref += list(general.process(call))
        lo += n
        if lo > 2:          # (the first call takes the general path: no origin yet)
            buf = reused._scratch[0]
            assert (buf.size >= 5 * n or n > 24) and buf.size <= 5 * 24
            assert len(reused._scratch) <= C._SCRATCH_KEPT + 2
            assert (n in reused._scratch) == (n <= 24)
        if lo == 14:
            copy, done, rest_at = pickle.loads(pickle.dumps(reused)), len(out), lo
            assert type(copy._scratch) is C._ScratchColumns and not copy._scratch
    assert reused.vertices.lookup(list(range(40))).tolist() == \
        general.vertices.lookup(list(range(40))).tolist()
    expected = evaluate(edges, params)
    assert out + reused.flush() == ref + general.flush() == expected
    resumed = list(copy.process(_batch(edges[rest_at:])))
    assert resumed + copy.flush() == expected[done:]
