"""Issue 14: a new edge or relation grows the full mesh from the compiled search, its new CN
joins held as rows (``engines/kws/_migration_grow.py``, ``_cngen_kernels.cngen_search``).

- the restricted compiled search adds exactly the operators a mesh built for the new schema
  has beyond the old one (random schemas, chained additions);
- an engine whose new CN joins are rows behaves as one whose every CN join (old and new) is an
  operator: outputs, operator states, mesh size, pickling, every option;
- new CN joins whose right nodes already hold tuples are operators at once when every node of
  their left chain holds tuples too, and find the change's own results (equal to the
  oracle's); the others wait as rows keyed by an empty node of the left chain and become
  operators, running, at its first tuple;
- an edge added then removed before any of its rows became an operator leaves the mesh as
  it was.
"""
import pickle

import pytest
from hypothesis import given, settings, strategies as st

from streamspec.bench.kws.generator import params as bench_params
from streamspec.bench.kws.generator import stream as bench_stream
from streamspec.engines.kws import migration
from streamspec.engines.kws.fullmesh import FullMeshEngine
from streamspec.reference.kws import evaluate
from streamspec.spec.kws import AddEdge, AddRelation, Appear, Insert, Params, RemoveEdge
from streamspec.spec.kws_schema import JoinEdge, Relation

from tests.kws.test_cn_joins import _chain
from tests.kws.test_cngen import small_schemas


def _chain_nodes(op) -> list:
    """The nodes of the positions of ``op``'s tree."""
    out = []
    while op is not None:
        out.append(op.node)
        op = op.left
    return out


def _shapes(eng) -> list:
    """Every operator of the mesh (rows made operators) by its chain, with whether it is a CN."""
    return sorted((_chain(op), op.cn) for op in eng.ops)


def _states(eng, live_only: bool = False) -> list:
    """Every operator's state; with ``live_only`` its buffer without dead composites (lazy
    purging drops them only when a probe meets one, and which probes run depends on which
    CN joins are operators)."""
    return sorted(((_chain(op), op.cn, op.running, op.end if eng._eager else None,
                    sorted(((c[0], tuple(r.tid for r in c[1])) for c in op.out
                            if not live_only or c[0] > eng.now), key=repr))   # (int and str tids)
                   for op in eng.ops),
                  key=repr)


@pytest.fixture
def whole_migrations(monkeypatch):
    """Make every new CN join an operator inside the change (no deferral)."""
    def use(flag: bool):
        monkeypatch.setattr(migration, "DEFER_NEW_CN_JOINS", not flag)
    return use


@st.composite
def schemas_and_new_edges(draw):
    schema, m, t_max = draw(small_schemas())
    rels = [r.name for r in schema.relations]
    edges = [JoinEdge(f"x{k}", draw(st.sampled_from(rels)), draw(st.sampled_from("ab")),
                      draw(st.sampled_from(rels)), draw(st.sampled_from("ab")))
             for k in range(draw(st.integers(1, 2)))]
    return schema, m, t_max, edges


@settings(max_examples=60, deadline=None)
@given(schemas_and_new_edges(), st.booleans())
def test_the_restricted_search_adds_what_a_built_mesh_has(case, whole):
    """After each AddEdge the migrated mesh has the operators (every one, CN or not) of a
    mesh built for the schema: the restricted search misses no tree and adds none twice."""
    schema, m, t_max, edges = case
    keywords = ("x", "y")[:m]
    eng = FullMeshEngine(Params(schema, keywords, t_max, 10))
    migration.DEFER_NEW_CN_JOINS = not whole
    try:
        for t, e in enumerate(edges):
            list(eng.process([AddEdge(e, t)]))
            fresh = FullMeshEngine(Params(eng.schema, keywords, t_max, 10))
            assert eng.mesh_size() == fresh.mesh_size()
            assert _shapes(eng) == _shapes(fresh)
    finally:
        migration.DEFER_NEW_CN_JOINS = True


def _workload(seed=3, seconds=12, later=6):
    """|SR| = 5, |K| = 3, T_max = 4 at kwf 0.2 (results at most instants): ``seconds`` of
    stream before the change at ``seconds``, ``later`` seconds after it."""
    p = bench_params(5, 3, 4, 50)
    events = list(bench_stream(p, seconds, kwf=0.2, sel=4, seed=seed))
    more = list(bench_stream(p, later, kwf=0.2, sel=4, seed=seed + 1))
    more = [Insert(e.relation, e.tid + 10_000, e.values, e.t + seconds + 1) for e in more]
    return p, events, more


