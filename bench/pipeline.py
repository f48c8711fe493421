"""The Spark pipeline against the engine it wraps, in one run (issue 11's targets).

``python -m streamspec.bench.pipeline [--edges 10000000] [--partitions 1,2]``

Connectivity on the issue's stream: an R-MAT graph (``--vertices`` 1M ids,
``--per-timestamp`` 1000 edges per time unit, seeded), written as Parquet;
``r = 1000``, ``s = 50``, the top-degree workload of ``--queries`` 100 pairs.
Measured, all as wall-clock seconds in this one process run:

- ``engine``: the same stream through ``engine.process()`` and ``flush()`` in
  this process, from in-memory columns (kernels compiled by a warm-up first, as
  a long-running job would have them), excluding the Parquet read;
- ``cli-pP``: ``streamspec run connectivity --engine bic --partitions P`` in a
  subprocess, Spark's start, the read, the replay, the write and the summary
  included; its windows are checked equal to the engine run's, answer by answer.
  ``--formats`` adds the same stream as a SNAP text file: ``cli-text-pP`` (the
  Spark tasks parse it, ``pipeline.text_scan``) and ``cli-text-driver-pP`` (the
  driver's validating reader, as before).  ``load1`` is the 1-minute load average
  when each row's run began (blank in rows from before it was recorded).

``--phases`` instead times the job's steps in this process through the job
skeleton's own pieces (``streamspec.pipeline.job``), one Spark session per
partition count (after the first, the JVM is warm and the session's start is
nearly free, so compare the later steps across counts, not the totals): the
session's start, ``prepare`` (footers, queries), the replay materialised,
the atomic write and the summary from the materialised rows; it prints them
and appends them to ``bench/results/pipeline/connectivity-phases.csv``
(rows before commit 7448577 time the old validating reader's phases).

``--tasks`` runs the CLI in this process once per ``--partitions`` entry in one
Spark session with the event log on and appends every Spark task's launch
time and duration to ``bench/results/pipeline/connectivity-tasks.csv``: the
first run is cold (its first job starts the Python workers), the later ones
show what the replay itself costs and how evenly the ranges split it.

Targets (issue 11): ``cli-p1 <= 3 * engine + 20 s``; ``cli-p1 / cli-p2 >= 1.5``
on a 2-core machine.  Rows go to ``bench/results/pipeline/connectivity.csv``
(relative to the working directory) with the verdicts; the stream itself is
kept in ``--work`` (default: a temporary directory) and reused when present.
"""
from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from streamspec.bench import pipeline_util as bench_util

RESULTS = Path("bench", "results", "pipeline")   # relative to the working directory (the checkout)


