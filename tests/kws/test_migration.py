"""Schema changes migrate the meshes (paper Section 4.4; ``streamspec.engines.kws.migration``).

Exactness against the oracle, step by step, on streams with schema events
(ties, deletions and expiries at the change instant, add then remove, removal
of a relation with live results), and the mesh itself: old operators and
their buffers stay (nothing is replayed), the migrated mesh has the same
candidate networks as one built for the new schema, and a removal leaves no
operator of the removed edge or relation and none without parents.
"""
import pytest

from streamspec.conformance import kws as suite
from streamspec.engines.kws import mesh
from streamspec.engines.kws.mesh import rebuild_and_replay as replay_baseline
from streamspec.engines.kws.fullmesh import FullMeshEngine
from streamspec.engines.kws.partialmesh import PartialMeshEngine
from streamspec.reference.kws import evaluate
from streamspec.spec.kws import (AddEdge, AddRelation, Delete, End, Insert, Params, RemoveEdge,
                                 RemoveRelation)
from streamspec.spec.kws_schema import JoinEdge, Relation, Schema

SCHEMA_EVENTS = (AddEdge, AddRelation, RemoveEdge, RemoveRelation)
VARIANTS = {
    "fullmesh": FullMeshEngine,
    "fullmesh:purge=eager": type("FmEager", (FullMeshEngine,), dict(purge="eager")),
    "fullmesh:demand_driven=false": type("FmAlways", (FullMeshEngine,), dict(demand_driven=False)),
    "fullmesh:index_buffers=false": type("FmScan", (FullMeshEngine,), dict(index_buffers=False)),
    "partialmesh": PartialMeshEngine,
    "partialmesh:purge=lazy": type("PmLazy", (PartialMeshEngine,), dict(purge="lazy")),
}


@pytest.fixture(autouse=True)
def no_replay(monkeypatch):
    """The meshes never fall back to rebuilding and replaying."""
    def replay(engine, t):
        raise AssertionError("the mesh replayed the window")
    monkeypatch.setattr(mesh, "rebuild_and_replay", replay)


def _with_schema_events(n: int):
    out = []
    seed = 0
    while len(out) < n:
        case = suite.random_case(seed, max_events=24)
        if any(isinstance(e, SCHEMA_EVENTS) for e in case.events):
            out.append((seed, case))
        seed += 1
    return out


CASES = _with_schema_events(120)


@pytest.mark.parametrize("name", VARIANTS)
def test_random_schema_changes_match_oracle_step_by_step(name):
    for seed, case in CASES:
        mismatch = suite.check(VARIANTS[name], case)
        assert mismatch is None, f"seed {seed}: {mismatch}\n{suite.dump(case)}"


def _chain():
    rels = tuple(Relation(n, ("a", "b", "s")) for n in "RST")
    return Schema(rels, (JoinEdge("rs", "R", "a", "S", "a"),))


def _run(cls, params, chunks):
    eng = cls(params)
    got = []
    for chunk in chunks:
        got.extend(eng.process(chunk))
    return eng, got + eng.flush()


def _flat(chunks):
    return [e for c in chunks for e in c]


