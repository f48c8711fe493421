"""Issue 14: a removal cuts the full mesh at the change and leaves the deletion for later
(``engines/kws/_migration_prune.py``).

- an engine whose removals defer the deletion behaves as one that deletes everything inside
  the change: outputs after every step, operators and their states, mesh size, pickling,
  every option; on fixed workloads and on the conformance suite's seeded cases;
- from the change on, no operator whose tree holds the removed edge or relation holds a
  live composite or runs once its node's tables are cleaned (at the node's next tuple);
- the results the removal ends are the oracle's.
"""
import pickle

import pytest

from streamspec.engines.kws import migration
from streamspec.engines.kws._migration_prune import PendingPrune
from streamspec.engines.kws.fullmesh import FullMeshEngine
from streamspec.reference.kws import evaluate
from streamspec.spec.kws import AddEdge, AddRelation, End, RemoveEdge, RemoveRelation
from streamspec.spec.kws_schema import JoinEdge, Relation

from tests.kws.test_migration_rows import _fuzz_cases, _states, _workload


SMALL = {"climb": 40, "rows": 8, "l_rem": 40, "tables": 8, "ops": 500}   # slices (units each)
TINY = dict.fromkeys(SMALL, 1)


@pytest.fixture
def whole_removals(monkeypatch):
    """Delete every operator inside the change (no deferral)."""
    def use(flag: bool):
        monkeypatch.setattr(migration, "DEFER_PRUNE", not flag)
    return use


def _in_removed(op, edge_ids, rel) -> bool:
    while op is not None:
        if op.node[0] == rel or (op.label is not None and op.label[0] in edge_ids):
            return True
        op = op.left
    return False


CHANGES = {   # on ``_workload``'s schema: R0 joins R1, R2, R3 (e1-e3), R1 joins R4 (e4)
    "central_edge": ([RemoveEdge("e1", 12)], {"e1"}, None),
    "leaf_edge": ([RemoveEdge("e4", 12)], {"e4"}, None),
    "relation": ([RemoveRelation("R1", 12)], {"e1", "e4"}, "R1"),
    "after_an_addition": ([AddEdge(JoinEdge("x", "R2", "j2", "R3", "j3"), 12), RemoveEdge("e2", 12)],
                          {"e2"}, None),
}


@pytest.mark.parametrize("slices", ["default", "small"])
@pytest.mark.parametrize("options", [{}, {"purge": "eager"}, {"demand_driven": False}], ids=repr)
@pytest.mark.parametrize("change", CHANGES)
def test_a_deferred_deletion_equals_the_deletion_in_the_change(options, change, slices, whole_removals,
                                                               monkeypatch):
    """The same stream and removal on an engine that defers the deletion and on one that
    deletes everything in the change: the same outputs after each step (the oracle's), the
    same operators in the same states at the end; pickled copies taken right after the
    change and in the middle of the deletion continue identically.  After the change no
    operator of the removed element holds a live composite, and none runs once its node is
    cleaned; the deletion ends during the stream, in slices (small ones: 33-67 of them)."""
    if slices == "small":
        monkeypatch.setattr(PendingPrune, "SLICE", SMALL)
    p, events, more = _workload(seed=11, later=6 if slices == "default" else 20)
    removal, edge_ids, rel = CHANGES[change]
    more = [e for e in more if e.relation != rel]   # (a removed relation streams no more)
    lazy, whole = FullMeshEngine(p, **options), FullMeshEngine(p, **options)
    outs = [list(lazy.process(events)), list(whole.process(events))]
    whole_removals(False)
    outs[0] += list(lazy.process(removal))
    whole_removals(True)
    outs[1] += list(whole.process(removal))
    assert whole._pending is None and lazy._pending is not None, "the lazy engine deferred"
    assert outs[0] == outs[1]
    copy = pickle.loads(pickle.dumps(lazy))
    after = len(outs[0])
    outs.append([])
    cleaned, phases, middle = 0, set(), None
    for eng, out in zip((lazy, whole, copy), outs):
        for lo in range(0, len(more), 10):
            out += list(eng.process(more[lo:lo + 10]))
            if eng is lazy:
                pending = lazy._pending
                dirty = pending.nodes if pending is not None else set()
                cleaned = len(lazy._sources) - len(dirty)
                phases.add(pending.phase if pending is not None else None)
                if middle is None and pending is not None and pending.phase != "climb":
                    middle = (lo + 10, len(out), pickle.loads(pickle.dumps(lazy)))
                for op in lazy._made_ops():
                    if _in_removed(op, edge_ids, rel):
                        assert not any(c[0] > lazy.now for c in op.out), "a deleted operator holds a live composite"
                        assert not (op.running and op.left is not None and op.node not in dirty), \
                            "a deleted join runs in a cleaned node"
        out += eng.flush()
    assert cleaned > 3, "tuples arrived at nodes, which were cleaned"
    assert None in phases, "the deletion ended during the stream"
    assert outs[0] == outs[1]
    assert outs[2] == outs[0][after:]
    if slices == "small":
        assert len(phases) > 3 and middle is not None, "the deletion went through its phases in slices"
        lo, done, mid = middle
        assert list(mid.process(more[lo:])) + mid.flush() == outs[0][done:]
        assert _states(mid) == _states(whole)
    if slices == "default":   # (the oracle is exponential in the longer stream)
        assert outs[0] == evaluate(p, events + removal + more)
    assert any(isinstance(o, End) and o.time == 12 for o in outs[0]) or change == "leaf_edge", \
        "the removal ended results"
    assert lazy.mesh_size() == whole.mesh_size() == copy.mesh_size()
    assert _states(lazy) == _states(whole) == _states(copy)
    assert not any(_in_removed(op, edge_ids, rel) for op in lazy.ops)


