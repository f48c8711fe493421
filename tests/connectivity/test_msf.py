"""The MSF engine's own checks (what every engine shares is in test_engine_regressions.py
and the conformance suite): the forest is a maximum spanning forest of the edges
applied so far after every window, the tree kernels against naive versions on
random forests, and the per-query bottleneck cache across expiry and absence."""
from __future__ import annotations

import random

import numpy as np
import pytest

from streamspec.engines.connectivity import _msf_kernels as kernels
from streamspec.engines.connectivity.msf import MsfEngine
from streamspec.reference.connectivity import evaluate, window_answers
from streamspec.spec.connectivity import Params


def run(edges, params, hold_back=True):
    engine = MsfEngine(params, hold_back=hold_back)
    return list(engine.process(edges)) + engine.flush()


def bottlenecks(edges, n):
    """Naive: for every pair, the largest ``t`` such that the edges at or after
    ``t`` connect it (None: never connected); Kruskal by decreasing time."""
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x
    best = {}
    for a, b, t in sorted(edges, key=lambda e: -e[2]):
        parent[find(a)] = find(b)
        for x in range(n):
            for y in range(n):
                if x != y and (x, y) not in best and find(x) == find(y):
                    best[x, y] = t
    return best


def forest_bottlenecks(forest, n):
    """For every pair, the oldest edge time on its path in ``forest`` (a dict
    vertex -> [(neighbour, time)]); fails if ``forest`` has a cycle."""
    out = {}
    for src in range(n):
        seen = {src: None}
        stack = [(src, None)]
        while stack:
            x, low = stack.pop()
            for y, t in forest[x]:
                if y in seen:
                    continue
                seen[y] = m = t if low is None else min(low, t)
                stack.append((y, m))
        out.update({(src, y): m for y, m in seen.items() if y != src})
    return out


def check_forest(engine, applied):
    """The engine's forest spans exactly the applied edges' components, is acyclic,
    uses applied edges only, and keeps every pair's bottleneck (maximum spanning)."""
    n = min(engine.n_vertices, engine._V.shape[0])
    edges = [(a, b, t) for a, b, t in applied if a != b]
    forest = engine.forest()
    assert len(forest) == len(set(forest))
    multiset = {}
    for a, b, t in edges:
        key = (min(a, b), max(a, b), t)
        multiset[key] = multiset.get(key, 0) + 1
    for e in forest:
        assert multiset.get(e, 0) > 0, f"forest edge {e} is no applied edge"
    adjacency = {x: [] for x in range(n)}
    for a, b, t in forest:
        adjacency[a].append((b, t))
        adjacency[b].append((a, t))
    # acyclic: a forest on n vertices with c components has n - c edges
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x
    for a, b, _ in forest:
        ra, rb = find(a), find(b)
        assert ra != rb, "cycle in the forest"
        parent[ra] = rb
    assert forest_bottlenecks(adjacency, n) == bottlenecks(edges, n)


def dense(engine, edges):
    ids = engine.vertices
    return [(int(ids.lookup([a])[0]), int(ids.lookup([b])[0]), t) for a, b, t in edges]


@pytest.mark.parametrize("seed", range(40))
def test_maximum_spanning_forest_after_every_window(seed):
    rnd = random.Random(seed)
    n = rnd.randint(2, 9)
    t, edges = 0, []
    for _ in range(rnd.randint(1, 70)):
        t += rnd.choice([0, 0, 1, 1, 2, 7])
        edges.append((rnd.randrange(n), rnd.randrange(n), t))
    params = Params(rnd.randint(1, 6), rnd.randint(1, 6), [(0, 1), (1, 2), (2, 2)])
    engine = MsfEngine(params)
    got = []
    for i in range(len(edges)):
        got += list(engine.process(edges[i:i + 1]))
        # with hold_back the engine has applied the edges before the last due trigger
        applied = [e for e in edges[:i + 1] if engine.next_window and
                   e[2] < engine.windows.end(engine.next_window - 1)]
        check_forest(engine, dense(engine, applied))
    got += engine.flush()
    assert got == evaluate(edges, params)


def original_forest(engine):
    """``engine.forest()`` in the stream's vertex ids."""
    ext = engine.vertices.external
    return sorted((min(ext(a), ext(b)), max(ext(a), ext(b)), t) for a, b, t in engine.forest())