SCENARIOS = {
    # ties at the change instant: inserts before and after it, a deletion and an
    # expiry (R's tuple 1 ends at t = 4) at the same instant
    "add_edge_ties_delete_expiry": (3, [
        [Insert("R", 1, {"a": 1, "s": "x"}, 0), Insert("S", 2, {"a": 1, "b": 5}, 1),
         Insert("T", 3, {"b": 5, "s": "y"}, 2), Insert("T", 4, {"b": 5, "s": "y"}, 3),
         Insert("R", 5, {"a": 1, "s": "x"}, 3)],
        [Insert("S", 6, {"a": 1, "b": 5}, 4), Delete(4, 4), AddEdge(JoinEdge("st", "S", "b", "T", "b"), 4),
         Insert("T", 7, {"b": 5, "s": "y"}, 4)],
        [Insert("T", 8, {"b": 5, "s": "y"}, 5)]]),
    # add then remove the same edge at one instant, then again later
    "add_then_remove": (6, [
        [Insert("R", 1, {"a": 1, "s": "x"}, 0), Insert("S", 2, {"a": 1, "b": 5}, 0),
         Insert("T", 3, {"b": 5, "s": "y"}, 0)],
        [AddEdge(JoinEdge("st", "S", "b", "T", "b"), 1), RemoveEdge("st", 1)],
        [AddEdge(JoinEdge("st", "S", "b", "T", "b"), 2), Insert("T", 4, {"b": 5, "s": "y"}, 2)],
        [RemoveEdge("st", 3), Insert("S", 5, {"a": 1, "b": 5}, 3)],
        [AddEdge(JoinEdge("st2", "S", "b", "T", "b"), 4)]]),
    # a relation with live results is removed, re-added empty, joined again
    "remove_relation_with_results": (None, [
        [Insert("R", 1, {"a": 1, "s": "x"}, 0), Insert("S", 2, {"a": 1, "b": 5}, 0),
         AddEdge(JoinEdge("st", "S", "b", "T", "b"), 0), Insert("T", 3, {"b": 5, "s": "y"}, 0),
         Insert("T", 4, {"b": 5, "s": "x y"}, 1)],
        [RemoveRelation("S", 2), Insert("T", 5, {"b": 5, "s": "y"}, 2)],
        [AddRelation(Relation("S", ("a", "b")), 3), AddEdge(JoinEdge("rs2", "R", "a", "S", "a"), 3),
         AddEdge(JoinEdge("st3", "S", "b", "T", "b"), 3), Insert("S", 6, {"a": 1, "b": 5}, 3)],
        [Delete(3, 4), RemoveEdge("rs2", 4)]]),
    # a new relation joined at once with a self join and a parallel edge
    "new_relation_self_join": (5, [
        [Insert("R", 1, {"a": 1, "b": 1, "s": "x"}, 0), Insert("R", 2, {"a": 1, "b": 1, "s": "y"}, 0)],
        [AddRelation(Relation("U", ("a", "s")), 1), AddEdge(JoinEdge("rr", "R", "a", "R", "b"), 1),
         AddEdge(JoinEdge("ru", "R", "a", "U", "a"), 1), AddEdge(JoinEdge("ru2", "R", "b", "U", "a"), 1),
         Insert("U", 3, {"a": 1, "s": "x y"}, 1)],
        [RemoveEdge("rr", 2), Insert("U", 4, {"a": 1, "s": "y"}, 2)],
        [RemoveRelation("U", 3)]]),
}


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("name", VARIANTS)
def test_scenarios_match_oracle(name, scenario):
    window, chunks = SCENARIOS[scenario]
    params = Params(_chain(), ("x", "y"), 3, window)
    case = suite.Case(params, _flat(chunks), [len(c) for c in chunks])
    mismatch = suite.check(VARIANTS[name], case)
    assert mismatch is None, f"{mismatch}\n{suite.dump(case)}"


def test_removing_a_relation_ends_its_live_results():
    window, chunks = SCENARIOS["remove_relation_with_results"]
    params = Params(_chain(), ("x", "y"), 3, window)
    out = evaluate(params, _flat(chunks))
    assert any(isinstance(o, End) and o.time == 2 and 2 in o.tids for o in out)
    _, got = _run(FullMeshEngine, params, chunks)
    assert got == out


# -- the mesh itself -----------------------------------------------------------------
def _bench_params(t_max=4):
    from streamspec.bench.kws.generator import params
    return params(relations=5, keywords_=3, t_max=t_max, window=50)


def _stream(p, seconds):
    from streamspec.bench.kws.generator import stream
    return list(stream(p, seconds, kwf=0.3, sel=3, seed=4))


