"""``streamspec bench PROBLEM --engine NAME [--baseline NAME] [--workload NAME] [--json OUT]``.

Runs one of the problem's standard workloads (``streamspec.bench.workloads``:
the paper's headline setting, seeded, at a size where a pass runs in well
under a minute) for the engine and its baselines: in each of ``--processes``
fresh processes (default 8, one after the other) a warm-up, then rounds
interleaved (``streamspec.bench.standard``), for about ``--budget`` seconds in
all (at least 6 rounds), or exactly ``--repeats`` rounds,
and prints per engine the median CPU time and its spread, and the engine's
speed-up over each baseline as the median of per-round ratios, in full
precision.  Any registered engine can be named, a third party's included, with
options (``name:key=value``); connectivity also accepts the per-window peers
``scipy`` and ``networkx``.

Gates (exit 1 when one fails, after the report is printed and ``--json`` written):

- ``--floors FILE``: TOML ``[[floor]]`` tables (``group = "bench-PROBLEM-WORKLOAD"``,
  ``subject``, ``baseline``, ``min_ratio``), the shape of ``bench/ratio_floors.toml``;
  a ratio below its floor fails.  ``--floors default``: the floors shipped with
  streamspec (``streamspec/bench/bench_floors.toml``).
- ``--compare PREVIOUS.json --max-regression PCT``: the ratios against a
  previous ``--json`` of the same workload; a ratio lower by more than PCT
  percent fails.  Ratios, not times, are compared, so the previous file may
  come from another machine.

Bad arguments are typed errors (``streamspec.spec.errors``), exit code 2 from
the ``streamspec`` command: an unknown problem, workload or engine (the message
names the known ones), ``--repeats`` below 1, ``--scale`` not above 0, the
engine named as its own baseline, a missing or malformed ``--floors`` or
``--compare`` file, a floors file none of whose floors applies to the run, a
previous run of another workload.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def add_arguments(parser):
    parser.add_argument("problem", help="connectivity, simjoin, kws or topkjoin")
    parser.add_argument("--engine", required=True,
                        help="the engine measured (NAME or NAME:key=value,...)")
    parser.add_argument("--baseline", action="append", default=[],
                        help="an engine to compare with (repeatable; default: the workload's "
                             "paper baseline: connectivity rwc, simjoin scase, kws forest, "
                             "topkjoin oracle)")
    parser.add_argument("--workload", default=None,
                        help="connectivity rmat|powerlaw, simjoin tweet, kws defaults|k3, "
                             "topkjoin stream (default: the first)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply the stream's length (default 1.0; smaller for smoke runs)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="measured rounds, each running every engine once (default: as "
                             "many as --budget allows, 6 to 30)")
    parser.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                        help="without --repeats: wall seconds of measuring (default 60; at least 6 "
                             "rounds whatever it takes)")
    parser.add_argument("--processes", type=int, default=None,
                        help="fresh processes the rounds are shared among, one after the other "
                             "(default 8, at most --repeats; 1: all in this process, needed for "
                             "an engine registered at run time rather than by entry point)")
    parser.add_argument("--warmup", type=int, default=1,
                        help="untimed rounds first (default 1: numba compilation, caches)")
    parser.add_argument("--json", default=None, metavar="OUT",
                        help="write every run, the medians, ratios and the machine to OUT")
    parser.add_argument("--floors", default=None, metavar="FILE",
                        help="TOML minimum ratios; exit 1 when one is missed ('default': the "
                             "floors shipped with streamspec, the papers' claims)")
    parser.add_argument("--compare", default=None, metavar="PREVIOUS.json",
                        help="a previous --json of the same workload; exit 1 on a regression")
    parser.add_argument("--max-regression", type=float, default=None, metavar="PCT",
                        help="with --compare: the largest drop of a ratio allowed, in percent "
                             "(default 10)")
    parser.add_argument("--quiet", action="store_true", help="no line per run")


def resolve(problem: str, name: str) -> str:
    """Check that ``name`` is an engine of ``problem`` (typed errors name the registered ones)."""
    if problem == "connectivity":
        from streamspec.bench.connectivity.peers import PEERS
        if name in PEERS:
            return name
    from streamspec.spec.registry import Registry
    Registry.get(problem, name)
    return name


def _validate(args):
    from streamspec.spec.errors import InvalidParameter
    from streamspec.bench import standard, workloads
    work = workloads.get(args.problem, args.workload)
    engine = resolve(args.problem, args.engine)
    baselines = [resolve(args.problem, b) for b in (args.baseline or [work.baseline])]
    if engine in baselines:
        raise InvalidParameter(f"--engine {engine} is also a baseline; name another with "
                               f"--baseline NAME")
    if len(set(baselines)) != len(baselines):
        raise InvalidParameter(f"--baseline names an engine twice: {baselines}")
    if args.repeats is not None and args.repeats < 1:
        raise InvalidParameter(f"--repeats {args.repeats}: expected at least 1 round")
    if args.budget is not None and args.repeats is not None:
        raise InvalidParameter("--budget and --repeats: give one (a fixed number of rounds, "
                               "or a time for them)")
    if args.budget is not None and not args.budget > 0:
        raise InvalidParameter(f"--budget {args.budget}: expected seconds above 0")
    if args.processes is not None and args.processes < 1:
        raise InvalidParameter(f"--processes {args.processes}: expected at least 1")
    if args.processes is None:
        args.processes = min(standard.PROCESSES, args.repeats or standard.PROCESSES)
    elif args.repeats is not None and args.repeats < args.processes:
        raise InvalidParameter(f"--repeats {args.repeats} with --processes {args.processes}: "
                               f"expected at least one round per process")
    if args.warmup < 0:
        raise InvalidParameter(f"--warmup {args.warmup}: expected 0 or more rounds")
    if not args.scale > 0:
        raise InvalidParameter(f"--scale {args.scale}: expected a number above 0")
    if args.max_regression is not None and args.compare is None:
        raise InvalidParameter("--max-regression needs --compare PREVIOUS.json")
    if args.max_regression is not None and not args.max_regression >= 0:
        raise InvalidParameter(f"--max-regression {args.max_regression}: expected a "
                               f"percentage >= 0")
    floors = standard.load_floors(args.floors) if args.floors else []
    standard.applicable(floors, standard.group(args.problem, work.name), engine, baselines)
    previous = standard.load_previous(args.compare) if args.compare else None
    return work, engine, baselines, floors, previous


def main(args) -> int:
    from streamspec.bench import standard
    work, engine, baselines, floors, previous = _validate(args)
    grp = standard.group(args.problem, work.name)
    load_before = standard.load_average()
    started = time.perf_counter()
    print(f"streamspec bench {args.problem}/{work.name}: {work.summary}; scale {args.scale}",
          flush=True)
    case = work.prepare(args.scale)
    prepared = time.perf_counter() - started
    params = dict(case.params, scale=args.scale)
    if previous is not None:      # another workload, or no ratio to a baseline: exit 2 before running
        standard.comparable(previous, {"problem": args.problem, "workload": work.name,
                                       "workload_params": params}, baselines)
    print(f"  input built in {prepared:.1f} s: "
          + ", ".join(f"{k}={v}" for k, v in case.params.items() if k != "feed"), flush=True)
    budget = standard.BUDGET_S if args.budget is None else args.budget
    rounds_wanted = (f"{args.repeats} rounds" if args.repeats is not None else
                     f"rounds for {budget:g} s ({standard.MIN_ROUNDS} to {standard.MAX_ROUNDS})")
    print(f"  cpu clock (time.process_time) of process()+flush() per run; {args.warmup} warm-up "
          f"round(s), then {rounds_wanted} interleaved, in {args.processes} process(es) "
          f"({', '.join([engine, *baselines])}, reversed every other round)", flush=True)

    def progress(run):
        if not args.quiet:
            label = "warm-up" if run.round < 0 else f"round {run.round}"
            if args.processes > 1:
                label = f"p{run.process + 1} {label}"
            print(f"    {label:11} {run.subject:24} cpu {run.cpu_s:.4f} s (sys {run.sys_s:.4f})  "
                  f"wall {run.wall_s:.4f} s  outputs {run.outputs}", flush=True)

    if args.processes == 1:
        runs = standard.measure(case, [engine, *baselines], args.repeats, args.warmup, progress,
                                budget=budget)
    else:
        runs = standard.measure_in_processes(args.problem, work.name, args.scale,
                                             [engine, *baselines], args.repeats, args.warmup,
                                             args.processes, progress, budget=budget)
    rounds = 1 + max(r.round for r in runs)
    subjects, ratios = standard.summarise(runs, engine, baselines)
    load_after = standard.load_average()
    print(f"results (load average before {load_before}, after {load_after}; spread = "
          f"(max - min) / median over the {rounds} rounds)")
    cpus = os.cpu_count() or 1
    busiest = max((load_before or [0])[0], (load_after or [0])[0])
    if busiest > 0.75 * cpus:
        print(f"  note: load average {busiest} on {cpus} cpus: other processes shared the "
              f"machine, which widens the spreads (CPU time is disturbed less than wall time, "
              f"not nothing)")
    for name, s in subjects.items():
        role = "engine  " if name == engine else "baseline"
        print(f"  {role} {name:24} median cpu {s['median_cpu_s']:.6g} s  spread "
              f"{s['spread'] * 100:.2f}%  [{s['min_cpu_s']:.6g} .. {s['max_cpu_s']:.6g}]  "
              f"outputs {'/'.join(map(str, s['outputs']))}")
    counts = {name: s["outputs"] for name, s in subjects.items()}
    if len({tuple(c) for c in counts.values()}) > 1:
        print(f"  note: the engines produced different numbers of outputs ({counts}); the ratio "
              f"compares unequal work")
    for base, r in ratios.items():
        per_round = " ".join(standard.exact(x) for x in r["per_round"])
        print(f"  ratio {base}/{engine} (speed-up of {engine} over {base}): median "
              f"{standard.exact(r['median'])} of per-round ratios, spread {r['spread'] * 100:.2f}%"
              f"  (rounds: {per_round})")

    failed = False
    verdicts = standard.check_floors(floors, grp, engine, ratios) if floors else []
    for v in verdicts:
        word = "ok  " if v["ok"] else "FAIL"
        print(f"  [{word}] floor {v['subject']} over {v['baseline']}: ratio "
              f"{standard.exact(v['ratio'], v['min_ratio'])} "
              f"{'>=' if v['ok'] else '<'} floor {standard.exact(v['min_ratio'], v['ratio'])}"
              f"{'  (' + v['why'] + ')' if v['why'] else ''}")
        failed |= not v["ok"]

    doc = {"format": standard.FORMAT, "problem": args.problem, "workload": work.name,
           "group": grp, "workload_summary": work.summary,
           "workload_params": params,
           "engine": engine, "baselines": baselines, "repeats": rounds,
           "budget_s": None if args.repeats is not None else budget,
           "warmup": args.warmup, "processes": args.processes,
           "method": "cpu clock (time.process_time) of the engine's process() over the prepared "
                     "input plus flush(), engine construction and input outside the timer, gc "
                     "frozen around each run; rounds interleaved ABBA, shared among fresh processes "
                     "run one after the other; ratio = baseline / engine "
                     "per round, median over rounds; spread = (max - min) / median",
           "command": sys.argv,
           "environment": standard.environment(), "load_average_before": load_before,
           "load_average_after": load_after,
           "wall_s": round(time.perf_counter() - started, 3),
           "runs": [{"process": r.process, "round": r.round, "subject": r.subject, "cpu_s": r.cpu_s, "sys_s": r.sys_s,
                     "wall_s": r.wall_s, "outputs": r.outputs} for r in runs],
           "subjects": subjects, "ratios": ratios, "floors": verdicts}
    compared = []
    if previous is not None:
        pct = 10.0 if args.max_regression is None else args.max_regression
        compared = standard.compare(previous, doc, pct)
        for c in compared:
            word = "ok  " if c["ok"] else "FAIL"
            print(f"  [{word}] compare {engine} over {c['baseline']}: ratio "
                  f"{standard.exact(c['ratio'], c['previous_ratio'])} vs previous "
                  f"{standard.exact(c['previous_ratio'], c['ratio'])} "
                  f"({c['previous_engine']}, {args.compare}): {c['change_pct']:+.2f}% "
                  f"(allowed -{pct:g}%)")
            failed |= not c["ok"]
        doc["compare"] = dict(previous=args.compare, verdicts=compared)
    # pytest-benchmark's shape too, so `python -m streamspec.bench.ratios OUT.json` reads it
    doc["benchmarks"] = [{"group": grp, "name": name, "extra_info": {"subject": name},
                          "stats": {"median": s["median_cpu_s"]}} for name, s in subjects.items()]
    if args.json:
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"wrote {out}")
    if failed:
        print("streamspec bench: a gate failed (see FAIL above)", file=sys.stderr)
    return 1 if failed else 0
