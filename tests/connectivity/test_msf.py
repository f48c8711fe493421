"""The MSF engine's own checks (what every engine shares is in test_engine_regressions.py
and the conformance suite): after every window the trees hold the bottlenecks of
the maximum spanning forest of the edges applied so far (their times floored to
the slide grid, as ``msf_run`` enters them), the AM-tree kernels
(subtree sizes, rotations, balance, path minima) against naive versions, the
per-query bottleneck cache across expiry and absence, and the link-cut fallback."""
from __future__ import annotations

import random

import numpy as np
import pytest

from streamspec.engines.connectivity import _msf_kernels as kernels
from streamspec.engines.connectivity import _msf_layout as layout
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


def subtree_sizes(parent):
    """Naive: the number of vertices below each vertex (itself included)."""
    size = [1] * len(parent)
    for x in range(len(parent)):
        y = parent[x]
        while y != -1:
            size[y] += 1
            y = parent[y]
    return size


def on_grid(engine, edges):
    """``edges`` with their times floored to the engine's slide grid
    ``t0 + k*s`` (what ``msf_run`` enters into the forest)."""
    t0, s = engine.windows.t0, engine.windows.s
    return [(a, b, t - (t - t0) % s) for a, b, t in edges]


def check_forest(engine, applied):
    """The engine's trees are a forest (acyclic) whose every pair has the
    bottleneck it has among the applied edges with times on the slide grid:
    what a maximum spanning forest of those holds, and all that the queries
    read.  In parent-pointer (AM-tree) mode the subtree sizes are exact too
    (the ancestor search relies on them)."""
    n = min(engine.n_vertices, engine._V.shape[0])
    edges = [(a, b, t) for a, b, t in on_grid(engine, applied) if a != b]
    forest = engine.forest()
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
    if not engine.link_cut:
        V = engine._V[:n]
        assert V[:, layout.SIZE].tolist() == subtree_sizes(V[:, layout.PARENT].tolist())


def dense(engine, edges):
    ids = engine.vertices
    return [(int(ids.lookup([a])[0]), int(ids.lookup([b])[0]), t) for a, b, t in edges]


@pytest.mark.parametrize("seed", range(40))
def test_bottlenecks_of_the_maximum_spanning_forest_after_every_window(seed):
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


def original_bottlenecks(engine):
    """Every pair's bottleneck in the engine's trees, in the stream's vertex ids."""
    n = engine.n_vertices
    adjacency = {x: [] for x in range(n)}
    for a, b, t in engine.forest():
        adjacency[a].append((b, t))
        adjacency[b].append((a, t))
    ext = engine.vertices.external
    return {(ext(a), ext(b)): t for (a, b), t in forest_bottlenecks(adjacency, n).items()}


def test_cycle_replaces_its_oldest_edge():
    # a triangle: the third edge closes a cycle, the oldest edge (0-1 at 0) leaves:
    # 0 and 1 are then joined by 1-2 at 1 and 2-0 at 2
    engine = MsfEngine(Params(10, 1, [(0, 2)]), hold_back=False)
    list(engine.process([(0, 1, 0), (1, 2, 1), (2, 0, 2), (5, 5, 30)]))
    got = original_bottlenecks(engine)
    assert {k: got[k] for k in [(0, 1), (0, 2), (1, 2)]} == {(0, 1): 1, (0, 2): 2, (1, 2): 1}
    # a repeated edge replaces its older copy; an equal-time copy leaves the forest as is
    engine = MsfEngine(Params(10, 1, [(0, 1)]), hold_back=False)
    list(engine.process([(0, 1, 0), (1, 0, 3), (0, 1, 3), (5, 5, 30)]))
    assert original_bottlenecks(engine)[0, 1] == 3
    assert engine.forest() == [(0, 1, 3)]