CHANGES = {
    "central": [AddEdge(JoinEdge("x", "R1", "j1", "R2", "j2"), 12)],
    "leaf": [AddEdge(JoinEdge("x", "R3", "j3", "R4", "j4"), 12)],
    "relation_and_edges": [AddRelation(Relation("R5", ("text", "j5"), ("text",)), 12),
                           AddEdge(JoinEdge("e5", "R1", "j1", "R5", "j5"), 12),
                           AddEdge(JoinEdge("x", "R3", "j3", "R4", "j4"), 12)],
}


@pytest.mark.parametrize("options", [{}, {"purge": "eager"}, {"demand_driven": False}], ids=repr)
@pytest.mark.parametrize("change", CHANGES)
def test_rows_after_a_change_equal_every_operator_made(options, change, whole_migrations):
    """The same stream and change on an engine with rows (the build's and the change's) and
    on one whose CN joins were all made operators before the change and in it: the same
    outputs after each step and, at the end, the same operators in the same states; a
    pickled copy taken right after the change continues identically."""
    p, events, more = _workload()
    extra = [Insert("R5", 20_000 + i, {"text": "kw0 kw1 kw2"[:3 + 4 * (i % 3)], "j5": i % 3 + 1}, 13 + i)
             for i in range(3)] if change == "relation_and_edges" else []
    more = sorted(more + extra, key=lambda e: e.t)
    lazy, whole = FullMeshEngine(p, **options), FullMeshEngine(p, **options)
    outs = [list(lazy.process(events)), list(whole.process(events))]
    assert outs[0] == outs[1]
    whole._materialise_all()
    rows_before = len(lazy._cn_rows)
    whole_migrations(False)
    outs[0] += list(lazy.process(CHANGES[change]))
    whole_migrations(True)
    outs[1] += list(whole.process(CHANGES[change]))
    assert whole._cn_rows is None and whole._waiting is None and whole._pending is None, \
        "the whole engine made every new CN join an operator"
    assert lazy._pending is not None, "the CNs holding a node without tuples wait for its first tuple"
    if len(CHANGES[change]) == 1:   # (a later change searches the earlier one's first)
        assert len(lazy._cn_rows) == rows_before, "the change itself added no rows"
    copy = pickle.loads(pickle.dumps(lazy))
    after = len(outs[0])
    outs.append([])
    waited = discovered = 0
    for eng, out in zip((lazy, whole, copy), outs):
        for lo in range(0, len(more), 40):
            out += list(eng.process(more[lo:lo + 40]))
            if eng is lazy:
                waited += lazy._waiting is not None
                discovered = len(lazy._pending.done) if lazy._pending is not None else discovered
        out += eng.flush()
    assert waited and (discovered or lazy._pending is None), "nodes were discovered, rows waited"
    assert lazy.mesh_size() == whole.mesh_size() == copy.mesh_size()
    assert outs[0] == outs[1] and len(outs[0]) > 20
    assert outs[2] == outs[0][after:]
    assert _states(lazy) == _states(whole) == _states(copy)


@pytest.mark.parametrize("options", [{}, {"demand_driven": False}], ids=repr)
def test_new_cn_joins_over_live_right_nodes_are_operators_and_find_the_changes_results(options):
    """At the change, the right nodes of many new CN joins hold tuples: those whose left chain
    holds tuples at every position are operators at once, running (Pstart), and the results
    the new edge makes of tuples already in the window appear at the change's instant, as
    the oracle says.  The others wait, keyed by an empty node of their left chain (their left
    buffer holds nothing live), and at that node's first tuple become operators, running
    while their right node holds tuples."""
    p, events, more = _workload(seed=5)
    change = CHANGES["central"]
    eng = FullMeshEngine(p, **options)
    got = list(eng.process(events))
    made = len(eng._made_ops())
    got += list(eng.process(change))
    new_ops = eng._made_ops()[made:]
    live_joins = [op for op in new_ops if op.cn and op.left is not None]
    assert len(live_joins) > 10 and all(op.running for op in live_joins)
    assert all(eng._sources[op.right] and all(eng._sources[n] for n in _chain_nodes(op.left))
               for op in live_joins), "an operator made at the change has tuples at every position"
    pending = eng._pending
    assert eng._waiting is None and pending is not None
    assert pending.nodes == {n for n, src in eng._sources.items() if not src}
    discovered = 0
    for e in more:   # a node's first tuple makes the new CNs it is the first to hold
        before = set(eng._pending.nodes) if eng._pending is not None else set()
        made = len(eng._made_ops())
        got += list(eng.process([e]))
        node = (e.relation, eng._rows[e.tid].kbits) if e.tid in eng._rows else None
        if node in before:
            discovered += 1
            assert eng._pending is None or node in eng._pending.done
            woken = [op for op in eng._made_ops()[made:] if op.cn and op.left is not None]
            assert all(op.running == (bool(eng._sources[op.right]) or not eng.demand_driven) for op in woken)
        # the rows wait for a node that has had no tuple since they were made
        for rows in (eng._cn_rows, eng._waiting):
            assert rows is None or not any(eng._sources[n] for n in rows.rows)
    assert discovered >= 3, "the stream reached nodes without tuples at the change"
    got += eng.flush()
    want = evaluate(p, events + change + more)
    assert got == want
    assert any(isinstance(o, Appear) and o.time == 12 and any(e[0] == "x" for e in o.edges) for o in want), \
        "the change's own results (old tuples joined by the new edge)"


