"""SWOOP Section 7's figures that plot columns the throughput runs record, one command each
(PNG, and CSV of the plotted rows, under ``--out``, default ``bench/results/simjoin``):

    python -m streamspec.bench.simjoin.figures candidates   # Figure 12(h, i)
    python -m streamspec.bench.simjoin.figures ablations    # Figure 13(a) (measures)
    python -m streamspec.bench.simjoin.figures ablations-window   # Figure 13(b) (measures)
    python -m streamspec.bench.simjoin.figures stock        # Figure 15
    python -m streamspec.bench.simjoin.figures ksweep       # Figure 12(f)

- ``candidates``: pre-candidates and candidates per set against |W| (TWEET-like,
  k = 10) for swoop, scase, static and base, from ``throughput-tweet-k10.csv``
  (the newest full-window row of each engine and window).  The paper's
  definitions (Section 7.1): pre-candidates are the pairs an algorithm looks at
  (SWOOP: candidate-index items, Static: inverted-list items, SCase and Base:
  every window set), candidates those sent to the stock (Static: those that
  entered a run's running top-k, it has no stock).
- ``ablations``: the stream rate and pre-candidates against k (10, 100, 1000) at
  |W| = 1e4 for swoop and its ablations swoop-noindex, swoop-noincrement,
  swoop-noheap, measured here (``throughput.measure``: CPU clock, a full window,
  ``--sets`` sets or ``--budget`` CPU seconds per point, ``cut`` = ``sample``
  where the budget stopped it); ``--append`` keeps older rows
  (``fig13a-ablations-k.csv``), each with ``commit``, ``machine``, ``load``, ``label``.
- ``ablations-window``: the same against |W| (``--windows``, default 1e2..1e5) at
  k = 10 (Figure 13(b); ``fig13b-ablations-w.csv``); ``--fill-budget`` stops a
  window's fill (``cut`` = ``fill``: the window not full, the rate an upper bound):
  without the index, filling 1e5 sets costs minutes.
- ``stock``: the largest stock against |W| at k = 10 and k = 1000
  (``throughput-tweet-k10.csv``, ``throughput-tweet-k1000.csv``) for swoop, scase
  and base, beside the worst case of the minimal stock, k |W| (the paper's dotted
  lines), and against k at |W| = 1e4 (``fig13a-ablations-k.csv``'s swoop rows and
  base's rows at 1e4, whose stock does not depend on k).
- ``ksweep``: the rate against k (10, 100, 1000) at |W| = 1e3 for the four systems,
  from ``throughput-tweet-k<k>.csv`` (Figure 12(f), on FLICKR in the paper).
"""
from __future__ import annotations

import argparse
import os

from streamspec.bench.pipeline_util import commit, load, machine
from streamspec.bench.simjoin.generators import tweet_like
from streamspec.bench.simjoin.throughput import append_csv, measure, write_csv
from streamspec.bench.simjoin.throughput import read_csv as read

SYSTEMS = ("swoop", "scase", "static", "base")
ABLATIONS = ("swoop", "swoop-noindex", "swoop-noincrement", "swoop-noheap")


def newest(rows: list[dict], engines, want: str | None = None) -> list[dict]:
    """The last full-window row (``warm`` = ``w``) of each (engine, w) among ``engines``
    (with a number in column ``want``), sorted by engine order then window."""
    last = {}
    for r in rows:
        if r["engine"] in engines and r.get("warm") == r["w"] and r.get("join", "self") in ("self", "") \
                and (want is None or isinstance(r.get(want), (int, float))):
            last[(r["engine"], r["w"])] = r
    return sorted(last.values(), key=lambda r: (list(engines).index(r["engine"]), r["w"]))


def _axes(n: int, width: float = 5.0):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, n, figsize=(width * n, 3.8))
    return fig, axes


STYLE = {"scase": {"linestyle": "--", "marker": "s", "markersize": 8, "fillstyle": "none"}}


def _lines(ax, rows, x: str, y: str, engines) -> None:
    for engine in engines:
        mine = [r for r in rows if r["engine"] == engine and isinstance(r.get(y), (int, float)) and r[y] > 0]
        if mine:
            style = STYLE.get(engine, {})        # scase's lines lie on base's (h) and swoop's (i)
            ax.plot([r[x] for r in mine], [r[y] for r in mine], label=engine,
                    **{"marker": "o", **style})
            cut = [r for r in mine if r.get("cut")]
            if cut:
                ax.plot([r[x] for r in cut], [r[y] for r in cut], linestyle="none", marker="o",
                        markersize=11, fillstyle="none", color="black")
    ax.set_xscale("log"), ax.set_yscale("log")


KEEP = ("engine", "w", "k", "warm", "sets", "cut", "sets_per_s", "precandidates_per_set",
        "candidates_per_set", "max_stock", "k_w", "commit", "load", "label")


