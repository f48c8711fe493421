"""What the pipeline benchmarks of simjoin and topkjoin share (``bench/pipeline_simjoin.py``,
``bench/pipeline_topkjoin.py``): running the CLI in a subprocess on the wall clock, optionally
with its phases timed (``phased_cli``) or under py-spy, and appending rows to
``bench/results/pipeline/*.csv``.

The phases are timed inside the CLI's own process, unchanged: ``python -m
streamspec.bench.pipeline_util run PROBLEM ...`` wraps, before the CLI is
imported, the functions the job skeleton (``streamspec.pipeline.job.run``)
calls by attribute, records when each call began and ended, then runs
``streamspec.pipeline.cli.main``:

- ``prepare``: the adapter's ``prepare`` (reading and validating the inputs on
  the driver, the parameters); of which ``read`` is the readers alone
  (``read_sets``/``sides_present``, ``read_items``/``read_remote``) and
  ``stream_range`` topkjoin's default normalisation range;
- ``session``: ``streamspec.pipeline.spark.session`` (the JVM's start);
- ``create_df``: every ``SparkSession.createDataFrame`` (pandas to Arrow to
  the JVM), wherever it is called;
- ``replay``: the adapter's ``replay`` and the ``localCheckpoint`` that
  materialises its rows (the engines run here), less ``create_df``;
- ``write``: ``write_parquet_atomic``;
- ``summary``: the adapter's ``summarize``;
- ``startup``: from the subprocess's launch to the wrapper's first line
  (interpreter and site start), ``other``: the rest of the process's own time
  (imports, argument parsing, output checks, the summary's print), ``exit``:
  from the CLI's return to the process's end (Spark's shutdown at exit).

Each phase is the union of its calls' intervals (a ``localCheckpoint`` inside
the adapter's ``replay`` counts once), ``createDataFrame`` taken out of the
phase that called it.  A function the code no longer has is skipped (its time
falls in ``other``).
"""
from __future__ import annotations

import csv
import importlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path("bench", "results", "pipeline")   # relative to the working directory (the checkout)


CODE = ("pipeline", "engines", "spec", "reference")     # what a pipeline run executes


def commit() -> str:
    """HEAD's short hash, ``-dirty`` when the code folders have uncommitted changes;
    ``$STREAMSPEC_BENCH_COMMIT`` instead when set (the code measured is a snapshot of that
    commit, e.g. a ``git archive`` put first on ``PYTHONPATH`` while the checkout is edited)."""
    pinned = os.environ.get("STREAMSPEC_BENCH_COMMIT")
    if pinned:
        return pinned
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", *CODE],
                           capture_output=True, text=True).stdout.strip()
    return f"{head}-dirty" if head and dirty else head


def machine() -> str:
    return f"{platform.machine()} {os.cpu_count()} cpus"


