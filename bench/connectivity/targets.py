"""The issue's performance targets for BIC, measured in one run (BIC TR Section 7).

Full size (``--edges 10000000``; every other size is derived from it unless
given): an R-MAT stream of 1M vertices and 10M edges, 1000 edges per
timestamp, window ``r = 1000`` and slide ``s = 50`` (windows of ~1M edges, 20
slides per window), 100 queries from the top-1000-degree vertices, one core.

| target | measured as |
| --- | --- |
| BIC >= 3M edges/s end to end | edges / total time of every ``process`` call and ``flush`` |
| BIC / RWC throughput >= 5 | ratio of the two throughputs above |
| BIC P95 window latency <= RWC's / 1000 | P95 of the paper's window latency through ``process`` |
| BIC >= 10x per-window scipy | throughput ratio; scipy on a sample of windows when budgeted |
| BIC peak memory <= 2x RWC's | peak RSS delta of a run in a fresh subprocess (``memory``) |

Latency is the paper's (BIC TR Section 7.1, ``measure``): engines are
built with ``hold_back=False`` and a window's latency is the time of the
``process`` call with its triggering edge (the window's queries and that
edge's insert); the rest of each slide goes in a second call, counted in
throughput only.  BIC as it ships defers its backward build out of that call
(its engine option ``build``, ``deferred`` by default), so the verdict rows
measure the deferred placement; the side-by-side table below also gives the paper's placement.  An informational
row gives the same P95 ratio for the engines alone (``measure.run_engine``:
ids remapped up front, no spec boundary), which is what the paper's figures
measure; the gap between the two rows is the boundary's per-call cost.

The default is a scaled-down quick check (1M edges: 100K vertices, windows of
100K edges, still 20 slides per window), written to ``targets-quick.csv``;
the full size writes ``targets.csv``; ``targets[-quick]-engines.csv`` holds
every engine's numbers (throughput and P50/P95/P99 latency through
``process`` and of the engine alone; peak memory).  Both also write a
pytest-benchmark-shaped JSON (groups ``connectivity-<scale>-throughput`` /
``-p95`` / ``-p95-engine`` / ``-memory``) that ``python -m streamspec.bench.ratios``
checks against the floors.

**The side-by-side table** (issue 13; ``--table-only`` makes just this):
for every registered engine of the project (the oracle left out, ``--table-engines``
to choose), on the R-MAT stream above and on a Chung-Lu power-law stream of
``--powerlaw-edges`` edges (default 3/10 of ``--edges``, sizes derived the
same way), each with the top-1000-degree workload and a uniformly drawn one
(many false answers, which send BIC to the bridging search): edges per
second through ``process``, window P95/P99 as the engine ships (BIC: build
deferred) and with the build inside the triggering call (``bic:build=inside``,
the paper's placement; an engine named with other options keeps them:
``--table-engines bic,bic:prereduce=false`` gives the paper's full reverse scan
both ways too; engines that defer nothing have one run, reported in both
columns), and the collector passes that landed in
triggering calls (the harness freezes the GC after warm-up: ``measure``;
``--gc-compare`` runs each engine once more without freezing it).
Appended to ``targets-latency[-quick].csv`` (a ``--label`` per run) with the commit and the 1-minute
load before and after each run.

Peers (scipy, and ``--also`` engines such as networkx or dtree) get a time
budget per run (``--peer-budget``): past it their run stops and their numbers
come from a sample, the first windows after the fill (per-window
recomputation costs the same on every window of this stationary stream); the
CSV's ``method`` column says ``SAMPLED`` and how many windows.

Exit code: 1 when a target row fails (``[FAIL]``; the informational row
does not count), after every file is written; 0 when all pass.  Each engine
is measured once here, so a ratio moves by tens of percent between two runs
on a busy machine: to gate a change on a ratio use ``streamspec bench``
(repeated interleaved rounds, paired ratios, ``--compare``).

Expected duration at full size on a quiet 2-core machine: about 8 minutes
(``--also dtree,networkx``: about 12): stream generation, BIC and RWC twice
each (RWC rebuilds ~1M-edge windows 180 times per run), scipy and the
``--also`` engines capped at ``--peer-budget`` (45 s) per run, and four memory
subprocesses (BIC and RWC, RSS and tracemalloc); the side-by-side table adds
about 5 minutes more with bic, msf, rwc and dtree (dtree capped at
``--table-budget`` per run), or use ``--no-table`` / ``--table-only``.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import sys
import time
from pathlib import Path

from streamspec.spec.connectivity import Params

from streamspec.spec.registry import Registry

from streamspec.bench import pipeline_util
from streamspec.bench.connectivity import memory
from streamspec.bench.connectivity.generators import powerlaw_stream, rmat_stream, workload
from streamspec.bench.connectivity.measure import run, run_engine, warm_up
from streamspec.bench.runlog import append_rows

RESULTS = Path("bench", "results", "connectivity")   # relative to the working directory (the checkout)
FULL_EDGES = 10_000_000


def arguments(argv=None):
    p = argparse.ArgumentParser(prog="python -m streamspec.bench.connectivity.targets",
                                description="measure the BIC targets (see module docstring)")
    p.add_argument("--edges", type=int, default=1_000_000,
                   help="stream length (default 1M, a quick check; 10000000 = the issue's size)")
    p.add_argument("--vertices", type=int, help="id space (default edges / 10)")
    p.add_argument("--rate", type=int, default=1000, help="edges per timestamp (default 1000)")
    p.add_argument("--r", type=int, help="window size in timestamps (default edges / 10 / rate)")
    p.add_argument("--s", type=int, help="slide in timestamps (default r / 20)")
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                   help="wall (perf_counter, the paper's metric; default) or cpu (process_time, "
                        "robust on a busy shared machine)")
    p.add_argument("--peer-budget", type=float, default=45.0,
                   help="seconds per run after which scipy / --also engines stop (a sample of "
                        "windows, stated in the CSV)")
    p.add_argument("--also", default="", help="comma-separated extra engines, informational "
                   "(e.g. dtree,networkx), budgeted like the peers")
    p.add_argument("--no-memory", action="store_true", help="skip the memory subprocesses")
    p.add_argument("--table-only", action="store_true",
                   help="only the side-by-side latency table (targets-latency[-quick].csv)")
    p.add_argument("--no-table", action="store_true", help="skip the side-by-side latency table")
    p.add_argument("--table-engines", help="comma-separated engines of the table (options "
                   "continue a name: bic,bic:build=inside,prereduce=false is two; default: every "
                   "registered connectivity engine but the oracle)")
    p.add_argument("--table-budget", type=float, default=60.0,
                   help="seconds per table run after which an engine stops (sampled, stated)")
    p.add_argument("--gc-compare", action="store_true",
                   help="table: each engine as shipped once more without freezing the GC "
                        "(unfrozen_* columns: P95/P99 and collector passes inside triggers)")
    p.add_argument("--powerlaw-edges", type=int,
                   help="edges of the table's power-law stream (default 3/10 of --edges)")
    p.add_argument("--out", help="CSV path (default bench/results/connectivity/targets[-quick].csv)")
    p.add_argument("--label", default="",
                   help="names this run's rows in the side-by-side table's CSV, where runs are "
                        "appended (e.g. s23)")
    args = p.parse_args(argv)
    args.vertices = args.vertices or max(2, args.edges // 10)
    args.r = args.r or max(1, args.edges // 10 // args.rate)
    args.s = args.s or max(1, args.r // 20)
    args.scale = "full" if args.edges >= FULL_EDGES else "quick"
    stem = "targets" if args.scale == "full" else "targets-quick"
    args.out = Path(args.out) if args.out else RESULTS / f"{stem}.csv"
    args.powerlaw_edges = args.powerlaw_edges or max(1000, args.edges * 3 // 10)
    return args


TABLE_FIELDS = ["scale", "stream", "workload", "engine", "edges", "r", "s", "queries",
                "windows", "edges_per_s", "window_p95_ms", "window_p99_ms",
                "inside_edges_per_s", "inside_p95_ms", "inside_p99_ms", "inside_max_ms",
                "defers", "gc_in_triggers", "gc_full_in_triggers", "gc_ms_in_triggers",
                "inside_gc_in_triggers", "inside_gc_ms_in_triggers", "unfrozen_p95_ms",
                "unfrozen_p99_ms", "unfrozen_gc_in_triggers", "unfrozen_gc_full_in_triggers",
                "unfrozen_gc_ms_in_triggers", "truncated", "clock",
                "commit", "load1_before", "load1_after", "method", "inside_method"]


def table_engines(args) -> list[str]:
    if args.table_engines:
        # a piece with "=" and no ":" is one more option of the name before it:
        # "bic,bic:build=inside,prereduce=false" is two engines
        names: list[str] = []
        for piece in (p.strip() for p in args.table_engines.split(",")):
            if piece and "=" in piece and ":" not in piece and names:
                names[-1] += "," + piece
            elif piece:
                names.append(piece)
        return names
    return [n for _, n in sorted(Registry.names("connectivity")) if n != "oracle"]


def table_cases(args):
    """``(stream name, stream, r, s)``: the R-MAT stream and the power-law one."""
    yield "rmat", rmat_stream(args.vertices, args.edges, args.rate, seed=args.seed), args.r, args.s
    n = args.powerlaw_edges
    r = max(1, n // 10 // args.rate)
    yield ("powerlaw", powerlaw_stream(max(2, n // 10), n, args.rate, seed=args.seed), r,
           max(1, r // 20))


def side_by_side(args, scale: str) -> list[dict]:
    """The issue's table: each engine as it ships and with its build inside the call."""
    rows = []
    names = table_engines(args)
    for name in names:
        warm_up(name)
    commit = pipeline_util.commit()
    for stream_name, stream, r, s in table_cases(args):
        for wl, top in (("top1000", 1000), ("uniform", None)):
            params = Params(r=r, s=s, workload=workload(stream, args.queries, seed=args.seed,
                                                         top=top))
            for name in names:
                before = pipeline_util.load()
                shipped = run(name, stream, params, budget=args.table_budget, warm=False,
                              clock=args.clock)
                inside = shipped
                if shipped.defers:
                    inside = run(name, stream, params, budget=args.table_budget, warm=False,
                                 clock=args.clock, build="inside")
                row = {"scale": scale, "stream": stream_name, "workload": wl, "engine": name,
                       "edges": len(stream), "r": r, "s": s, "queries": args.queries,
                       "windows": shipped.n_windows,
                       "edges_per_s": round(shipped.throughput),
                       "window_p95_ms": round(shipped.percentile(95) * 1e3, 4),
                       "window_p99_ms": round(shipped.percentile(99) * 1e3, 4),
                       "inside_edges_per_s": round(inside.throughput),
                       "inside_p95_ms": round(inside.percentile(95) * 1e3, 4),
                       "inside_p99_ms": round(inside.percentile(99) * 1e3, 4),
                       "inside_max_ms": round(inside.percentile(100) * 1e3, 4),
                       "defers": shipped.defers,
                       "gc_in_triggers": shipped.gc_passes_in_triggers,
                       "gc_full_in_triggers": shipped.gc_full_in_triggers,
                       "gc_ms_in_triggers": round(shipped.gc_seconds_in_triggers * 1e3, 3),
                       "inside_gc_in_triggers": inside.gc_passes_in_triggers,
                       "inside_gc_ms_in_triggers": round(inside.gc_seconds_in_triggers * 1e3, 3),
                       "truncated": shipped.truncated or inside.truncated, "clock": args.clock,
                       "commit": commit, "load1_before": before,
                       "load1_after": pipeline_util.load(), "method": shipped.method,
                       "inside_method": inside.method if shipped.defers else
                       "same run (nothing deferred)"}
                if args.gc_compare:
                    loose = run(name, stream, params, budget=args.table_budget, warm=False,
                                clock=args.clock, freeze_gc=False)
                    row.update(unfrozen_p95_ms=round(loose.percentile(95) * 1e3, 4),
                               unfrozen_p99_ms=round(loose.percentile(99) * 1e3, 4),
                               unfrozen_gc_in_triggers=loose.gc_passes_in_triggers,
                               unfrozen_gc_full_in_triggers=loose.gc_full_in_triggers,
                               unfrozen_gc_ms_in_triggers=round(
                                   loose.gc_seconds_in_triggers * 1e3, 3),
                               load1_after=pipeline_util.load())
                rows.append(row)
                print(f"  {stream_name:8} {wl:8} {name:7} {row['edges_per_s']:>11,} edges/s "
                      f"P95 {row['window_p95_ms']:9.3f} P99 {row['window_p99_ms']:9.3f} | inside "
                      f"P95 {row['inside_p95_ms']:9.3f} P99 {row['inside_p99_ms']:9.3f} ms "
                      f"(load {before}->{row['load1_after']})"
                      f"{' (sampled)' if row['truncated'] else ''}"
                      + (f" | GC not frozen: P99 {row['unfrozen_p99_ms']:.3f} ms, "
                         f"{row['unfrozen_gc_in_triggers']} passes in triggers"
                         if args.gc_compare else ""), flush=True)
    return rows


