"""Where the cluster's extra wall time goes (issue 29, bench/results/cluster/cluster-cost.md).

The connectivity job of ``measure_checkpoint.py`` (2M R-MAT edges, 16 MB Parquet, window 1000,
slide 50, 100 queries, engine bic, ``--partitions 2``), one fresh ``streamspec run`` process
per run, ``local[2]`` and the cluster lane's standalone cluster (two one-core workers)
alternating, each run with Spark's event log on (``--conf spark.eventLog.enabled=true``).
Each run prints its wall time and, from its event log: the process start to the
application's start (JVM + SparkContext), the application start to the last executor
added, each Spark job's span (first-to-last, with its call site) and its tasks' summed
run/deserialize/GC times, and the tail (last job end to process exit).

``--old-check`` adds a cluster run with the executors' path check as it was before the cut
(``timed_run.py``'s ``MEASURE_OLD_CHECK``), ``--conf K=V`` one with extra settings.

``python bench/results/cluster/measure_cost.py [--rounds N] [--old-check] [--conf K=V ...]``
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure_checkpoint import inputs, load  # noqa: E402  (the same job and inputs)


def events(logdir: Path):
    found = []
    for path in sorted(logdir.rglob("*")):     # Spark 4 rolls logs: eventlog_v2_*/events_*
        if path.is_file() and path.name.startswith(("events_", "app-", "local-")) and "." not in path.name:
            with open(path) as f:
                found += [json.loads(line) for line in f if line.strip()]
    return found


def breakdown(evs, t0_ms: float, t1_ms: float) -> list[str]:
    app = next(e for e in evs if e["Event"] == "SparkListenerApplicationStart")["Timestamp"]
    execs = [e["Timestamp"] for e in evs if e["Event"] == "SparkListenerExecutorAdded"
             and e.get("Executor ID") != "driver"]
    jobs = {e["Job ID"]: e for e in evs if e["Event"] == "SparkListenerJobStart"}
    ends = {e["Job ID"]: e for e in evs if e["Event"] == "SparkListenerJobEnd"}
    stage_job = {s: j for j, e in jobs.items() for s in e["Stage IDs"]}
    tasks: dict[int, list] = {}
    for e in evs:
        if e["Event"] == "SparkListenerTaskEnd":
            tasks.setdefault(stage_job.get(e["Stage ID"]), []).append(e)
    out = [f"  process start -> app start {(app - t0_ms) / 1e3:6.2f} s",
           f"  app start -> executors added {', '.join(f'{(x - app) / 1e3:.2f}' for x in execs) or '-'} s"]
    first = min(e["Submission Time"] for e in jobs.values()) if jobs else app
    out.append(f"  app start -> first job {(first - app) / 1e3:6.2f} s")
    busy = 0.0
    for j in sorted(jobs):
        s, e = jobs[j]["Submission Time"], ends[j]["Completion Time"]
        busy += e - s
        props = jobs[j].get("Properties") or {}
        site = props.get("callSite.short") or props.get("spark.job.description") or ""
        ts = tasks.get(j, [])
        m = [t.get("Task Metrics") or {} for t in ts]
        run = sum(x.get("Executor Run Time", 0) for x in m) / 1e3
        des = sum(x.get("Executor Deserialize Time", 0) for x in m) / 1e3
        gc = sum(x.get("JVM GC Time", 0) for x in m) / 1e3
        out.append(f"  job {j:2d} at {(s - app) / 1e3:6.2f} span {(e - s) / 1e3:6.2f} s, "
                   f"{len(ts)} tasks run {run:.2f} deser {des:.2f} gc {gc:.2f}  {site[:60]}")
    last = max((e["Completion Time"] for e in ends.values()), default=app)
    out.append(f"  jobs busy {busy / 1e3:.2f} s; between jobs (driver) "
               f"{(last - first - busy) / 1e3:.2f} s; last job end -> exit {(t1_ms - last) / 1e3:.2f} s")
    return out


def run(work: Path, parquet: Path, queries: Path, master: str, extra: list[str], tag: str):
    logdir = Path(tempfile.mkdtemp(prefix="evlog-", dir=work))
    argv = [sys.executable, str(Path(__file__).with_name("timed_run.py")), "run", "connectivity", "--input", str(parquet), "--queries", str(queries),
            "--window", "1000", "--slide", "50", "--engine", "bic", "--partitions", "2",
            "--output", "out", "--overwrite", "--no-progress", "--master", master,
            "--conf", "spark.eventLog.enabled=true", "--conf", f"spark.eventLog.dir=file://{logdir}",
            "--conf", "spark.eventLog.compress=false", "--conf", "spark.eventLog.rolling.enabled=false"]
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    for kv in extra:
        if kv == "OLD":
            env["MEASURE_OLD_CHECK"] = "1"
        else:
            argv += ["--conf", kv]
    t0 = time.time()
    p = subprocess.run(argv, cwd=work, capture_output=True, text=True,
                       env=env)
    t1 = time.time()
    print(f"{tag} {master} rc={p.returncode} wall {t1 - t0:.1f} s "
          f"load {open('/proc/loadavg').read().split()[0]} {' '.join(extra)}", flush=True)
    if p.returncode:
        print(p.stderr[-800:], flush=True)
        return
    for line in breakdown(events(logdir), t0 * 1e3, t1 * 1e3):
        print(line, flush=True)
    for line in p.stderr.splitlines():
        if line.startswith("# phase"):
            print("  " + line[2:], flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--conf", action="append", default=[], help="extra --conf for variant B")
    ap.add_argument("--old-check", action="store_true",
                    help="also the cluster with the path check before the cut (MEASURE_OLD_CHECK)")
    ap.add_argument("--cluster-only", action="store_true")
    args = ap.parse_args()
    root, work, parquet, queries = inputs("measure-cost-")
    print(f"# {parquet.name}: {parquet.stat().st_size / 1e6:.1f} MB; load "
          f"{open('/proc/loadavg').read().strip()}", flush=True)
    cc = load("cc", ROOT / "tests" / "cluster" / "conftest.py")
    c = cc.Standalone(root / "cluster")
    try:
        c.start()
        for rnd in range(args.rounds):
            order = [("local[2]", []), (c.url, [])]
            if args.conf:
                order.append((c.url, args.conf))
            if args.old_check:
                order.append((c.url, ["OLD"]))
            if args.cluster_only:
                order = order[1:]
            if rnd % 2:
                order.reverse()
            for master, extra in order:
                run(work, parquet, queries, master, extra, f"r{rnd}")
    finally:
        c.stop()
    print(f"# load after: {open('/proc/loadavg').read().strip()}", flush=True)


if __name__ == "__main__":
    main()
