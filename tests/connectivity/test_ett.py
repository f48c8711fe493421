"""Euler-tour trees (``engines/connectivity/ett.py``) and the ET-Tree engine:
random link/cut sequences checked against a naive union-find recomputation of
the forest, every tour checked to be an Euler tour with consistent treap
aggregates, flags found from a root, and the engine's forest checked to span
exactly the live window graph after every window (the behaviour every engine
shares is in test_engine_regressions.py and the conformance suite)."""
from __future__ import annotations

import pickle
import random

import pytest

from streamspec.engines.connectivity.ett import NONTREE, NT, TE, TREE, EtTreeEngine, EulerTourTrees
from streamspec.reference.connectivity import evaluate
from streamspec.spec.connectivity import Params
from tests.connectivity.naive import components


def tour(ett, root):
    """The tour's nodes in order (in-order walk of the treap)."""
    out, stack, x = [], [], root
    while stack or x != -1:
        while x != -1:
            stack.append(x)
            x = ett.left[x]
        x = stack.pop()
        out.append(x)
        x = ett.right[x]
    return out


def check_treap(ett, root):
    """Parent pointers, heap order and the aggregates (count, vertices, flags)."""
    assert ett.parent[root] == -1

    def walk(x):
        c, vc, agg = 1, ett.isv[x], ett.own[x]
        for y in (ett.left[x], ett.right[x]):
            if y != -1:
                assert ett.parent[y] == x
                assert ett.prio[y] <= ett.prio[x]
                yc, yvc, yagg = walk(y)
                c, vc, agg = c + yc, vc + yvc, agg | yagg
        assert (ett.cnt[x], ett.vcnt[x], ett.agg[x]) == (c, vc, agg)
        return c, vc, agg
    walk(root)


def check_euler_tour(ett, root, arc_ends):
    """The cyclic sequence is an Euler tour: each vertex once, each tree edge as
    two arcs, every arc leaving the vertex the walk is at."""
    seq = tour(ett, root)
    vertices = [ett.label[x] for x in seq if ett.isv[x]]
    arcs = [x for x in seq if not ett.isv[x]]
    assert len(set(vertices)) == len(vertices)
    assert len(arcs) == 2 * (len(vertices) - 1)
    at = arc_ends[arcs[-1]][1] if arcs else vertices[0]   # where the cyclic walk enters seq[0]
    for x in seq:
        if ett.isv[x]:
            assert ett.label[x] == at
        else:
            frm, to = arc_ends[x]
            assert frm == at
            at = to
    return vertices


@pytest.mark.parametrize("seed", range(20))
def test_link_cut_against_union_find(seed):
    rng = random.Random(seed)
    n = rng.randint(2, 30)
    ett = EulerTourTrees(seed)
    node = [ett.node(x, True) for x in range(n)]
    forest = {}             # edge -> (a1, a2)
    arc_ends = {}
    for step in range(300):
        comp = components(n, forest)
        if forest and rng.random() < 0.4:
            e = rng.choice(sorted(forest))
            t1, t2 = ett.cut(*forest.pop(e))
            assert {ett.root(node[e[0]]), ett.root(node[e[1]])} == {t1, t2}
        else:
            u, v = rng.randrange(n), rng.randrange(n)
            if comp[u] == comp[v]:
                continue
            a1, a2 = ett.node(-1, False), ett.node(-1, False)
            arc_ends[a1], arc_ends[a2] = (u, v), (v, u)
            ett.link(node[u], node[v], a1, a2)
            forest[(u, v)] = (a1, a2)
        comp = components(n, forest)
        roots = [ett.root(node[x]) for x in range(n)]
        for x in range(n):
            for y in range(n):
                assert (roots[x] == roots[y]) == (comp[x] == comp[y])
        for t in set(roots):
            check_treap(ett, t)
            members = check_euler_tour(ett, t, arc_ends)
            assert ett.vcnt[t] == len(members) == comp.count(comp[members[0]])


def test_reroot_puts_the_vertex_first():
    ett = EulerTourTrees(3)
    node = [ett.node(x, True) for x in range(6)]
    for u, v in [(0, 1), (1, 2), (1, 3), (3, 4), (4, 5)]:
        ett.link(node[u], node[v], ett.node(-1, False), ett.node(-1, False))
    for x in range(6):
        t = ett.reroot(node[x])
        assert tour(ett, t)[0] == node[x]
        assert ett.position(node[x]) == (0, t)
        assert ett.vcnt[t] == 6


