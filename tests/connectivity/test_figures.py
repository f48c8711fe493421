"""The Figure 11/12 scripts (``streamspec.bench.connectivity.figures``) and the DFS baseline.

Small streams only (fast lane): the CSV columns, that the numbers are sane
(ordered percentiles, positive rates and sizes, budgets marked), and that the
DFS baseline measured by the harness answers as the oracle does.
"""
from __future__ import annotations

import csv

import numpy as np
import pytest

from streamspec.reference.connectivity import OracleEngine
from streamspec.spec.connectivity import Params

from streamspec.bench.connectivity import fig11, fig12, figures
from streamspec.bench.connectivity.generators import rmat_stream, workload
from streamspec.bench.connectivity.measure import run

TINY11 = dict(edges=4000, vertices=2000, rate=20, r=40, s=4, budget=30.0)
TINY12 = dict(edges=3000, vertices=800, rate=10, slide=2, window=160, budget=30.0)


def oracle_answers(stream, params):
    engine = OracleEngine(params)
    out = list(engine.process(stream.batch()))
    return out + engine.flush()


@pytest.mark.parametrize("seed", [0, 1])
def test_dfs_answers_equal_the_oracle_through_the_harness(seed):
    stream = rmat_stream(200, 3000, 15, seed=seed)
    params = Params(r=12, s=3, workload=workload(stream, 25, seed=seed, top=None))
    got = []
    m = run("dfs", stream, params, record=got, clock="cpu")
    assert got == oracle_answers(stream, params)
    assert not m.truncated and m.n_windows > 0
    assert any(any(w.answers) for w in got) and not all(all(w.answers) for w in got)


def test_dfs_searches_cost_grows_with_the_workload():
    # the paper's point (Section 7.4): one search per query, so 100x the queries
    # is many times the window work; BIC's answers stay cheap (sanity, not a speed test)
    stream = rmat_stream(2000, 10000, 100, seed=3)
    wl = workload(stream, 400, seed=3)
    one = run("dfs", stream, Params(r=40, s=4, workload=wl[:4]), clock="cpu")
    many = run("dfs", stream, Params(r=40, s=4, workload=wl), clock="cpu")
    assert one.n_windows == many.n_windows
    assert np.median(many.window_latencies) > 5 * np.median(one.window_latencies)


def test_figure_11_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(fig11, "WORKLOAD_SIZES", (1, 10, 100))
    for key, value in TINY11.items():
        monkeypatch.setitem(fig11.QUICK, key, value)
    out = tmp_path / "fig11.csv"
    assert figures.main(["11", "--quick", "--engines", "bic,dfs", "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out)))
    assert list(rows[0]) == fig11.FIELDS
    # bic twice (build deferred and inside), dfs once, for every workload size
    assert len(rows) == 3 * len(fig11.WORKLOAD_SIZES)
    assert {(r["engine"], r["build"]) for r in rows} == {
        ("bic", "deferred"), ("bic", "inside"), ("dfs", "none")}
    assert sorted({int(r["queries"]) for r in rows}) == list(fig11.WORKLOAD_SIZES)
    for r in rows:
        assert float(r["throughput_eps"]) > 0
        assert 0 <= float(r["p50_ms"]) <= float(r["p95_ms"]) <= float(r["p99_ms"])
        assert r["truncated"] == "False" and "SAMPLED" not in r["method"]
        assert int(r["stream_edges"]) == int(r["edges_fed"]) == TINY11["edges"]
        assert r["commit"] and float(r["load1"]) >= 0 and "cpu clock" in r["method"]
    windows = {r["windows"] for r in rows}
    assert len(windows) == 1      # every engine answers every window of the same stream
    assert out.with_suffix(".png").stat().st_size > 10_000


def test_figure_11_budget_marks_sampled_rows():
    size = dict(TINY11, budget=0.0)
    rows = fig11.measure_all(["dfs"], size, sizes=(1000,), mode="test", echo=lambda s: None)
    (row,) = rows
    assert row["truncated"] and "SAMPLED" in row["method"]
    assert 0 < row["edges_fed"] < row["stream_edges"] and row["windows"] >= 1


def test_figure_12_rows(tmp_path, monkeypatch):
    for key, value in TINY12.items():
        monkeypatch.setitem(fig12.QUICK, key, value)
    out = tmp_path / "fig12.csv"
    assert figures.main(["12", "--quick", "--engines", "dfs", "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out)))
    assert list(rows[0]) == fig12.FIELDS
    # 2 graphs x (4 window sizes + 4 slide sizes) x 1 engine; (r=160, s=2) is in both experiments
    assert len(rows) == 2 * 8
    assert {r["graph"] for r in rows} == {"rmat", "powerlaw"}
    for r in rows:
        assert r["truncated"] == "False" and int(r["windows"]) > 0
        lo, mid, hi = float(r["index_min_mb"]), float(r["index_mb"]), float(r["index_max_mb"])
        assert 0 < lo <= mid <= hi <= float(r["peak_mb"])
        assert float(r["ids_mb"]) > 0 and "median over window instances" in r["method"]
    shared = [r for r in rows if (r["r"], r["s"]) == ("160", "2")]
    assert {r["experiment"] for r in shared} == {"window", "slide"}
    assert out.with_suffix(".png").stat().st_size > 10_000


def test_index_size_follows_the_window_for_a_fifo_engine():
    # DFS stores every window edge (adjacency + FIFO): 8x the window, clearly more memory
    stream = rmat_stream(4000, 40000, 100, seed=5)
    wl = workload(stream, 10, seed=5)
    small = fig12.index_size("dfs", stream, Params(r=20, s=5, workload=wl), None)
    large = fig12.index_size("dfs", stream, Params(r=160, s=5, workload=wl), None)
    assert small["windows"] > large["windows"] > 0
    assert large["index_mb"] > 2 * small["index_mb"]


def test_index_size_without_a_window_in_budget_has_no_value():
    stream = rmat_stream(500, 5000, 10, seed=6)
    got = fig12.index_size("rwc", stream, Params(r=400, s=10, workload=[(0, 1)]), budget=-1.0)
    assert got["windows"] == 0 and got["index_mb"] == "" and got["truncated"]
