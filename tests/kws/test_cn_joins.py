"""Issue 14: the full mesh from compiled CNGen with its CN joins held as rows
(``engines/kws/cn_joins.py``, ``_cngen_kernels.py``).

- compiled CNGen returns the reference algorithm's CNs in the same order (also through
  ``test_cngen``: ``cngen`` is the compiled search);
- the compact mesh, every row made an operator, is the mesh ``grow_mesh`` builds
  (same operators, slots and parents, up to the order in which they were made);
- a row becomes an operator exactly when its right node's first tuple arrives, and an
  engine with rows behaves as one whose rows were all made operators up front.
"""
import pickle

from hypothesis import given, settings, strategies as st

from streamspec.bench.kws.generator import params as bench_params
from streamspec.bench.kws.generator import schema as bench_schema
from streamspec.bench.kws.generator import stream as bench_stream
from streamspec.engines.kws.cn_joins import compact_mesh
from streamspec.engines.kws.cngen import compiled_cngen, cn_tuples, expanded_schema
from streamspec.engines.kws.fullmesh import FullMeshEngine
from streamspec.engines.kws.operators import grow_mesh, join_condition
from streamspec.reference.kws_cngen import cngen as cngen_reference
from streamspec.spec.kws import Params
from streamspec.spec.kws_schema import Relation, Schema

from tests.kws.test_cngen import keyword_schemas, small_schemas   # random schemas, keywords, T_max


def _conds(schema):
    return {(e.id, left): join_condition(schema, (e.id, left)) for e in schema.edges for left in (True, False)}


def _chain(op):
    out = []
    while op is not None:
        out.append((op.node, op.parent_pos, op.label))
        op = op.left
    return tuple(reversed(out))


def _described(ops):
    """Each operator by its chain, with every slot that is not a reference (the left
    operator is its chain's prefix, the parents a set of chains)."""
    out = []
    for op in ops:
        out.append((_chain(op), op.pos, op.right, op.cn, op.out, op.end, op.idx, op.running,
                    op.cond, op.key, frozenset(_chain(q) for q in op.parents)))
    return sorted(out, key=repr)


def _all_made(ops, rows, running, conds):
    while rows.rows:
        ops.extend(rows.materialise(next(iter(rows.rows)), running, conds))
    return ops


@settings(max_examples=60, deadline=None)
@given(keyword_schemas())
def test_compiled_cngen_equals_the_reference(case):
    schema, m, t_max, root_keyword = case
    xs = expanded_schema(schema, m, t_max, root_keyword)
    assert cn_tuples(xs, compiled_cngen(xs, m, t_max)) == cngen_reference(schema, m, t_max, root_keyword)


def test_compiled_cngen_equals_the_reference_at_five_keywords():
    """|K| = 5 on the benchmark schema (T_max = 3: 168,975 CNs; the reference needs
    seconds), every root keyword's cluster order included for one of them."""
    schema = bench_schema(15)
    for m, t_max, root in ((5, 3, 0), (5, 2, 3), (4, 4, 2)):
        xs = expanded_schema(schema, m, t_max, root)
        got = cn_tuples(xs, compiled_cngen(xs, m, t_max))
        assert got == cngen_reference(schema, m, t_max, root), (m, t_max, root)


@settings(max_examples=40, deadline=None)
@given(small_schemas(), st.booleans(), st.booleans())
def test_compact_mesh_made_whole_is_the_grown_mesh(case, running, with_conds):
    schema, m, t_max = case
    conds = _conds(schema) if with_conds else None
    ops, rows = compact_mesh(schema, m, t_max, running, conds)
    assert len(ops) + len(rows) == len(grow_mesh(schema, m, t_max, running, conds))
    assert _described(_all_made(ops, rows, running, conds)) == _described(grow_mesh(schema, m, t_max, running, conds))


def test_compact_mesh_made_whole_is_the_grown_mesh_on_the_benchmark_schema():
    schema = bench_schema(15)
    conds = _conds(schema)
    for m in (2, 3):
        ops, rows = compact_mesh(schema, m, 4, False, conds)
        assert len(rows) > 0.8 * sum(op.cn for op in grow_mesh(schema, m, 4, False, conds))
        assert _described(_all_made(ops, rows, False, conds)) == _described(grow_mesh(schema, m, 4, False, conds))


