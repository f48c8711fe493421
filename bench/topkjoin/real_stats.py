"""Stream and dataset characteristics: Figure 9 (real stream), Table 3 (DS-CH-x), as files.

Paper §6.1: Fig. 9(a) the long-tailed distribution of mentions per user,
Fig. 9(b) mentions per window; Table 3 the changes per invocation of the
DS-CH-x datasets (average, median, Q1, Q3).

The real stream's file (``real_stream``) carries presence per slide piece,
not mention counts (the Java's counter stores 1, ``java_compat``), so Figure 9 is
redrawn with what it holds: per user, the windows in which it is mentioned
(a lower bound on its mentions, same long tail); per window, the distinct
users and how many are mentioned in both slide pieces (the Java's value 2).
That last number is what ``bench/results/topkjoin/README.md`` could not
measure before the file was available; the seeded stream's, under the same
``--java-compat`` rewrite, is written beside it.

``python -m streamspec.bench.topkjoin.real_stats`` writes, under
``bench/results/topkjoin/``: ``real-windows.csv`` (stream, dataset, window,
tau, users, both, value-1 users; the real stream and the seeded one, drawn
once with ``data.STREAM_SEED`` as the quality experiments draw it, 150 windows each), ``real-users.csv`` (per real-stream user: the
windows and slide pieces with a mention), ``fig9-real.png`` and
``table3.csv`` (per CH and dataset, and pooled over the five datasets).
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

from streamspec.bench.topkjoin import real_stream
from streamspec.bench.topkjoin.data import (BETA, EVALUATIONS, OMEGA, STREAM_SEED, T0,
                                            changes_per_invocation,
                                            ds_ch, load_snapshots, mentions)
from streamspec.bench.topkjoin.java_compat import slide_presence

RESULTS = Path("bench", "results", "topkjoin")
CHS = (5, 10, 20, 40, 80)


def window_values(ids, x, ts, windows: int = EVALUATIONS) -> list[np.ndarray]:
    """Per window ``[T0 + k beta, + omega)``: the ``sum`` of x of each id present (any order)."""
    out = []
    for k in range(windows):
        m = (ts >= T0 + k * BETA) & (ts < T0 + k * BETA + OMEGA)
        u, inv = np.unique(ids[m], return_inverse=True)
        out.append(np.bincount(inv, weights=x[m], minlength=u.size))
    return out


def window_rows(stream: str, dataset: int, values) -> list[dict]:
    return [dict(stream=stream, dataset=dataset, window=k, tau=T0 + OMEGA + k * BETA,
                 users=int(v.size), both=int(np.sum(v >= 2)), one=int(np.sum(v == 1)))
            for k, v in enumerate(values)]


def user_rows(stream: real_stream.RealStream) -> list[dict]:
    windows: dict = {}
    for k in range(min(stream.windows, EVALUATIONS)):
        for u in stream.window(k):
            windows[u] = windows.get(u, 0) + 1
    pieces: dict = {}
    for p in stream.slides:     # slide pieces, not early pieces: every mention is in one slide
        for u in p.count:
            pieces[u] = pieces.get(u, 0) + 1
    return [dict(user=u, windows=windows.get(u, 0), slides=pieces[u])
            for u in sorted(pieces, key=lambda u: (-pieces[u], u))]


def table3(snapshots, datasets: int = 5, chs=CHS) -> list[dict]:
    """Changes per invocation (distinct timestamp with at least one change, the generator's first step)."""
    rows = []
    for ch in chs:
        pooled = []
        for seed in range(1, datasets + 1):
            counts = [len(v) for v in changes_per_invocation(ds_ch(snapshots, ch, seed)).values()]
            pooled += counts
            rows.append(_stats(f"DS-CH-{ch}", str(seed), counts))
        rows.append(_stats(f"DS-CH-{ch}", "all", pooled))
    return rows


def _stats(name, dataset, counts) -> dict:
    c = np.asarray(counts, float)
    q1, med, q3 = np.percentile(c, [25, 50, 75])
    return dict(dataset=name, seed=dataset, invocations=int(c.size), average=round(float(c.mean()), 2),
                median=float(med), q1=float(q1), q3=float(q3))


def plot(users, wrows, path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5))
    a.bar(range(len(users)), [u["windows"] for u in users], width=1.0)
    a.set_xlabel("user (by number of slides with a mention)")
    a.set_ylabel("windows with a mention (of 150)")
    a.set_title("(a) per user: a lower bound on mentions (the file holds presence)")
    real = [r for r in wrows if r["stream"] == "real"]
    k = [r["window"] for r in real]
    b.plot(k, [r["users"] for r in real], label="distinct users (real)")
    b.plot(k, [r["both"] for r in real], label="users in both slide pieces (real)")
    seeded = [r for r in wrows if r["stream"] == "seeded"]
    b.plot(k, [r["both"] for r in seeded], label=f"users in both pieces (the seeded stream, seed {STREAM_SEED})",
           linestyle="--", alpha=0.7)
    b.set_xlabel("window")
    b.set_ylabel("users")
    b.set_title("(b) per window")
    b.legend(fontsize=8)
    fig.suptitle("AcquaTop real stream (twitterMentionSlides.txt), Fig. 9 redrawn")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _write(rows, path) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--datasets", type=int, default=5)
    args = ap.parse_args(argv)
    stream = real_stream.read_slides()
    wrows = window_rows("real", 0, window_values(*real_stream.items(stream)))
    snapshots = load_snapshots()
    # the one seeded stream the quality experiments share across the five datasets
    ids, ts = mentions(list(snapshots), STREAM_SEED)
    wrows += window_rows("seeded", STREAM_SEED, window_values(*slide_presence(ids, ts, T0, OMEGA, BETA)))
    users = user_rows(stream)
    _write(wrows, args.results / "real-windows.csv")
    _write(users, args.results / "real-users.csv")
    _write(table3(snapshots, args.datasets), args.results / "table3.csv")
    plot(users, wrows, args.results / "fig9-real.png")
    for s in ("real", "seeded"):
        both = np.array([r["both"] for r in wrows if r["stream"] == s])
        n = np.array([r["users"] for r in wrows if r["stream"] == s])
        print(f"{s}: users per window mean {n.mean():.2f} ({n.min()}..{n.max()}); in both pieces "
              f"median {np.median(both):.0f}, mean {both.mean():.2f}, 10-90% "
              f"{np.percentile(both, 10):.0f}..{np.percentile(both, 90):.0f}, max {both.max()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
