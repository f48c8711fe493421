"""The topkjoin Spark pipeline against the engine it wraps, in one run (issue 11).

``python -m streamspec.bench.pipeline_topkjoin [--items 1000000] [--partitions 1,2]``

The paper's default setting (its Section 6: omega 100 s, beta 60 s, as the
topkjoin throughput benchmark builds it): a seeded Zipf mention stream over the 400 users of the
real follower snapshots (``streamspec.bench.topkjoin.data.mentions``, seed 1,
x = 1), ``--evaluations`` 150 windows of omega 100 s sliding by beta 60 s from
t0 = the authors' first tweet, at the rate that gives ``--items`` items in all
(~11,000 per window for 1M; the count is Poisson, the CSV has the exact one);
the remote dataset is DS-CH-20 (seed 1) of those snapshots; K 5, N 10,
budget gamma 7, engine ``at-tsm``.  The stream and the timeline are written
once as Parquet (``id, x, ts`` and ``key, time, value``) in ``--work``.  The
CLI derives its default normalisation ranges from the inputs; the engine run
uses the same ranges (computed with the job's own ``default_stream_range``
and the timeline's ``value_range``, outside the timing).
Measured, all as wall-clock seconds in this one process run:

- ``engine``: the stream through ``engine.process()`` (``ItemBatch`` slices
  of ``--batch`` items, the columnar path) and ``flush()`` in this process,
  from memory, kernels compiled by a warm-up run first;
- ``cli-pP``: ``streamspec run topkjoin --engine at-tsm --partitions P`` in a
  subprocess: Spark's start, the read and validation, the replay, the write and
  the summary included.  Its rows (``window, tau, rank, id, score``) are
  checked equal to the engine run's, row by row.  The stream has no ``key``,
  so it is one key: its replay is one task whatever ``P`` (topkjoin state is
  path dependent, so it is replayed per key only, docs/pipeline.md), and ``cli-p2``
  shows what a second partition costs or saves, not a parallel speedup.

``--format csv`` writes the stream as CSV (header ``id,x,ts``) instead and
runs the CLI on that file: its Spark tasks parse the text
(``streamspec.pipeline.io.topkjoin_text``); with ``--driver`` too, the CLI runs
with that path turned off (``plan_text_items`` patched to decline every file,
in the CLI's process only), so the file is read and validated on the driver by
``read_items`` as before the text path: the "before" of the same input.  The
modes are then named ``cli-pP-csv`` and ``cli-pP-csv-driver``.

Rows go to ``bench/results/pipeline/topkjoin.csv`` (relative to the working
directory) with the commit, the machine, the 1-minute load average when the
row was measured, the ratios ``cli-p1 / engine`` and ``cli-p1 / cli-p2``.

``--phases`` instead runs the same CLI commands with their phases timed inside
the CLI's process (``streamspec.bench.pipeline_util``: prepare, of which the
reading and validation and the default stream range, session,
createDataFrame, replay, write, summary, startup, exit); ``--profile`` runs
them under ``py-spy record --subprocesses`` (driver and Python workers).
Rows go to ``bench/results/pipeline/topkjoin-phases.csv``; what each phase
spends its time on is in ``bench/results/pipeline/README.md``.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from streamspec.bench.pipeline_util import (add_run_arguments, append_rows, commit, load,
                                            machine, parse_run_arguments, phased_cli,
                                            run_cli)


def arguments(argv=None):
    p = argparse.ArgumentParser(prog="python -m streamspec.bench.pipeline_topkjoin",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--items", type=int, default=1_000_000,
                   help="expected stream length (default: 1000000)")
    p.add_argument("--evaluations", type=int, default=150, help="windows (default: 150)")
    p.add_argument("--k", type=int, default=5, help="answers per evaluation K (default: 5)")
    p.add_argument("--n", type=int, default=10, help="extra list slots N (default: 10)")
    p.add_argument("--budget", type=int, default=7, help="fetches per evaluation (default: 7)")
    p.add_argument("--ch", type=int, default=20, help="DS-CH changes per invocation (default: 20)")
    p.add_argument("--engine", default="at-tsm", help="engine (default: at-tsm)")
    p.add_argument("--seed", type=int, default=1, help="mention stream and DS-CH seed (default: 1)")
    p.add_argument("--batch", type=int, default=100_000,
                   help="items per process() call of the engine run (default: 100000)")
    p.add_argument("--format", choices=("parquet", "csv"), default="parquet",
                   help="file format of the stream (default: parquet)")
    p.add_argument("--driver", action="store_true",
                   help="with --format csv: the CLI reads the CSV on the driver (the path "
                        "before the text tasks; default: off)")
    add_run_arguments(p, "topkjoin", "the inputs are")
    return parse_run_arguments(p, argv, "topkjoin")


def make_inputs(args, work: Path):
    """``(ids, ts)`` in memory, the remote dataset, and the two Parquet files (written once)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from streamspec.bench.topkjoin.data import BETA, OMEGA, ds_ch, load_snapshots, mentions, timeline_rows
    from streamspec.spec.topkjoin_remote import TimelineDataset

    snapshots = load_snapshots()
    span = OMEGA + BETA * (args.evaluations - 1)
    ids, ts = mentions(list(snapshots), args.seed, evaluations=args.evaluations,
                       per_window=args.items * OMEGA / span)
    rows = list(timeline_rows(ds_ch(snapshots, args.ch, args.seed)))
    remote = TimelineDataset.from_rows(rows)
    items = work / f"mentions-{args.items}-e{args.evaluations}-seed{args.seed}.parquet"
    timeline = work / f"ds-ch{args.ch}-seed{args.seed}.parquet"
    for path, table in ((items, lambda: pa.table({"id": ids, "x": np.ones(ids.size), "ts": ts})),
                        (timeline, lambda: pa.table({
                            "key": pa.array([r[0] for r in rows], pa.int64()),
                            "time": pa.array([r[1] for r in rows], pa.int64()),
                            "value": pa.array([r[2] for r in rows], pa.float64())}))):
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            pq.write_table(table(), tmp, row_group_size=1 << 17)
            tmp.rename(path)
    if args.format == "csv":
        text = items.with_suffix(".csv")
        if not text.exists():
            import pandas as pd
            tmp = text.with_suffix(".tmp")
            pd.DataFrame({"id": ids, "x": np.ones(ids.size, np.int64), "ts": ts}).to_csv(
                tmp, index=False)
            tmp.rename(text)
        items = text
    return ids, ts, remote, items, timeline


