"""The paper's forest (``kws.forest``, Section 3.3) seen from inside: trees
executed independently, each with its own source selections and two private
input buffers per join, and Figure 4.5's eager purging (``purge="lazy"``: dead
composites stay until a probe loops over them)."""
import pytest

from streamspec.conformance import kws as suite
from streamspec.engines.kws.cngen import cngen
from streamspec.engines.kws.forest import ForestEngine
from streamspec.spec.kws import Delete, Insert, Params
from streamspec.spec.kws_schema import JoinEdge, Relation, Schema


def chain():
    """R - S - T on attribute a; keywords x (in R or T) and y."""
    rels = tuple(Relation(n, ("a", "s")) for n in "RST")
    return Schema(rels, (JoinEdge("rs", "R", "a", "S", "a"), JoinEdge("st", "S", "a", "T", "a")))


def feed(engine, events):
    return list(engine.process(events))


def test_one_tree_per_cn_with_private_buffers():
    p = Params(chain(), "x,y", 3, 100)
    eng = ForestEngine(p)
    cns = cngen(p.schema, 2, 3)
    assert len(eng.trees) == len(cns) and [t.nodes for t in eng.trees] == [
        tuple((e[0], e[1]) for e in cn) for cn in cns]
    feed(eng, [Insert("S", 1, {"a": 1, "s": "z"}, 0)])
    s_empty = ("S", 0)
    # every leaf on S{} keeps its own copy: one per (tree, position), nothing shared
    holders = [(t, i) for t in eng.trees for i, n in enumerate(t.nodes) if n == s_empty]
    assert len(holders) > 1
    for t, i in holders:
        buf = t.left[1] if i == 0 else t.right[i]
        assert len(buf) == 1
    buffers = [t.right[i] for t, i in holders if i > 0]
    assert len({id(b) for b in buffers}) == len(buffers)


def test_results_and_eager_purge_leave_no_dead_composite():
    p = Params(chain(), "x,y", 3, 10)
    eng = ForestEngine(p)
    out = feed(eng, [Insert("R", 1, {"a": 1, "s": "x"}, 0), Insert("S", 2, {"a": 1, "s": "q"}, 1),
                     Insert("T", 3, {"a": 1, "s": "y"}, 2)]) + eng.advance_to(3)
    assert [(o.tids, o.end) for o in out] == [((1, 2, 3), 10)]
    assert any(c for t in eng.trees for buf in t.left[1:] for c in buf)   # composites are stored
    feed(eng, [Insert("S", 4, {"a": 2, "s": "q"}, 10)])                  # R 1 expired at 10
    for t in eng.trees:
        for buf in t.left[1:]:
            assert all(c[0] > 10 for c in buf), "eager purging left a dead composite"
        for buf in t.right[1:]:
            assert all(r.tid != 1 for r in buf)


def test_lazy_purge_keeps_dead_composites_until_a_probe_meets_them():
    p = Params(chain(), "x,y", 3, 10)
    lazy = type("Lazy", (ForestEngine,), {"purge": "lazy"})(p)
    feed(lazy, [Insert("R", 1, {"a": 1, "s": "x"}, 0), Insert("S", 2, {"a": 1, "s": "q"}, 1)])
    feed(lazy, [Insert("S", 4, {"a": 2, "s": "q"}, 10)])
    # the source buffers are purged at once (Section 4.3), join outputs are not
    dead = [(t, i) for t in lazy.trees for i in range(2, len(t.left)) for c in t.left[i] if c[0] <= 10]
    assert dead
    assert all(r.tid != 1 for t in lazy.trees for buf in t.right[1:] for r in buf)
    feed(lazy, [Insert("T", 5, {"a": 1, "s": "y"}, 11)])   # probes every left[i] its node is right of
    probed = [(t, i) for t, i in dead if t.nodes[i] == ("T", 2)]
    assert probed
    for t, i in probed:
        assert all(c[0] > 11 for c in t.left[i])


def test_deletion_ends_the_results_and_expunges_the_tuple():
    p = Params(chain(), "x,y", 3, None)
    eng = ForestEngine(p)
    feed(eng, [Insert("R", 1, {"a": 1, "s": "x"}, 0), Insert("S", 2, {"a": 1, "s": "q"}, 1),
               Insert("T", 3, {"a": 1, "s": "y"}, 2)])
    out = eng.advance_to(3) + feed(eng, [Delete(2, 3)]) + eng.flush()
    assert [(type(o).__name__, o.time, o.tids) for o in out] == [("Appear", 2, (1, 2, 3)),
                                                                  ("End", 3, (1, 2, 3))]
    for t in eng.trees:
        for buf in t.left[1:]:
            assert all(all(r.tid != 2 for r in c[1]) for c in buf)


@pytest.mark.parametrize("purge", ["eager", "lazy"])
def test_nested_loop_probe_refuses_a_tuple_already_in_the_composite(purge):
    """Figure 3.7: with a self join and a CN holding R{} twice, the one R{} tuple
    must not fill both positions."""
    schema = Schema((Relation("R", ("a", "b", "s")),), (JoinEdge("rr", "R", "a", "R", "b"),))
    p = Params(schema, "x,y", 4, 100)
    events = [Insert("R", 1, {"a": 1, "b": 1, "s": "x"}, 0), Insert("R", 2, {"a": 1, "b": 1, "s": "q"}, 1),
              Insert("R", 3, {"a": 1, "b": 1, "s": "y"}, 2)]
    eng = type("F", (ForestEngine,), {"purge": purge})(p)
    out = feed(eng, events) + eng.flush()
    assert out == suite.evaluate(p, events) and out
    assert all(len(set(o.tids)) == len(o.tids) for o in out)
    accepting = type("NoRefusal", (ForestEngine,), {"purge": purge, "refuses": staticmethod(lambda rows, row: False)})
    wrong = accepting(p)
    assert feed(wrong, events) + wrong.flush() != out   # the refusal is what keeps them apart
