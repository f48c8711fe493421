"""An engine whose hook returns something of the wrong type or shape gets a
``ContractViolation`` naming the hook, what came back and what the spec wants
(not an ``AttributeError`` deep inside the base class, nor silently fewer
outputs); a correct engine is unaffected and an exception raised inside a hook
passes through untouched."""
import pickle

import numpy as np
import pytest

from streamspec.reference.connectivity import OracleEngine as ConnOracle, evaluate as conn_evaluate
from streamspec.reference.kws import OracleEngine as KwsOracle, evaluate as kws_evaluate
from streamspec.reference.simjoin import OracleEngine as SimOracle
from streamspec.reference.topkjoin import OracleEngine as TopkOracle
from streamspec.spec import connectivity, kws, simjoin, topkjoin
from streamspec.spec.errors import ContractViolation, StreamspecError
from streamspec.spec.kws import Insert
from streamspec.spec.kws_schema import JoinEdge, Relation, Schema
from streamspec.spec.registry import Registry


def _violation(broken, params, events, hook, *, flush=True, **options) -> ContractViolation:
    engine = broken(params, **options)
    with pytest.raises(ContractViolation) as info:
        list(engine.process(events))
        if flush:
            engine.flush()
    err = info.value
    assert err.hook == hook
    assert err.hook in str(err) and err.wanted in str(err) and err.returned in str(err)
    assert broken.__name__ in err.engine
    return err


# -- the error itself ------------------------------------------------------------------

def test_error_fields_pickle_and_exit_code():
    err = ContractViolation.of(ConnOracle, "ConnectivityEngine._run", [[True, False]],
                               "a numpy bool array of shape (1, 2)")
    assert isinstance(err, StreamspecError)
    assert err.exit_code == 1          # an engine's bug, not bad input (exit 2)
    assert err.engine == "connectivity.oracle (OracleEngine)"
    assert err.returned == "a list of length 1, first element [True, False]"
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is ContractViolation
    assert (again.hook, again.engine, again.returned, again.wanted, str(again)) == \
        (err.hook, err.engine, err.returned, err.wanted, str(err))


def test_cli_exits_1_on_a_contract_violation(monkeypatch, capsys):
    from streamspec.pipeline import cli

    def broken(args):
        raise ContractViolation("ConnectivityEngine._run", "None", "rows", engine="x")
    monkeypatch.setattr(cli, "_cmd_engines", broken)
    assert cli.main(["engines"]) == 1
    assert "ConnectivityEngine._run broke the engine contract" in capsys.readouterr().err


# -- connectivity ------------------------------------------------------------------------

CONN = connectivity.Params(r=4, s=2, workload=[(1, 2), (2, 3)])
EDGES = [(1, 2, 0), (2, 3, 1), (3, 4, 3), (1, 4, 5), (2, 4, 8), (5, 6, 12)]


class ConnList(ConnOracle):
    def _run(self, u, v, t, upto):
        return super()._run(u, v, t, upto).tolist()


class ConnRowShort(ConnOracle):
    def _run(self, u, v, t, upto):
        return super()._run(u, v, t, upto)[1:]


class ConnColumns(ConnOracle):
    def _run(self, u, v, t, upto):
        return super()._run(u, v, t, upto)[:, :1]


class ConnFloat(ConnOracle):
    def _run(self, u, v, t, upto):
        return super()._run(u, v, t, upto).astype(float)


class ConnTwos(ConnOracle):
    def _run(self, u, v, t, upto):
        return super()._run(u, v, t, upto).astype(np.int64) * 2


class ConnNone(ConnOracle):
    def _connected(self, a, b):
        super()._connected(a, b)


class ConnCrash(ConnOracle):
    def _run(self, u, v, t, upto):
        raise ZeroDivisionError("the engine's own bug")


def _int64_batch(edges):
    return connectivity.EdgeBatch(*(np.asarray(c, dtype=np.int64) for c in zip(*edges)))


