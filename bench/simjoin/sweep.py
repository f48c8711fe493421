"""The k sweep and the ENRON-like runs of SWOOP Section 7 (issue 3): how the
stream rate, the candidates per set and the stock grow with k (Figure 14,
"minimal stock at k = 10: ~150 pairs, k = 1000: ~6e3"), and the engines on
long sets (ENRON: ~300 tokens per set).

    python -m streamspec.bench.simjoin.sweep --ks 10,100,1000 --window 10000 \
        --enron-windows 100,1000,10000 --enron-engines swoop,scase,base

- ``sweep_k.csv`` / ``.png``: ``--engines`` (default ``swoop``) on the
  TWEET-like stream at ``|W| = --window`` for each k of ``--ks``: sets/s,
  pre-candidates and candidates per set, stock size (at the end and the
  largest seen; the minimal stock of Section 6.1).
- ``enron.csv`` / ``.png``: ``--enron-engines`` on the ENRON-like stream at
  k = ``--enron-k`` for each window of ``--enron-windows`` (the baseline only
  up to ``throughput.MAX_WINDOW``, its stock is O(|W|^2)).

Every run is ``streamspec.bench.simjoin.throughput.measure`` (steady state after a full
window, CPU clock, ``--budget`` CPU seconds at most per run); ``--only k`` or
``--only enron`` runs one part.
"""
from __future__ import annotations

import argparse
import os

from streamspec.bench.simjoin.generators import enron_like, tweet_like
from streamspec.bench.simjoin.throughput import MAX_WINDOW, measure, write_csv


def _runs(generator: str, stream, engines: list[str], settings: list[tuple[int, int]], sets: int,
          budget: float) -> list[dict]:
    """``measure`` every engine at every ``(w, k)``, skipping windows an engine cannot hold."""
    rows = []
    for w, k in settings:
        for engine in engines:
            if w > MAX_WINDOW.get(engine, w):
                continue
            row = {"generator": generator, **measure(engine, stream, w, k, sets, budget)}
            print(row, flush=True)
            rows.append(row)
    return rows


def k_sweep(engines: list[str], ks: list[int], w: int, sets: int, budget: float, seed: int) -> list[dict]:
    return _runs("tweet", tweet_like(w + sets, seed=seed), engines, [(w, k) for k in ks], sets, budget)


def enron_runs(engines: list[str], windows: list[int], k: int, sets: int, budget: float,
               seed: int) -> list[dict]:
    return _runs("enron", enron_like(max(windows) + sets, seed=seed), engines,
                 [(w, k) for w in windows], sets, budget)


def _lines(ax, rows, x: str, y: str, label: str) -> None:
    for engine in dict.fromkeys(r["engine"] for r in rows):
        mine = [r for r in rows if r["engine"] == engine and r[y] != ""]
        if mine:
            ax.plot([r[x] for r in mine], [r[y] for r in mine], marker="o", label=engine)
    ax.set_xscale("log"), ax.set_yscale("log")
    ax.set_xlabel(x), ax.set_ylabel(label)


def plot_k(rows: list[dict], path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
    _lines(axes[0], rows, "k", "sets_per_s", "sets / s (CPU)")
    _lines(axes[1], rows, "k", "candidates_per_set", "candidates per set")
    _lines(axes[2], rows, "k", "max_stock", "largest stock (pairs)")
    for ax in axes:
        ax.legend(fontsize=8)
    fig.suptitle(f"simjoin k sweep, TWEET-like, |W| = {rows[0]['w']}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot_enron(rows: list[dict], path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    _lines(ax, rows, "w", "sets_per_s", "sets / s (CPU)")
    ax.set_xlabel("window size |W| (sets)")
    ax.set_title(f"simjoin stream rate, ENRON-like (~300 tokens/set), k={rows[0]['k']}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=("k", "enron"), default=None)
    ap.add_argument("--engines", default="swoop", help="engines of the k sweep")
    ap.add_argument("--ks", default="10,100,1000")
    ap.add_argument("--window", type=int, default=10_000, help="|W| of the k sweep")
    ap.add_argument("--sets", type=int, default=10_000, help="sets measured per k-sweep run at most")
    ap.add_argument("--enron-engines", default="swoop,scase,base")
    ap.add_argument("--enron-windows", default="100,1000,10000")
    ap.add_argument("--enron-k", type=int, default=10)
    ap.add_argument("--enron-sets", type=int, default=5_000, help="sets measured per ENRON run at most")
    ap.add_argument("--budget", type=float, default=10.0, help="CPU seconds per run at most")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.path.join("bench", "results", "simjoin"))
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    if args.only in (None, "k"):
        rows = k_sweep(args.engines.split(","), [int(x) for x in args.ks.split(",")], args.window,
                       args.sets, args.budget, args.seed)
        write_csv(rows, os.path.join(args.out, "sweep_k.csv"))
        plot_k(rows, os.path.join(args.out, "sweep_k.png"))
    if args.only in (None, "enron"):
        rows = enron_runs(args.enron_engines.split(","), [int(x) for x in args.enron_windows.split(",")],
                          args.enron_k, args.enron_sets, args.budget, args.seed)
        write_csv(rows, os.path.join(args.out, "enron.csv"))
        plot_enron(rows, os.path.join(args.out, "enron.png"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
