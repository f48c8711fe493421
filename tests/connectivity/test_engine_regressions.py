"""Every registered connectivity engine (``--engine`` narrows it) against the worked
example and the regression streams of tests/connectivity/test_bic.py, window shapes
(``r < s``, ``r == s``), huge gaps, str vertices, pickling mid-stream, ad-hoc
queries at every window and seeded random streams, all checked against the
oracle ``streamspec.reference.connectivity``."""
from __future__ import annotations

import pickle
import random

import pytest

from streamspec.reference.connectivity import evaluate, window_answers
from streamspec.spec.connectivity import Params
from streamspec.spec.windows import SlidingWindows

PROBLEM = "connectivity"   # the plugin parametrizes engine_cls over its engines

A, B, C, D, E, F, G, H, I, J = range(10)
EXAMPLE = [(A, B, 0), (C, D, 1), (B, C, 2), (D, E, 3), (F, G, 3), (E, H, 4), (G, I, 4),
           (H, I, 5), (B, J, 6), (J, D, 7), (A, C, 8)]
EXAMPLE_WORKLOAD = [(D, F), (B, D), (E, G), (A, B), (C, I), (C, H), (J, J)]


def bits(results):
    return ["".join("1" if x else "0" for x in res.answers) for res in results]


def run(engine_cls, edges, params, chunks=None):
    """Feed ``edges`` (in ``chunks`` pieces if given), then flush."""
    engine = engine_cls(params)
    out = []
    if chunks is None:
        out += list(engine.process(edges))
    else:
        for lo, hi in zip([0] + chunks, chunks + [len(edges)]):
            out += list(engine.process(edges[lo:hi]))
    out += engine.flush()
    return out


def test_worked_example_bit_matrix(engine_cls):
    engine = engine_cls(Params(4, 1, EXAMPLE_WORKLOAD))
    assert bits(engine.process(EXAMPLE)) == ["0101000", "0100010", "1010000", "1010001", "0110001"]


def test_self_loop_regression(engine_cls):
    S, T, X, Y, Z, P, Q, R = "STXYZPQR"
    edges = [(S, T, 0), (X, Y, 1), (X, X, 2), (Y, Z, 2), (X, P, 3), (Q, R, 4), (S, S, 5)]
    params = Params(3, 1, [(Z, P), (Y, Z), (X, P)])
    assert bits(engine_cls(params).process(edges)) == ["010", "111", "011"]
    assert run(engine_cls, edges, params) == evaluate(edges, params)


def test_gap_regression(engine_cls):
    edges = [(0, 1, 0), (1, 2, 1), (2, 3, 2), (3, 4, 3), (4, 5, 10), (5, 0, 11), (0, 2, 12),
             (1, 3, 13), (2, 4, 14), (9, 9, 15)]
    params = Params(4, 1, [(0, 1), (1, 2), (4, 5), (0, 4), (1, 3), (0, 2)])
    assert bits(engine_cls(params).process(edges)) == (
        ["110111", "010010"] + ["000000"] * 5 + ["001000", "001100", "001101", "001111", "001111"])
    assert run(engine_cls, edges, params) == evaluate(edges, params)


def test_non_multiple_regression(engine_cls):
    edges = [(i, i + 1, i) for i in range(12)] + [(0, 0, 12)]
    params = Params(5, 2, [(0, 1), (0, 2), (1, 2), (3, 4), (4, 5), (3, 5), (5, 6), (6, 7), (5, 7),
                           (7, 8), (6, 8)])
    assert bits(engine_cls(params).process(edges)) == [
        "11111100000", "00011111100", "00001011111", "00000001011"]
    assert run(engine_cls, edges, params) == evaluate(edges, params)


@pytest.mark.parametrize("r,s", [(1, 3), (2, 5), (3, 3), (1, 1)])
def test_r_less_or_equal_s(engine_cls, r, s):
    edges = [(0, 1, 0), (1, 2, 1), (2, 3, 2), (3, 0, 4), (4, 4, 5), (1, 3, 7), (0, 2, 7), (2, 4, 9)]
    params = Params(r, s, [(0, 1), (0, 2), (1, 3), (4, 4), (0, 4), (7, 7)])
    assert run(engine_cls, edges, params) == evaluate(edges, params)
    for chunks in ([1, 3, 4], [2, 6], [5]):
        assert run(engine_cls, edges, params, chunks) == evaluate(edges, params)