def test_times_enter_on_the_slide_grid():
    # s = 5, t0 = 0: times 1..4 floor to 0, 7 and 9 to 5.  The triangle 0-1-2
    # closes within one slide, so nothing leaves (equal grid times); 0-3 at 9
    # joins by grid time 5; the answers are the exact times' (the oracle's)
    edges = [(0, 1, 1), (1, 2, 2), (2, 0, 4), (0, 3, 7), (3, 0, 9), (4, 4, 12), (0, 9, 20)]
    params = Params(6, 5, [(0, 2), (1, 3), (3, 4), (0, 0)], t0=0)
    engine = MsfEngine(params, hold_back=False)
    got = list(engine.process(edges[:-1]))
    assert sorted(t for _, _, t in engine.forest()) == [0, 0, 5]
    got_b = original_bottlenecks(engine)
    assert {k: got_b[k] for k in [(0, 1), (0, 2), (1, 2), (0, 3), (2, 3)]} == \
        {(0, 1): 0, (0, 2): 0, (1, 2): 0, (0, 3): 5, (2, 3): 0}
    assert got + list(engine.process(edges[-1:])) + engine.flush() == evaluate(edges, params)
    # off-grid origin and window sizes that are no multiple of s
    rnd = random.Random(3)
    for _ in range(30):
        t, edges = rnd.randrange(5), []
        for _ in range(rnd.randint(1, 80)):
            t += rnd.choice([0, 1, 2, 5])
            edges.append((rnd.randrange(8), rnd.randrange(8), t))
        params = Params(rnd.randint(1, 9), rnd.randint(2, 7), [(0, 1), (2, 3), (4, 4)],
                        t0=edges[0][2] - rnd.randrange(4))
        assert run(edges, params, hold_back=False) == evaluate(edges, params)


def test_prefetch_changes_nothing():
    from numba import njit

    from streamspec.engines.connectivity._msf_prefetch import prefetch_record

    @njit
    def touch(V, xs):
        for x in xs:
            prefetch_record(V, x)
        return V[xs[0], 1]
    V = empty_records(50)
    before = V.copy()
    assert touch(V, np.array([0, 49, 7], dtype=np.int64)) == layout.NEVER
    assert np.array_equal(V, before)


def test_flat_record_address_is_the_two_dimensional_cell():
    # the kernels read V[x, column] as W[at(x, column)], W = V.reshape(-1) (a view)
    from numba import njit

    @njit
    def read(W, x, column):
        return W[layout.at(x, column)]

    @njit
    def write(W, x, column, value):
        W[layout.at(x, column)] = value
    V = np.arange(300 * layout.N_V, dtype=np.int64).reshape(300, layout.N_V)
    W = V.reshape(-1)
    for x in (0, 1, 7, 299):
        for column in (layout.PARENT, layout.PTIME, layout.SIZE, layout.SEEN):
            assert read(W, x, column) == V[x, column]
            write(W, x, column, -5)
            assert V[x, column] == -5


def empty_records(n):
    V = np.zeros((n, layout.N_V), dtype=np.int64)
    V[:, layout.PARENT] = -1
    V[:, layout.PTIME] = layout.NEVER
    V[:, layout.SIZE] = 1
    V[:, layout.SEEN] = layout.NEVER
    return V


def tree_bottlenecks(V):
    n = V.shape[0]
    adjacency = {x: [] for x in range(n)}
    for x, p in enumerate(V[:, layout.PARENT].tolist()):
        if p != -1:
            t = int(V[x, layout.PTIME])
            adjacency[x].append((p, t))
            adjacency[p].append((x, t))
    return forest_bottlenecks(adjacency, n)


def ancestors(parent, x):
    out = [x]
    while parent[x] != -1:
        x = parent[x]
        out.append(x)
    return out