def _cn_shapes(eng):
    """Every CN operator as its chain of (node, parent position, label)."""
    out = set()
    for op in eng.ops:
        if op.cn:
            chain, o = [], op
            while o is not None:
                chain.append((o.node, o.parent_pos, o.label))
                o = o.left
            out.add(tuple(reversed(chain)))
    return out


def test_add_edge_keeps_old_operators_and_buffers_and_equals_a_built_mesh():
    p = _bench_params()
    events = _stream(p, 20)
    eng = FullMeshEngine(p)
    list(eng.process(events))
    old = {id(op): (op, op.out) for op in eng.ops}
    edge = JoinEdge("x", "R3", "j3", "R4", "j4")
    list(eng.process([AddEdge(edge, 20)]))
    now = {id(op) for op in eng.ops}
    assert set(old) <= now, "every old operator is part of the new mesh"
    # buffers of old operators are the same objects unless the change woke a sleeping join
    kept = sum(1 for op, out in old.values() if op.out is out)
    assert kept >= 0.9 * len(old)
    fresh = FullMeshEngine(Params(p.schema.with_edge(edge), p.keywords, p.t_max, p.window))
    assert _cn_shapes(eng) == _cn_shapes(fresh)
    assert len(eng.ops) == len(fresh.ops)


def test_remove_edge_prunes_recursively_and_equals_a_built_mesh():
    p = _bench_params()
    eng = FullMeshEngine(p)
    list(eng.process(_stream(p, 20)))
    list(eng.process([RemoveEdge("e1", 20)]))
    assert not any(op.label is not None and op.label[0] == "e1" for op in eng.ops)
    assert all(op.cn or op.parents for op in eng.ops), "l_rem leaves no operator without parents"
    fresh = FullMeshEngine(Params(p.schema.without_edge("e1"), p.keywords, p.t_max, p.window))
    assert _cn_shapes(eng) == _cn_shapes(fresh)
    assert len(eng.ops) == len(fresh.ops)


@pytest.mark.parametrize("cls", [FullMeshEngine, PartialMeshEngine], ids=lambda c: c.name)
def test_changes_on_the_paper_workload_equal_the_oracle(cls):
    p = _bench_params(t_max=3)
    events = _stream(p, 12)
    change = [AddRelation(Relation("R5", ("text", "j5"), ("text",)), 12),
              AddEdge(JoinEdge("e5", "R1", "j1", "R5", "j5"), 12),
              AddEdge(JoinEdge("x", "R3", "j3", "R4", "j4"), 12)]
    more = [Insert("R5", 1000 + i, {"text": "kw0 kw1", "j5": i % 3 + 1}, 13) for i in range(3)]
    more += [RemoveEdge("e2", 14), RemoveRelation("R1", 15)]
    want = evaluate(p, events + change + more)
    assert sum(o.time >= 12 for o in want) > 0
    eng = cls(p)
    got = list(eng.process(events)) + list(eng.process(change)) + list(eng.process(more)) + eng.flush()
    assert got == want


@pytest.mark.parametrize("change", [AddEdge(JoinEdge("x", "R3", "j3", "R4", "j4"), 20), RemoveEdge("e1", 20),
                                    RemoveRelation("R1", 20)], ids=lambda e: type(e).__name__)
def test_partial_mesh_after_a_change_is_the_one_data_would_grow(change):
    """PM migrated = PM rebuilt and replayed: operators only as high as there are data,
    none left whose trees lead to no CN after a removal."""
    p = _bench_params()
    events = _stream(p, 20)
    engines = []
    for replays in (False, True):
        eng = PartialMeshEngine(p)
        if replays:
            eng._schema_change = lambda event, t, eng=eng: replay_baseline(eng, t)
        list(eng.process(events))
        list(eng.process([change]))
        engines.append(eng)
    migrated, replayed = ({_shape(op) for op in e.ops} for e in engines)
    assert migrated == replayed and len(migrated) > 20


def _shape(op):
    chain = []
    while op is not None:
        chain.append((op.node, op.parent_pos, op.label))
        op = op.left
    return tuple(reversed(chain))
