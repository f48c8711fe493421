"""What a reliable checkpoint costs against ``localCheckpoint`` (issue 29, ``--checkpoint-dir``).

1. The connectivity job on a 2M-edge R-MAT Parquet stream (``bench/pipeline.py``'s
   ``make_inputs``: 1M vertices, 1000 edges per time, window 1000, slide 50, 100 queries,
   engine bic, ``--partitions 2``), one fresh ``streamspec run`` process per run (JVM start
   included), ``STREAMSPEC_MATERIALISE=local`` against ``=reliable`` (which one runs first
   alternates between rounds), on
   ``local[2]`` and then on the cluster lane's standalone cluster (two one-core workers).
2. The checkpoint alone, where it holds many rows: in one ``local[2]`` session, the 2M
   edges read from Parquet and kept with ``spark.materialise`` (then counted), local
   against reliable, alternating.

Run from the checkout with streamspec installed:
``python bench/results/cluster/measure_checkpoint.py > bench/results/cluster/measure_checkpoint.log``
(prints one line per run: part, round, master, kind, exit code, wall seconds).
"""
import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
ROUNDS = int(os.environ.get("ROUNDS", "2"))
# which kind runs first alternates between rounds: a warmer second run favours neither
KINDS = (("local", "reliable"), ("reliable", "local"))


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def jobs(work: Path, parquet: Path, queries: Path, master: str) -> None:
    streamspec = str(Path(sys.executable).with_name("streamspec"))
    base = [streamspec, "run", "connectivity", "--input", str(parquet), "--queries", str(queries),
            "--window", "1000", "--slide", "50", "--engine", "bic", "--partitions", "2",
            "--output", "out", "--overwrite", "--no-progress", "--master", master]
    for rnd in range(ROUNDS):
        for kind in KINDS[rnd % 2]:
            t = time.monotonic()
            p = subprocess.run(base, cwd=work, capture_output=True, text=True,
                               env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1",
                                    "STREAMSPEC_MATERIALISE": kind})
            left = sorted(n for n in os.listdir(work) if ".checkpoints-" in n)
            print("job", rnd, master, kind, p.returncode, round(time.monotonic() - t, 1),
                  p.stdout.strip().splitlines()[0][-60:] if p.returncode == 0 else p.stderr[-300:],
                  f"left behind: {left or 'nothing'}", flush=True)


def checkpoint_alone(work: Path, parquet: Path) -> None:
    from streamspec.pipeline.spark import checkpoint_dir, materialise, session

    spark = session("local[2]")
    for rnd in range(ROUNDS + 1):        # round 0 warms the JVM and the Parquet reader
        for kind in KINDS[rnd % 2]:
            os.environ["STREAMSPEC_MATERIALISE"] = kind
            with checkpoint_dir(spark, str(work / "ck")):
                t = time.monotonic()
                kept = materialise(spark.read.parquet(str(parquet)))
                rows = kept.count()
                print("alone", rnd, "local[2]", kind, rows, round(time.monotonic() - t, 2),
                      flush=True)
    spark.stop()


def inputs(prefix: str) -> tuple[Path, Path, Path, Path]:
    """``(root, work, parquet, queries)``: a fresh directory ``root``, the driver's ``work``
    directory in it, the 2M R-MAT edges as Parquet and 100 queries there."""
    from streamspec.bench.pipeline import make_inputs

    root = Path(tempfile.mkdtemp(prefix=prefix))
    work = root / "driver"
    work.mkdir()
    sizes = argparse.Namespace(vertices=1_000_000, edges=2_000_000, per_timestamp=1000,
                               queries=100)
    _, _, parquet, queries = make_inputs(sizes, work)
    return root, work, parquet, queries


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--no-cluster", action="store_true")
    args = p.parse_args()
    root, work, parquet, queries = inputs("measure-ck-")
    print(f"# {parquet.name}: {parquet.stat().st_size / 1e6:.1f} MB; rounds {ROUNDS}", flush=True)
    print(f"# load before: {open('/proc/loadavg').read().strip()}", flush=True)
    jobs(work, parquet, queries, "local[2]")
    checkpoint_alone(work, parquet)
    print(f"# load: {open('/proc/loadavg').read().strip()}", flush=True)
    if not args.no_cluster:
        cc = load("cc", ROOT / "tests" / "cluster" / "conftest.py")
        c = cc.Standalone(root / "cluster")
        try:
            c.start()
            jobs(work, parquet, queries, c.url)
        finally:
            c.stop()
    print(f"# load after: {open('/proc/loadavg').read().strip()}", flush=True)


if __name__ == "__main__":
    main()
