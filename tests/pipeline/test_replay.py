"""Partitioned replays on Spark equal the single-process run (docs/pipeline.md, "Partitions and halos")."""
from __future__ import annotations

import random

import attrs
import pytest
from hypothesis import given, strategies as st

from streamspec.conformance.profiles import spark_settings
from streamspec.conformance.strategies.connectivity import cases, random_case
from streamspec.pipeline.io.edges import edges_frame, frame_stream
from streamspec.pipeline.jobs.connectivity import replay_stream as replay
from streamspec.pipeline.replay import window_ranges
from streamspec.spec.connectivity import Edge, Params
from streamspec.spec.registry import Registry

EXACT = [cls for cls in Registry.engines("connectivity") if cls.exact]


def single_process(engine_cls, params, edges):
    engine = engine_cls(params)
    out = list(engine.process(edges)) + list(engine.flush())
    return [(w.index, w.start, w.end, list(w.answers)) for w in out]


def rows(df, keyed=False):
    got = [((r["key"],) if keyed else ()) + (r["window"], r["start"], r["end"], list(r["answers"]))
           for r in df.collect()]
    return sorted(got)


@pytest.mark.parametrize("n, p", [(0, 3), (1, 4), (5, 1), (5, 2), (7, 3), (10, 10), (3, 8)])
def test_window_ranges_cover_contiguously(n, p):
    ranges = window_ranges(n, p)
    assert [w for lo, hi in ranges for w in range(lo, hi)] == list(range(n))
    assert all(hi > lo for lo, hi in ranges) and len(ranges) == min(n, p)
    sizes = [hi - lo for lo, hi in ranges]
    assert not sizes or max(sizes) - min(sizes) <= 1


@pytest.mark.spark
@spark_settings()
@given(case=cases(lateness=("error",)), partitions=st.integers(1, 7), engine=st.sampled_from(EXACT))
def test_time_partitioned_equals_single_process(spark, case, partitions, engine):
    stream = frame_stream(spark, "<memory>", edges_frame(case.edges))
    got = rows(replay(stream, engine, case.params, partitions))
    assert got == single_process(engine, case.params, case.edges)


@pytest.mark.spark
def test_ranges_inside_a_gap_still_emit_their_windows(spark):
    # windows 2..9 lie in a gap without edges; with 5 ranges some ranges hold no edge at all
    params = Params(r=2, s=1, workload=[(1, 2), (3, 3)])
    edges = [Edge(1, 2, 0), Edge(3, 4, 1), Edge(2, 3, 11), Edge(9, 9, 12)]
    oracle = Registry.get("connectivity", "oracle")
    stream = frame_stream(spark, "<memory>", edges_frame(edges))
    got = rows(replay(stream, oracle, params, 5))
    assert got == single_process(oracle, params, edges) and len(got) == 13
    assert all(not any(r[3]) for r in got[3:10])


@pytest.mark.spark
@pytest.mark.parametrize("seed", [3, 11])
def test_keyed_replay_equals_one_engine_per_key(spark, seed):
    rng = random.Random(seed)
    base = random_case(seed, max_edges=60)
    # the same parameters, the stream dealt over three keys (each key keeps its order)
    keys = [rng.choice(["north", "south", "west"]) for _ in base.edges]
    for engine in EXACT[:2]:
        stream = frame_stream(spark, "<memory>", edges_frame(base.edges, keys))
        got = rows(replay(stream, engine, base.params, 2), keyed=True)
        want = sorted((k,) + row for k in set(keys) for row in single_process(
            engine, base.params, [e for e, key in zip(base.edges, keys) if key == k]))
        assert got == want


@pytest.mark.spark
def test_keyed_replay_orders_each_key_by_time_then_input(spark):
    params = Params(r=3, s=1, workload=[("a", "b"), ("b", "c")])
    edges = [Edge("a", "b", 0), Edge("x", "y", 0), Edge("b", "c", 2), Edge("x", "z", 5),
             Edge("c", "d", 2), Edge("a", "c", 4)]
    keys = [1, 2, 1, 2, 1, 1]
    oracle = Registry.get("connectivity", "oracle")
    frame = edges_frame(edges, keys)
    # shuffle the rows: the replay must restore each key's order from (t, seq)
    stream = frame_stream(spark, "<memory>", frame.sample(frac=1, random_state=1))
    got = rows(replay(stream, oracle, params, 2), keyed=True)
    assert [r for r in got if r[0] == 1] == [
        (1,) + row for row in single_process(oracle, params, [e for e, k in zip(edges, keys) if k == 1])]
    assert {r[0] for r in got} == {1, 2}


@pytest.mark.spark
def test_origin_before_the_first_edge(spark):
    params = Params(r=4, s=3, workload=[(0, 1)], t0=-7)
    edges = [Edge(0, 1, 0), Edge(1, 2, 2), Edge(0, 2, 9)]
    engine = EXACT[-1]
    stream = frame_stream(spark, "<memory>", edges_frame(edges))
    for partitions in (1, 3, 6):
        assert rows(replay(stream, engine, params, partitions)) == single_process(engine, params, edges)


@pytest.mark.spark
def test_string_vertices_and_empty_stream(spark):
    params = Params(r=2, s=2, workload=[("a", "b")])
    oracle = Registry.get("connectivity", "oracle")
    edges = [Edge("a", "b", 1), Edge("b", "c", 4)]
    stream = frame_stream(spark, "<memory>", edges_frame(edges))
    assert rows(replay(stream, oracle, params, 2)) == single_process(oracle, params, edges)
    empty = frame_stream(spark, "<memory>", edges_frame([]))
    assert replay(empty, oracle, attrs.evolve(params, workload=[(1, 2)]), 2).count() == 0