@pytest.mark.parametrize("slices", ["default", "tiny"])
@pytest.mark.parametrize("options", [{}, {"purge": "eager"}, {"demand_driven": False}], ids=repr)
def test_deferred_deletions_equal_deletions_in_the_change_on_fuzzed_cases(options, slices, whole_removals,
                                                                        monkeypatch):
    """On the conformance suite's seeded cases with removals (after additions, deletions,
    expiries and ties, and before further changes), an engine deferring the deletion gives
    the outputs, after every chunk, of one deleting inside the change, and ends with the
    same operators in the same states (running, live composites, ``end``); with the
    deletion's slices at their default sizes and of one unit each (so that the cases'
    tuples, expiries, deletions and later changes fall between them)."""
    if slices == "tiny":
        monkeypatch.setattr(PendingPrune, "SLICE", TINY)
    deferred = 0
    cases = _fuzz_cases(400, (RemoveEdge, RemoveRelation))
    for seed, case in cases:
        engines = []
        for whole in (False, True):
            whole_removals(whole)
            eng, outs, pos = FullMeshEngine(case.params, **options), [], 0
            for size in case.chunks:
                outs.append(list(eng.process(case.events[pos:pos + size])))
                pos += size
                deferred += not whole and type(eng._pending).__name__ == "PendingPrune"
            outs.append(eng.flush())
            engines.append((eng, outs))
        (lazy, got), (every, want) = engines
        assert got == want, f"seed {seed}"
        assert _states(lazy, live_only=True) == _states(every, live_only=True), f"seed {seed}"
    assert len(cases) == 400 and deferred > 50, "cases left deletions pending across chunks"


def test_a_removal_after_an_addition_and_an_addition_after_a_removal():
    """Each change first completes the one before (an addition's pending searches, a removal's
    deletion): an edge removed while the addition before it still waits, then added back
    with the same id, gives the oracle's outputs."""
    p, events, more = _workload(seed=13)
    edge = JoinEdge("x", "R1", "j1", "R2", "j2")
    changes = [AddEdge(edge, 12), RemoveEdge("e1", 12), RemoveEdge("x", 13),
               AddEdge(JoinEdge("e1", "R0", "j1", "R1", "j1"), 13),
               AddRelation(Relation("R5", ("text", "j5"), ("text",)), 13)]
    eng = FullMeshEngine(p)
    got = list(eng.process(events))
    for ev in changes:
        got += list(eng.process([ev]))
    got += list(eng.process(more)) + eng.flush()
    assert got == evaluate(p, events + changes + more)
