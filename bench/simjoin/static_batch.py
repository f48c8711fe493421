"""Static with batches (SWOOP Section 7.2, "Static algorithm"): the error and the set
rate of ``static:batch=B``, the approximate Static that reruns the one-time join at
every B-th window change only, against the exact result.

    python -m streamspec.bench.simjoin.static_batch --generator enron --window 1000 --k 10 \
        --batches 2,10,100,1000

The paper's error: the share of the windows whose top-k list is wrong, O(1 - 1/b),
65% at b = 100 on ENRON (|W| = 1000, k = 10), with more than 75% of the wrong lists
differing in more than one element.  Here each set of the stream makes one window
(one set per time unit, so every arrival changes the window); the list the batched
engine holds after each set (its last output) is compared with the exact list
(``static``'s, b = 1, which the conformance suite checks against the oracle) over
``--sets`` sets after the window is full.  ``error`` is the share of those
windows whose list differs (pairs, scores and end times), ``wrong_gt1`` the share
of the wrong lists missing more than one of the exact list's pairs, and
``missing`` the average number of the exact list's pairs a wrong list misses.
``sets_per_s`` is the batched engine's rate on the CPU clock (``time.process_time``)
over the same sets; the row ``b = 1`` is the exact Static itself (no error by
construction).  Writes
``static-batch-<generator>.csv`` (``--append``: added to the older rows, each with
``commit``, ``machine``, 1-minute ``load`` at start-end) and ``.png`` (error against
b beside the paper's 1 - 1/b and its 65% point; rate against b) under ``--out``.
"""
from __future__ import annotations

import argparse
import os
import time

from streamspec.bench.pipeline_util import commit, load, machine
from streamspec.bench.simjoin.throughput import GENERATORS, append_csv, window_slice, write_csv
from streamspec.spec.registry import Registry
from streamspec.spec.simjoin import Params

STEP = 500


def held_lists(engine: str, stream, w: int, k: int, sets: int):
    """``engine``'s list after each of the ``sets`` sets that follow a full window, the
    CPU seconds those sets took, the engine's stats."""
    eng = Registry.get("simjoin", engine)(Params(k=k, w=w))
    held: tuple = ()
    for a in range(0, w, STEP):          # the window filled: its outputs only set ``held``
        for out in eng.process(window_slice(stream, a, min(a + STEP, w))):
            held = out.pairs
    lists, spent = [], 0.0
    a = w
    while a < w + sets:
        c = min(a + STEP, w + sets)
        t = time.process_time()
        outs = list(eng.process(window_slice(stream, a, c)))
        spent += time.process_time() - t
        at = {int(o.ts): o.pairs for o in outs}          # one set per time unit: ts = position
        for ts in range(a, c):
            held = at.get(ts, held)
            lists.append(held)
        a = c
    return lists, spent, dict(getattr(eng, "stats", {}))


def compare(approx: list, exact: list) -> dict:
    wrong = [(x, e) for x, e in zip(approx, exact) if x != e]
    missing = [len({p[:2] for p in e} - {p[:2] for p in x}) for x, e in wrong]
    n = len(approx)
    return {"windows": n, "wrong": len(wrong), "error": round(len(wrong) / n, 4) if n else "",
            "wrong_gt1": round(sum(m > 1 for m in missing) / len(wrong), 4) if wrong else "",
            "missing": round(sum(missing) / len(wrong), 2) if wrong else ""}


def run(generator: str, w: int, k: int, batches: list[int], sets: int, seed: int) -> list[dict]:
    """One row per batch size; b = 1 (the exact Static, whose lists the others are
    compared with) is always run first."""
    batches = sorted(set(batches) | {1})
    stream = GENERATORS[generator](w + sets, seed=seed)
    exact: list = []
    rows = []
    for b in sorted(batches):
        load0 = load()
        engine = "static" if b == 1 else f"static:batch={b}"
        lists, spent, stats = held_lists(engine, stream, w, k, sets)
        if b == 1:
            exact = lists
        row = {"generator": generator, "w": w, "k": k, "b": b, "engine": engine,
               "sets": len(lists), "cpu_s": round(spent, 3),
               "sets_per_s": round(len(lists) / spent, 1) if spent else "",
               "runs": stats.get("runs", ""), **compare(lists, exact[:len(lists)]),
               "paper_bound": round(1 - 1 / b, 4),
               "load": f"{load0}-{load()}"}
        print(row, flush=True)
        rows.append(row)
    return rows


def plot(rows: list[dict], path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    mine = [r for r in rows if r["b"] > 1 and r["error"] != ""]
    bs = [r["b"] for r in mine]
    ax.plot(bs, [100 * r["error"] for r in mine], marker="o", label="static:batch=b, wrong windows")
    ax.plot(bs, [100 * r["wrong_gt1"] for r in mine], marker="s", linestyle="--",
            label="of those, > 1 pair missing")
    ax.plot(bs, [100 * (1 - 1 / b) for b in bs], color="grey", linestyle=":", label="1 - 1/b")
    ax.plot([100], [65], marker="*", markersize=12, linestyle="none", color="red",
            label="paper: 65% (ENRON, b = 100)")
    ax.plot([100], [75], marker="^", markersize=9, linestyle="none", color="red", fillstyle="none",
            label="paper: > 75% of those, > 1 element")
    ax.set_xscale("log"), ax.set_ylim(0, 105)
    ax.set_xlabel("batch size b (window changes per rerun)"), ax.set_ylabel("% of windows")
    ax.legend(fontsize=7)
    ax2.plot([r["b"] for r in rows], [r["sets_per_s"] for r in rows], marker="o",
             label="static:batch=b (b = 1: exact)")
    ax2.set_xscale("log"), ax2.set_yscale("log")
    ax2.set_xlabel("batch size b"), ax2.set_ylabel("sets / s (CPU)")
    ax2.legend(fontsize=7)
    r = rows[0]
    fig.suptitle(f"Static with batches, {r['generator']}-like, |W| = {r['w']}, k = {r['k']} "
                 f"(loaded shared machine, CPU clock)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--generator", choices=sorted(GENERATORS), default="enron")
    ap.add_argument("--window", type=int, default=1000)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--batches", default="1,2,10,100,1000",
                    help="batch sizes (each one of static's allowed batch values)")
    ap.add_argument("--sets", type=int, default=5000, help="windows compared (sets after the fill)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.path.join("bench", "results", "simjoin"))
    ap.add_argument("--append", action="store_true", help="add the rows to the existing CSV")
    ap.add_argument("--label", default="", help="a note stored in each appended row")
    ap.add_argument("--plot-only", action="store_true",
                    help="redraw the PNG from the CSV's newest row of each b (no measurement)")
    args = ap.parse_args(argv)
    path = os.path.join(args.out, f"static-batch-{args.generator}")
    if args.plot_only:
        from streamspec.bench.simjoin.figures import read
        newest = {r["b"]: r for r in read(path + ".csv") if r["w"] == args.window and r["k"] == args.k}
        plot(sorted(newest.values(), key=lambda r: r["b"]), path + ".png")
        return 0
    rows = run(args.generator, args.window, args.k, [int(b) for b in args.batches.split(",")],
               args.sets, args.seed)
    for row in rows:
        row.update(commit=commit(), machine=machine(), label=args.label)
    os.makedirs(args.out, exist_ok=True)
    if args.append:
        append_csv(rows, path + ".csv")
    else:
        write_csv(rows, path + ".csv")
    plot(rows, path + ".png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
