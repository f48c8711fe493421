"""Stream rate of the simjoin engines against the window size and k (SWOOP
Section 7.2, Figures 12-13): sets per second of CPU time in steady state,
pre-candidates and candidates per set, stock size.

    python -m streamspec.bench.simjoin.throughput --windows 100,1000,10000 --k 10 \
        --engines swoop,swoop-noindex,swoop-noincrement,swoop-noheap,scase,base

Each run generates a seeded stream (``--generator tweet|enron|dblp``), fills
the window with ``w`` sets (one set per time unit, so |W| = w), then measures
``--sets`` more sets fed in batches of 10,000 (``RecordBatch``), on the CPU
clock (``time.process_time``) so a shared machine's load does not count.  A
run stops early after ``--budget`` CPU seconds (slow baselines); its rate is
then over the sets it did.  Writes ``throughput-<generator>-k<k>.csv`` and
``.png`` under ``--out`` (default ``bench/results/simjoin``).

``--join rs`` runs the R-S join of the paper's motivating example (Section 1: the
most similar tweets of two cities): the stream's sets get a side, R or S, by a
seeded fair coin (``rs_sides``), so a retweet-like copy lands in the other city
half the time, as a topic trending in both; the window still holds ``w`` sets of
both sides and only R-S pairs count.  The files are then
``throughput-<generator>-k<k>-rs.*``.

The time budget per point (the paper's 20k-second cut-off of Section 7.2): a
run that stops at ``--budget`` CPU seconds before its ``--sets`` is measured on
that sample of sets (``cut`` = ``sample`` in the CSV, a hollow marker in the
plot); a fill that exceeds ``--fill-budget`` CPU seconds stops there and the
engine is measured on a window not yet full (``cut`` = ``fill``: the rate is
then an upper bound, as the per-set work grows with the window).  Static's fill
reruns its join only every 1,000th set (the unmeasured fill's lists are thrown
away; from the first measured set on it reruns at every change, exactly).  With ``--append``
the rows are added to that CSV instead (its older rows kept), each with the
``commit``, ``machine``, 1-minute ``load`` average at the start and end of the
row's measurement (the machine is shared) and ``--label``; the plot then shows,
for each engine and window, the newest row.

After the fill, before the measured sets, the harness runs one full garbage
collection (``gc.collect()``): a process's first full collection walks every
object its imports made (numba's and the generators', ~150K) once, ~60 ms,
and would otherwise land in whichever measured batch allocates past the
threshold (0.6 us a set over 100,000 sets at |W| = 1e4, issue 27's profile);
a long stream pays it once, so it is left out as the fill is.

The baseline's stock holds every overlapping pair, O(|W|^2): on the TWEET-like
stream 60% of the pairs overlap, ~3e7 pairs at |W| = 1e4 (about 1.7 GB in the
compiled ``base``'s arrays, several GB of Python tuples in the plain reference
``base:compiled=false``).  Above ``MAX_WINDOW`` the plain one is therefore measured *from an empty
window* (``warm`` = 0 in the CSV) for ``--budget`` CPU seconds: its per-set
work grows with the window, so that rate is an upper bound of its rate at a
full window of ``w``, and ``swoop_ratio`` (swoop's rate over the engine's, same
run, same stream) is then a lower bound.  ``window`` is the window size when
the measurement ended.
"""
from __future__ import annotations

import argparse
import csv
import gc
import os
import time

import numpy as np

from streamspec.bench.pipeline_util import commit, load, machine
from streamspec.bench.simjoin.generators import dblp_like, enron_like, tweet_like
from streamspec.bench.simjoin.loaders import LOADERS
from streamspec.bench.simjoin.table3 import GENERATORS as TABLE3_GENERATORS
from streamspec.spec.registry import Registry
from streamspec.spec.simjoin import Params, RecordBatch

GENERATORS = {"tweet": tweet_like, "enron": enron_like, "dblp": dblp_like}
# the Table 3-shaped streams (table3-tweet, ...) and the real text streams (fortunes)
GENERATORS.update(TABLE3_GENERATORS, **LOADERS)
STEP = 10_000
# largest window an engine is filled to; above it base runs from an empty window up to
# FROM_EMPTY's window (see the module docstring), the others are skipped
MAX_WINDOW = {"base": 10_000, "base:compiled=false": 2000, "static": 10_000,
              "static:compiled=false": 1000, "scase": 10_000, "swoop-noindex": 10_000}