def params_of(args, ids, ts, remote):
    """The parameters the CLI derives from these inputs and flags (its default ranges)."""
    import numpy as np
    import pandas as pd

    from streamspec.bench.topkjoin.data import BETA, OMEGA, T0
    from streamspec.pipeline.jobs.topkjoin import default_stream_range
    from streamspec.spec.topkjoin import Params

    kw = dict(omega=OMEGA, beta=BETA, aggregate="sum", t0=T0)
    frame = pd.DataFrame({"key": np.zeros(ids.size, np.int64), "id": ids, "x": np.ones(ids.size),
                          "t": ts})
    srange = default_stream_range(argparse.Namespace(frame=frame), kw)
    lo, hi = remote.value_range()
    return Params(k=args.k, n=args.n, budget=args.budget, weights=(0.7, 0.3), stream_range=srange,
                  remote_range=(lo, hi) if hi > lo else (lo, lo + 1.0), remote=remote, seed=0, **kw)


def rows_of(evaluations) -> list[tuple]:
    """The CLI's output rows of a list of ``Evaluation`` (rank 0 for an empty answer)."""
    rows = []
    for e in evaluations:
        if not e.answer:
            rows.append((e.window, e.tau, 0, None, None))
        for rank, (key, score) in enumerate(e.answer, 1):
            rows.append((e.window, e.tau, rank, key, float(score)))
    return rows


def replay(cls, params, ids, ts, batch: int) -> list:
    import numpy as np

    from streamspec.spec.topkjoin import ItemBatch

    engine = cls(params)
    x = np.ones(ids.size)
    out = []
    for a in range(0, ids.size, batch):
        out.extend(engine.process(ItemBatch(ids[a:a + batch], x[a:a + batch], ts[a:a + batch])))
    out.extend(engine.flush())
    return out


def warm_up(args, params, ids, ts):
    """The engine class, its kernels compiled (and in numba's cache, which the CLI then loads)."""
    from streamspec.spec.registry import Registry

    cls = Registry.get("topkjoin", args.engine)
    replay(cls, params, ids[:20_000], ts[:20_000], args.batch)
    return cls


def engine_alone(args, ids, ts, remote) -> tuple[float, list]:
    params = params_of(args, ids, ts, remote)
    cls = warm_up(args, params, ids, ts)
    started = time.perf_counter()
    evaluations = replay(cls, params, ids, ts, args.batch)
    elapsed = time.perf_counter() - started
    return elapsed, rows_of(evaluations)


def cli_argv(args, items: Path, timeline: Path, partitions: int, out: Path) -> list[str]:
    from streamspec.bench.topkjoin.data import BETA, OMEGA, T0

    argv = ["run", "topkjoin", "--input", str(items), "--remote", str(timeline),
            "--window", str(OMEGA), "--slide", str(BETA), "--k", str(args.k), "--n", str(args.n),
            "--budget", str(args.budget), "--engine", args.engine, "--origin", str(T0),
            "--partitions", str(partitions), "--output", str(out), "--overwrite", "--no-progress"]
    return argv + (["--master", args.master] if args.master else [])


def output_rows(path: Path) -> list[tuple]:
    import pyarrow.parquet as pq
    table = pq.read_table(path).sort_by([("window", "ascending"), ("rank", "ascending")])
    cols = ["window", "tau", "rank", "id", "score"]
    return list(zip(*(table.column(c).to_pylist() for c in cols)))


def suffix(args) -> str:
    """The mode's suffix naming the input's format and reader (module docstring)."""
    return "" if args.format == "parquet" else "-csv-driver" if args.driver else "-csv"