def markdown(rows: list[dict]) -> str:
    """The table as the issue shows it (ms, CPU or wall clock as measured)."""
    lines = ["| stream | workload | system | edges/s | window P95 | window P99 | "
             "build inside P95 | build inside P99 |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        inside = (f"{row['inside_p95_ms']:.3f} ms | {row['inside_p99_ms']:.3f} ms"
                  if row["defers"] else "(nothing deferred) | (same)")
        lines.append(f"| {row['stream']} | {row['workload']} | {row['engine']} | "
                     f"{row['edges_per_s'] / 1e6:.2f}M{' (sampled)' if row['truncated'] else ''} | "
                     f"{row['window_p95_ms']:.3f} ms | {row['window_p99_ms']:.3f} ms | {inside} |")
    return "\n".join(lines)


def write_table(args, rows: list[dict]) -> Path:
    """Append the table's rows to ``targets-latency[-quick].csv`` under ``--label``
    (``streamspec.bench.runlog``: one file for the experiment, a label per run)."""
    stem = "targets-latency" if args.scale == "full" else "targets-latency-quick"
    return append_rows(args.out.with_name(stem + ".csv"), rows, TABLE_FIELDS, args.label)


def verdicts(m: dict, alone: dict, mem: dict, scale_note: str) -> list[dict]:
    bic, rwc, scipy = m["bic"], m["rwc"], m["scipy"]
    rows = []

    def add(target, value, required, ok, how):
        rows.append({"target": target, "value": value, "required": required,
                     "pass": ok, "how": f"{how}; {scale_note}"})

    def latency(pair) -> str:
        b, r = pair
        return (f"bic P95 {b.percentile(95) * 1e3:.4f} ms P99 {b.percentile(99) * 1e3:.4f} ms, "
                f"rwc P95 {r.percentile(95) * 1e3:.4f} ms P99 {r.percentile(99) * 1e3:.4f} ms "
                f"(P99 ratio {r.percentile(99) / b.percentile(99):.1f}); bic: {b.method}")

    add("bic_throughput_eps", round(bic.throughput), ">= 3000000", bic.throughput >= 3e6,
        bic.method)
    ratio = bic.throughput / rwc.throughput
    add("bic_over_rwc_throughput", round(ratio, 3), ">= 5", ratio >= 5,
        f"bic {bic.throughput:.0f} / rwc {rwc.throughput:.0f} edges/s; rwc: {rwc.method}")
    p95 = rwc.percentile(95) / bic.percentile(95)
    add("rwc_p95_over_bic_p95", round(p95, 3), ">= 1000", p95 >= 1000,
        "P95 window latency through process(): " + latency((bic, rwc)))
    p95 = alone["rwc"].percentile(95) / alone["bic"].percentile(95)
    add("rwc_p95_over_bic_p95_engine_alone", round(p95, 3), "informational (>= 1000)",
        p95 >= 1000, "P95 window latency of the engines alone (no spec boundary): "
        + latency((alone["bic"], alone["rwc"])))
    ratio = bic.throughput / scipy.throughput
    add("bic_over_scipy_throughput", round(ratio, 3), ">= 10", ratio >= 10,
        f"scipy per-window connected_components: {scipy.method}")
    if mem:
        b, r = mem["bic"]["peak_delta_bytes"], mem["rwc"]["peak_delta_bytes"]
        ratio = b / r if r else float("inf")
        add("bic_peak_memory_over_rwc", round(ratio, 3), "<= 2", ratio <= 2,
            f"peak RSS delta in a fresh subprocess, bic {b} B, rwc {r} B "
            f"({mem['bic']['method']})")
    return rows