def test_flags_are_found_from_the_root_and_cleared():
    rng = random.Random(7)
    ett = EulerTourTrees(7)
    node = [ett.node(x, True) for x in range(40)]
    for x in range(1, 40):
        ett.link(node[rng.randrange(x)], node[x], ett.node(-1, False), ett.node(-1, False))
    root = ett.root(node[0])
    assert ett.find_flag(root, NT) == -1
    marked = set(rng.sample(range(40), 5))
    for x in marked:
        ett.set_own(node[x], NT)
    ett.set_own(node[3], ett.own[node[3]] | TE)
    check_treap(ett, root)
    found = set()
    while (x := ett.find_flag(root, NT)) != -1:
        assert ett.own[x] & NT
        found.add(ett.label[x])
        ett.set_own(x, ett.own[x] & ~NT)
    assert found == marked
    assert ett.find_flag(root, TE) == node[3]
    assert sorted(ett.vertices(root)) == list(range(40))


def test_released_nodes_are_reused():
    ett = EulerTourTrees()
    a, b = ett.node(0, True), ett.node(1, True)
    a1, a2 = ett.node(5, False), ett.node(5, False)
    ett.link(a, b, a1, a2)
    size = ett.size
    t1, t2 = ett.cut(a1, a2)
    assert {t1, t2} == {a, b} and ett.vcnt[t1] == ett.vcnt[t2] == 1
    ett.link(a, b, ett.node(6, False), ett.node(6, False))
    assert ett.size == size


# -- the ET-Tree engine ---------------------------------------------------------------
def check_engine(engine):
    """The forest spans exactly the live window graph; the non-tree sets hold
    exactly the live non-tree edges."""
    live = [e for e, _ in engine._fifo]
    n = len(engine._deg)
    ends = [(engine._eu[e], engine._ev[e]) for e in live]
    comp = components(n, ends)
    nontree = {e for e in live if engine._eu[e] != engine._ev[e] and engine._kind[e] == NONTREE}
    tree = [e for e in live if engine._eu[e] != engine._ev[e] and engine._kind[e] == TREE]
    assert len(nontree) + len(tree) == sum(u != v for u, v in ends)
    assert {e for x in range(n) for e in engine._nontree[x]} == nontree
    for x in range(n):
        assert all(x in (engine._eu[e], engine._ev[e]) for e in engine._nontree[x])
    touched = {x for uv in ends for x in uv if uv[0] != uv[1]}
    assert len(tree) == len(touched) - len({comp[x] for x in touched})
    for x in touched:
        for y in touched:
            assert engine._linked(x, y) == (comp[x] == comp[y])


def random_stream(rng, n_vertices, n_edges, max_gap):
    t, edges = 0, []
    for _ in range(n_edges):
        t += rng.randint(0, max_gap)
        edges.append((rng.randrange(n_vertices), rng.randrange(n_vertices), t))
    return edges


@pytest.mark.parametrize("seed", range(30))
def test_engine_forest_spans_the_window_and_matches_oracle(seed):
    rng = random.Random(seed)
    edges = random_stream(rng, rng.randint(2, 12), rng.randint(1, 120), rng.choice([1, 2, 4]))
    n = max(max(u, v) for u, v, _ in edges) + 1
    params = Params(rng.randint(1, 15), rng.randint(1, 6),
                    [(rng.randrange(n), rng.randrange(n)) for _ in range(6)])
    engine = EtTreeEngine(params)
    out = []
    for e in edges:
        got = list(engine.process([e]))
        if got:
            check_engine(engine)
        out += got
    out += engine.flush()
    assert out == evaluate(edges, params)


def test_parallel_copy_replaces_an_expired_tree_edge():
    # (0,1) at t=0 is the tree edge; its copy at t=2 is non-tree and takes over at t=0's expiry
    edges = [(0, 1, 0), (1, 2, 1), (0, 1, 2), (2, 2, 3), (5, 5, 4), (3, 4, 5), (3, 4, 9)]
    params = Params(4, 1, [(0, 2), (0, 1), (2, 2), (1, 3)])
    engine = EtTreeEngine(params)
    out = list(engine.process(edges)) + engine.flush()
    assert out == evaluate(edges, params)
    # window [1, 5): the t=0 tree edge expired, the copy reconnects 0 and 2 through 1
    assert [r.answers for r in out[:2]] == [(True, True, True, False)] * 2
    assert out[2].answers == (False, True, True, False)     # (1, 2, 1) expired
    assert out[3].answers == (False, False, True, False)    # only the self-loop keeps 2 present


def test_pickled_mid_stream_engine_continues_identically():
    rng = random.Random(11)
    edges = random_stream(rng, 8, 200, 2)
    params = Params(9, 4, [(0, 1), (2, 3), (4, 4), (5, 7)])
    engine = EtTreeEngine(params)
    out = list(engine.process(edges[:100]))
    clone = pickle.loads(pickle.dumps(engine))
    rest = list(engine.process(edges[100:])) + engine.flush()
    assert list(clone.process(edges[100:])) + clone.flush() == rest
    assert out + rest == evaluate(edges, params)
