"""Figure 11 of the AcquaTop paper (§6.2): cumulative error over the 150 iterations.

The paper runs every policy for 150 evaluations at the default setting
(DS-CH-20, K 5, N 10, gamma 7) and plots, per iteration, the cumulative
nDCG and precision *error*: the sum over the iterations so far of
``1 - nDCG@K`` and ``1 - precision@K`` (paper §6, Fig. 11).  It shows WST
highest, AT-ASM lowest, the others indistinct before ~50 iterations.  As in
``experiment``, the five datasets share one stream and differ on the remote side.

``python -m streamspec.bench.topkjoin.fig11 [--stream real|seeded]`` writes
``fig11[-real].csv`` (engine, dataset, iteration, cumulative errors) and
``fig11[-real].png`` (median over the five datasets).  ``--stream seeded``
uses the plain seeded stream (true counts), ``real`` the paper's real stream
(the Java's values, ``real_stream``).
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from streamspec.bench.topkjoin.data import load_snapshots
from streamspec.bench.topkjoin.experiment import DEFAULT, ENGINES, WsjWbmStale, inputs, run, stream_items
from streamspec.bench.topkjoin.table6 import write
from streamspec.reference.topkjoin import evaluate
from streamspec.spec.topkjoin_quality import ndcg_at_k, precision_at_k

RESULTS = Path("bench", "results", "topkjoin")


def curves(stream: str, datasets: int) -> list[dict]:
    snapshots, k, rows = load_snapshots(), DEFAULT["k"], []
    ids, x, ts = items = stream_items(snapshots, stream == "real", stream)   # one stream, five datasets
    for seed in range(1, datasets + 1):
        params = inputs(DEFAULT, seed, snapshots, items)
        truth = evaluate(list(zip(ids.tolist(), x.tolist(), ts.tolist())), params)[:150]
        for engine in [e for e in ENGINES if e != WsjWbmStale.name]:
            answers, _ = run(engine, params, ids, x, ts)
            nd = np.cumsum([1 - ndcg_at_k(a.ids, o.ids, k) for a, o in zip(answers, truth)])
            pr = np.cumsum([1 - precision_at_k(a.ids, o.ids, k) for a, o in zip(answers, truth)])
            rows += [dict(engine=engine, dataset=seed, iteration=i + 1, ndcg_error=round(float(n), 4),
                          precision_error=round(float(p), 4)) for i, (n, p) in enumerate(zip(nd, pr))]
    return rows


def plot(rows, path, stream: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    engines = list(dict.fromkeys(r["engine"] for r in rows))
    for ax, metric in zip(axes, ("ndcg_error", "precision_error")):
        for i, engine in enumerate(engines):
            per: dict = {}
            for r in rows:
                if r["engine"] == engine:
                    per.setdefault(r["iteration"], []).append(r[metric])
            it = sorted(per)
            ax.plot(it, [np.median(per[j]) for j in it], label=engine, color=plt.cm.tab10(i % 10),
                    linestyle="--" if engine.startswith("w") else "-")
        ax.set_xlabel("iteration")
        ax.set_ylabel(f"median cumulative {'nDCG' if metric == 'ndcg_error' else 'precision'} error")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"AcquaTop cumulative error over iterations ({stream} stream, DS-CH-20, K 5, N 10, "
                 "gamma 7; Fig. 11)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stream", choices=("seeded", "real"), default="real")
    ap.add_argument("--datasets", type=int, default=5)
    ap.add_argument("--results", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    rows = curves(args.stream, args.datasets)
    stem = args.results / ("fig11-real" if args.stream == "real" else "fig11")
    write(rows, f"{stem}.csv")
    plot(rows, f"{stem}.png", args.stream)
    last = [r for r in rows if r["iteration"] == 150]
    for engine in dict.fromkeys(r["engine"] for r in last):
        v = [r for r in last if r["engine"] == engine]
        print(f"{engine:8} nDCG error {np.median([r['ndcg_error'] for r in v]):6.1f}  precision error "
              f"{np.median([r['precision_error'] for r in v]):6.1f}  (median at iteration 150)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
