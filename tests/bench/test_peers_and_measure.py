"""The peer baselines answer like the oracle; measure feeds triggering edges, counts, truncates."""
import numpy as np
import pytest

from streamspec.spec.connectivity import Params
from streamspec.spec.errors import AdHocUnavailable
from streamspec.spec.registry import Registry
from streamspec.spec.windows import SlidingWindows
from streamspec.reference.connectivity import evaluate

from streamspec.bench.connectivity.generators import Stream, rmat_stream, workload
from streamspec.bench.connectivity.measure import pieces, run, run_engine
from streamspec.bench.connectivity.peers import create


def replay(name, stream, params, per_slide=True, hold_back=True):
    engine = create(name, params, hold_back=hold_back)
    out = []
    feeds = stream.slides(params.s) if per_slide else [stream.batch()]
    for batch in feeds:
        out.extend(engine.process(batch))
    out.extend(engine.flush())
    return out, engine


def edges_of(stream):
    return list(zip(stream.u.tolist(), stream.v.tolist(), stream.t.tolist()))


@pytest.mark.parametrize("name", ["scipy", "networkx"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("per_slide", [True, False])
@pytest.mark.parametrize("hold_back", [True, False])
def test_peers_equal_the_oracle(name, seed, per_slide, hold_back):
    stream = rmat_stream(60, 400, 3, seed=seed)
    q = workload(stream, 8, seed=seed, top=None) + [(stream.u[0].item(),) * 2, (10**9, 0)]
    params = Params(r=7, s=3, workload=q)
    got, engine = replay(name, stream, params, per_slide, hold_back)
    assert got == evaluate(edges_of(stream), params)
    if hold_back:
        for (a, b), answer in zip(q, got[-1].answers):
            assert engine.connected(a, b) == answer
    else:
        with pytest.raises(AdHocUnavailable):
            engine.connected(*q[0])


@pytest.mark.parametrize("name", ["scipy", "networkx"])
@pytest.mark.parametrize("hold_back", [True, False])
def test_peers_across_a_gap(name, hold_back):
    u = np.array([0, 1, 2, 3, 0], dtype=np.int64)
    v = np.array([1, 2, 3, 4, 4], dtype=np.int64)
    t = np.array([0, 1, 2, 20, 21], dtype=np.int64)
    params = Params(r=4, s=2, workload=[(0, 2), (3, 4), (0, 4)])
    got, _ = replay(name, Stream(u, v, t), params, hold_back=hold_back)
    assert got == evaluate(edges_of(Stream(u, v, t)), params)


@pytest.mark.parametrize("r, s, t0", [(40, 10, None), (25, 10, None), (10, 30, None),
                                      (40, 10, -7)])
def test_pieces_start_with_the_triggering_edges(r, s, t0):
    stream = rmat_stream(200, 3000, 10, seed=0)               # times 0..299
    params = Params(r=r, s=s, t0=t0, workload=workload(stream, 5, seed=0))
    cuts = pieces(stream, params)
    assert cuts[0][0] == 0 and cuts[-1][1] == len(stream)
    assert all(a[1] == b[0] for a, b in zip(cuts, cuts[1:]))
    engine = create("oracle", params, hold_back=False)
    triggered = 0
    for lo, hi in cuts:
        triggered += len(list(engine.process(stream.batch(lo, lo + 1))))
        assert list(engine.process(stream.batch(lo + 1, hi))) == []   # the rest: inserts only
    windows = SlidingWindows(r, s, 0 if t0 is None else t0)
    assert triggered == windows.due_before(int(stream.t[-1]))


def test_measure_one_latency_per_triggered_window():
    stream = rmat_stream(200, 3000, 10, seed=0)               # times 0..299
    params = Params(r=40, s=10, workload=workload(stream, 5, seed=0))
    m = run("scipy", stream, params)
    assert not m.truncated and m.n_edges == 3000
    # windows an edge triggers: those ending by the last edge's time, (299 - 40) // 10 + 1
    assert m.n_windows == 26
    assert np.all(m.window_latencies > 0)
    assert m.throughput == pytest.approx(3000 / m.seconds)
    assert m.percentile(50) <= m.percentile(95) <= m.percentile(99)
    row = m.row()
    assert row["windows"] == 26 and "26 windows" in row["method"]
    assert "hold_back=False" in row["method"] and "triggering edge" in row["method"]


def test_measure_truncates_on_budget():
    stream = rmat_stream(200, 3000, 10, seed=0)
    params = Params(r=40, s=10, workload=workload(stream, 5, seed=0))
    m = run("networkx", stream, params, budget=0.0, clock="cpu")
    assert m.truncated and m.n_windows == 1 and m.n_edges < 3000
    assert m.steady_edges == 100                    # the first window's slide (trigger + rest)
    assert m.throughput == pytest.approx(m.steady_edges / m.steady_seconds)
    assert "SAMPLED" in m.method and "first 1 windows" in m.method and "cpu clock" in m.method


ENGINES = sorted({n for _, n in Registry.names("connectivity")} | {"scipy", "networkx"})


@pytest.mark.parametrize("name", ENGINES)
@pytest.mark.parametrize("measure", [run, run_engine])
@pytest.mark.parametrize("r, s", [(30, 10), (25, 10), (10, 30)])
def test_measured_runs_equal_the_oracle(name, measure, r, s):
    stream = rmat_stream(80, 2000, 10, seed=3)                # times 0..199
    params = Params(r=r, s=s, workload=workload(stream, 6, seed=3, top=None))
    record = []
    m = measure(name, stream, params, record=record)
    assert record == evaluate(edges_of(stream), params)
    assert not m.truncated and m.n_edges == 2000
    assert m.kind == ("engine" if measure is run_engine else "contract")


def test_engine_run_counts_like_the_contract_run():
    stream = rmat_stream(200, 3000, 10, seed=0)
    params = Params(r=40, s=10, workload=workload(stream, 5, seed=0))
    a, b = run("oracle", stream, params), run_engine("oracle", stream, params)
    assert a.n_windows == b.n_windows == 26
    assert "engine alone" in b.method


def test_engine_run_truncates_on_budget():
    stream = rmat_stream(80, 2000, 10, seed=3)
    params = Params(r=30, s=10, workload=workload(stream, 6, seed=3, top=None))
    m = run_engine("networkx", stream, params, budget=0.0, clock="cpu")
    assert m.truncated and m.n_windows == 1 and m.n_edges < 2000