def arguments(argv=None):
    p = argparse.ArgumentParser(prog="python -m streamspec.bench.pipeline",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--edges", type=int, default=10_000_000, help="stream length (default: 10000000)")
    p.add_argument("--vertices", type=int, default=1_000_000, help="id space (default: 1000000)")
    p.add_argument("--per-timestamp", type=int, default=1000,
                   help="edges per time unit (default: 1000)")
    p.add_argument("--window", type=int, default=1000, help="window r (default: 1000)")
    p.add_argument("--slide", type=int, default=50, help="slide s (default: 50)")
    p.add_argument("--queries", type=int, default=100, help="workload size (default: 100)")
    p.add_argument("--engine", default="bic", help="engine (default: bic)")
    p.add_argument("--partitions", default="1,2", help="partition counts to run (default: 1,2)")
    p.add_argument("--master", default=None, help="Spark master (default: local[*])")
    p.add_argument("--work", default=None, help="where the Parquet stream is kept (default: temp)")
    p.add_argument("--out", default=None,
                   help="CSV of the rows (default: bench/results/pipeline/connectivity.csv, "
                        "or connectivity-phases.csv with --phases)")
    p.add_argument("--formats", default="parquet",
                   help="inputs the CLI runs on, comma-separated: parquet (the issue's "
                        "stream), text (the same stream as a SNAP text file, parsed by the "
                        "Spark tasks: pipeline.text_scan), text-driver (that file read by the "
                        "driver's validating reader, as before the tasks parsed it) "
                        "(default: parquet)")
    p.add_argument("--tasks", action="store_true",
                   help="run the CLI in this process once per --partitions entry, in one "
                        "Spark session with its event log on, and write every Spark task's "
                        "launch time and duration (default: off)")
    p.add_argument("--phases", action="store_true",
                   help="time the job's phases in this process instead (default: off)")
    args = p.parse_args(argv)
    args.out = args.out or str(RESULTS / ("connectivity-phases.csv" if args.phases
                                          else "connectivity-tasks.csv" if args.tasks
                                          else "connectivity.csv"))
    return args


def make_inputs(args, work: Path):
    """The stream (in memory) and its Parquet and query files, written once per size."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from streamspec.bench.connectivity.generators import rmat_stream, workload

    stream = rmat_stream(args.vertices, args.edges, args.per_timestamp, seed=0)
    pairs = workload(stream, args.queries, seed=0)
    parquet = work / f"rmat-{args.edges}-{args.vertices}-{args.per_timestamp}.parquet"
    queries = work / f"queries-{args.queries}.txt"
    if not parquet.exists():
        table = pa.table({"u": stream.u, "v": stream.v, "t": stream.t})
        pq.write_table(table, parquet, row_group_size=1 << 20)
    queries.write_text("".join(f"{a} {b}\n" for a, b in pairs))
    assert np.all(np.diff(stream.t) >= 0)
    return stream, pairs, parquet, queries


def text_input(parquet: Path) -> Path:
    """The Parquet stream as a SNAP text file ``u v t`` beside it (written once)."""
    import pyarrow.csv as pc
    import pyarrow.parquet as pq

    text = parquet.with_suffix(".txt")
    if not text.exists():
        tmp = text.with_suffix(".txt.tmp")
        pc.write_csv(pq.read_table(parquet, columns=["u", "v", "t"]), tmp,
                     pc.WriteOptions(include_header=False, delimiter=" ", quoting_style="none"))
        tmp.replace(text)
    return text


def engine_alone(args, stream, pairs) -> tuple[float, int]:
    from streamspec.bench.connectivity.generators import rmat_stream
    from streamspec.spec.connectivity import Params
    from streamspec.spec.registry import Registry

    params = Params(args.window, args.slide, tuple(pairs))
    warm = rmat_stream(1000, 20_000, 10, seed=1)
    engine = Registry.create("connectivity", args.engine, params)
    list(engine.process(warm.batch())), list(engine.flush())
    engine = Registry.create("connectivity", args.engine, params)
    started = time.perf_counter()
    windows = list(engine.process(stream.batch())) + list(engine.flush())
    elapsed = time.perf_counter() - started
    return elapsed, [(w.index, w.start, w.end, tuple(w.answers)) for w in windows]


# the CLI with the text path turned off in its own process: the driver's reader takes the file
_DRIVER_READ = ("import sys; from streamspec.pipeline import text_scan; "
                "text_scan.MIN_BYTES = 1 << 62; from streamspec.pipeline.cli import main; "
                "sys.exit(main(sys.argv[1:]))")


def cli(args, parquet: Path, queries: Path, partitions: int, out: Path,
        driver_read: bool = False) -> float:
    entry = ["-c", _DRIVER_READ] if driver_read else ["-m", "streamspec.pipeline.cli"]
    argv = [sys.executable, *entry, "run", "connectivity",
            "--input", str(parquet), "--queries", str(queries), "--window", str(args.window),
            "--slide", str(args.slide), "--engine", args.engine, "--partitions", str(partitions),
            "--output", str(out), "--overwrite"]
    if args.master:
        argv += ["--master", args.master]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    print(done.stdout.strip().splitlines()[0] if done.stdout.strip() else "", flush=True)
    return elapsed


def phases(args, parquet: Path, queries: Path, partitions: int, out: Path) -> dict:
    """Wall seconds of each step of ``streamspec run connectivity`` (module docstring),
    through the job skeleton's own pieces (``streamspec.pipeline.job``)."""
    from streamspec.pipeline import job
    from streamspec.pipeline.cli import build_parser
    from streamspec.pipeline.io import write_parquet_atomic
    from streamspec.pipeline.jobs import connectivity as adapter
    from streamspec.pipeline.spark import session

    argv = ["run", "connectivity", "--input", str(parquet), "--queries", str(queries),
            "--window", str(args.window), "--slide", str(args.slide), "--engine", args.engine,
            "--partitions", str(partitions), "--output", str(out), "--overwrite"]
    run_args = build_parser().parse_args(argv)
    marks = [time.perf_counter()]
    spark = session(args.master, app_name=f"bench phases p{partitions}")
    marks.append(time.perf_counter())
    engine_cls = job.engine_of(adapter, run_args)
    plan = adapter.prepare(run_args)
    marks.append(time.perf_counter())
    rows = adapter.replay(spark, plan, engine_cls, partitions).localCheckpoint()
    marks.append(time.perf_counter())
    write_parquet_atomic(rows, str(out), overwrite=True)
    marks.append(time.perf_counter())
    adapter.summarize(plan, rows)
    marks.append(time.perf_counter())
    spark.stop()
    names = ("session", "prepare", "replay", "write", "summary")
    return {n: round(b - a, 3) for n, a, b in zip(names, marks, marks[1:])}


def output_rows(path: Path) -> list:
    import pyarrow.parquet as pq
    table = pq.read_table(path, columns=["window", "start", "end", "answers"]).sort_by("window")
    return [(r["window"], r["start"], r["end"], tuple(r["answers"])) for r in table.to_pylist()]


def main(argv=None) -> int:
    args = arguments(argv)
    commit = bench_util.commit()       # taken when the run starts
    with tempfile.TemporaryDirectory(prefix="streamspec-bench-pipeline-") as tmp:
        work = Path(args.work or tmp)
        work.mkdir(parents=True, exist_ok=True)
        stream, pairs, parquet, queries = make_inputs(args, work)
        if args.phases:
            return write_phases(args, parquet, queries, Path(tmp))
        if args.tasks:
            return write_tasks(args, parquet, queries, Path(tmp), commit)
        alone, windows = engine_alone(args, stream, pairs)
        print(f"engine alone: {alone:.2f} s, {len(windows)} windows", flush=True)
        rows = [dict(mode="engine", partitions=0, wall_s=round(alone, 3), windows=len(windows),
                     load1=bench_util.load())]
        for fmt in args.formats.split(","):
            if fmt not in ("parquet", "text", "text-driver"):
                raise SystemExit(f"--formats: unknown input format {fmt!r}")
            source = parquet if fmt == "parquet" else text_input(parquet)
            tag = "" if fmt == "parquet" else f"{fmt}-"
            for p in [int(x) for x in args.partitions.split(",")]:
                out = Path(tmp) / f"out-{tag}p{p}"
                load = bench_util.load()
                wall = cli(args, source, queries, p, out, driver_read=fmt == "text-driver")
                got = output_rows(out)
                print(f"cli {fmt} --partitions {p}: {wall:.1f} s, {len(got)} windows", flush=True)
                if got != windows:
                    raise SystemExit(f"{fmt} --partitions {p} wrote other windows than the engine's")
                rows.append(dict(mode=f"cli-{tag}p{p}", partitions=p, wall_s=round(wall, 3),
                                 windows=len(got), load1=load))
    by = {r["mode"]: r["wall_s"] for r in rows}
    verdicts = []
    if "cli-p1" in by:
        bound = 3 * by["engine"] + 20
        verdicts.append(f"cli-p1 {by['cli-p1']:.1f} s <= 3 x engine + 20 = {bound:.1f} s: "
                        f"{'PASS' if by['cli-p1'] <= bound else 'FAIL'}")
    if "cli-p1" in by and "cli-p2" in by:
        ratio = by["cli-p1"] / by["cli-p2"]
        verdicts.append(f"cli-p1 / cli-p2 = {ratio:.2f} >= 1.5: {'PASS' if ratio >= 1.5 else 'FAIL'}")
    for v in verdicts:
        print(v)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    fields = ["when", "commit", "machine", "edges", "vertices", "per_timestamp", "window",
              "slide", "queries", "engine", "mode", "partitions", "wall_s", "windows", "load1"]
    old = []
    if out.exists():
        with out.open(newline="") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames != fields:      # a file from before the load column
                old = list(reader)
    with out.open("w" if old or not out.exists() else "a", newline="") as f:
        w = csv.DictWriter(f, fields, restval="")
        if old or f.tell() == 0:
            w.writeheader()
            w.writerows(old)
        for r in rows:
            w.writerow(dict(when=stamp, commit=commit, machine=bench_util.machine(),
                            edges=args.edges, vertices=args.vertices,
                            per_timestamp=args.per_timestamp, window=args.window,
                            slide=args.slide, queries=args.queries, engine=args.engine, **r))
    return 0


def write_tasks(args, parquet: Path, queries: Path, tmp: Path, commit: str) -> int:
    """``--tasks``: the CLI's runs in one session (the first one cold: Spark's first job
    starts the Python workers, which import the engines), then every task of every Spark
    job from the event log, seconds from the application's start."""
    import json

    from streamspec.pipeline.cli import main as cli_main
    from streamspec.pipeline.spark import session

    log_dir = tmp / "eventlog"
    log_dir.mkdir()
    spark = session(args.master, app_name="bench tasks",
                    conf={"spark.eventLog.enabled": "true",
                          "spark.eventLog.dir": log_dir.resolve().as_uri(),
                          "spark.eventLog.compress": "false"})
    runs = []
    for n, p in enumerate(int(x) for x in args.partitions.split(",")):
        began = time.time()
        code = cli_main(["run", "connectivity", "--input", str(parquet), "--queries", str(queries),
                         "--window", str(args.window), "--slide", str(args.slide),
                         "--engine", args.engine, "--partitions", str(p), "--no-progress",
                         "--output", str(tmp / f"tasks-{n}")])
        if code:
            raise SystemExit(f"run {n} (--partitions {p}) exited {code}")
        runs.append((n, p, began, time.time()))
        print(f"run {n}, --partitions {p}: {runs[-1][3] - began:.1f} s", flush=True)
    spark.stop()
    events = [json.loads(line) for f in sorted(log_dir.rglob("events_*")) if f.is_file()
              for line in f.open()]
    start = next(e["Timestamp"] for e in events if e["Event"] == "SparkListenerApplicationStart")
    rows = []
    for e in events:
        if e["Event"] != "SparkListenerTaskEnd":
            continue
        info, metrics = e["Task Info"], e.get("Task Metrics") or {}
        launched = info["Launch Time"] / 1000
        run = next((r for r in runs if r[2] <= launched <= r[3]), None)
        rows.append(dict(run=run[0] if run else "", partitions=run[1] if run else "",
                         stage=e["Stage ID"], task=info["Task ID"],
                         launch_s=round(launched - start / 1000, 3),
                         duration_s=round((info["Finish Time"] - info["Launch Time"]) / 1000, 3),
                         executor_run_s=round(metrics.get("Executor Run Time", 0) / 1000, 3)))
    for n, p, began, ended in runs:
        mine = [r for r in rows if r["run"] == n]
        longest = max(mine, key=lambda r: r["duration_s"]) if mine else None
        print(f"run {n} (--partitions {p}): {ended - began:.1f} s, {len(mine)} tasks, longest "
              f"{longest['duration_s'] if longest else 0:.2f} s (stage {longest['stage'] if longest else '-'})")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fields = ["when", "commit", "load1", "edges", "run", "partitions", "stage", "task",
              "launch_s", "duration_s", "executor_run_s"]
    new = not out.exists()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    load = bench_util.load()
    with out.open("a", newline="") as f:
        w = csv.DictWriter(f, fields)
        if new:
            w.writeheader()
        for r in rows:
            w.writerow(dict(when=stamp, commit=commit, load1=load, edges=args.edges, **r))
    return 0


def write_phases(args, parquet: Path, queries: Path, tmp: Path) -> int:
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    new = not out.exists()
    with out.open("a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(["when", "commit", "edges", "partitions", "phase", "wall_s"])
        for p in [int(x) for x in args.partitions.split(",")]:
            timed = phases(args, parquet, queries, p, tmp / f"phases-p{p}")
            print(f"--partitions {p}: " + ", ".join(f"{k} {v:.1f} s" for k, v in timed.items()),
                  flush=True)
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
            for phase, wall in timed.items():
                w.writerow([stamp, bench_util.commit(), args.edges, p, phase, wall])
    return 0


if __name__ == "__main__":
    sys.exit(main())
