"""``bench/kws/figures.py`` (issue 14): a figure's sweep writes its rows and its PNG, the
forest is skipped with the reason where it would build too many trees, and the DuckDB
peer's measurement device (a window loaded without re-running the joins) leaves it with
the answer a full run has at the first measured instant."""
from __future__ import annotations

import csv

import pytest

from streamspec.bench.kws import figures
from streamspec.bench.kws.generator import params, stream


def test_a_figure_writes_its_rows_and_png(tmp_path):
    figures.main(["5.8", "--seconds", "90", "--out", str(tmp_path)])
    rows = list(csv.DictReader(open(tmp_path / "figures.csv")))
    assert [(r["value"], r["engine"]) for r in rows] == [
        (str(w), e) for w in (300, 600, 1200, 2400, 4800)
        for e in ("fullmesh", "fullmesh:purge=eager")]
    assert all(r["status"] == "ok" and float(r["cpu_s"]) > 0 and r["commit"] for r in rows)
    # an ablation changes the cost, never the answer
    for w in (300, 600, 1200, 2400, 4800):
        assert len({r["outputs"] for r in rows if r["value"] == str(w)}) == 1
    assert (tmp_path / "figure5_8.png").stat().st_size > 0
    # the memory pass fills the traced peaks of those rows only, and keeps the rest
    figures.main(["5.8", "--memory", "--engines", "fullmesh", "--out", str(tmp_path)])
    again = list(csv.DictReader(open(tmp_path / "figures.csv")))
    traced = {r["value"]: float(r["peak_traced_mb"]) for r in again
              if r["engine"] == "fullmesh" and r["peak_traced_mb"]}
    assert set(traced) == {str(w) for w in (300, 600, 1200, 2400, 4800)}
    assert all(m > 0 for m in traced.values())
    assert [r["cpu_s"] for r in again] == [r["cpu_s"] for r in rows]
    # a second figure keeps the first one's rows
    figures.main(["5.7", "--seconds", "60", "--out", str(tmp_path), "--engines", "fullmesh"])
    rows = list(csv.DictReader(open(tmp_path / "figures.csv")))
    assert {r["figure"] for r in rows} == {"5.7", "5.8"}


def test_the_forest_is_skipped_beyond_its_tree_limit():
    row = figures.run_one("forest", dict(figures.DEFAULTS, keywords=4), 10, 5)
    assert row["status"].startswith("skipped:") and row["cns"] > figures.FOREST_CNS


def test_unknown_figure_is_a_usage_error(tmp_path):
    with pytest.raises(SystemExit):
        figures.main(["5.9", "--out", str(tmp_path)])


def test_a_window_loaded_without_joins_then_rerun_has_the_full_runs_answer():
    pytest.importorskip("duckdb")
    from streamspec.bench.kws.duckdb_peer import DuckDbPeer
    from streamspec.reference.kws import evaluate

    p = params(4, 2, 3, 15)
    events = list(stream(p, 40, 0.2, 5, seed=3))
    start = 30
    peer = DuckDbPeer(p)
    peer.rerun = False
    assert list(peer.process([e for e in events if e.t < start])) == []
    peer.rerun = True
    first = peer.advance_to(start)
    # every result open at start - 1 in a full run appears at once
    full = evaluate(p, [e for e in events if e.t < start])
    open_at = {(o.tids, o.edges) for o in full
               if type(o).__name__ == "Appear" and (o.end is None or o.end > start - 1)}
    assert open_at and {(o.tids, o.edges) for o in first} == open_at


def test_steady_state_cpu_counts_from_the_given_instant():
    # issue 28: the CPU from the instant the window is full, and per hour of stream
    row = figures.run_one("fullmesh", dict(figures.DEFAULTS, window=30), 100, 5, steady_from=40)
    assert row["steady_from"] == 40 and 0 < row["steady_cpu_s"] < row["cpu_s"]
    hourly = [float(h) for h in row["hourly_cpu_s"].split(";")]
    assert len(hourly) == 1 and hourly[0] == pytest.approx(row["cpu_s"], rel=0.05, abs=5e-3)
    # an hour mark splits the stream's CPU; the steady part is the rest of the stream
    clock = {"every": 3600, "steady_from": 5000, 0: 1.0, 3600: 3.0, 5000: 4.0}
    assert figures._steady(clock, 6.0, 7200, 5000) == dict(
        steady_from=5000, steady_cpu_s=2.0, hourly_cpu_s="2.000;3.000")
    assert figures.steady_from("5.7", 18000) == 4800
    assert figures.steady_from("5.2", 18000) == figures.DEFAULTS["window"]


def test_demand_driven_holds_no_more_and_answers_the_same():
    # Figure 5.7's profile (bench/kws/demand.py): both modes on one stream
    from streamspec.bench.kws import demand

    d = demand.run("fullmesh", 30, 120, 30, False)
    n = demand.run("fullmesh:demand_driven=false", 30, 120, 30, False)
    assert d["outputs"] == n["outputs"]
    assert [s["t"] for s in d["samples"]] == [30, 60, 90, 120]
    for a, b in zip(d["samples"], n["samples"]):
        assert a["nodes_nonempty"] == b["nodes_nonempty"] <= a["nodes"]
        assert b["joins_running"] == b["joins"] and a["joins_running"] <= a["joins"]
        assert a["composites"] - a["dead"] <= b["composites"] - b["dead"]
