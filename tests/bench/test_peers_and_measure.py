"""The peer baselines answer like the oracle; measure.run counts windows and truncates."""
import numpy as np
import pytest

from spec.connectivity import Params
from spec.registry import Registry
from reference.connectivity import OracleEngine, evaluate

from bench.connectivity.generators import Stream, rmat_stream, workload
from bench.connectivity.measure import run, run_paper, splits_slides
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
    # windows evaluated by process: those ending by the last slide's start, (290 - 40) / 10 + 1
    assert m.n_windows == 26
    assert np.all(m.window_latencies > 0)
    assert m.throughput == pytest.approx(3000 / m.seconds)
    assert m.percentile(50) <= m.percentile(95) <= m.percentile(99)
    row = m.row()
    assert row["windows"] == 26 and "all 26 full windows" in row["method"]


def test_measure_truncates_on_budget():
    stream = rmat_stream(200, 3000, 10, seed=0)
    params = Params(r=40, s=10, workload=workload(stream, 5, seed=0))
    m = run("networkx", stream, params, budget=0.0, clock="cpu")
    assert m.truncated and m.n_windows == 1 and m.n_edges < 3000
    assert m.throughput == pytest.approx(m.steady_edges / m.steady_seconds)
    assert "truncated" in m.method and "cpu clock" in m.method


@pytest.mark.parametrize("name", ["oracle", "scipy"])
def test_paper_run_replays_every_window_like_the_oracle(name):
    stream = rmat_stream(80, 2000, 10, seed=3)                # times 0..199
    params = Params(r=30, s=10, workload=workload(stream, 6, seed=3, top=None))
    record = []
    m = run_paper(name, stream, params, record=record)
    expected = evaluate(list(zip(stream.u.tolist(), stream.v.tolist(), stream.t.tolist())), params)
    assert record == [w.answers for w in expected]
    assert m.kind == "paper" and not m.truncated
    assert m.n_windows == (190 - 30) // 10 + 1                 # full windows, as in run()
    assert len(m.slide_latencies) == m.n_windows
    assert np.all(m.slide_latencies >= m.window_latencies)
    assert "paper latency" in m.method


def test_paper_run_truncates_on_budget():
    stream = rmat_stream(80, 2000, 10, seed=3)
    params = Params(r=30, s=10, workload=workload(stream, 6, seed=3, top=None))
    m = run_paper("networkx", stream, params, budget=0.0, clock="cpu")
    assert m.truncated and m.n_windows == 1 and m.n_edges < 2000


class DropsLateEdges(OracleEngine):
    """Correct under the base driver, but drops edges past the last window it evaluates."""

    name = "drops-late-edges"

    def _run(self, u, v, t, upto):
        if upto > 0:
            keep = t < self.windows.end(upto - 1)
            u, v, t = u[keep], v[keep], t[keep]
        return super()._run(u, v, t, upto)


def test_paper_run_falls_back_for_engines_that_cannot_split():
    Registry.register(DropsLateEdges)
    try:
        assert splits_slides("oracle") and not splits_slides("drops-late-edges")
        stream = rmat_stream(80, 2000, 10, seed=3)
        params = Params(r=30, s=10, workload=workload(stream, 6, seed=3, top=None))
        m = run_paper("drops-late-edges", stream, params)
        assert m.kind == "slide" and "upper bound" in m.method
        assert m.n_windows == (190 - 30) // 10 + 1
    finally:
        Registry.unregister(DropsLateEdges)
        splits_slides.cache_clear()
