"""The driver JVM's JIT: C1 only (``-XX:TieredStopAtLevel=1``, streamspec's default since
``pipeline/spark.py``'s ``QUICK_JIT``) against the JVM's default tiered C1+C2 (level 4).

Each run is a fresh process running one ``streamspec run connectivity`` in ``local[2]``;
it prints the wall time, the CPU seconds of the driver's JVM and its process tree (the
Python daemon and workers, read from ``/proc`` before the process exits) and the
1-minute load.  The variants alternate, round by round.  Jobs: the bundled sample (3,000
edges) and 2M R-MAT edges as Parquet (``bench/pipeline.py``'s ``make_inputs``: 1M vertices,
1000 edges per time; window 1000, slide 50, 100 queries, ``--partitions 2``).

    python bench/results/pipeline/jit.py [--rounds 3] [--work /tmp/jit]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, os, resource, sys, time
from streamspec.pipeline.cli import main
argv = json.loads(sys.argv[1])
t = time.time()
rc = main(argv)
wall = time.time() - t
from pyspark import SparkContext
pid = SparkContext._active_spark_context._gateway.proc.pid
tick = os.sysconf("SC_CLK_TCK")
def stat(p):
    return open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
def tree(p):
    f = stat(p)
    total = sum(int(x) for x in f[11:15]) / tick     # utime stime cutime cstime
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if int(stat(d)[1]) == p:
                    total += tree(int(d))
            except (OSError, IndexError):
                pass
    return total
print(json.dumps(dict(rc=rc, wall=round(wall, 1), jvm_tree_cpu=round(tree(pid), 1),
                      load1=round(os.getloadavg()[0], 2))))
"""


def jobs(work: Path) -> dict[str, list[str]]:
    from streamspec.bench.pipeline import make_inputs
    from streamspec.pipeline.jobs.connectivity import SAMPLE
    a = argparse.Namespace(vertices=1_000_000, edges=2_000_000, per_timestamp=1000, queries=100)
    _, _, parquet, queries = make_inputs(a, work)
    return {
        "sample-3k": ["run", "connectivity", "--input", f"{SAMPLE}/connectivity-edges.txt",
                      "--queries", f"{SAMPLE}/connectivity-queries.txt", "--window", "500",
                      "--slide", "100", "--output", str(work / "out-small"), "--overwrite"],
        "rmat-2m": ["run", "connectivity", "--input", str(parquet), "--queries", str(queries),
                    "--window", "1000", "--slide", "50", "--engine", "bic", "--partitions", "2",
                    "--output", str(work / "out-2m"), "--overwrite", "--no-progress"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", default="/tmp/jit")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    variants = {"C1+C2 (level 4)": "-XX:TieredStopAtLevel=4", "C1 only": "-XX:TieredStopAtLevel=1"}
    for name, argv in jobs(work).items():
        for r in range(args.rounds):
            for label, flag in variants.items():
                full = [*argv, "--conf", f"spark.driver.extraJavaOptions={flag}"]
                done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(full)],
                                      capture_output=True, text=True, cwd=work)
                last = (done.stdout.strip().splitlines() or ["{}"])[-1]
                print(f"{name:10s} round {r} {label:16s} {last}", flush=True)


if __name__ == "__main__":
    main()