FROM_EMPTY = {"base:compiled=false": 10_000}
# with --fill-budget the fill stops at the budget, so only the engines whose state is
# quadratic in the window (base: every overlapping pair, ~3e7 at 1e4) keep a largest window
MAX_WINDOW_BUDGETED = {"base": 10_000, "base:compiled=false": 2000}


def window_slice(b: RecordBatch, a: int, c: int) -> RecordBatch:
    return RecordBatch(b.id[a:c], b.ts[a:c], b.tok_ptr[a:c + 1] - b.tok_ptr[a],
                       b.tok[b.tok_ptr[a]:b.tok_ptr[c]], None if b.side is None else b.side[a:c])


def rs_sides(b: RecordBatch, seed: int = 0) -> RecordBatch:
    """``b`` as two streams, R and S (side 0 and 1), by a seeded fair coin per set."""
    side = np.random.default_rng(seed + 7919).integers(0, 2, len(b)).astype(np.int8)
    return RecordBatch(b.id, b.ts, b.tok_ptr, b.tok, side)


def measure(engine: str, stream: RecordBatch, w: int, k: int, sets: int, budget: float,
            similarity: str = "jaccard", fill: bool = True, fill_budget: float | None = None) -> dict:
    cls = Registry.get("simjoin", engine)
    join = "self" if stream.side is None else "rs"
    eng = cls(Params(k=k, w=w, similarity=similarity, join=join))
    warm = min(w, len(stream) - sets) if fill else 0
    quick_fill = engine.partition(":")[0] == "static" and getattr(cls, "batch", 1) == 1
    if quick_fill:            # the fill's lists are not measured: rerun the join rarely meanwhile
        eng.batch = 1000
    t0 = time.process_time()
    for a in range(0, warm, STEP):
        list(eng.process(window_slice(stream, a, min(a + STEP, warm))))
        if fill_budget is not None and time.process_time() - t0 > fill_budget:
            warm = min(a + STEP, warm)
            break
    fill_s = time.process_time() - t0
    if quick_fill:
        del eng.batch         # the class's: every change again
    before = dict(getattr(eng, "stats", {}))
    gc.collect()              # the process's first full collection, outside the measured sets
    done, spent, outputs = 0, 0.0, 0
    step = STEP if engine.startswith("swoop") else 500
    a = warm
    while a < warm + sets and spent <= budget:
        c = min(a + step, warm + sets)
        if not fill:                 # small batches first: the cost per set grows with the window
            c = min(c, a + max(10, a // 10))
        elif not engine.startswith("swoop"):    # batches doubling from 10 sets: a slow engine
            c = min(c, a + max(10, done))       # overruns the budget by at most one more time it
        t = time.process_time()
        outputs += len(list(eng.process(window_slice(stream, a, c))))
        spent += time.process_time() - t
        done += c - a
        a = c
    stats = getattr(eng, "stats", {})
    per = max(done, 1)
    target = min(w, len(stream) - sets) if fill else 0
    cut = "fill" if warm < target else "sample" if done < sets else ""
    return {"engine": engine, "w": w, "k": k, "join": join, "warm": warm, "window": min(w, warm + done),
            "sets": done, "cut": cut, "cpu_s": round(spent, 3),
            "sets_per_s": round(done / spent, 1) if spent else float("inf"),
            "fill_s": round(fill_s, 2), "outputs": outputs,
            "precandidates_per_set": round((stats.get("precandidates", 0) - before.get("precandidates", 0)) / per, 1)
            if stats else "",
            "candidates_per_set": round((stats.get("candidates", 0) - before.get("candidates", 0)) / per, 2)
            if stats else "",
            "verified_per_set": round((stats.get("verified", 0) - before.get("verified", 0)) / per, 2)
            if stats else "",
            "stock": stats.get("stock", ""), "max_stock": stats.get("max_stock", ""), "k_w": k * w}


def plot(rows: list[dict], path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 4))
    budget_shown = False
    for engine in dict.fromkeys(r["engine"] for r in rows):
        mine = [r for r in rows if r["engine"] == engine and r["warm"] > 0]
        line = ax.plot([r["w"] for r in mine], [r["sets_per_s"] for r in mine], marker="o", label=engine)
        cut = [r for r in mine if r.get("cut")]
        if cut:          # stopped by the time budget: a sample of the sets, or a window not full
            ax.plot([r["w"] for r in cut], [r["sets_per_s"] for r in cut], linestyle="none", marker="o",
                    markersize=11, fillstyle="none", color="black",
                    label=None if budget_shown else "time budget hit (sampled)")
            budget_shown = True
        empty = [r for r in rows if r["engine"] == engine and r not in mine]
        if empty:        # from an empty window: an upper bound of the full-window rate
            ax.plot([r["w"] for r in empty], [r["sets_per_s"] for r in empty], linestyle="none",
                    marker="v", fillstyle="none", color=line[0].get_color(),
                    label=f"{engine} (empty start, upper bound)")
    ax.set_xscale("log"), ax.set_yscale("log")
    ax.set_xlabel("window size |W| (sets)"), ax.set_ylabel("sets / s (CPU)")
    join = " R-S join," if rows[0].get("join") == "rs" else ""
    ax.set_title(f"simjoin stream rate,{join} k={rows[0]['k']}")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))   # outside: the lines fill the axes
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def write_csv(rows: list[dict], path: str) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def number(v):
    """A CSV field as an int, else a float, else as it is."""
    for kind in (int, float):
        try:
            return kind(v)
        except (TypeError, ValueError):
            pass
    return v


