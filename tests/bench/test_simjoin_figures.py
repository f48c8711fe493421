"""The simjoin figure harnesses of issue 27 on tiny inputs: the R-S join's sides, the
time budget's marks (``cut``), Static-with-batches' error count, and the figure
commands' PNG/CSV (candidates, stock, ksweep) from rows shaped like the throughput CSVs."""
from __future__ import annotations

import csv

import numpy as np

from streamspec.bench.simjoin import figures, static_batch, throughput
from streamspec.bench.simjoin.generators import tweet_like


def test_rs_sides_are_seeded_and_both_sides_join():
    b = tweet_like(400, seed=2)
    rs = throughput.rs_sides(b, 1)
    assert set(np.unique(rs.side)) == {0, 1}
    assert np.array_equal(rs.side, throughput.rs_sides(b, 1).side)
    row = throughput.measure("static", rs, 100, 3, 200, budget=60.0)
    assert row["join"] == "rs" and row["cut"] == "" and row["sets"] == 200 and row["outputs"] > 0


def test_budget_cuts_are_marked(monkeypatch):
    monkeypatch.setattr(throughput, "STEP", 100)       # fill steps of 100 sets
    b = tweet_like(3000, seed=3, mean_size=4.0)
    sampled = throughput.measure("static", b, 100, 2, 2800, budget=0.0)
    assert sampled["cut"] == "sample" and sampled["sets"] < 2800
    unfilled = throughput.measure("static", b, 1000, 2, 100, budget=60.0, fill_budget=0.0)
    assert unfilled["cut"] == "fill" and unfilled["warm"] == 100


def test_static_batch_error_counts_wrong_windows():
    p = ((1, 0, 0.5, 9.0), (2, 0, 0.4, 9.0))
    q = ((3, 1, 0.6, 9.0), (2, 0, 0.4, 9.0))
    r = ((3, 1, 0.6, 9.0), (4, 2, 0.5, 9.0))
    got = static_batch.compare([p, p, p, q], [p, q, r, q])
    assert got == {"windows": 4, "wrong": 2, "error": 0.5, "wrong_gt1": 0.5, "missing": 1.5}
    b = tweet_like(700, seed=4)
    exact, _, _ = static_batch.held_lists("static", b, 200, 3, 500)
    approx, _, stats = static_batch.held_lists("static:batch=10", b, 200, 3, 500)
    assert len(exact) == len(approx) == 500 and stats["runs"] == 70
    err = static_batch.compare(approx, exact)
    assert 0 < err["error"] <= 0.9


def _write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def test_candidates_and_stock_figures(tmp_path):
    rows = []
    for engine, pre, stock in (("swoop", 70, 130), ("scase", None, 130), ("static", 40, ""), ("base", None, None)):
        for w in (100, 1000):
            rows.append({"engine": engine, "w": w, "k": 10, "warm": w, "join": "self", "cut": "",
                         "sets_per_s": 1000.0, "precandidates_per_set": pre if pre else w - 1,
                         "candidates_per_set": 6.5, "max_stock": stock if stock is not None else w * w // 3,
                         "k_w": 10 * w})
    rows.append(dict(rows[-1], precandidates_per_set=0))       # an old base row: no count, left out
    _write(tmp_path / "throughput-tweet-k10.csv", rows)
    plotted = figures.candidates(str(tmp_path))
    assert (tmp_path / "fig12hi-candidates.png").stat().st_size > 0
    assert {(r["engine"], r["w"]) for r in plotted} == {(e, w) for e in figures.SYSTEMS for w in (100, 1000)}
    assert all(r["precandidates_per_set"] for r in plotted)
    stock = figures.stock(str(tmp_path))
    assert (tmp_path / "fig15-stock.png").stat().st_size > 0
    assert {r["engine"] for r in stock} == {"swoop", "scase", "base"}
    by_k = figures.ksweep(str(tmp_path))          # only the k = 10 file here
    assert [(r["engine"], r["k"]) for r in by_k] == [(e, 10) for e in figures.SYSTEMS]
    assert (tmp_path / "fig12f-k.png").stat().st_size > 0


def test_ablations_against_the_window(tmp_path):
    plotted = figures.ablations_window(str(tmp_path), [50, 100], 3, 60, budget=30.0, seed=5,
                                       append=False, label="t")
    assert (tmp_path / "fig13b-ablations-w.png").stat().st_size > 0
    assert {(r["engine"], r["w"]) for r in plotted} == {(e, w) for e in figures.ABLATIONS
                                                        for w in (50, 100)}
    assert all(r["k"] == 3 and r["sets"] == 60 and r["cut"] == "" for r in plotted)
    noindex = {r["w"]: r["precandidates_per_set"] for r in plotted if r["engine"] == "swoop-noindex"}
    assert noindex[100] > noindex[50]           # without the index: every window set
    again = figures.ablations_window(str(tmp_path), [100], 3, 60, budget=30.0, seed=5,
                                     append=True, label="t2")
    assert len(list(csv.DictReader(open(tmp_path / "fig13b-ablations-w.csv")))) == 12
    assert {r["label"] for r in again if r["w"] == 100} == {"t2"}


def test_base_counts_every_window_set_as_paired_and_verified():
    b = tweet_like(300, seed=6)
    row = throughput.measure("base", b, 100, 3, 150, budget=60.0)
    # every new set meets each of the 99 other sets of the 100-set window, and Base
    # merges each such pair in full
    assert row["precandidates_per_set"] == row["verified_per_set"] == 99
    assert 0 < row["candidates_per_set"] <= 100
