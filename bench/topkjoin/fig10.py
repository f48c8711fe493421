"""Figure 10 of the AcquaTop paper (§6.1): the distribution of changes in the DS-CH-x datasets.

The paper (§6.1) builds five DS-CH-x datasets per CH in {5, 10, 20, 40, 80}
from the follower snapshots, states that "each generated dataset has normal
distribution of the number of changes", with different means but no
significant difference between variances, and draws the distribution for three
of them in Figure 10 (caption: "Distribution of number of users per number of
changes"; the text does not say which three).  Table 3 gives their average,
median and quartiles of changes per invocation.

This module draws the same distributions from the data Table 3 is computed
from (``real_stats.table3``: ``data.ds_ch(snapshots, ch, seed)`` for seeds
1..5; an invocation is a snapshot time with at least one change, the
generator's first step), for all five CH, in the two readings the paper
allows: (a) per invocation, the number of users whose value changed (the
text's "number of changes in each invocation", Table 3's statistic) and
(b) per user, the number of changes over the whole run (the caption's
"number of users per number of changes").  It tests the paper's two claims:
normality of (a) (D'Agostino-Pearson, ``scipy.stats.normaltest``, with
skewness and excess kurtosis) and equal variances (Levene's test, median
centred, across the five datasets of a CH and across the five CH).

``python -m streamspec.bench.topkjoin.fig10`` writes, under
``bench/results/topkjoin/``: ``fig10.csv`` (histograms: kind
``per_invocation`` or ``per_user``, CH, dataset, changes, count),
``fig10-summary.csv`` (per kind, CH and dataset, and pooled over the five
datasets: sample size, mean, sd, median, quartiles, skewness, excess kurtosis,
normality p, Levene p, and Table 3's values beside ours for the per-invocation
rows) and ``fig10.png``.  No engine runs (~5 s with the imports).
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from streamspec.bench.topkjoin.data import changes_per_invocation, ds_ch, load_snapshots
from streamspec.bench.topkjoin.table6 import write

RESULTS = Path("bench", "results", "topkjoin")
CHS = (5, 10, 20, 40, 80)
# Table 3 (paper §6.1): CH -> (average, median, 1st quartile, 3rd quartile) of changes per invocation
PAPER_TABLE3 = {80: (79.97, 94, 77, 96), 40: (40.33, 47, 40, 48), 20: (20.45, 23, 20.5, 24),
                10: (10.33, 12, 10, 12), 5: (5.53, 6, 5, 6)}


def counts(snapshots, ch: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(per invocation, per user)`` change counts of dataset ``seed`` of DS-CH-``ch``.

    Per invocation: the users changed at each snapshot time with at least one change (Table 3's
    statistic, as ``real_stats.table3`` counts it); per user: the changes over the run, one entry
    per user of the snapshots (0 for a user that never changes)."""
    series = ds_ch(snapshots, ch, seed)
    per_invocation = changes_per_invocation(series)
    inv = np.array([len(per_invocation[t]) for t in sorted(per_invocation)], np.int64)
    user = np.array([int(np.count_nonzero(v[1:] != v[:-1])) for _, v in series.values()], np.int64)
    return inv, user


def histogram(values: np.ndarray) -> list[tuple[int, int]]:
    u, c = np.unique(values, return_counts=True)
    return list(zip(u.tolist(), c.tolist()))


def describe(values: np.ndarray) -> dict:
    """Location, spread and shape of one sample of change counts, and its normality test."""
    from scipy import stats
    v = np.asarray(values, float)
    q1, med, q3 = np.percentile(v, [25, 50, 75])
    normal_p = float(stats.normaltest(v).pvalue) if v.size >= 20 and np.ptp(v) > 0 else float("nan")
    return dict(n=int(v.size), mean=round(float(v.mean()), 2), sd=round(float(v.std(ddof=1)), 3),
                median=float(med), q1=float(q1), q3=float(q3),
                skewness=round(float(stats.skew(v)), 3), excess_kurtosis=round(float(stats.kurtosis(v)), 3),
                normal_p=float(f"{normal_p:.3g}"))


def levene_p(samples) -> float:
    from scipy import stats
    return float(f"{stats.levene(*samples, center='median').pvalue:.3g}")