@pytest.mark.parametrize("seed", range(20))
def test_am_tree_kernels_against_naive(seed):
    # random inserts (ties, repeats, self-loops); after each: sizes exact,
    # bottlenecks those of the maximum spanning forest, and the path-minimum
    # walk, a rotation and the upward maintenance checked against naive versions
    rnd = random.Random(seed)
    n = rnd.randint(2, 30)
    V = empty_records(n)
    W = V.reshape(-1)       # the kernels take the records flat (a view: V sees every change)
    st = np.zeros(layout.N_ST, dtype=np.int64)
    t, edges = 0, []
    for _ in range(rnd.randint(1, 150)):
        t += rnd.choice([0, 0, 1, 3])
        a, b = rnd.randrange(n), rnd.randrange(n)
        edges.append((a, b, t))
        kernels.insert_edge(W, st, a, b, t)
        parent = V[:, layout.PARENT].tolist()
        assert V[:, layout.SIZE].tolist() == subtree_sizes(parent)
        expected = bottlenecks([e for e in edges if e[0] != e[1]], n)
        assert tree_bottlenecks(V) == expected
        # path minimum and its edge, or -2 across trees
        x, y = rnd.sample(range(n), 2)
        oldest, c = kernels.oldest_on_path(W, st, x, y)
        up, upy = ancestors(parent, x), ancestors(parent, y)
        if up[-1] != upy[-1]:
            assert c == -2
        else:
            top = next(z for z in up if z in upy)
            path = up[:up.index(top)] + upy[:upy.index(top)]
            assert oldest == min(int(V[z, layout.PTIME]) for z in path) == expected[x, y]
            assert c in path and V[c, layout.PTIME] == oldest
        # a rotation keeps sizes and bottlenecks
        child = [z for z in range(n) if parent[z] != -1]
        if child:
            z = rnd.choice(child)
            kernels.rotate(W, z, parent[z])
            assert V[:, layout.SIZE].tolist() == subtree_sizes(V[:, layout.PARENT].tolist())
            assert tree_bottlenecks(V) == expected
        # after the upward maintenance from x no vertex on its root path holds
        # more than 1/ALPHA of its parent's subtree (two walks at once may undo
        # each other's work: a shortcut on one path shrinks a vertex of the other)
        kernels.maintain_upward(W, x, x)
        parent = V[:, layout.PARENT].tolist()
        for z in ancestors(parent, x)[:-1]:
            p = parent[z]
            assert kernels.ALPHA_NUM * V[z, layout.SIZE] <= kernels.ALPHA_DEN * V[p, layout.SIZE]
        assert tree_bottlenecks(V) == expected
        assert V[:, layout.SIZE].tolist() == subtree_sizes(parent)


def test_a_ring_stays_shallow():
    # every spanning forest of a ring is a path, and each edge closes a cycle of
    # the whole ring: the AM-tree's depth stays logarithmic (plain parent
    # pointers walked ~k/2 vertices per insert here), exact, no link-cut switch
    k = 2000
    n = 20 * k
    edges = [(i % k, (i + 1) % k, i // 10) for i in range(n)]
    params = Params(50, 5, [(0, k // 2), (1, k // 3), (7, 7)])
    engine = MsfEngine(params, hold_back=False)
    got = list(engine.process(edges))
    assert not engine.link_cut
    parent = engine._V[:k, layout.PARENT].tolist()
    assert max(len(ancestors(parent, x)) for x in range(k)) <= 4 * int(np.log2(k))
    assert got + engine.flush() == evaluate(edges, params)


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
    # the guard fires inside a call when the mean search length passes st[SWITCH]
    # (lowered here: the AM-tree keeps real streams far below the default), the
    # call resumes in link-cut trees, and the answers stay exact
    k, n = 600, 3 * kernels.CHECK
    edges = [(i % k, (i + 1) % k, i // 10) for i in range(n)]
    params = Params(50, 5, [(0, k // 2), (1, k // 3), (7, 7)])
    for hold_back in (True, False):
        engine = MsfEngine(params, hold_back=hold_back)
        got = []
        for lo in range(0, n, 997):      # the switch falls inside a call
            got += list(engine.process(edges[lo:lo + 997]))
            if lo == 0:
                assert not engine.link_cut
                engine._st[layout.SWITCH] = 0
        assert engine.link_cut
        assert got + engine.flush() == evaluate(edges, params)
    # with the default threshold a heavy-tailed stream keeps its AM-tree
    rnd = random.Random(1)
    edges = [(min(rnd.randrange(1, 400), rnd.randrange(1, 400)), rnd.randrange(400), i // 10)
             for i in range(3 * kernels.CHECK)]
    engine = MsfEngine(params)
    list(engine.process(edges))
    assert not engine.link_cut
