"""HDT (``engines/connectivity/hdt.py``): fully dynamic connectivity on random
insert/delete sequences (not only the windows' oldest-first deletions) checked
after every operation against a naive union-find recomputation, with HDT's
invariants (tree sizes per level, non-tree edges inside a tree of their level,
every tree edge in ``F_0..F_l``, the NT/TE flags); the engine against the
oracle with the same checks after every window."""
from __future__ import annotations

import math
import random

import pytest

from streamspec.engines.connectivity.ett import NONTREE, NT, TE, TREE
from streamspec.engines.connectivity.hdt import HdtEngine
from streamspec.reference.connectivity import evaluate
from streamspec.spec.connectivity import Params
from tests.connectivity.naive import components


class Dynamic:
    """HDT driven through the engine's FDC hooks: arbitrary inserts and deletes."""

    def __init__(self, n):
        self.hdt = HdtEngine(Params(1, 1))
        self.hdt._start()
        self.hdt._grow(n)
        self.n = n
        self.live: dict[int, tuple[int, int]] = {}

    def insert(self, u, v):
        e = self.hdt._new_edge(u, v)
        self.hdt._insert(e, u, v)
        self.live[e] = (u, v)
        return e

    def delete(self, e):
        self.hdt._delete(e)
        self.hdt._free_ids.append(e)
        del self.live[e]


def check_hdt(hdt, live: dict, n: int):
    """Connectivity equals the union-find of the live edges; HDT's invariants hold."""
    ett = hdt.ett
    comp = components(n, live.values())
    for x in range(n):
        for y in range(n):
            assert (x == y or hdt._linked(x, y)) == (comp[x] == comp[y]), (x, y)
    tree = [e for e in live if hdt._kind[e] == TREE]
    assert len(tree) == n - len(set(comp))            # F_0 spans every component
    top = max(1, n).bit_length()
    for level, nodes in enumerate(hdt._vnode):
        roots = {ett.root(x) for x in nodes if x != -1}
        for t in roots:   # invariant 1: trees of F_i have at most n / 2^i vertices
            assert ett.vcnt[t] * 2 ** level <= n
        for x, node in enumerate(nodes):
            if node != -1:
                edges = hdt._nontree[level].get(x, set())
                assert bool(ett.own[node] & NT) == bool(edges)
    for e, (u, v) in live.items():
        level = hdt._level[e]
        assert level <= math.log2(n) < top
        if hdt._kind[e] == NONTREE:   # invariant 2: inside one tree of F_level
            nodes = hdt._vnode[level]
            assert e in hdt._nontree[level][u] and e in hdt._nontree[level][v]
            assert ett.root(nodes[u]) == ett.root(nodes[v])
        else:
            arcs = hdt._arcs[e]
            assert hdt._kind[e] == TREE and len(arcs) == level + 1
            for i, (a1, a2) in enumerate(arcs):
                assert ett.label[a1] == ett.label[a2] == e
                assert bool(ett.own[a1] & TE) == (i == level) and not ett.own[a2] & TE
                assert ett.root(a1) == ett.root(hdt._vnode[i][u]) == ett.root(hdt._vnode[i][v])
    listed = {e for sets in hdt._nontree for edges in sets.values() for e in edges}
    assert listed == {e for e in live if hdt._kind[e] == NONTREE}


@pytest.mark.parametrize("seed", range(25))
def test_random_inserts_and_deletes_against_union_find(seed):
    rng = random.Random(seed)
    n = rng.randint(2, 24)
    d = Dynamic(n)
    for step in range(250):
        if d.live and rng.random() < 0.45:
            d.delete(rng.choice(list(d.live)))
        else:
            u, v = rng.randrange(n), rng.randrange(n)
            if u != v:          # self-loops never reach the structure (presence only)
                d.insert(u, v)
        check_hdt(d.hdt, d.live, n)