def read_csv(path: str) -> list[dict]:
    """The rows of ``path`` (none when it does not exist), numbers as numbers."""
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return [{key: number(v) for key, v in r.items()} for r in csv.DictReader(f)]


def append_csv(rows: list[dict], path: str) -> list[dict]:
    """``rows`` added after the rows already in ``path`` (columns: the union, old first;
    a column an older row lacks stays empty); returns every row, parsed back as the plot
    wants them (numbers as numbers)."""
    old: list[dict] = []
    if os.path.exists(path):
        with open(path, newline="") as f:
            old = list(csv.DictReader(f))
    fields = list(dict.fromkeys([*(old[0] if old else {}), *rows[0]]))
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, restval="", lineterminator="\n")
        writer.writeheader()
        writer.writerows(old + rows)
    return [{key: number(v) for key, v in r.items()} for r in old] + rows


def newest(rows: list[dict]) -> list[dict]:
    """The last row of each (engine, window, warm or not), in first-appearance order."""
    last = {}
    for r in rows:
        last[(r["engine"], r["w"], r["warm"] > 0)] = r
    return list(last.values())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engines", default="swoop,swoop-noindex,swoop-noincrement,swoop-noheap,scase,base")
    ap.add_argument("--windows", default="100,1000,10000")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--sets", type=int, default=20_000)
    ap.add_argument("--generator", choices=sorted(GENERATORS), default="tweet")
    ap.add_argument("--budget", type=float, default=20.0, help="CPU seconds per run at most")
    ap.add_argument("--fill-budget", type=float, default=None,
                    help="CPU seconds for filling the window at most (default: no limit)")
    ap.add_argument("--join", choices=("self", "rs"), default="self",
                    help="self join, or the R-S join of two streams (sides by a seeded coin)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.path.join("bench", "results", "simjoin"))
    ap.add_argument("--append", action="store_true", help="add the rows to the existing CSV")
    ap.add_argument("--label", default="", help="a note stored in each appended row")
    args = ap.parse_args(argv)
    windows = [int(x) for x in args.windows.split(",")]
    engines = args.engines.split(",")
    stream = GENERATORS[args.generator](max(windows) + args.sets, seed=args.seed)
    if args.join == "rs":
        stream = rs_sides(stream, args.seed)
    rows = []
    for w in windows:
        mine = []
        for engine in engines:
            largest = MAX_WINDOW if args.fill_budget is None else MAX_WINDOW_BUDGETED
            fill = w <= largest.get(engine, w)
            if not fill and w > FROM_EMPTY.get(engine, 0):
                continue
            load0 = load()
            row = measure(engine, stream, w, args.k, args.sets, args.budget, fill=fill,
                          fill_budget=args.fill_budget)
            row["generator"] = args.generator
            if args.append:
                row.update(commit=commit(), machine=machine(), load=f"{load0}-{load()}", label=args.label)
            print(row, flush=True)
            mine.append(row)
        swoop = next((r["sets_per_s"] for r in mine if r["engine"] == "swoop"), None)
        for row in mine:
            row["swoop_ratio"] = round(swoop / row["sets_per_s"], 1) if swoop else ""
        rows.extend(mine)
    os.makedirs(args.out, exist_ok=True)
    name = f"throughput-{args.generator}-k{args.k}" + ("-rs" if args.join == "rs" else "")
    if args.append:
        rows = newest(append_csv(rows, os.path.join(args.out, f"{name}.csv")))
    else:
        write_csv(rows, os.path.join(args.out, f"{name}.csv"))
    plot(rows, os.path.join(args.out, f"{name}.png"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