DRIVER_CLI = ("import sys\n"
              "import streamspec.pipeline.io.topkjoin_text as text\n"
              "text.plan_text_items = lambda *a, **k: None   # the driver's reader takes it\n"
              "from streamspec.pipeline import cli\n"
              "sys.exit(cli.main(sys.argv[1:]))\n")


def driver_cli(argv: list[str], timeout: float | None) -> tuple[float, str]:
    """``run_cli`` with the text path turned off (``--driver``): wall seconds and stdout."""
    import subprocess
    full = [sys.executable, "-c", DRIVER_CLI, *argv]
    started = time.perf_counter()
    try:
        done = subprocess.run(full, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SystemExit(f"the driver-path CLI did not finish in {timeout:.0f} s (killed)") from None
    elapsed = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"the driver-path CLI exited {done.returncode}:\n{done.stderr[-3000:]}")
    return elapsed, done.stdout


def main(argv=None) -> int:
    args = arguments(argv)
    counts = [int(x) for x in args.partitions.split(",")]
    with tempfile.TemporaryDirectory(prefix="streamspec-bench-pipeline-topkjoin-") as tmp:
        work = Path(args.work or tmp)
        work.mkdir(parents=True, exist_ok=True)
        ids, ts, remote, items, timeline = make_inputs(args, work)
        print(f"{ids.size} items", flush=True)
        if args.phases:
            warm_up(args, params_of(args, ids, ts, remote), ids, ts)
            return write_phases(args, ids.size, items, timeline, counts, Path(tmp))
        alone, want = engine_alone(args, ids, ts, remote)
        print(f"engine alone: {alone:.2f} s, {len(want)} rows", flush=True)
        rows = [dict(mode="engine", partitions=0, wall_s=round(alone, 3), rows=len(want),
                     load=load())]
        for p in counts:
            out = Path(tmp) / f"out-p{p}"
            wall, stdout = (driver_cli if args.driver else run_cli)(
                cli_argv(args, items, timeline, p, out), args.timeout)
            got = output_rows(out)
            print(f"cli --partitions {p}: {wall:.1f} s, {len(got)} rows | "
                  f"{stdout.strip().splitlines()[0] if stdout.strip() else ''}", flush=True)
            if got != want:
                bad = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b),
                           min(len(got), len(want)))
                raise SystemExit(f"--partitions {p} wrote other rows than the engine's: first "
                                 f"difference at row {bad}: cli {got[bad:bad + 1]} engine "
                                 f"{want[bad:bad + 1]} ({len(got)} vs {len(want)} rows)")
            rows.append(dict(mode=f"cli-p{p}{suffix(args)}", partitions=p, wall_s=round(wall, 3), rows=len(got),
                             load=load()))
    by = {r["mode"].removesuffix(suffix(args)): r["wall_s"] for r in rows}
    ratios = {}
    if "cli-p1" in by:
        ratios["cli_p1_over_engine"] = round(by["cli-p1"] / by["engine"], 2)
    if "cli-p1" in by and "cli-p2" in by:
        ratios["cli_p1_over_cli_p2"] = round(by["cli-p1"] / by["cli-p2"], 2)
    for name, value in ratios.items():
        print(f"{name.replace('_over_', ' / ').replace('_', '-')} = {value}")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    fixed = dict(when=stamp, commit=commit(), machine=machine(), items=ids.size,
                 evaluations=args.evaluations, k=args.k, n=args.n, budget=args.budget, ch=args.ch,
                 engine=args.engine, **ratios)
    fields = ["when", "commit", "machine", "items", "evaluations", "k", "n", "budget", "ch", "engine",
              "mode", "partitions", "wall_s", "rows", "load", "cli_p1_over_engine",
              "cli_p1_over_cli_p2"]
    append_rows(args.out, fields, [{**fixed, **r} for r in rows])
    return 0


def write_phases(args, n_items: int, items: Path, timeline: Path, counts: list[int],
                 tmp: Path) -> int:
    for p in counts:
        profile = (Path(args.work or tmp) / f"pyspy-topkjoin-{args.items}-p{p}.txt"
                   if args.profile else None)
        wall, _, timed = phased_cli(cli_argv(args, items, timeline, p, tmp / f"phases-p{p}"),
                                    args.timeout, profile)
        print(f"--partitions {p}: {wall:.1f} s: " + ", ".join(f"{k} {v:.1f}" for k, v in timed.items())
              + (f" (py-spy: {profile})" if profile else ""), flush=True)
        stamp, head = time.strftime("%Y-%m-%dT%H:%M:%S"), commit()
        append_rows(args.out, ["when", "commit", "items", "partitions", "phase", "wall_s", "load",
                               "profiled"],
                    [dict(when=stamp, commit=head, items=n_items, partitions=p, phase=phase,
                          wall_s=wall, load=load(), profiled=bool(profile))
                     for phase, wall in [*timed.items(), ("total", round(wall, 3))]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