@pytest.mark.parametrize("broken, says", [
    (ConnList, "a list of length"), (ConnRowShort, "shape (4, 2)"),
    (ConnColumns, "shape (5, 1)"), (ConnFloat, "dtype float64"), (ConnTwos, "dtype int64")])
@pytest.mark.parametrize("hold_back", [True, False])
@pytest.mark.parametrize("columns", [False, True])
def test_connectivity_run_rows(broken, says, hold_back, columns):
    events = _int64_batch(EDGES) if columns else [connectivity.Edge(*e) for e in EDGES]
    err = _violation(broken, CONN, events, "ConnectivityEngine._run", hold_back=hold_back)
    assert says in err.returned
    assert "shape (windows due, queries)" in err.wanted or "0/1 integer" in err.wanted


def test_connectivity_eager_trigger_path():
    """The fused eager path (int64 columns, one edge per call, each a window's trigger)."""
    engine = ConnList(CONN, hold_back=False)
    list(engine.process(_int64_batch(EDGES[:3])))        # window 0 not due yet
    with pytest.raises(ContractViolation, match=r"ConnectivityEngine\._run") as info:
        list(engine.process(_int64_batch(EDGES[3:4])))   # t=5: window 0's trigger
    assert info.value.wanted.startswith("a numpy bool array of shape (windows due, queries) = (1, 2)")


def test_connectivity_connected_answer():
    engine = ConnNone(CONN)
    list(engine.process([connectivity.Edge(*e) for e in EDGES]))
    with pytest.raises(ContractViolation) as info:
        engine.connected(1, 2)
    assert info.value.hook == "ConnectivityEngine._connected" and info.value.returned == "None"


def test_connectivity_crash_inside_a_hook_is_not_wrapped():
    with pytest.raises(ZeroDivisionError, match="the engine's own bug"):
        list(ConnCrash(CONN).process([connectivity.Edge(*e) for e in EDGES]))


@pytest.mark.parametrize("name", ["oracle", "bic"])
@pytest.mark.parametrize("hold_back", [True, False])
def test_connectivity_correct_engines_unaffected(name, hold_back):
    engine = Registry.create("connectivity", name, CONN, hold_back=hold_back)
    out = list(engine.process(_int64_batch(EDGES))) + engine.flush()
    assert out == conn_evaluate([connectivity.Edge(*e) for e in EDGES], CONN)
    empty = connectivity.Params(r=4, s=2)       # no queries: rows of shape (n, 0)
    engine = Registry.create("connectivity", name, empty, hold_back=hold_back)
    assert [w.answers for w in list(engine.process(_int64_batch(EDGES))) + engine.flush()] == [()] * 7


# -- kws -------------------------------------------------------------------------------------

SCHEMA = Schema((Relation("R", ("a", "s")), Relation("S", ("a", "s"))),
                (JoinEdge("e", "R", "a", "S", "a"),))
KWS = kws.Params(SCHEMA, "x,y", 2, window=10)
KWS_EVENTS = [Insert("R", 1, {"a": 1, "s": "x"}, 0), Insert("S", 2, {"a": 1, "s": "y"}, 1),
              kws.Delete(1, 2), Insert("R", 3, {"a": 1, "s": "x y"}, 3),
              kws.RemoveEdge("e", 4)]
FOREST = Registry.get("kws", "forest")


class KwsInsertNone(KwsOracle):
    def _insert(self, row, t):
        super()._insert(row, t)


class KwsCloseFlat(KwsOracle):
    def _close_instant(self, t):
        ended, appeared = super()._close_instant(t)
        return list(ended) + list(appeared)


class KwsTuples(FOREST):
    """Results as bare (tids, edges) tuples instead of ``Result``."""

    def _insert(self, row, t):
        return [(r.tids, r.edges) for r in super()._insert(row, t)]


class KwsSchemaNone(FOREST):
    def _schema_change(self, event, t):
        super()._schema_change(event, t)


class KwsDeleteInt(FOREST):
    def _delete(self, tid, t):
        super()._delete(tid, t)
        return 0


