"""Redraw the BIC paper's Figures 11 and 12 (TR Sections 7.4 and 7.5), one command each.

``python -m streamspec.bench.connectivity.figures 11``: throughput, P95 and
P99 window latency against workload size (1..10^4 queries), every registered
connectivity engine but the oracle, the DFS baseline included
(``streamspec.bench.connectivity.fig11``, where the settings and the workload
are documented).

``python -m streamspec.bench.connectivity.figures 12``: median index size per
engine, per graph, per window size and per slide size
(``streamspec.bench.connectivity.fig12``, where the memory method is
documented).

``python -m streamspec.bench.connectivity.figures 7`` (or ``8``): Figures 7
and 8 (throughput, P95/P99 latency) on streams shaped like Table 1's ten graphs,
``table1 all`` with the remaining arguments (``streamspec.bench.connectivity.table1``).

``--quick`` runs the same on small streams with small budgets (a minute or
two each).  Output: ``bench/results/connectivity/fig11[-quick].csv|png`` and
``fig12[-quick].csv|png``; every row carries the commit and the 1-minute load
at the time it was measured (the machine is shared: the CPU clock is used
for time, and memory is traced, not read from RSS, so neither depends much on
the load).
"""
from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from pathlib import Path

from streamspec.spec.registry import Registry

from streamspec.bench.connectivity import fig11, fig12

RESULTS = Path("bench", "results", "connectivity")   # relative to the working directory (the checkout)
MODULES = {"11": fig11, "12": fig12}


def default_engines() -> list[str]:
    """Every registered connectivity engine but the oracle (dfs is the paper's DFS)."""
    return [name for problem, name in Registry.names("connectivity") if name != "oracle"]


def arguments(argv=None):
    p = argparse.ArgumentParser(prog="python -m streamspec.bench.connectivity.figures",
                                description="the BIC paper's Figure 11 (workload size) and "
                                            "Figure 12 (memory)")
    p.add_argument("figure", choices=sorted(MODULES))
    p.add_argument("--quick", action="store_true", help="small streams and budgets")
    p.add_argument("--engines", help="comma-separated (default: every registered engine but "
                                     "the oracle)")
    p.add_argument("--budget", type=float, help="CPU seconds per engine and setting "
                                                "(default: quick 3; full: 20 for figure 11, "
                                                "8 for figure 12)")
    p.add_argument("--uniform", action="store_true",
                   help="figure 11: draw the query pairs uniformly, not from the top-1000 degrees")
    p.add_argument("--edge-list", help="figure 12: a SNAP edge list as one more graph")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", help="CSV path (default bench/results/connectivity/figNN[-quick].csv)")
    p.add_argument("--replot", metavar="CSV", help="redraw the PNG from a CSV this script wrote")
    args = p.parse_args(argv)
    module = MODULES[args.figure]
    args.size = dict(module.QUICK if args.quick else module.FULL)
    if args.budget is not None:
        args.size["budget"] = args.budget
    args.mode = "quick" if args.quick else "full"
    args.engines = args.engines.split(",") if args.engines else default_engines()
    stem = f"fig{args.figure}{'-quick' if args.quick else ''}{'-uniform' if args.uniform else ''}"
    args.out = Path(args.out) if args.out else RESULTS / f"{stem}.csv"
    return args


def write(rows, fields, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in ("7", "8"):     # Figures 7 and 8: on the Table 1-shaped streams
        from streamspec.bench.connectivity import table1
        return table1.main(["all", *argv[1:]])
    args = arguments(argv)
    if args.replot:
        with open(args.replot, newline="") as handle:
            rows = list(csv.DictReader(handle))
        png = Path(args.replot).with_suffix(".png")
        first = rows[0]
        what = (f"R-MAT stream of {first['stream_edges']} edges, windows of "
                f"{first['window_edges']} edges sliding by {first['slide_edges']}, "
                f"{first['workload']} queries, CPU clock" if args.figure == "11" else
                f"graphs {', '.join(dict.fromkeys(r['graph'] for r in rows))} of "
                f"{first['stream_edges']} edges, {first['queries']} queries")
        loads = sorted(float(r["load1"]) for r in rows if r["load1"])
        MODULES[args.figure].plot(rows, png, f"Figure {args.figure} ({first['mode']}): {what}; "
                                  f"commit {first['commit']}, load {loads[0]:g}-{loads[-1]:g}")
        print(f"wrote {png}")
        return 0
    started = time.time()
    load = f"{os.getloadavg()[0]:.2f}"
    size = args.size
    if args.figure == "11":
        rows = fig11.measure_all(args.engines, size, mode=args.mode, uniform=args.uniform,
                                 seed=args.seed, echo=lambda s: print(s, flush=True))
        title = (f"Figure 11 ({args.mode}): R-MAT {size['vertices']} vertices, {size['edges']} "
                 f"edges, {size['rate']} edges/timestamp, r={size['r']} s={size['s']} "
                 f"(K={size['r'] // size['s']}), {'uniform' if args.uniform else 'top-1000'} "
                 f"queries, CPU clock, budget {size['budget']:g} s, load at start {load}")
    else:
        rows = fig12.measure_all(args.engines, size, mode=args.mode, edge_list=args.edge_list,
                                 seed=args.seed, echo=lambda s: print(s, flush=True))
        title = (f"Figure 12 ({args.mode}): R-MAT and Chung-Lu, {size['edges']} edges, "
                 f"{size['vertices']} vertices, {size['rate']} edges/timestamp, 100 top-1000 "
                 f"queries, budget {size['budget']:g} CPU s, load at start {load}")
    module = MODULES[args.figure]
    write(rows, module.FIELDS, args.out)
    png = args.out.with_suffix(".png")
    module.plot(rows, png, title)
    print(f"wrote {args.out} and {png} in {time.time() - started:.0f} s (load at start {load}, "
          f"at end {os.getloadavg()[0]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
