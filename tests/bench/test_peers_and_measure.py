"""The peer baselines answer like the oracle; measure.run counts windows and truncates."""
import numpy as np
import pytest

from spec.connectivity import Params
from spec.registry import Registry
from reference.connectivity import evaluate

from bench.connectivity.generators import Stream, rmat_stream, workload
from bench.connectivity.measure import run, run_engine
from bench.connectivity.peers import create


def replay(name, stream, params, per_slide=True):
    engine = create(name, params)
    out = []
    feeds = stream.slides(params.s) if per_slide else [stream.batch()]
    for batch in feeds:
        out.extend(engine.process(batch))
    out.extend(engine.flush())
    return out, engine


@pytest.mark.parametrize("name", ["scipy", "networkx"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("per_slide", [True, False])
def test_peers_equal_the_oracle(name, seed, per_slide):
    stream = rmat_stream(60, 400, 3, seed=seed)
    q = workload(stream, 8, seed=seed, top=None) + [(stream.u[0].item(),) * 2, (10**9, 0)]
    params = Params(r=7, s=3, workload=q)
    edges = list(zip(stream.u.tolist(), stream.v.tolist(), stream.t.tolist()))
    got, engine = replay(name, stream, params, per_slide)
    assert got == evaluate(edges, params)
    last = got[-1]
    for (a, b), answer in zip(q, last.answers):
        assert engine.connected(a, b) == answer


@pytest.mark.parametrize("name", ["scipy", "networkx"])
def test_peers_across_a_gap(name):
    u = np.array([0, 1, 2, 3, 0], dtype=np.int64)
    v = np.array([1, 2, 3, 4, 4], dtype=np.int64)
    t = np.array([0, 1, 2, 20, 21], dtype=np.int64)
    params = Params(r=4, s=2, workload=[(0, 2), (3, 4), (0, 4)])
    got, _ = replay(name, Stream(u, v, t), params)
    assert got == evaluate(list(zip(u.tolist(), v.tolist(), t.tolist())), params)


def test_measure_one_latency_per_full_window():
    stream = rmat_stream(200, 3000, 10, seed=0)               # times 0..299
    params = Params(r=40, s=10, workload=workload(stream, 5, seed=0))
    m = run("scipy", stream, params)
    assert not m.truncated and m.n_edges == 3000
    # windows evaluated by process: those ending by the last slide's start, (290 - 40) / 10 + 1,
    # less the first (its call also fills the window)
    assert m.n_windows == 25
    assert np.all(m.window_latencies > 0)
    assert m.throughput == pytest.approx(3000 / m.seconds)
    assert m.percentile(50) <= m.percentile(95) <= m.percentile(99)
    row = m.row()
    assert row["windows"] == 25 and "25 full windows" in row["method"]


def test_measure_truncates_on_budget():
    stream = rmat_stream(200, 3000, 10, seed=0)
    params = Params(r=40, s=10, workload=workload(stream, 5, seed=0))
    m = run("networkx", stream, params, budget=0.0, clock="cpu")
    assert m.truncated and m.n_windows == 1 and m.n_edges < 3000
    assert m.steady_edges == 100                               # one slide applied per window
    assert m.throughput == pytest.approx(m.steady_edges / m.steady_seconds)
    assert "truncated" in m.method and "cpu clock" in m.method


ENGINES = sorted({n for _, n in Registry.names("connectivity")} | {"scipy", "networkx"})


@pytest.mark.parametrize("name", ENGINES)
@pytest.mark.parametrize("r, s", [(30, 10), (25, 10), (10, 30)])
def test_engine_run_replays_every_window_like_the_oracle(name, r, s):
    stream = rmat_stream(80, 2000, 10, seed=3)                # times 0..199
    params = Params(r=r, s=s, workload=workload(stream, 6, seed=3, top=None))
    record = []
    m = run_engine(name, stream, params, record=record)
    expected = evaluate(list(zip(stream.u.tolist(), stream.v.tolist(), stream.t.tolist())), params)
    assert record == [w.answers for w in expected]
    assert m.kind == "engine" and not m.truncated and m.n_edges == 2000
    assert "engine alone" in m.method


def test_engine_run_counts_like_the_contract_run():
    stream = rmat_stream(200, 3000, 10, seed=0)
    params = Params(r=40, s=10, workload=workload(stream, 5, seed=0))
    a, b = run("oracle", stream, params), run_engine("oracle", stream, params)
    assert a.n_windows == b.n_windows == 25


def test_engine_run_truncates_on_budget():
    stream = rmat_stream(80, 2000, 10, seed=3)
    params = Params(r=30, s=10, workload=workload(stream, 6, seed=3, top=None))
    m = run_engine("networkx", stream, params, budget=0.0, clock="cpu")
    assert m.truncated and m.n_windows == 1 and m.n_edges < 2000