class KwsGenerator(FOREST):
    """A hook may be a generator; an error raised while it runs is the engine's own."""

    def _insert(self, row, t):
        yield from super()._insert(row, t)
        if row.tid == 3:
            raise KeyError("the engine's own bug")


@pytest.mark.parametrize("broken, hook, says", [
    (KwsInsertNone, "KwsEngine._insert", "None"),
    (KwsCloseFlat, "KwsEngine._close_instant", "list"),
    (KwsTuples, "KwsEngine._insert", "holding a tuple of length 2"),
    (KwsSchemaNone, "KwsEngine._schema_change", "None"),
    (KwsDeleteInt, "KwsEngine._delete", "int 0")])
def test_kws_hooks(broken, hook, says):
    err = _violation(broken, KWS, KWS_EVENTS, hook)
    assert says in err.returned
    assert "Result" in err.wanted


def test_kws_crash_inside_a_generator_hook_is_not_wrapped():
    with pytest.raises(KeyError, match="the engine's own bug"):
        list(KwsGenerator(KWS).process(KWS_EVENTS))


@pytest.mark.parametrize("name", ["oracle", "forest", "fullmesh"])
def test_kws_correct_engines_unaffected(name):
    engine = Registry.create("kws", name, KWS)
    out = list(engine.process(KWS_EVENTS)) + engine.flush()
    assert out == kws_evaluate(KWS, KWS_EVENTS) and out


# -- simjoin ---------------------------------------------------------------------------------

SIM = simjoin.Params(k=2, w=10)
RECORDS = [simjoin.Record(10, (1, 2, 3), 0), simjoin.Record(11, (1, 2), 1),
           simjoin.Record(12, (2, 3), 2), simjoin.Advance(20)]


class SimDict(SimOracle):
    def _apply(self, prep):
        return dict(super()._apply(prep))


class SimBackwards(SimOracle):
    def _apply(self, prep):
        return super()._apply(prep)[::-1]


class SimThreeFields(SimOracle):
    def _apply(self, prep):
        return [(p, tuple(pair[:3] for pair in pairs)) for p, pairs in super()._apply(prep)]


class SimUnknownSeq(SimOracle):
    def _apply(self, prep):
        return [(p, tuple((i + 100, j, s, e) for i, j, s, e in pairs))
                for p, pairs in super()._apply(prep)]


def _columns(changes) -> simjoin.Changes:
    pos, ptr, rows = [], [0], []
    for p, pairs in changes:
        pos.append(p)
        rows.extend(pairs)
        ptr.append(len(rows))
    i, j, s, e = (np.asarray(c) for c in zip(*rows))
    return simjoin.Changes(np.asarray(pos, np.int64), np.asarray(ptr, np.int64),
                           i.astype(np.int64), j.astype(np.int64), s.astype(float), e.astype(float))


class SimColumns(SimOracle):
    """The oracle's changes as ``Changes`` columns (a correct engine)."""

    def _apply(self, prep):
        return _columns(super()._apply(prep))


class SimColumnsShortPtr(SimOracle):
    def _apply(self, prep):
        c = _columns(super()._apply(prep))
        return simjoin.Changes(c.pos, c.ptr[:-1], c.seq_i, c.seq_j, c.score, c.end)


class SimColumnsList(SimOracle):
    def _apply(self, prep):
        c = _columns(super()._apply(prep))
        return simjoin.Changes(c.pos.tolist(), c.ptr, c.seq_i, c.seq_j, c.score, c.end)


class SimColumnsPosOut(SimOracle):
    def _apply(self, prep):
        c = _columns(super()._apply(prep))
        return simjoin.Changes(c.pos + 10, c.ptr, c.seq_i, c.seq_j, c.score, c.end)