def _run(eng, events, whole: bool):
    if whole:
        eng._materialise_all()
    out = []
    for lo in range(0, len(events), 50):
        out += list(eng.process(events[lo:lo + 50]))
        assert eng._cn_rows is None or not any(eng._sources[n] for n in eng._cn_rows.rows), \
            "a CN join is still a row after its right node's first tuple"
    return out + eng.flush()


def _states(eng):
    return sorted(((_chain(op), op.running, sorted((c[0], tuple(r.tid for r in c[1])) for c in op.out))
                   for op in eng.ops), key=repr)


def test_rows_become_operators_with_their_right_node_and_change_nothing():
    """At |K| = 3 on a 5-relation benchmark workload (kwf 0.3 so that results appear): the same
    outputs and, at the end, the same operators in the same states (running, buffers) as
    an engine whose CN joins were all operators from the start; every option."""
    p = bench_params(5, 3, 4, 50)
    events = list(bench_stream(p, 20, kwf=0.3, sel=3, seed=2))
    for options in ({}, {"purge": "eager"}, {"demand_driven": False}):
        lazy, whole = FullMeshEngine(p, **options), FullMeshEngine(p, **options)
        rows_at_start = len(lazy._cn_rows)
        assert rows_at_start > 0 and lazy.mesh_size() == whole.mesh_size()
        got, want = _run(lazy, events, False), _run(whole, events, True)
        assert got == want and len(got) > 10
        assert 0 < len(lazy._cn_rows or ()) < rows_at_start, "some rows made, some still rows"
        assert lazy.mesh_size() == whole.mesh_size()
        assert _states(lazy) == _states(whole)


def test_mesh_with_rows_pickles_mid_stream():
    p = bench_params(5, 3, 4, 50)
    events = list(bench_stream(p, 20, kwf=0.3, sel=3, seed=5))
    a = FullMeshEngine(p)
    first = list(a.process(events[:50]))
    assert a._cn_rows is not None
    b = pickle.loads(pickle.dumps(a))
    assert b.mesh_size() == a.mesh_size()
    rest_a = list(a.process(events[50:])) + a.flush()
    rest_b = list(b.process(events[50:])) + b.flush()
    assert rest_a == rest_b and len(first + rest_a) > 0


def test_one_node_cns_and_a_schema_without_edges():
    """A root holding every keyword is a one-node CN; with no edges there are no rows."""
    from streamspec.spec.kws import Insert
    schema = Schema((Relation("R", ("a", "s")),), ())
    eng = FullMeshEngine(Params(schema, "x,y", 3, 10))
    assert eng._cn_rows is None and eng.mesh_size() == (1, 1)
    out = list(eng.process([Insert("R", 1, {"a": 1, "s": "x y"}, 0)])) + eng.flush()
    assert [o.tids for o in out] == [(1,)]


def test_removals_prune_rows_as_they_prune_operators():
    """A removal with CN joins still held as rows (Section 4.4's recursive pruning and
    l_rem, a row counting as a parent) = the same removal on the mesh made whole first:
    outputs, operators and their states, and the mesh's size."""
    from streamspec.spec.kws import RemoveEdge, RemoveRelation
    p = bench_params(5, 3, 4, 50)
    events = list(bench_stream(p, 20, kwf=0.3, sel=3, seed=4))
    more = list(bench_stream(p, 10, kwf=0.3, sel=3, seed=6))
    more = [type(e)(e.relation, e.tid + 10_000, e.values, e.t + 21) for e in more]
    for change in ([RemoveEdge("e1", 20)], [RemoveRelation("R4", 20)], [RemoveEdge("e2", 20), RemoveRelation("R1", 20)]):
        lazy, whole = FullMeshEngine(p), FullMeshEngine(p)
        whole._materialise_all()
        outs = [list(eng.process(events)) for eng in (lazy, whole)]
        assert lazy._cn_rows is not None, "rows are left to prune"
        outs = [o + list(eng.process(change)) for o, eng in zip(outs, (lazy, whole))]
        assert lazy.mesh_size() == whole.mesh_size()
        survivors = [e for e in more if e.relation in {r.name for r in lazy.schema.relations}]
        outs = [o + list(eng.process(survivors)) + eng.flush() for o, eng in zip(outs, (lazy, whole))]
        assert outs[0] == outs[1] and len(outs[0]) > 10
        assert _states(lazy) == _states(whole)
        assert all(op.cn or op.parents for op in lazy.ops), "l_rem leaves no operator without parents"