def _keep(rows: list[dict]) -> list[dict]:
    return [{c: r.get(c, "") for c in KEEP} for r in rows]


def candidates(out: str) -> list[dict]:
    rows = [r for r in read(os.path.join(out, "throughput-tweet-k10.csv"))      # base's rows before
            if r["engine"] != "base" or r.get("precandidates_per_set") not in (0, "")]  # it counted: 0
    rows = newest(rows, SYSTEMS, "precandidates_per_set")
    fig, (a, b) = _axes(2)
    _lines(a, rows, "w", "precandidates_per_set", SYSTEMS)
    _lines(b, rows, "w", "candidates_per_set", SYSTEMS)
    a.set_title("(h) pre-candidates per set"), b.set_title("(i) candidates per set")
    for ax in (a, b):
        ax.set_xlabel("window size |W| (sets)"), ax.legend(fontsize=8)
    fig.suptitle("Figure 12(h, i): TWEET-like, k = 10")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "fig12hi-candidates.png"), dpi=120)
    write_csv(_keep(rows), os.path.join(out, "fig12hi-candidates.csv"))
    return rows


def ablations(out: str, ks: list[int], w: int, sets: int, budget: float, seed: int, append: bool,
              label: str, fill_budget: float | None = None) -> list[dict]:
    """Figure 13(a): swoop and its ablations against k at |W| = ``w``."""
    return _ablations(out, [(w, k) for k in ks], ("w", w), "k", sets, budget, seed, append, label,
                      fill_budget, "fig13a-ablations-k",
                      f"Figure 13(a): SWOOP and its ablations against k, TWEET-like, |W| = {w}")


def ablations_window(out: str, windows: list[int], k: int, sets: int, budget: float, seed: int,
                     append: bool, label: str, fill_budget: float | None = None) -> list[dict]:
    """Figure 13(b): swoop and its ablations against |W| at ``k``."""
    return _ablations(out, [(w, k) for w in windows], ("k", k), "w", sets, budget, seed, append,
                      label, fill_budget, "fig13b-ablations-w",
                      f"Figure 13(b): SWOOP and its ablations against |W|, TWEET-like, k = {k}")


def _ablations(out: str, points: list[tuple[int, int]], fixed: tuple[str, int], x: str, sets: int,
               budget: float, seed: int, append: bool, label: str, fill_budget: float | None,
               name: str, title: str) -> list[dict]:
    """Measure each ablation at each ``(w, k)`` of ``points`` on one TWEET-like stream,
    keep the rows in ``name``.csv and plot the newest row per engine and ``x`` among
    the rows at ``fixed`` (column, value) in ``name``.png."""
    stream = tweet_like(max(w for w, _ in points) + sets, seed=seed)
    rows = []
    for w, k in points:
        for engine in ABLATIONS:
            load0 = load()
            row = measure(engine, stream, w, k, sets, budget, fill_budget=fill_budget)
            row.update(generator="tweet", commit=commit(), machine=machine(), load=f"{load0}-{load()}",
                       label=label)
            print(row, flush=True)
            rows.append(row)
    path = os.path.join(out, f"{name}.csv")
    if append:
        rows = append_csv(rows, path)
    else:
        write_csv(rows, path)
    last = {}
    for r in rows:
        if r[fixed[0]] == fixed[1]:
            last[(r["engine"], r[x])] = r
    rows = sorted(last.values(), key=lambda r: (ABLATIONS.index(r["engine"]), r[x]))
    fig, (a, b) = _axes(2)
    _lines(a, rows, x, "sets_per_s", ABLATIONS)
    _lines(b, rows, x, "precandidates_per_set", ABLATIONS)
    a.set_ylabel("sets / s (CPU)"), b.set_ylabel("pre-candidates per set")
    for ax in (a, b):
        ax.set_xlabel("k" if x == "k" else "window size |W| (sets)"), ax.legend(fontsize=8)
    fig.suptitle(f"{title} (circled: time budget hit)", fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(out, f"{name}.png"), dpi=120)
    return rows