@pytest.mark.parametrize("broken, says, why", [
    (SimDict, "dict", "or Changes columns"),
    (SimBackwards, "a list holding", "positions increase"),
    (SimThreeFields, "a list holding", "each pair is (seq_i, seq_j, score, end)"),
    (SimUnknownSeq, "a list holding", "seqs in 0..2"),
    (SimColumnsShortPtr, "ptr ndarray of shape (3,)", "len(ptr) == len(pos) + 1"),
    (SimColumnsList, "pos a list of length 3", "six 1-d numpy arrays"),
    (SimColumnsPosOut, "Changes with pos", "positions increasing, each in 0..3")])
def test_simjoin_apply(broken, says, why):
    err = _violation(broken, SIM, RECORDS, "SimJoinEngine._apply")
    assert says in err.returned
    assert why in err.wanted


@pytest.mark.parametrize("broken", [SimColumns, Registry.get("simjoin", "swoop")])
def test_simjoin_correct_engines_unaffected(broken):
    out = list(broken(SIM).process(RECORDS))
    assert out == list(SimOracle(SIM).process(RECORDS)) and len(out) == 3


# -- topkjoin --------------------------------------------------------------------------------

TOPK = topkjoin.Params(omega=4, beta=2, k=2)
ITEMS = [topkjoin.Item(1, 0.5, 0), topkjoin.Item(2, 0.25, 1), topkjoin.Item(3, 0.75, 2),
         topkjoin.Item(1, 0.5, 5), topkjoin.Item(2, 0.5, 9)]


class TopkArray(TopkOracle):
    def _evaluate(self, window, start, tau):
        return np.asarray(super()._evaluate(window, start, tau))


class TopkTooMany(TopkOracle):
    def _evaluate(self, window, start, tau):
        ranked = super()._evaluate(window, start, tau)
        return ranked + ranked[:1] + ranked[:1] if ranked else ranked


class TopkExternalIds(TopkOracle):
    def _evaluate(self, window, start, tau):
        return [(str(self.keys.external(d)), s) for d, s in super()._evaluate(window, start, tau)]


class TopkNoScore(TopkOracle):
    def _evaluate(self, window, start, tau):
        return [(d, None) for d, _ in super()._evaluate(window, start, tau)]


class TopkNone(TopkOracle):
    def _evaluate(self, window, start, tau):
        super()._evaluate(window, start, tau)


@pytest.mark.parametrize("broken, says", [
    (TopkArray, "ndarray of shape"), (TopkTooMany, "a list of length 4"),
    (TopkExternalIds, "holding a tuple of length 2, first element '"),
    (TopkNoScore, "holding a tuple of length 2"), (TopkNone, "None")])
def test_topkjoin_evaluate(broken, says):
    err = _violation(broken, TOPK, ITEMS, "TopkJoinEngine._evaluate")
    assert says in err.returned
    assert err.wanted.startswith("a list of at most K=2 pairs (dense id, score)")


@pytest.mark.parametrize("name", ["oracle", "topkn", "at-tsm"])
def test_topkjoin_correct_engines_unaffected(name):
    engine = Registry.create("topkjoin", name, TOPK)
    out = list(engine.process(ITEMS)) + engine.flush()
    oracle = TopkOracle(TOPK)
    assert out == list(oracle.process(ITEMS)) + oracle.flush() and len(out) == 5


class SimColumnsSeqTooLarge(SimOracle):
    def _apply(self, prep):
        c = _columns(super()._apply(prep))
        return simjoin.Changes(c.pos, c.ptr, c.seq_i + 50, c.seq_j, c.score, c.end)


class SimColumnsSeqNegative(SimOracle):
    def _apply(self, prep):
        c = _columns(super()._apply(prep))
        return simjoin.Changes(c.pos, c.ptr, c.seq_i, c.seq_j - 3, c.score, c.end)


@pytest.mark.parametrize("broken, says", [(SimColumnsSeqTooLarge, "Changes with seqs up to 52"),
                                          (SimColumnsSeqNegative, "Changes with pos")])
def test_simjoin_changes_seqs_of_unknown_records(broken, says):
    err = _violation(broken, SIM, RECORDS, "SimJoinEngine._apply")
    assert says in err.returned and "seqs of known records, 0..2" in err.wanted