def test_cycle_replaces_its_oldest_edge():
    # a triangle: the third edge closes a cycle, the oldest edge (0-1 at 0) leaves
    engine = MsfEngine(Params(10, 1, [(0, 2)]), hold_back=False)
    list(engine.process([(0, 1, 0), (1, 2, 1), (2, 0, 2), (5, 5, 30)]))
    assert original_forest(engine) == [(0, 2, 2), (1, 2, 1)]
    # a repeated edge replaces its older copy; an equal-time copy leaves the forest as is
    engine = MsfEngine(Params(10, 1, [(0, 1)]), hold_back=False)
    list(engine.process([(0, 1, 0), (1, 0, 3), (0, 1, 3), (5, 5, 30)]))
    assert original_forest(engine) == [(0, 1, 3)]


def random_forest(rnd, n):
    """A random rooted forest as parent pointers and edge times, plus its records V."""
    parent = [-1] * n
    order = list(range(n))
    rnd.shuffle(order)
    for i, x in enumerate(order[1:], 1):
        if rnd.random() < 0.9:
            parent[x] = order[rnd.randrange(i)]
    V = np.zeros((n, kernels.N_V), dtype=np.int64)
    V[:, kernels.PARENT] = parent
    V[:, kernels.PTIME] = [rnd.randrange(100) for _ in range(n)]
    V[:, kernels.MARK] = -1
    return parent, V


def ancestors(parent, x):
    out = [x]
    while parent[x] != -1:
        x = parent[x]
        out.append(x)
    return out


@pytest.mark.parametrize("seed", range(20))
def test_lowest_common_ancestor_and_reroot_against_naive(seed):
    rnd = random.Random(seed)
    n = rnd.randint(2, 40)
    parent, V = random_forest(rnd, n)
    st = np.zeros(kernels.N_ST, dtype=np.int64)
    for _ in range(60):
        a, b = rnd.sample(range(n), 2)
        up = ancestors(parent, a)
        upb = ancestors(parent, b)
        common = [x for x in upb if x in up]
        y, ta, ca, tb, cb = kernels.lowest_common_ancestor(V, st, a, b, kernels.NEVER)
        if not common:
            assert (y, ca, cb) == (-1, up[-1], upb[-1])     # the two roots
            continue
        assert y == common[0]
        for side, t, c in ((up, ta, ca), (upb, tb, cb)):
            path = side[:side.index(y)]
            if path:    # ties: any edge of the oldest time will do
                assert t == min(int(V[x, kernels.PTIME]) for x in path)
                assert c in path and V[c, kernels.PTIME] == t
            else:
                assert (t, c) == (kernels.INF, -1)
        # over the edges at or after start: met iff the two walks reach one top
        start = rnd.randrange(100)

        def top(x):
            while parent[x] != -1 and V[x, kernels.PTIME] >= start:
                x = parent[x]
            return x
        y, ta, _, tb, _ = kernels.lowest_common_ancestor(V, st, a, b, start)
        assert (y != -1) == (top(a) == top(b))
        if y != -1:
            assert min(ta, tb) >= start
    # reroot keeps every edge (as an unordered pair with its time) and makes x the root
    for _ in range(20):
        x = rnd.randrange(n)
        before = {(min(c, p), max(c, p), int(V[c, kernels.PTIME]))
                  for c, p in enumerate(V[:, kernels.PARENT].tolist()) if p != -1}
        root = ancestors(V[:, kernels.PARENT].tolist(), x)[-1]
        kernels.reroot(V, x)
        V[x, kernels.PTIME] = 0 if root == x else V[x, kernels.PTIME]
        after = {(min(c, p), max(c, p), int(V[c, kernels.PTIME]))
                 for c, p in enumerate(V[:, kernels.PARENT].tolist()) if p != -1}
        assert V[x, kernels.PARENT] == -1 and after == before