def test_gap_of_a_billion(engine_cls):
    r, s = 3 * 10**6, 10**6
    edges = [(0, 1, 5), (1, 2, 6), (2, 3, 10**9 + 6), (3, 0, 10**9 + 7), (0, 2, 10**9 + 2 * 10**6)]
    params = Params(r, s, [(0, 1), (0, 2), (2, 3), (0, 3)])
    out = run(engine_cls, edges, params)
    assert len(out) == SlidingWindows(r, s, 5).started_by(edges[-1][2])
    assert out == evaluate(edges, params)
    assert [res.index for res in out] == list(range(len(out)))


def test_string_vertices_and_t0(engine_cls):
    edges = [("a", "b", 3), ("b", "c", 4), ("x", "y", 6), ("c", "a", 9), ("y", "a", 11)]
    params = Params(4, 2, [("a", "c"), ("x", "a"), ("z", "z"), ("y", "y")], t0=1)
    assert run(engine_cls, edges, params) == evaluate(edges, params)


def test_pickle_round_trip_mid_stream(engine_cls):
    rng = random.Random(7)
    edges, t = [], 0
    for _ in range(200):
        t += rng.choice([0, 0, 1, 1, 2, 9])
        edges.append((rng.randrange(12), rng.randrange(12), t))
    params = Params(7, 3, [(0, 1), (2, 3), (4, 4), (5, 11), (20, 1)])
    whole = run(engine_cls, edges, params)
    engine = engine_cls(params)
    out = list(engine.process(edges[:90]))
    engine = pickle.loads(pickle.dumps(engine))
    out += list(engine.process(edges[90:]))
    out += engine.flush()
    assert out == whole == evaluate(edges, params)


def test_connected_matches_oracle_at_every_window(engine_cls):
    rng = random.Random(11)
    edges, t = [], 0
    for _ in range(150):
        t += rng.choice([0, 1, 1, 2, 5])
        edges.append((rng.randrange(8), rng.randrange(8), t))
    params = Params(6, 2, [(0, 1)])
    engine = engine_cls(params)
    windows = SlidingWindows(6, 2, edges[0][2])
    pairs = [(a, b) for a in range(9) for b in range(9)]
    checked, out = 0, []
    for e in edges:
        out += engine.process([e])
        if engine.next_window:
            n = engine.next_window - 1
            inside = [(a, b) for a, b, tt in edges if windows.start(n) <= tt < windows.end(n)]
            expected = window_answers(inside, pairs)
            assert tuple(engine.connected(a, b) for a, b in pairs) == expected
            checked += 1
    out += engine.flush()
    assert out == evaluate(edges, params)
    n = engine.next_window - 1
    inside = [(a, b) for a, b, tt in edges if windows.start(n) <= tt < windows.end(n)]
    assert tuple(engine.connected(a, b) for a, b in pairs) == window_answers(inside, pairs)
    assert checked > 100


def random_stream(rng):
    n_vertices = rng.randint(1, 8)
    edges, t = [], rng.randint(-5, 5)
    for _ in range(rng.randint(1, 40)):
        t += rng.choice([0, 0, 1, 1, 2, 3, rng.randint(0, 30)])
        edges.append((rng.randrange(n_vertices), rng.randrange(n_vertices), t))
    workload = [(rng.randrange(n_vertices + 1), rng.randrange(n_vertices + 1))
                for _ in range(rng.randint(0, 6))]
    t0 = edges[0][2] - rng.randint(0, 4) if rng.random() < 0.3 else None
    params = Params(rng.randint(1, 9), rng.randint(1, 6), workload, t0=t0)
    cuts = sorted(rng.sample(range(1, len(edges)), min(len(edges) - 1, rng.randint(0, 4))))
    return edges, params, cuts


@pytest.mark.parametrize("seed", range(300))
def test_random_streams_match_oracle(engine_cls, seed):
    edges, params, cuts = random_stream(random.Random(seed))
    assert run(engine_cls, edges, params, cuts) == evaluate(edges, params)


def test_watermark_before_the_first_edge_of_an_empty_workload(engine_cls):
    # found by the watermark contract check: BIC's hook read self.vertices.size
    # while no vertex was known yet (no workload, no edge) and raised AttributeError
    params = Params(r=1, s=1, workload=(), t0=-3)
    engine = engine_cls(params)
    out = engine.advance_to(0) + list(engine.process([(0, 0, 0), (1, 2, 3)])) + engine.flush()
    assert out == evaluate([(0, 0, 0), (1, 2, 3)], params)
