"""Quality experiments of the AcquaTop paper (§6, Figures 12-15, Table 6), redrawn.

``python -m streamspec.bench.topkjoin.experiment [budget|ch|k|n|all] [--datasets 5] [--java-compat]
[--stream seeded|real] [--budget G]`` writes ``bench/results/topkjoin/<experiment>[-java|-real][-bG].csv`` (one row per engine,
parameter value and dataset: cumulative nDCG@K and precision@K over 150
evaluations, plus the diagnostic ``ndcg_java``, the authors' order-insensitive
variant of nDCG, and the fetches spent) and ``<experiment>.png``
(median over the datasets with min-max error bars), and prints Table 6's
comparison (relative difference of the median cumulative metrics,
AT-TSM/AT-BSM against WSJ-WBM/WSJ-LRU, max/min over the grid, and the same
against ``wsj-wbm-stale``).  ``wsj-wbm-stale`` is a diagnostic, not a
registered engine: the paper's literal WBM (Fig. 5), which refreshes possibly
stale candidates only and may leave budget unused (``policies.wbm_stale``);
``wsj-wbm`` fills the budget with fresh candidates once the possibly stale
ones are elected, as the authors' Java does and as exactness with an
unlimited budget requires.  Why our margins differ from Table 6:
``bench/results/topkjoin/README.md``.

Setting (paper §6): omega 100 s, beta 60 s, 150
evaluations, K 5, N 10, gamma 7, CH 20; mention counts (``sum`` of x = 1);
weights 0.7/0.3; the stream range is the min/max per-window mention count and
the remote range the min/max of the dataset (computed once per dataset, as
the authors did); dataset ``i`` of CH ``x`` is ``ds_ch(x, seed=i)`` joined
with the one seeded mention stream (``data.STREAM_SEED``), the same for the
five datasets and every CH, as in the paper (§6.1: one collected stream; the
DS-CH-x datasets differ on the remote side only; issue 15), so the error bars
show the spread over remote datasets, not over streams; WSJ-RND's generator is
seeded with ``i``; the replica starts from each user's first
snapshot (``data.timeline_rows``), as in the authors' code.  ``--budget G``
sets the default budget of the ch/k/n sweeps (the authors' committed code ran
K and N at 15; files get the suffix ``-bG``).

``--java-compat``: the authors' Java setting as far as it is known
(``streamspec.bench.topkjoin.java_compat``): the mention stream is rewritten so the
streaming value is the Java's {1, 2} slide-presence count (so the stream
range becomes 1..2), and two diagnostic engines join the run,
``wsj-wbm-java`` (the Java's WBM ranker: L in {-1, 0}, change rates from the
whole table, never-changing users skipped, filler refreshes not applied to
arrivals) and ``at-tsm-java`` (gamma - 1 refreshes); the Java's nDCG is the
``ndcg_java`` column as always.  Engines, oracle and metrics are unchanged;
files get the suffix ``-java``.

``--stream real`` (issue 15): the paper's real mention stream instead of the
seeded one, as the authors' Java saw it (``real_stream``: the file carries
the Java's {1, 2} per-window values, so this is the ``--java-compat``
setting with its two diagnostic engines, without the rewrite); as with the
seeded stream, one stream for the five datasets of each CH (only the remote
side, the regenerated DS-CH-x, differs between datasets); files get the suffix
``-real``.  Every run also writes ``<experiment><suffix>-margins.csv``, the
relative differences ``table6`` summarises.

``--fetch-stats`` runs no sweep: at the default setting (and ``--budget``) it
writes ``fetch-stats<suffix>.csv``, per engine and dataset the fetches, those
that found a value other than the replica's, and the distinct keys fetched.
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path

import attrs
import numpy as np

from streamspec.bench.topkjoin.data import (BETA, OMEGA, STREAM_SEED, T0, ds_ch, load_snapshots, mentions,
                                            timeline_rows)
from streamspec.bench.topkjoin.java_compat import DIAGNOSTICS as JAVA_DIAGNOSTICS, slide_presence
from streamspec.bench.topkjoin import real_stream, table6 as t6
from streamspec.engines.topkjoin import policies
from streamspec.engines.topkjoin.acquatop import WsjWbmEngine
from streamspec.engines.topkjoin.window_aggregates import SlotAggregates
from streamspec.reference.topkjoin import evaluate
from streamspec.spec.registry import Registry
from streamspec.spec.topkjoin import ItemBatch, Params
from streamspec.spec.topkjoin_quality import quality
from streamspec.spec.topkjoin_remote import TimelineDataset

RESULTS = Path("bench", "results", "topkjoin")   # relative to the working directory (the checkout)
ENGINES = ("at-tsm", "at-bsm", "at-asm", "at-lru", "at-wbm", "wst", "wsj-rnd", "wsj-lru", "wsj-wbm",
           "wsj-wbm-stale")


class WsjWbmStale(WsjWbmEngine):
    """Diagnostic: WSJ-WBM electing possibly stale candidates only (the paper's Fig. 5)."""

    name = "wsj-wbm-stale"
    policy = staticmethod(policies.wbm_stale)


def engine_class(name: str):
    if name == WsjWbmStale.name:
        return WsjWbmStale
    return JAVA_DIAGNOSTICS.get(name) or Registry.get("topkjoin", name)


def engines(java_compat: bool) -> tuple:
    return ENGINES + tuple(JAVA_DIAGNOSTICS) if java_compat else ENGINES


def ndcg_java(answer, oracle, k: int) -> float:
    """The Java's "nDCG": relevance by the *answer's* rank for ids in the oracle's
    top k, so any order of the right set scores 1."""
    o = list(oracle)[:k]
    if not o:
        return 1.0 if not answer else 0.0
    gain = [(2.0 ** (len(o) - r) - 1) / np.log2(r + 2) for r in range(len(o))]
    return sum(gain[r] for r, a in enumerate(list(answer)[:len(o)]) if a in o) / sum(gain)
DEFAULT = dict(budget=7, ch=20, k=5, n=10)
GRIDS = {"budget": [1, 3, 5, 7, 10, 15, 20, 25, 30], "ch": [5, 10, 20, 40, 80],
         "k": [2, 5, 7, 10, 15, 20, 30], "n": [0, 5, 10, 20, 30, 40, 50]}


def stream_range(ids, x, ts) -> tuple[float, float]:
    aggs = SlotAggregates(T0, OMEGA, BETA, "sum")
    aggs.ingest(np.unique(ids, return_inverse=True)[1], x, ts)  # dense ids
    counts = [aggs.window(i)[1] for i in range(150)]
    vals = np.concatenate([c for c in counts if c.size])
    return float(vals.min()), float(max(vals.max(), vals.min() + 1))


_REAL: dict = {}


def real_items():
    """The real stream's items (read once per process: every dataset shares the stream)."""
    if not _REAL:
        _REAL["items"] = real_stream.load()
    return _REAL["items"]


def stream_items(snapshots, java_compat: bool = False, stream: str = "seeded"):
    """``(ids, x, ts)`` of the one mention stream of the experiments, cut to the 150 evaluated windows.

    Seeded: ``mentions`` of seed ``STREAM_SEED`` over the snapshot users (the keys of DS-CH-x),
    x = 1 per mention, or the Java's slide-presence rewrite with ``java_compat``; real: the paper's
    stream, whose values already are the Java's.  It does not depend on the dataset (§6.1)."""
    end = T0 + OMEGA + 149 * BETA              # the 150 evaluated windows
    if stream == "real":
        ids, x, ts = real_items()
        keep = ts < end
        return ids[keep], x[keep], ts[keep]
    ids, ts = mentions(list(snapshots), STREAM_SEED)
    keep = ts < end
    ids, ts = ids[keep], ts[keep]
    if java_compat:
        return slide_presence(ids, ts, T0, OMEGA, BETA)
    return ids, np.ones(ids.size), ts


def remote_dataset(ch: int, seed: int, snapshots) -> TimelineDataset:
    """Dataset ``seed`` of DS-CH-``ch`` as the replica's timeline (first snapshots at t0 - 1)."""
    return TimelineDataset.from_rows(timeline_rows(ds_ch(snapshots, ch, seed)))


def dataset(ch: int, seed: int, snapshots, java_compat: bool = False, stream: str = "seeded", items=None):
    """``(remote, ids, x, ts)`` of dataset ``seed`` of DS-CH-``ch``: its remote side and the one
    stream (``stream_items``; ``items`` passes it in when already drawn)."""
    ids, x, ts = items if items is not None else stream_items(snapshots, java_compat, stream)
    return remote_dataset(ch, seed, snapshots), ids, x, ts


def inputs(setting: dict, seed: int, snapshots, items) -> Params:
    """The query parameters of one run: ``setting`` (budget, ch, k, n) on dataset ``seed`` of
    DS-CH-``setting["ch"]`` joined with the stream ``items``; the stream range is the stream's
    (the same for every dataset), the remote range the dataset's (computed once, as the authors)."""
    remote = remote_dataset(setting["ch"], seed, snapshots)
    return Params(omega=OMEGA, beta=BETA, k=setting["k"], n=setting["n"], budget=setting["budget"],
                  t0=T0, remote=remote, stream_range=stream_range(*items),
                  remote_range=remote.value_range(), seed=seed)


def run(engine: str, params: Params, ids, x, ts):
    """The first 150 evaluations and the fetches they spent."""
    e = engine_class(engine)(params)
    out = list(e.process(ItemBatch(ids, x, ts))) + e.flush()
    return out[:150], int(sum(e.fetcher.per_evaluation[:150]))


class RecordingRemote:
    """A remote dataset that records the engine's fetches (the bulk load at ``t0`` is not one):
    how many found a value different from the replica's (its last load or fetch of the key), and
    which keys were fetched.  Diagnostic of the results README ("Why our margins are smaller")."""

    def __init__(self, inner, t0: int = T0):
        self.inner, self.t0 = inner, t0
        self.last: dict = {}
        self.log: list = []              # (key, tau, changed) per fetch

    def value(self, key, tau: int) -> float:
        v = self.inner.value(key, tau)
        if tau != self.t0:
            self.log.append((key, tau, v != self.last.get(key)))
        self.last[key] = v
        return v

    def value_range(self) -> tuple[float, float]:
        return self.inner.value_range()


def fetch_stats(datasets: int, snapshots, java_compat: bool = False, default: dict = DEFAULT,
                stream: str = "seeded", engines_: tuple = ("at-tsm", "at-bsm", "wsj-wbm", "wsj-lru")):
    """Per (engine, dataset) at the ``default`` setting: fetches, fetches that found a changed value,
    distinct keys fetched (the refresh statistics of the results README)."""
    rows = []
    items = stream_items(snapshots, java_compat, stream)
    for seed in range(1, datasets + 1):
        params = inputs(default, seed, snapshots, items)
        for engine in engines_:
            rec = RecordingRemote(params.remote)
            _, fetches = run(engine, attrs.evolve(params, remote=rec), *items)
            log = [r for r in rec.log if r[1] <= T0 + OMEGA + 149 * BETA]   # the 150 evaluations
            assert len(log) == fetches, (engine, len(log), fetches)
            rows.append(dict(engine=engine, dataset=seed, fetches=fetches,
                             changed=sum(r[2] for r in log), distinct_keys=len({r[0] for r in log})))
    return rows


def experiment(name: str, datasets: int, snapshots, java_compat: bool = False,
               default: dict = DEFAULT, stream: str = "seeded") -> list[dict]:
    rows = []
    ids, x, ts = items = stream_items(snapshots, java_compat, stream)   # once: every dataset's stream
    for value in GRIDS[name]:
        setting = default | {name: value}
        for seed in range(1, datasets + 1):
            params = inputs(setting, seed, snapshots, items)
            truth = evaluate(list(zip(ids.tolist(), x.tolist(), ts.tolist())), params)[:150]
            for engine in engines(java_compat):
                answers, fetches = run(engine, params, ids, x, ts)
                q = quality(answers, truth, params.k)
                nd_java = sum(ndcg_java(a.ids, o.ids, params.k) for a, o in zip(answers, truth))
                rows.append(dict(experiment=name, value=value, dataset=seed, engine=engine,
                                 ndcg=q.ndcg, precision=q.precision, evaluations=q.evaluations,
                                 ndcg_java=nd_java, fetches=fetches))
        print(f"{name}={value} done", flush=True)
    return rows


def medians(rows, metric):
    out: dict = {}
    for r in rows:
        out.setdefault((r["engine"], r["value"]), []).append(r[metric])
    return {k: (float(np.median(v)), float(np.min(v)), float(np.max(v))) for k, v in out.items()}


def table6(rows, name) -> list[str]:
    lines = []
    present = {r["engine"] for r in rows}
    pairs = [(o, t) for o in ("at-tsm", "at-bsm", "at-tsm-java")
             for t in ("wsj-wbm", "wsj-lru", "wsj-wbm-stale", "wsj-wbm-java") if {o, t} <= present]
    for metric in ("ndcg", "precision", "ndcg_java"):
        med = medians(rows, metric)
        for ours, theirs in pairs:
            diffs = [100 * (med[(ours, v)][0] - med[(theirs, v)][0]) / med[(theirs, v)][0]
                     for v in GRIDS[name]]
            lines.append(f"{name:6} {metric:9} {ours} vs {theirs}: max {max(diffs):6.2f}% "
                         f"min {min(diffs):6.2f}%  ({', '.join(f'{d:.1f}' for d in diffs)})")
    return lines


def median_table(rows, name) -> list[str]:
    """Markdown: the median cumulative nDCG and precision of the main engines per grid value."""
    present = [e for e in ("at-tsm", "at-bsm", "wsj-wbm", "wsj-lru", "at-tsm-java", "wsj-wbm-java",
                           "wst", "at-asm") if any(r["engine"] == e for r in rows)]
    med = {m: medians(rows, m) for m in ("ndcg", "precision")}
    head = [name] + [f"{e} {m}" for m in ("nDCG", "prec") for e in present]
    lines = ["| " + " | ".join(head) + " |", "|" + " ---: |" * len(head)]
    for v in GRIDS[name]:
        cells = [str(v)] + [f"{med[m][(e, v)][0]:.1f}" for m in ("ndcg", "precision") for e in present]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def plot(rows, name, path, stream: str = "seeded stream"):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, metric in zip(axes, ("ndcg", "precision")):
        med = medians(rows, metric)
        # the diagnostic wsj-wbm-stale is in the CSV only; the Java's two are plotted in -java runs
        shown = [e for e in dict.fromkeys(r["engine"] for r in rows) if e != WsjWbmStale.name]
        for i, engine in enumerate(shown):
            xs = GRIDS[name]
            m = np.array([med[(engine, v)] for v in xs])
            ax.errorbar(xs, m[:, 0], yerr=[m[:, 0] - m[:, 1], m[:, 2] - m[:, 0]], label=engine,
                        marker="o", capsize=3, linestyle="--" if engine.startswith(("w", "m")) else "-",
                        color=plt.cm.tab20(i % 20))   # 11-12 engines: the default cycle repeats at 10
        ax.set_xlabel(name if name != "ch" else "CH (changes per invocation)")
        ax.set_ylabel(f"median cumulative {'nDCG@K' if metric == 'ndcg' else 'precision@K'}")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"AcquaTop quality against {name} ({stream}, 150 evaluations, median of datasets)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def read_rows(path) -> list[dict]:
    """An experiment CSV back as rows (numbers as numbers)."""
    with open(path, newline="") as f:
        return [r | {k: int(r[k]) for k in ("value", "dataset")}
                | {k: float(r[k]) for k in ("ndcg", "precision", "ndcg_java")} for r in csv.DictReader(f)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("which", nargs="?", default="budget", choices=[*GRIDS, "all"])
    ap.add_argument("--datasets", type=int, default=5)
    ap.add_argument("--java-compat", action="store_true",
                    help="the authors' Java setting: {1,2} mention values, the Java's WBM and AT-TSM "
                         "as extra diagnostic engines (streamspec.bench.topkjoin.java_compat)")
    ap.add_argument("--stream", choices=("seeded", "real"), default="seeded",
                    help="real: the paper's real stream (twitterMentionSlides.txt; implies "
                         "--java-compat, whose values it carries)")
    ap.add_argument("--budget", type=int, default=DEFAULT["budget"],
                    help="default budget of the ch/k/n sweeps")
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--replot", action="store_true",
                    help="redraw the PNGs (and margins) from the existing CSVs, no engine runs")
    ap.add_argument("--fetch-stats", action="store_true",
                    help="instead of the sweeps: fetches, changed-value fetches and distinct keys "
                         "fetched per engine and dataset at the default setting (fetch-stats*.csv)")
    args = ap.parse_args(argv)
    args.results.mkdir(parents=True, exist_ok=True)
    snapshots = load_snapshots()
    default = DEFAULT | {"budget": args.budget}
    real = args.stream == "real"
    args.java_compat = args.java_compat or real
    suffix = ("-real" if real else "-java" if args.java_compat else "") + (
        f"-b{args.budget}" if args.budget != DEFAULT["budget"] else "")
    if args.fetch_stats:
        rows = fetch_stats(args.datasets, snapshots, args.java_compat, default, args.stream)
        t6.write(rows, args.results / f"fetch-stats{suffix}.csv")
        for engine in dict.fromkeys(r["engine"] for r in rows):
            rs = [r for r in rows if r["engine"] == engine]
            print(f"{engine:8} changed {100 * np.median([r['changed'] / r['fetches'] for r in rs]):5.1f}% "
                  f"of {np.median([r['fetches'] for r in rs]):.0f} fetches, "
                  f"{np.median([r['distinct_keys'] for r in rs]):.0f} distinct keys (medians)")
        return 0
    for name in (GRIDS if args.which == "all" else [args.which]):
        stem = args.results / f"{name}{suffix}"
        if args.replot:
            rows = read_rows(f"{stem}.csv")
        else:
            rows = experiment(name, args.datasets, snapshots, args.java_compat, default, args.stream)
            with open(f"{stem}.csv", "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0]))
                w.writeheader()
                w.writerows(rows)
        plot(rows, name, f"{stem}.png", "real stream" if real else "seeded stream")
        t6.write(t6.margins(rows, name, GRIDS[name], medians), f"{stem}-margins.csv")
        print("\n".join(table6(rows, name) + median_table(rows, name)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