def test_cached_bottleneck_respects_expiry_and_absence():
    # 0-1 connected at t=0 only through 2 (edges at 0 and 1); later 0 and 1 stay
    # present through edges to fresh vertices, but their connection expires; then
    # a new 0-1 path appears
    edges = [(0, 2, 0), (2, 1, 1), (0, 3, 2), (1, 4, 3), (0, 5, 6), (1, 6, 7), (0, 1, 8)]
    params = Params(3, 1, [(0, 1), (1, 0), (2, 2)])
    for hold_back in (True, False):
        assert run(edges, params, hold_back) == evaluate(edges, params)
    # absent endpoint: the bottleneck is in the window, but the query's vertex is not
    edges = [(0, 1, 0), (1, 2, 5), (2, 9, 9)]
    params = Params(3, 1, [(0, 2), (1, 2), (0, 1)])
    assert run(edges, params) == evaluate(edges, params)


def test_ad_hoc_queries_on_every_window_equal_the_oracle():
    rnd = random.Random(7)
    t, edges = 0, []
    for _ in range(300):
        t += rnd.choice([0, 1, 1, 3])
        edges.append((rnd.randrange(12), rnd.randrange(12), t))
    params = Params(7, 3, [(0, 1)])
    engine = MsfEngine(params)
    for i in range(0, len(edges), 5):
        for res in engine.process(edges[i:i + 5]):
            pass
        if engine.next_window:
            w = engine.windows
            start, end = w.start(engine.next_window - 1), w.end(engine.next_window - 1)
            window = [(a, b) for a, b, tt in edges if start <= tt < end]
            pairs = [(a, b) for a in range(13) for b in range(13)]
            assert tuple(engine.connected(a, b) for a, b in pairs) == \
                window_answers(window, pairs)


# -- the link-cut fallback ------------------------------------------------------------
class LinkCutFromStart(MsfEngine):
    """The engine with its forest in link-cut trees from the first edge on."""

    def _start(self):
        super()._start()
        self._to_link_cut()


@pytest.mark.parametrize("seed", range(40))
def test_link_cut_trees_keep_the_maximum_spanning_forest(seed):
    # from the start, or moved there at a random call (growing afterwards)
    rnd = random.Random(seed)
    n = rnd.randint(2, 9) if seed % 2 else rnd.randint(10, 70)
    t, edges = 0, []
    for _ in range(rnd.randint(1, 120)):
        t += rnd.choice([0, 0, 1, 1, 2, 7])
        edges.append((rnd.randrange(n), rnd.randrange(n), t))
    params = Params(rnd.randint(1, 6), rnd.randint(1, 6), [(0, 1), (1, 2), (2, 2), (3, 0)])
    engine = LinkCutFromStart(params) if seed % 3 == 0 else MsfEngine(params)
    got = []
    for i in range(len(edges)):
        got += list(engine.process(edges[i:i + 1]))
        if engine.windows is not None and not engine.link_cut and rnd.random() < 0.2:
            engine._to_link_cut()
        if engine.next_window:
            applied = [e for e in edges[:i + 1] if e[2] < engine.windows.end(engine.next_window - 1)]
            if n < 10 or i % 10 == 0:
                check_forest(engine, dense(engine, applied))
            a, b = rnd.randrange(n), rnd.randrange(n)
            w = engine.windows
            start, end = w.start(engine.next_window - 1), w.end(engine.next_window - 1)
            window = [(x, y) for x, y, tt in edges if start <= tt < end]
            assert engine.connected(a, b) == window_answers(window, [(a, b)])[0]
    got += engine.flush()
    assert got == evaluate(edges, params)


def test_long_searches_move_the_forest_to_link_cut_trees():
    # every spanning forest of a ring is a path: the cycle each edge closes is
    # the whole ring, the parent-pointer searches pass ~k/2 vertices per insert
    k, n = 600, 3 * kernels.CHECK
    edges = [(i % k, (i + 1) % k, i // 10) for i in range(n)]
    params = Params(50, 5, [(0, k // 2), (1, k // 3), (7, 7)])
    for hold_back in (True, False):
        engine = MsfEngine(params, hold_back=hold_back)
        got = []
        for lo in range(0, n, 997):      # the switch falls inside a call
            got += list(engine.process(edges[lo:lo + 997]))
        assert engine.link_cut
        assert got + engine.flush() == evaluate(edges, params)
    # heavy-tailed streams keep their parent-pointer trees
    rnd = random.Random(1)
    edges = [(min(rnd.randrange(1, 400), rnd.randrange(1, 400)), rnd.randrange(400), i // 10)
             for i in range(3 * kernels.CHECK)]
    engine = MsfEngine(params)
    list(engine.process(edges))
    assert not engine.link_cut