def load() -> str:
    """The 1-minute load average now (other sessions share the machine)."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return ""


def run_cli(argv: list[str], timeout: float | None) -> tuple[float, str]:
    """``python -m streamspec.pipeline.cli ARGV`` in a subprocess: wall seconds and its stdout.

    Exits with the CLI's stderr when it fails, or after ``timeout`` seconds (the CLI is killed).
    """
    full = [sys.executable, "-m", "streamspec.pipeline.cli", *argv]
    started = time.perf_counter()
    try:
        done = subprocess.run(full, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SystemExit(f"{' '.join(full)} did not finish in {timeout:.0f} s (killed); "
                         "measure a smaller size") from None
    elapsed = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"{' '.join(full)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return elapsed, done.stdout


def phased_cli(argv: list[str], timeout: float | None, profile: Path | None = None
               ) -> tuple[float, str, dict]:
    """``run_cli`` with the phases timed inside the CLI (module docstring): wall seconds, its
    stdout and ``{phase: seconds}``; under ``py-spy record --subprocesses`` (raw collapsed
    stacks at ``profile``, every process of the run: driver and Python workers) when given."""
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        marks = Path(f.name)
    env = dict(os.environ, STREAMSPEC_BENCH_MARKS=str(marks))
    full = [sys.executable, "-m", "streamspec.bench.pipeline_util", *argv]
    if profile is not None:
        spy = Path(sys.executable).with_name("py-spy")
        full = [str(spy), "record", "--subprocesses", "--format", "raw", "--rate", "50",
                "--output", str(profile), "--", *full]
    launched = time.time()
    started = time.perf_counter()
    try:
        done = subprocess.run(full, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise SystemExit(f"{' '.join(full)} did not finish in {timeout:.0f} s (killed)") from None
    elapsed, ended = time.perf_counter() - started, time.time()
    if done.returncode:
        raise SystemExit(f"{' '.join(full)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    got = json.loads(marks.read_text())
    marks.unlink()
    return elapsed, done.stdout, phases_of(got, launched, ended)


def _union(intervals) -> list:
    """Intervals merged into disjoint ones (nested or overlapping calls count once)."""
    out: list = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def _length(u) -> float:
    return sum(b - a for a, b in u)


def _overlap(u, v) -> float:
    return sum(max(0.0, min(b, d) - max(a, c)) for a, b in u for c, d in v)


def phases_of(got: dict, launched: float, ended: float) -> dict:
    """Seconds per phase from the wrapper's call intervals (module docstring).

    Each phase is the union of its calls' intervals (a ``localCheckpoint`` inside the
    adapter's ``replay`` counts once); ``createDataFrame`` time is taken out of the phase
    that called it and reported on its own."""
    calls = got["calls"]

    def u(*names):
        return _union([tuple(iv) for n in names for iv in calls.get(n, [])])

    create = u("create_df")
    out = {"startup": got["begin"] - launched}
    for phase, names in (("prepare", ("prepare",)), ("read", ("read",)),
                         ("stream_range", ("stream_range",)), ("session", ("session",)),
                         ("create_df", ("create_df",)), ("replay", ("replay_plan", "replay_run")),
                         ("write", ("write",)), ("summary", ("summary",))):
        mine = u(*names)
        out[phase] = _length(mine) - (_overlap(mine, create) if phase not in ("create_df", "read",
                                                                              "stream_range") else 0)
    top = u("prepare", "session", "create_df", "replay_plan", "replay_run", "write", "summary")
    out["other"] = got["end"] - got["begin"] - _length(top)
    out["exit"] = ended - got["end"]
    return {k: round(v, 3) for k, v in out.items()}


# (module, attribute, phase): wrapped when the module has the attribute
WRAPPED = (
    ("streamspec.pipeline.spark", "session", "session"),
    ("streamspec.pipeline.io", "write_parquet_atomic", "write"),
    ("streamspec.pipeline.io.simjoin", "read_sets", "read"),
    ("streamspec.pipeline.io.simjoin", "sides_present", "read"),
    ("streamspec.pipeline.io.topkjoin", "read_items", "read"),
    ("streamspec.pipeline.io.topkjoin", "read_remote", "read"),
    ("streamspec.pipeline.jobs.topkjoin", "default_stream_range", "stream_range"),
)
ADAPTER = (("prepare", "prepare"), ("replay", "replay_plan"), ("summarize", "summary"))


def _wrapped_main(argv: list[str]) -> int:
    """The CLI with the phases' calls timed; the intervals go to ``$STREAMSPEC_BENCH_MARKS``."""
    begin = time.time()
    calls: dict[str, list] = {}

    def wrap(owner, attr, name):
        original = getattr(owner, attr, None)
        if original is None:
            return

        def timed(*a, **kw):
            began = time.time()
            try:
                return original(*a, **kw)
            finally:
                calls.setdefault(name, []).append((began, time.time()))

        setattr(owner, attr, timed)

    from pyspark.sql import SparkSession
    wrap(SparkSession, "createDataFrame", "create_df")
    try:        # pyspark 4: the classic DataFrame overrides the base class's method
        from pyspark.sql.classic.dataframe import DataFrame
    except ImportError:
        from pyspark.sql import DataFrame
    wrap(DataFrame, "localCheckpoint", "replay_run")
    for module, attr, name in WRAPPED:
        try:
            wrap(importlib.import_module(module), attr, name)
        except ImportError:
            pass
    problem = argv[1] if len(argv) > 1 and argv[0] == "run" else None
    if problem:
        adapter = importlib.import_module(f"streamspec.pipeline.jobs.{problem}")
        for attr, name in ADAPTER:
            wrap(adapter, attr, name)
    from streamspec.pipeline import cli
    try:
        return cli.main(argv)
    finally:
        Path(os.environ["STREAMSPEC_BENCH_MARKS"]).write_text(
            json.dumps({"begin": begin, "end": time.time(), "calls": calls}))


def append_rows(path: str | Path, fields: list[str], rows: list[dict]) -> None:
    """Append ``rows`` to the CSV at ``path`` (header written when the file is new)."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    new = not out.exists()
    with out.open("a", newline="") as f:
        w = csv.DictWriter(f, fields)
        if new:
            w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    sys.exit(_wrapped_main(sys.argv[1:]))


def add_run_arguments(p, problem: str, kept: str) -> None:
    """The options both CLI-against-engine benchmarks share: partition counts, master,
    timeout, where ``kept`` (the generated inputs) lives, the CSV, ``--phases``, ``--profile``."""
    p.add_argument("--partitions", default="1,2", help="partition counts to run (default: 1,2)")
    p.add_argument("--master", default=None, help="Spark master (default: local[*])")
    p.add_argument("--timeout", type=float, default=1800,
                   help="seconds after which a CLI run is killed (default: 1800)")
    p.add_argument("--work", default=None, help=f"where {kept} kept (default: temp)")
    p.add_argument("--out", default=None,
                   help=f"CSV of the rows (default: bench/results/pipeline/{problem}.csv, "
                        f"or {problem}-phases.csv with --phases)")
    p.add_argument("--phases", action="store_true",
                   help="time the CLI's phases instead (default: off)")
    p.add_argument("--profile", action="store_true",
                   help="with --phases: run the CLI under py-spy, raw stacks kept in --work "
                        "(default: off)")


def parse_run_arguments(p, argv, problem: str):
    """Parse; ``--out`` defaults to the problem's CSV (its phases CSV with ``--phases``)."""
    args = p.parse_args(argv)
    args.out = args.out or str(RESULTS / (f"{problem}-phases.csv" if args.phases
                                          else f"{problem}.csv"))
    return args
