"""CNGen (paper Section 3.2): complete and duplicate-free, checked against brute-force
enumeration of all labelled trees up to t_max nodes, compared up to isomorphism."""
import pytest
from hypothesis import given, settings, strategies as st

from streamspec.engines.kws.cngen import brute_force_cns, canonical_form, cngen, expanded_nodes, is_cn
from streamspec.engines.kws.operators import build, grow_mesh, join_condition
from streamspec.spec.kws_schema import JoinEdge, Relation, Schema


@st.composite
def small_schemas(draw):
    n = draw(st.integers(1, 3))
    rels = tuple(Relation(name, ("a", "b")) for name in "RST"[:n])
    edges = tuple(JoinEdge(f"e{k}", draw(st.sampled_from(rels)).name, draw(st.sampled_from("ab")),
                           draw(st.sampled_from(rels)).name, draw(st.sampled_from("ab")))
                  for k in range(draw(st.integers(0, 3))))
    m = draw(st.integers(1, 2))
    t_max = draw(st.integers(1, 4 if n <= 2 and len(edges) <= 2 else 3))
    return Schema(rels, edges), m, t_max


@settings(max_examples=40, deadline=None)
@given(small_schemas())
def test_cngen_equals_brute_force_up_to_isomorphism(case):
    schema, m, t_max = case
    cns = cngen(schema, m, t_max)
    nid = {n: i for i, n in enumerate(expanded_nodes(schema, m))}
    forms = [canonical_form(cn, nid) for cn in cns]
    assert len(forms) == len(set(forms)), "CNGen produced isomorphic duplicates"
    assert set(forms) == brute_force_cns(schema, m, t_max)
    full = (1 << m) - 1
    for cn in cns:
        assert is_cn(cn, full) and len(cn) <= t_max
        assert cn[0][1] & 1, "every CN is rooted at a node holding the root keyword"
        assert all(cn[i][2] < i for i in range(1, len(cn))), "positions are in pre-order"


def test_paper_example_many_to_many_and_repeated_nodes():
    """T{k2} and U{k2} both interior with the same keyword, and a repeated T{} node:
    the CNs Discover misses (Section 3.2)."""
    rels = tuple(Relation(n, ("a",)) for n in "STUV")
    edges = tuple(JoinEdge(f"{x}T", x, "a", "T", "a") for x in "SUV")
    schema = Schema(rels, edges)
    cns = cngen(schema, 3, 4)
    node = lambda rel, *ks: (rel, sum(1 << k for k in ks))  # noqa: E731
    shapes = [sorted(c[:2] for c in cn) for cn in cns]
    assert sorted([node("S", 0), node("T"), node("U", 1), node("V", 2)]) in shapes
    assert sorted([node("S", 0), node("T"), node("S", 1), node("T"), node("U", 2)]) not in shapes  # > t_max
    assert sorted([node("S", 0), node("T"), node("S", 1), node("T"), node("U", 2)]) in \
        [sorted(c[:2] for c in cn) for cn in cngen(schema, 3, 5)]


def test_mesh_shares_prefixes_and_forest_does_not():
    rels = tuple(Relation(n, ("a",)) for n in "STU")
    schema = Schema(rels, (JoinEdge("st", "S", "a", "T", "a"), JoinEdge("tu", "T", "a", "U", "a")))
    cns = cngen(schema, 2, 4)
    forest, mesh = build(cns, shared=False), build(cns, shared=True)
    assert sum(op.cn for op in forest) == sum(op.cn for op in mesh) == len(cns)
    assert len(mesh) < len(forest) == sum(len(cn) for cn in cns)


@settings(max_examples=30, deadline=None)
@given(small_schemas())
def test_treegen_grows_exactly_the_full_mesh(case):
    """The partial mesh's TreeGen (one CNGen step per operator, dead ends dropped) reaches
    exactly the CNs of CNGen and, as joins, exactly their proper prefixes (the full mesh)."""
    from streamspec.engines.kws.cngen import Cluster, expanded_schema
    schema, m, t_max = case
    cns = cngen(schema, m, t_max)
    nodes, nid, adjacency, rbit = expanded_schema(schema, m, t_max)
    reached, joins = [], set()
    for root in nodes:
        if not root[1] & rbit:
            continue
        cluster = Cluster(root, nid, adjacency, m, t_max, rbit)
        first = cluster.first()
        if root[1] == cluster.full:
            reached.append(first[0])
            continue
        stack = [first]
        while stack:
            state = stack.pop()
            joins.add(state[0])
            found, grown = [], []
            cluster.expand(state, found, grown)
            reached += found
            stack += [g for g in grown if cluster.leads_to_cn(g)]
    assert sorted(reached) == sorted(cns)
    prefixes = {cn[:i] for cn in cns for i in range(1, len(cn))}
    assert {j for j in joins if len(j) > 1} == {p for p in prefixes if len(p) > 1}


def _structure(ops):
    at = {id(op): i for i, op in enumerate(ops)}
    return [(op.pos, op.node, op.parent_pos, op.label, at.get(id(op.left)), op.cn, op.cond, op.running,
             tuple(at[id(q)] for q in op.parents)) for op in ops]


@settings(max_examples=40, deadline=None)
@given(small_schemas(), st.booleans())
def test_mesh_grown_with_cngen_equals_mesh_built_from_the_cns(case, running):
    schema, m, t_max = case
    conds = {(e.id, left): join_condition(schema, (e.id, left)) for e in schema.edges for left in (True, False)}
    assert _structure(grow_mesh(schema, m, t_max, running, conds)) == \
        _structure(build(cngen(schema, m, t_max), True, running, conds))


