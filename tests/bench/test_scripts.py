"""Smoke runs of the benchmark scripts on tiny streams (no timing assertions)."""
import csv
import json

import pytest

from streamspec.spec.connectivity import Params

from streamspec.bench import ratios
from streamspec.bench.connectivity import experiment, memory, targets
from streamspec.bench.connectivity.generators import rmat_stream, workload


@pytest.mark.parametrize("alone", [False, True])
def test_experiment_writes_csv_and_png(tmp_path, alone):
    out = tmp_path / "exp.csv"
    assert experiment.main(["--quick", "--edges", "2000", "--vertices", "300", "--rate", "10",
                            "--slide", "2", "--window", "40", "--engines", "oracle,scipy,nosuch",
                            "--queries", "5", "--clock", "cpu", "--out", str(out)]
                           + ["--engine-alone"] * alone) == 0
    rows = list(csv.DictReader(out.open()))
    assert all(("engine alone" in r["method"]) == alone for r in rows)
    assert {r["engine"] for r in rows} == {"oracle", "scipy"}
    assert {(r["experiment"], r["slides_per_window"]) for r in rows} == {
        ("window", "10"), ("window", "20"), ("window", "40"), ("window", "80"),
        ("slide", "10"), ("slide", "20"), ("slide", "40")}          # 40 / 80 is not whole
    assert out.with_suffix(".png").stat().st_size > 0


def test_targets_write_verdicts_and_ratio_json(tmp_path, monkeypatch):
    # the scipy peer stands in for bic and rwc: the script's plumbing is what is tested
    from streamspec.bench.connectivity import peers
    monkeypatch.setitem(peers.PEERS, "bic", peers.ScipyPerWindow)
    monkeypatch.setitem(peers.PEERS, "rwc", peers.ScipyPerWindow)
    out = tmp_path / "t.csv"
    # scipy against itself misses every ratio target: the run says so with exit 1, files written
    assert targets.main(["--edges", "20000", "--rate", "100", "--queries", "5",
                         "--no-memory", "--clock", "cpu", "--table-engines", "bic,msf,rwc",
                         "--out", str(out)]) == 1
    rows = {r["target"]: r for r in csv.DictReader(out.open())}
    assert rows["bic_over_rwc_throughput"]["pass"] == "False"
    assert set(rows) == {"bic_throughput_eps", "bic_over_rwc_throughput", "rwc_p95_over_bic_p95",
                         "rwc_p95_over_bic_p95_engine_alone", "bic_over_scipy_throughput"}
    assert "through process(), hold_back=False" in rows["rwc_p95_over_bic_p95"]["how"]
    assert "engine alone" in rows["rwc_p95_over_bic_p95_engine_alone"]["how"]
    assert all(r["scale"] == "quick" for r in rows.values())
    table = ratios.medians(json.loads(out.with_suffix(".json").read_text()))
    assert set(table) == {"connectivity-quick-throughput", "connectivity-quick-p95",
                          "connectivity-quick-p95-engine"}
    assert set(table["connectivity-quick-throughput"]) == {"bic", "rwc", "scipy"}
    assert (tmp_path / "t-engines.csv").exists()


def test_memory_child_reports_a_peak():
    stream = rmat_stream(500, 5000, 50, seed=0)
    params = Params(r=20, s=5, workload=workload(stream, 5, seed=0))
    got = memory.measure("scipy", stream, params, timeout=300)
    assert got["engine"] == "scipy" and got["peak_delta_bytes"] >= 0
    assert got["peak_rss_bytes"] >= got["baseline_rss_bytes"] > 0


def test_kws_targets_runs_ablations_and_t_max():
    from streamspec.bench.kws import targets as kws_targets
    from streamspec.engines.kws.forest import ForestEngine
    lazy = kws_targets._engine("forest:purge=lazy")
    assert issubclass(lazy, ForestEngine) and lazy.purge == "lazy" and ForestEngine.purge == "eager"
    rows = [kws_targets._cpu_run(name, 2, 120, 5) for name in ("forest", "forest:purge=lazy")]
    assert [r["t_max"] for r in rows] == [5, 5]
    assert rows[0]["outputs"] == rows[1]["outputs"] > 0    # the ablation changes cost, not answers
    work = kws_targets._work_run("forest:purge=lazy", 2, 120, 5)
    assert work["joins"] > 0 and work["probes"] > 0