def benchmark_json(m: dict, alone: dict, mem: dict, scale: str, machine: dict) -> dict:
    """The measurements in pytest-benchmark's shape, for ``python -m streamspec.bench.ratios``."""
    benches = []

    def add(group, name, value, extra):
        benches.append({"group": f"connectivity-{scale}-{group}", "name": name,
                        "extra_info": dict(extra, subject=name), "stats": {"median": value}})

    for name, x in m.items():
        # seconds for the whole stream at this engine's throughput (extrapolated if truncated)
        add("throughput", name, x.whole_stream_seconds, {"method": x.method})
        add("p95", name, x.percentile(95), {"method": x.method})
        add("p95-engine", name, alone[name].percentile(95), {"method": alone[name].method})
    for name, x in mem.items():
        add("memory", name, x["peak_delta_bytes"], {"method": x["method"]})
    return {"machine_info": machine, "benchmarks": benches}


def main(argv=None) -> int:
    args = arguments(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.table_only:
        print(f"side-by-side table, {args.scale}, {args.clock} clock", flush=True)
        rows = side_by_side(args, args.scale)
        print(markdown(rows))
        print(f"wrote {write_table(args, rows)}")
        return 0
    started = time.time()
    stream = rmat_stream(args.vertices, args.edges, args.rate, seed=args.seed)
    params = Params(r=args.r, s=args.s, workload=workload(stream, args.queries, seed=args.seed))
    note = (f"{args.scale}: R-MAT {args.vertices} vertices, {args.edges} edges, {args.rate} "
            f"edges/timestamp, r={args.r} s={args.s} (K={args.r // args.s}), "
            f"{args.queries} queries, seed {args.seed}, {args.clock} clock")
    print(note, flush=True)
    budgets = {"bic": None, "rwc": None, "scipy": args.peer_budget}
    budgets.update({name: args.peer_budget for name in filter(None, args.also.split(","))})
    m, alone = {}, {}
    for name, budget in budgets.items():
        x = m[name] = run(name, stream, params, budget=budget, clock=args.clock)
        y = alone[name] = run_engine(name, stream, params, budget=budget, warm=False,
                                     clock=args.clock)
        print(f"  {name:9} process() {x.throughput:12,.0f} edges/s P95 "
              f"{x.percentile(95) * 1e3:8.3f} ms P99 {x.percentile(99) * 1e3:8.3f} ms | "
              f"engine alone {y.throughput:12,.0f} edges/s P95 {y.percentile(95) * 1e3:8.3f} ms "
              f"P99 {y.percentile(99) * 1e3:8.3f} ms{' (sampled)' * x.truncated}", flush=True)
    mem = {}
    if not args.no_memory:
        for name in ("bic", "rwc"):
            mem[name] = memory.measure(name, stream, params)
            traced = memory.measure(name, stream, params, tracemalloc=True)
            mem[name]["tracemalloc_peak_bytes"] = traced["tracemalloc_peak_bytes"]
            print(f"  {name:10} peak RSS delta {mem[name]['peak_delta_bytes'] / 2**20:9.1f} MiB,"
                  f" tracemalloc peak {traced['tracemalloc_peak_bytes'] / 2**20:9.1f} MiB",
                  flush=True)
    rows = verdicts(m, alone, mem, note)
    with open(args.out, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["scale", "target", "value", "required",
                                                    "pass", "how"])
        writer.writeheader()
        for row in rows:
            writer.writerow(dict(row, scale=args.scale))
    engines_csv = args.out.with_name(args.out.stem + "-engines.csv")
    with open(engines_csv, "w", newline="") as handle:
        alone_fields = ["engine_throughput_eps", "engine_p50_ms", "engine_p95_ms",
                        "engine_p99_ms", "engine_windows", "engine_method"]
        fields = ["scale"] + list(next(iter(m.values())).row()) + alone_fields + [
            "peak_rss_delta_bytes", "tracemalloc_peak_bytes"]
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for name, x in m.items():
            y = alone[name].row()
            writer.writerow(dict(x.row(), scale=args.scale,
                                 engine_throughput_eps=y["throughput_eps"], engine_p50_ms=y["p50_ms"],
                                 engine_p95_ms=y["p95_ms"], engine_p99_ms=y["p99_ms"],
                                 engine_windows=y["windows"], engine_method=y["method"],
                                 peak_rss_delta_bytes=mem.get(name, {}).get("peak_delta_bytes", ""),
                                 tracemalloc_peak_bytes=mem.get(name, {}).get(
                                     "tracemalloc_peak_bytes", "")))
    machine = {"python": platform.python_version(), "machine": platform.machine(),
               "cpus": os.cpu_count(), "load_average": os.getloadavg(), "note": note,
               "wall_seconds": round(time.time() - started, 1)}
    args.out.with_suffix(".json").write_text(json.dumps(benchmark_json(m, alone, mem, args.scale, machine),
                                                        indent=1))
    failed = []
    for row in rows:
        print(f"  [{'pass' if row['pass'] else 'FAIL'}] {row['target']} = {row['value']} "
              f"(required {row['required']})")
        if not row["pass"] and not row["required"].startswith("informational"):
            failed.append(row["target"])
    print(f"wrote {args.out}, {engines_csv}, {args.out.with_suffix('.json')}")
    if not args.no_table:
        table = side_by_side(args, args.scale)
        print(markdown(table))
        print(f"wrote {write_table(args, table)}")
    if failed:   # a failed target is a failed run, whatever else was written
        print(f"{len(failed)} target(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