def test_mesh_grown_with_cngen_on_the_benchmark_schema():
    from streamspec.bench.kws.generator import schema as bench_schema
    schema = bench_schema(15)
    for m in (2, 3):
        assert _structure(grow_mesh(schema, m, 4)) == _structure(build(cngen(schema, m, 4), True))


# -- issue 14: the last-level cache and the CN joins made without Op.__init__ change nothing --

@st.composite
def keyword_schemas(draw):
    """Small random schemas with up to 4 keywords and T_max up to 5 (4 with 4 keywords:
    the CN count grows quickly), any root keyword."""
    schema, _, _ = draw(small_schemas())
    m = draw(st.integers(1, 4))
    t_max = draw(st.integers(1, 5 if m <= 3 else 4))
    return schema, m, t_max, draw(st.integers(0, m - 1))


@settings(max_examples=60, deadline=None)
@given(keyword_schemas())
def test_cngen_equals_the_algorithm_before_the_cache(case):
    """Same CNs, same order (the mesh's operator order follows it), for every root keyword."""
    from streamspec.reference.kws_cngen import cngen as cngen_before
    schema, m, t_max, root_keyword = case
    assert cngen.__wrapped__(schema, m, t_max, root_keyword) == cngen_before(schema, m, t_max, root_keyword)


def test_cngen_equals_the_algorithm_before_the_cache_on_the_benchmark_schemas():
    """|SR| = 5 and 15 (the paper's default), every |K| <= 4 and T_max <= 5, except |K| = 4,
    T_max = 5 at |SR| = 15 (millions of CNs: minutes for the reference)."""
    from streamspec.bench.kws.generator import schema as bench_schema
    from streamspec.reference.kws_cngen import cngen as cngen_before
    for n in (5, 15):
        schema = bench_schema(n)
        for m in range(1, 5):
            for t_max in range(1, 6):
                if (n, m, t_max) == (15, 4, 5):
                    continue
                new = cngen.__wrapped__(schema, m, t_max)
                assert new == cngen_before(schema, m, t_max), (n, m, t_max)
                assert len(new) > 0


def _slots(ops):
    """Every slot of every operator, operators by their index (Op.__getstate__ fails on
    an unset slot)."""
    at = {id(op): i for i, op in enumerate(ops)}
    out = []
    for op in ops:
        s = op.__getstate__()
        s["left"] = at.get(id(s["left"]))
        s["parents"] = tuple(at[id(q)] for q in s["parents"])
        out.append(s)
    return out


@settings(max_examples=40, deadline=None)
@given(small_schemas(), st.booleans())
def test_grown_mesh_sets_every_slot_as_build_does(case, running):
    schema, m, t_max = case
    conds = {(e.id, left): join_condition(schema, (e.id, left)) for e in schema.edges for left in (True, False)}
    for c in (conds, None):
        grown, built = grow_mesh(schema, m, t_max, running, c), build(cngen(schema, m, t_max), True, running, c)
        assert _slots(grown) == _slots(built)
        assert all(type(op) is type(built[0]) for op in grown)


def test_grown_mesh_sets_every_slot_on_the_benchmark_schema():
    from streamspec.bench.kws.generator import schema as bench_schema
    schema = bench_schema(15)
    conds = {(e.id, left): join_condition(schema, (e.id, left)) for e in schema.edges for left in (True, False)}
    grown = grow_mesh(schema, 3, 4, False, conds)
    assert _slots(grown) == _slots(build(cngen(schema, 3, 4), True, False, conds))
    assert sum(op.cn for op in grown) == 9031


@pytest.mark.own_gc
def test_a_large_build_is_promoted_unexamined_and_its_garbage_still_collected(monkeypatch):
    """collector_off promotes a large build to the oldest generation (no young collection
    walks it on leaving; one does without promotion) and freezes nothing for good: a
    cycle dropped during the build is freed by a collection."""
    import gc
    import weakref

    from streamspec.engines.kws import cngen as cngen_module

    class Node:
        pass

    def build_and_leave():
        """Collections (generation numbers) started from the build's exit to the end
        of the next few allocations."""
        started = []

        def seen(phase, info):
            if phase == "start":
                started.append(info["generation"])
        gc.callbacks.append(seen)
        try:
            with cngen_module.collector_off():
                assert not gc.isenabled()
                kept = [[] for _ in range(5000)]
                a, b = Node(), Node()
                a.other, b.other = b, a
                dropped = weakref.ref(a)
                del a, b
            assert gc.isenabled()
            more = [[] for _ in range(100)]
        finally:
            gc.callbacks.remove(seen)
        assert len(kept) == 5000 and len(more) == 100
        return started, dropped

    was = gc.isenabled()
    gc.enable()
    try:
        monkeypatch.setattr(cngen_module, "PROMOTE", 1 << 40)
        started, _ = build_and_leave()
        assert started, "without promotion the first allocations walk the build"
        monkeypatch.setattr(cngen_module, "PROMOTE", 1000)
        started, dropped = build_and_leave()
        assert started == [], "the promoted build was walked by a young collection"
        assert gc.get_freeze_count() == 0
        assert dropped() is not None  # only a collection frees a cycle
        gc.collect()
        assert dropped() is None
    finally:
        if not was:
            gc.disable()


@pytest.mark.own_gc
def test_objects_the_process_froze_stay_frozen(monkeypatch):
    """A process that froze objects itself (e.g. a harness after warm-up) keeps them frozen
    across a large build: collector_off skips its promotion then."""
    import gc

    from streamspec.engines.kws import cngen as cngen_module

    monkeypatch.setattr(cngen_module, "PROMOTE", 10)
    was = gc.isenabled()
    gc.enable()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with cngen_module.collector_off():
            kept = [[] for _ in range(100)]
        assert gc.get_freeze_count() == frozen and len(kept) == 100
    finally:
        gc.unfreeze()
        if not was:
            gc.disable()