def measure(snapshots, chs=CHS, datasets: int = 5) -> tuple[list[dict], list[dict]]:
    """``(histogram rows, summary rows)`` (module docstring); summary rows per kind, CH and dataset,
    pooled (``seed`` "all", with Levene's p across the datasets), and per kind one ``DS-CH-*`` row
    with Levene's p across the five CH pools."""
    hist, summary = [], []
    pools: dict = {"per_invocation": {}, "per_user": {}}
    for ch in chs:
        per_seed: dict = {"per_invocation": [], "per_user": []}
        for seed in range(1, datasets + 1):
            for kind, values in zip(("per_invocation", "per_user"), counts(snapshots, ch, seed)):
                per_seed[kind].append(values)
                hist += [dict(kind=kind, ch=ch, dataset=seed, changes=c, count=n) for c, n in histogram(values)]
        paper = PAPER_TABLE3.get(ch, ("", "", "", ""))
        for kind, samples in per_seed.items():
            table3 = paper if kind == "per_invocation" else ("", "", "", "")
            extra = dict(paper_average=table3[0], paper_median=table3[1], paper_q1=table3[2], paper_q3=table3[3])
            for seed, values in enumerate(samples, 1):
                summary.append(dict(kind=kind, dataset=f"DS-CH-{ch}", seed=str(seed), **describe(values),
                                    levene_p="", **extra))
            pools[kind][ch] = np.concatenate(samples)
            summary.append(dict(kind=kind, dataset=f"DS-CH-{ch}", seed="all", **describe(pools[kind][ch]),
                                levene_p=levene_p(samples) if datasets > 1 else "", **extra))
    if len(chs) > 1:     # the paper's "no significant difference between variances" across the CH
        for kind, by_ch in pools.items():
            # only the test: the mixture of five CH has no Table 3 row
            summary.append({**{k: "" for k in summary[-1]}, "kind": kind, "dataset": "DS-CH-*", "seed": "all",
                            "n": sum(p.size for p in by_ch.values()), "levene_p": levene_p(list(by_ch.values()))})
    return hist, summary


def plot(hist, summary, path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    chs = sorted({r["ch"] for r in hist})
    fig, axes = plt.subplots(2, len(chs), figsize=(3.2 * len(chs), 6.5), squeeze=False)
    for j, ch in enumerate(chs):
        for i, kind in enumerate(("per_invocation", "per_user")):
            ax = axes[i][j]
            per: dict = {}
            for r in hist:
                if r["kind"] == kind and r["ch"] == ch:
                    per[r["changes"]] = per.get(r["changes"], 0) + r["count"]
            x = sorted(per)
            ax.bar(x, [per[c] for c in x], width=1.0, color="tab:blue" if kind == "per_invocation" else "tab:green")
            if kind == "per_invocation":
                s = next(r for r in summary if (r["kind"], r["dataset"], r["seed"]) == (kind, f"DS-CH-{ch}", "all"))
                for v, style, lab in ((s["mean"], "-", "mean"), (s["median"], "--", "median")):
                    ax.axvline(v, color="k", linestyle=style, linewidth=1, label=f"ours {lab} {v:g}")
                if ch in PAPER_TABLE3:
                    pm, pmed = PAPER_TABLE3[ch][:2]
                    ax.axvline(pm, color="tab:red", linestyle="-", linewidth=1, label=f"paper mean {pm:g}")
                    ax.axvline(pmed, color="tab:red", linestyle="--", linewidth=1, label=f"paper median {pmed:g}")
                ax.set_title(f"DS-CH-{ch}: skew {s['skewness']:.2f}, sd {s['sd']:.1f}", fontsize=9)
                ax.legend(fontsize=6, loc="upper left")
                ax.set_xlabel("users changed in an invocation")
                if j == 0:
                    ax.set_ylabel("invocations (5 datasets)")
            else:
                s = next(r for r in summary if (r["kind"], r["dataset"], r["seed"]) == (kind, f"DS-CH-{ch}", "all"))
                ax.set_title(f"skew {s['skewness']:.2f}, sd {s['sd']:.1f}, normal p {s['normal_p']:.2g}", fontsize=9)
                ax.set_xlabel("changes of a user over the run")
                if j == 0:
                    ax.set_ylabel("users (5 datasets)")
    fig.suptitle("AcquaTop Fig. 10 redrawn: (top) changes per invocation, Table 3's statistic; "
                 "(bottom) changes per user", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--datasets", type=int, default=5)
    args = ap.parse_args(argv)
    hist, summary = measure(load_snapshots(), CHS, args.datasets)
    write(hist, args.results / "fig10.csv")
    write(summary, args.results / "fig10-summary.csv")
    plot(hist, summary, args.results / "fig10.png")
    for r in summary:
        if r["dataset"] == "DS-CH-*":
            print(f"{r['kind']}: Levene across the five CH: p {r['levene_p']}")
        elif r["seed"] == "all":
            print(f"{r['kind']:14} {r['dataset']:8} n {r['n']:5} mean {r['mean']:6.2f} sd {r['sd']:7.3f} median "
                  f"{r['median']:5g} Q1 {r['q1']:5g} Q3 {r['q3']:5g} skew {r['skewness']:6.2f} "
                  f"kurt {r['excess_kurtosis']:6.2f} normal p {r['normal_p']:.3g} Levene p {r['levene_p']}  "
                  f"paper {r['paper_average']} / {r['paper_median']} / {r['paper_q1']} / {r['paper_q3']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