@pytest.mark.parametrize("gap", [0, 1])
def test_an_edge_added_then_removed_before_its_rows_are_made_leaves_the_mesh_as_it_was(gap):
    """AddEdge then RemoveEdge of the same edge, at one instant or at the next with no tuple
    in between (no row of it became an operator): the rows and operators it added go
    (pruned as rows), the mesh is the one never changed, and the outputs the oracle's."""
    p, events, more = _workload(seed=7)
    edge = JoinEdge("x", "R1", "j1", "R2", "j2")
    change = [AddEdge(edge, 12), RemoveEdge("x", 12 + gap)]
    eng, same = FullMeshEngine(p), FullMeshEngine(p)
    got = list(eng.process(events))
    list(same.process(events))
    size, rows = eng.mesh_size(), len(eng._cn_rows)
    got += list(eng.process(change[:1]))
    assert eng.mesh_size()[0] > size[0] and len(eng._cn_rows) > rows
    got += list(eng.process(change[1:]))
    assert eng.mesh_size() == size and len(eng._cn_rows) == rows and eng._waiting is None
    assert not any(op.label is not None and op.label[0] == "x" for op in eng._made_ops())
    got += list(eng.process(more)) + eng.flush()
    list(same.process(more))
    assert got == evaluate(p, events + change + more)
    assert _shapes(eng) == _shapes(same)


@settings(max_examples=40, deadline=None)
@given(schemas_and_new_edges())
def test_the_compiled_search_adds_what_the_plain_search_adds(case):
    """``migration.grow_full_mesh`` (the plain search over ``cngen.Cluster``, the statement of
    what a new edge adds) and the compiled migration add the same operators."""
    schema, m, t_max, edges = case
    keywords = ("x", "y")[:m]
    e = edges[0]
    compiled = FullMeshEngine(Params(schema, keywords, t_max, 10))
    before = {_chain(op) for op in compiled.ops}
    list(compiled.process([AddEdge(e, 0)]))
    added = {_chain(op) for op in compiled.ops} - before
    plain = FullMeshEngine(Params(schema, keywords, t_max, 10))
    plain.ops   # every row an operator, as the plain search expects
    plain.schema = schema.with_edge(e)
    xs, new_labels, new_nodes, dist = migration.changed_schema(plain, AddEdge(e, 0))
    created = migration.grow_full_mesh(plain, xs, plain._xs[2], new_labels, new_nodes, dist)
    assert {_chain(op) for op in created} == added
    assert len(created) == len(added)


def _fuzz_cases(n: int, kinds=(AddEdge, AddRelation)) -> list:
    """Seeded conformance cases (``conformance.kws``) with a schema change of ``kinds``."""
    from streamspec.conformance.strategies.kws import random_case
    out, seed = [], 0
    while len(out) < n:
        case = random_case(seed, max_events=30)
        if any(isinstance(e, kinds) for e in case.events):
            out.append((seed, case))
        seed += 1
    return out


@pytest.mark.parametrize("options", [{}, {"purge": "eager"}, {"demand_driven": False}], ids=repr)
def test_held_rows_and_waiting_rows_equal_every_operator_made_on_fuzzed_cases(options, whole_migrations):
    """On the conformance suite's seeded cases with schema additions (and removals, deletions,
    expiries and ties around them), an engine whose migrations hold new CN joins as rows
    (keyed by an empty right node, or waiting on an empty node of the left chain) gives the
    outputs of one whose migrations make every new CN join an operator, after every chunk,
    and ends with the same operators in the same states (running, live composites, ``end``)."""
    waited, made = 0, 0
    for seed, case in _fuzz_cases(400):
        engines = []
        for whole in (False, True):
            whole_migrations(whole)
            eng, outs, pos, held = FullMeshEngine(case.params, **options), [], 0, 0
            for size in case.chunks:
                outs.append(list(eng.process(case.events[pos:pos + size])))
                pos += size
                if not whole:
                    now = len(eng._waiting) if eng._waiting is not None else 0
                    waited += now > 0
                    made += now < held
                    held = now
            outs.append(eng.flush())
            engines.append((eng, outs))
        (lazy, got), (every, want) = engines
        assert got == want, f"seed {seed}"
        assert _states(lazy, live_only=True) == _states(every, live_only=True), f"seed {seed}"
    assert waited > 10 and made > 3, "some cases held waiting rows, and some went (made operators or removed)"