def stock(out: str) -> list[dict]:
    by_w = []
    for k in (10, 1000):
        found = newest(read(os.path.join(out, f"throughput-tweet-k{k}.csv")), ("swoop", "scase", "base"),
                       "max_stock")
        by_w += [r for r in found if r["max_stock"] > 0]
    abl = [r for r in read(os.path.join(out, "fig13a-ablations-k.csv")) if r["engine"] == "swoop"]
    by_k = list({r["k"]: r for r in abl if isinstance(r.get("max_stock"), (int, float))}.values())
    by_k += [r for r in by_w if r["engine"] == "base" and r["w"] == 10_000]
    fig, (a, b) = _axes(2, 5.5)
    colors = {}
    for k, style in ((10, "-"), (1000, "--")):
        for engine in ("swoop", "scase", "base"):
            mine = [r for r in by_w if r["engine"] == engine and r["k"] == k]
            if mine:
                line = a.plot([r["w"] for r in mine], [r["max_stock"] for r in mine], marker="o",
                              linestyle=style, color=colors.get(engine), label=f"{engine}, k = {k}")
                colors[engine] = line[0].get_color()
        ws = sorted({r["w"] for r in by_w if r["k"] == k})
        if ws:
            a.plot(ws, [k * x for x in ws], color="grey", linestyle=":" if k == 10 else "-.",
                   label=f"k |W|, k = {k} (worst case)")
    a.set_xscale("log"), a.set_yscale("log")
    a.set_xlabel("window size |W| (sets)"), a.set_ylabel("largest stock (pairs)")
    a.set_title("(a) against |W|"), a.legend(fontsize=7)
    for engine in ("swoop", "base"):
        mine = sorted((r for r in by_k if r["engine"] == engine), key=lambda r: r["k"])
        if mine:
            b.plot([r["k"] for r in mine], [r["max_stock"] for r in mine], marker="o", label=engine,
                   color=colors.get(engine))
    ks = sorted({r["k"] for r in by_k})
    if ks:
        b.plot(ks, [k * 10_000 for k in ks], color="grey", linestyle=":", label="k |W| (worst case)")
    b.plot([10, 1000], [150, 6000], marker="*", markersize=12, linestyle="none", color="red",
           label="paper (FLICKR): 1.5e2, 6e3")
    b.set_xscale("log"), b.set_yscale("log")
    b.set_xlabel("k"), b.set_title("(b) against k, |W| = 1e4"), b.legend(fontsize=7)
    fig.suptitle("Figure 15: largest stock, TWEET-like")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "fig15-stock.png"), dpi=120)
    rows = _keep(by_w) + _keep(by_k)
    if rows:
        write_csv(rows, os.path.join(out, "fig15-stock.csv"))
    return rows


def ksweep(out: str, w: int = 1000) -> list[dict]:
    """Figure 12(f): the rate against k at ``w``, the four systems, from
    ``throughput-tweet-k<k>.csv`` for k = 10, 100, 1000 (newest full-window rows)."""
    rows = []
    for k in (10, 100, 1000):
        rows += [r for r in newest(read(os.path.join(out, f"throughput-tweet-k{k}.csv")), SYSTEMS,
                                   "sets_per_s") if r["w"] == w]
    fig, ax = _axes(1, 6.0)
    _lines(ax, rows, "k", "sets_per_s", SYSTEMS)
    ax.set_xlabel("k"), ax.set_ylabel("sets / s (CPU)"), ax.legend(fontsize=8)
    ax.set_title(f"Figure 12(f): TWEET-like, |W| = {w} (circled: time budget hit)", fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "fig12f-k.png"), dpi=120)
    write_csv(_keep(rows), os.path.join(out, "fig12f-k.csv"))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("figure", choices=("candidates", "ablations", "ablations-window", "stock", "ksweep"))
    ap.add_argument("--out", default=os.path.join("bench", "results", "simjoin"))
    ap.add_argument("--ks", default="10,100,1000", help="ablations: the k values")
    ap.add_argument("--window", type=int, default=10_000, help="ablations: |W|")
    ap.add_argument("--windows", default="100,1000,10000,100000", help="ablations-window: the |W| values")
    ap.add_argument("--k", type=int, default=10, help="ablations-window: k")
    ap.add_argument("--fill-budget", type=float, default=None,
                    help="ablations, ablations-window: CPU seconds to fill a window at most "
                         "(then cut = fill: the window not full, the rate an upper bound)")
    ap.add_argument("--sets", type=int, default=20_000, help="ablations: sets measured per point at most")
    ap.add_argument("--budget", type=float, default=20.0, help="ablations: CPU seconds per point at most")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--append", action="store_true", help="ablations: add the rows to the existing CSV")
    ap.add_argument("--label", default="", help="ablations: a note stored in each row")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    if args.figure == "candidates":
        rows = candidates(args.out)
    elif args.figure == "ablations":
        rows = ablations(args.out, [int(k) for k in args.ks.split(",")], args.window, args.sets,
                         args.budget, args.seed, args.append, args.label, args.fill_budget)
    elif args.figure == "ablations-window":
        rows = ablations_window(args.out, [int(w) for w in args.windows.split(",")], args.k,
                                args.sets, args.budget, args.seed, args.append, args.label,
                                args.fill_budget)
    elif args.figure == "ksweep":
        rows = ksweep(args.out)
    else:
        rows = stock(args.out)
    for r in rows:
        print({c: r.get(c, "") for c in ("engine", "w", "k", "sets_per_s", "precandidates_per_set",
                                          "candidates_per_set", "max_stock", "cut")})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
