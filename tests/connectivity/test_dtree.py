"""D-Tree's own structure checks (the behaviour every engine shares is in
test_engine_regressions.py): after every window the spanning forest is
consistent and spans exactly the live window graph, duplicate copies take
over when the older copy expires, self-loops only count for presence."""
from __future__ import annotations

import random

import pytest

from streamspec.engines.connectivity import _dtree_kernels as kernels
from streamspec.engines.connectivity.dtree import DTreeEngine
from streamspec.reference.connectivity import evaluate, window_answers
from streamspec.spec.connectivity import Params

ENGINE = DTreeEngine


def run(edges, params):
    """Feed ``edges`` in one call, then flush (chunked feeding is covered for
    every engine in ``test_engine_regressions.py``)."""
    engine = ENGINE(params)
    return list(engine.process(edges)) + engine.flush()


# -- D-Tree structure ---------------------------------------------------------------
def check_structure(engine):
    """The forest spans exactly the live window graph: parent/children/size/edge-id
    consistency, every live edge is a tree, non-tree or loop edge, and two
    vertices share a root iff the oracle's search connects them."""
    arr = engine._arrays
    parent, size = arr["parent"], arr["size"]
    n = min(engine.n_vertices, len(engine._deg))   # vertices of held-back edges not yet applied
    live = engine._fifo_eid[engine._head:engine._tail].tolist()
    kinds = {e: int(arr["ekind"][e]) for e in live}
    assert all(k in (kernels.TREE, kernels.NONTREE, kernels.LOOP) for k in kinds.values())
    children = {x: [] for x in range(n)}
    for x in range(n):
        if parent[x] != -1:
            children[int(parent[x])].append(x)
            e = int(arr["tree_eid"][x])
            assert kinds.get(e) == kernels.TREE
            assert {int(arr["eu"][e]), int(arr["ev"][e])} == {x, int(parent[x])}
    for x in range(n):
        listed, c = [], arr["child_head"][x]
        while c != -1:
            listed.append(int(c))
            c = arr["sib_next"][c]
        assert sorted(listed) == sorted(children[x])

    def subtree(x):
        return 1 + sum(subtree(y) for y in children[x])
    assert all(size[x] == subtree(x) for x in range(n))
    assert sum(k == kernels.TREE for k in kinds.values()) == sum(parent[x] != -1 for x in range(n))
    nontree = set()
    for x in range(n):
        h = arr["nt_head"][x]
        while h != -1:
            e = int(h) >> 1
            assert int(arr["eu"][e] if h % 2 == 0 else arr["ev"][e]) == x
            nontree.add(e)
            h = arr["he_next"][h]
    assert nontree == {e for e, k in kinds.items() if k == kernels.NONTREE}
    degree = [0] * n
    for e in live:
        degree[int(arr["eu"][e])] += 1
        degree[int(arr["ev"][e])] += 1
    assert engine._deg[:n].tolist() == degree

    def root(x):
        while parent[x] != -1:
            x = parent[x]
        return int(x)
    pairs = [(a, b) for a in range(n) for b in range(n)]
    graph = [(int(arr["eu"][e]), int(arr["ev"][e])) for e in live] + [(x, x) for x in range(n)]
    assert window_answers(graph, pairs) == tuple(root(a) == root(b) for a, b in pairs)


@pytest.mark.parametrize("seed", range(60))
def test_structure_after_every_window(seed):
    rng = random.Random(1000 + seed)
    n_vertices = rng.randint(2, 14)
    edges, t = [], 0
    for _ in range(rng.randint(20, 120)):
        t += rng.choice([0, 0, 0, 1, 1, 2, 7])
        if rng.random() < 0.3 and edges:
            a, b, _ = rng.choice(edges)          # many duplicates, both orientations
            edges.append((b, a, t) if rng.random() < 0.5 else (a, b, t))
        else:
            edges.append((rng.randrange(n_vertices), rng.randrange(n_vertices), t))
    params = Params(rng.randint(2, 12), rng.randint(1, 4), [(0, 1), (1, 2), (0, 0)])
    engine = ENGINE(params)
    out = []
    for e in edges:
        got = list(engine.process([e]))
        if got:
            check_structure(engine)
        out += got
    out += engine.flush()
    check_structure(engine)
    assert out == evaluate(edges, params)


def test_duplicate_tree_edge_survives_deletion_of_one_copy():
    # (0,1) at t=0 is the tree edge, its copy at t=2 a non-tree edge; when the first
    # copy expires the second must keep 0 and 1 connected
    edges = [(0, 1, 0), (1, 2, 1), (1, 0, 2), (2, 3, 3), (0, 1, 3), (5, 5, 4), (5, 5, 9)]
    params = Params(3, 1, [(0, 1), (1, 2), (0, 3), (5, 5), (2, 2)])
    assert run(edges, params) == evaluate(edges, params)
    engine = ENGINE(params)
    list(engine.process(edges[:4]))      # window [0, 3) evaluated; [1, 4) pending
    list(engine.process(edges[4:6]))     # window [1, 4): first (0,1) expired
    assert engine.connected(0, 1) and engine.connected(0, 3)
    check_structure(engine)


def test_self_loops_only_make_vertices_present():
    edges = [(0, 0, 0), (1, 1, 0), (0, 0, 1), (2, 3, 1), (1, 1, 5)]
    params = Params(2, 1, [(0, 0), (0, 1), (1, 1), (2, 3), (0, 2)])
    assert run(edges, params) == evaluate(edges, params)


@pytest.mark.parametrize("seed", range(5))
def test_larger_random_graphs_match_oracle(seed):
    # deeper trees: more reroots, restructuring non-tree insertions, replacement searches
    rng = random.Random(5000 + seed)
    edges, t = [], 0
    for _ in range(600):
        t += rng.choice([0, 0, 1])
        edges.append((rng.randrange(60), rng.randrange(60), t))
    params = Params(rng.randint(20, 60), rng.randint(1, 10),
                    [(rng.randrange(60), rng.randrange(60)) for _ in range(20)])
    engine = ENGINE(params)
    out = []
    for lo in range(0, len(edges), 50):
        out += engine.process(edges[lo:lo + 50])
        check_structure(engine)
    out += engine.flush()
    assert out == evaluate(edges, params)