def test_dense_graph_deletions_raise_levels():
    # repeated deletions of tree edges in a dense graph must scan and raise edges
    rng = random.Random(5)
    n = 32
    d = Dynamic(n)
    for u in range(n):
        for v in range(u + 1, n):
            if rng.random() < 0.3:
                d.insert(u, v)
    raised = 0
    while d.live:
        trees = [e for e in d.live if d.hdt._kind[e] == TREE]
        d.delete(rng.choice(trees or list(d.live)))
        raised = max(raised, max((d.hdt._level[e] for e in d.live), default=0))
        if len(d.live) % 17 == 0:
            check_hdt(d.hdt, d.live, n)
    assert raised >= 2
    check_hdt(d.hdt, d.live, n)


def test_parallel_edges_are_separate():
    d = Dynamic(3)
    first = d.insert(0, 1)
    copy = d.insert(0, 1)
    d.insert(1, 2)
    assert d.hdt._kind[first] == TREE and d.hdt._kind[copy] == NONTREE
    d.delete(first)                     # the copy replaces it
    check_hdt(d.hdt, d.live, 3)
    assert d.hdt._linked(0, 2) and d.hdt._kind[copy] == TREE
    d.delete(copy)
    check_hdt(d.hdt, d.live, 3)
    assert not d.hdt._linked(0, 1) and d.hdt._linked(1, 2)


# -- the engine on windows ----------------------------------------------------------
@pytest.mark.parametrize("seed", range(30))
def test_engine_matches_oracle_with_invariants_after_every_window(seed):
    rng = random.Random(100 + seed)
    n = rng.randint(2, 14)
    t, edges = 0, []
    for _ in range(rng.randint(1, 150)):
        t += rng.choice([0, 0, 1, 1, 2, 7, 30])
        edges.append((rng.randrange(n), rng.randrange(n), t))
    params = Params(rng.randint(1, 20), rng.randint(1, 7),
                    [(rng.randrange(n), rng.randrange(n)) for _ in range(5)])
    engine = HdtEngine(params, hold_back=bool(seed % 2))
    out = []
    for lo in range(0, len(edges), 3):
        got = list(engine.process(edges[lo:lo + 3]))
        if got:
            live = {e: (engine._eu[e], engine._ev[e]) for e, _ in engine._fifo
                    if engine._eu[e] != engine._ev[e]}
            check_hdt(engine, live, len(engine._deg))
        out += got
    out += engine.flush()
    assert out == evaluate(edges, params)


def test_string_vertices_self_loops_and_a_long_gap():
    edges = [("a", "b", 0), ("b", "c", 1), ("c", "c", 2), ("a", "c", 3),
             ("d", "e", 1_000), ("e", "a", 1_001)]
    params = Params(5, 2, [("a", "c"), ("c", "c"), ("d", "a"), ("z", "z")])
    engine = HdtEngine(params)
    out = list(engine.process(edges)) + engine.flush()
    assert out == evaluate(edges, params)
    assert out[-1].answers == (False, False, True, False)
    assert engine.connected("d", "a") and not engine.connected("c", "c")


def test_competitors_script_writes_rows_with_answers_equal_to_bic(tmp_path, monkeypatch):
    import csv

    from streamspec.bench.connectivity import competitors
    from streamspec.bench.connectivity.generators import rmat_stream, workload

    def tiny(series, edges):
        s = rmat_stream(300, 3000, 100, seed=3)
        yield s, Params(r=4, s=1, workload=workload(s, 10, seed=3, top=None))
    monkeypatch.setattr(competitors, "settings", tiny)
    out = tmp_path / "competitors.csv"
    assert competitors.main(["--series", "table,length", "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out)))
    assert [(r["series"], r["engine"]) for r in rows] == [
        ("table", "bic"), ("table", "bic"), ("table", "ettree"), ("table", "hdt"),
        ("length", "ettree"), ("length", "hdt")]
    assert [r["answers_equal_bic"] for r in rows[:4]] == ["True"] * 4
    for r in rows:
        # 30 timestamps, r = 4: windows ending at 4..29 are triggered (26), the rest flushed
        assert int(r["windows"]) == 26 and float(r["throughput_eps"]) > 0
        assert float(r["p50_ms"]) <= float(r["p95_ms"]) <= float(r["p99_ms"])
        assert r["load1_before"] and "cpu clock" in r["method"]
