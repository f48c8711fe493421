"""The simjoin Spark pipeline against the engine it wraps, in one run (issue 11).

``python -m streamspec.bench.pipeline_simjoin [--sets 1000000] [--partitions 1,2]``

The stream: TWEET-like sets (``streamspec.bench.simjoin.generators.tweet_like``,
``--seed`` 1, one set per time unit, ~13.4 Zipf tokens per set, 10% retweet-like
near copies), as the simjoin throughput benchmark builds it; written once as
Parquet (``id`` long, ``ts`` long, ``tokens`` list<long>) in ``--work``.  The
query: the throughput benchmark's and the README's headline setting, ``k`` 10,
``w`` 10000 (so |W| = 1e4 sets), Jaccard, self join, engine ``swoop``.
Measured, all as wall-clock seconds in this one process run:

- ``engine``: the same stream through ``engine.process()`` (``RecordBatch``
  slices of ``--batch`` sets, the columnar path) and ``flush()`` in this
  process, from memory, kernels compiled by a warm-up run first;
- ``cli-pP``: ``streamspec run simjoin --engine swoop --partitions P`` in a
  subprocess: Spark's start, the read and validation, the replay, the write and
  the summary included.  Its rows (``event, ts, rank, id_new, id_old, score,
  end_time``) are checked equal to the engine run's, row by row.

Rows go to ``bench/results/pipeline/simjoin.csv`` (relative to the working
directory) with the commit, the machine, the 1-minute load average when the
row was measured, the ratios ``cli-p1 / engine`` and ``cli-p1 / cli-p2``.

``--phases`` instead runs the same CLI commands with their phases timed inside
the CLI's process (``streamspec.bench.pipeline_util``: prepare, of which the
reading and validation, session, createDataFrame, replay, write, summary,
startup, exit); ``--profile`` runs them under ``py-spy record --subprocesses``
(driver and Python workers).  Rows go to
``bench/results/pipeline/simjoin-phases.csv``; what each phase spends its time
on is in ``bench/results/pipeline/README.md``.
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
    p = argparse.ArgumentParser(prog="python -m streamspec.bench.pipeline_simjoin",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--sets", type=int, default=1_000_000, help="stream length (default: 1000000)")
    p.add_argument("--k", type=int, default=10, help="result pairs k (default: 10)")
    p.add_argument("--window", type=int, default=10_000,
                   help="window w in time units = sets (default: 10000)")
    p.add_argument("--similarity", default="jaccard", help="similarity (default: jaccard)")
    p.add_argument("--engine", default="swoop", help="engine (default: swoop)")
    p.add_argument("--seed", type=int, default=1, help="generator seed (default: 1)")
    p.add_argument("--batch", type=int, default=10_000,
                   help="sets per process() call of the engine run (default: 10000)")
    add_run_arguments(p, "simjoin", "the Parquet stream is")
    return parse_run_arguments(p, argv, "simjoin")


def make_inputs(args, work: Path):
    """The stream (a ``RecordBatch`` in memory) and its Parquet file, written once per size."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from streamspec.bench.simjoin.generators import tweet_like

    stream = tweet_like(args.sets, seed=args.seed)
    parquet = work / f"tweet-{args.sets}-seed{args.seed}.parquet"
    if not parquet.exists():
        tokens = pa.ListArray.from_arrays(pa.array(stream.tok_ptr.astype(np.int32)),
                                          pa.array(stream.tok, pa.int64()))
        table = pa.table({"id": pa.array(stream.id, pa.int64()), "ts": pa.array(stream.ts, pa.int64()),
                          "tokens": tokens})
        tmp = parquet.with_suffix(".tmp")
        pq.write_table(table, tmp, row_group_size=1 << 17)
        tmp.rename(parquet)
    return stream, parquet


def params_of(args):
    from streamspec.spec.simjoin import Params
    return Params(k=args.k, w=args.window, similarity=args.similarity)


def rows_of(topks) -> list[tuple]:
    """The CLI's output rows of a list of ``TopK`` (rank 0 with null ids for an empty list)."""
    rows = []
    for event, topk in enumerate(topks):
        if not topk.pairs:
            rows.append((event, float(topk.ts), 0, None, None, None, None))
        for rank, (a, b, score, end) in enumerate(topk.pairs, 1):
            rows.append((event, float(topk.ts), rank, a, b, float(score), float(end)))
    return rows


def warm_up(args):
    """The engine class, its kernels compiled (and in numba's cache, which the CLI then loads)."""
    from streamspec.bench.simjoin.generators import tweet_like
    from streamspec.spec.registry import Registry

    cls = Registry.get("simjoin", args.engine)
    engine = cls(params_of(args))
    list(engine.process(tweet_like(20_000, seed=args.seed + 1))), engine.flush()
    return cls


def engine_alone(args, stream) -> tuple[float, list]:
    from streamspec.bench.simjoin.throughput import window_slice

    cls = warm_up(args)
    engine = cls(params_of(args))
    n = len(stream)
    started = time.perf_counter()
    topks = []
    for a in range(0, n, args.batch):
        topks.extend(engine.process(window_slice(stream, a, min(a + args.batch, n))))
    topks.extend(engine.flush())
    elapsed = time.perf_counter() - started
    return elapsed, rows_of(topks)


def cli_argv(args, parquet: Path, partitions: int, out: Path) -> list[str]:
    argv = ["run", "simjoin", "--input", str(parquet), "--k", str(args.k),
            "--window", str(args.window), "--similarity", args.similarity, "--engine", args.engine,
            "--partitions", str(partitions), "--output", str(out), "--overwrite", "--no-progress"]
    return argv + (["--master", args.master] if args.master else [])


def output_rows(path: Path) -> list[tuple]:
    import pyarrow.parquet as pq
    table = pq.read_table(path).sort_by([("event", "ascending"), ("rank", "ascending")])
    cols = ["event", "ts", "rank", "id_new", "id_old", "score", "end_time"]
    return list(zip(*(table.column(c).to_pylist() for c in cols)))


def main(argv=None) -> int:
    args = arguments(argv)
    counts = [int(x) for x in args.partitions.split(",")]
    with tempfile.TemporaryDirectory(prefix="streamspec-bench-pipeline-simjoin-") as tmp:
        work = Path(args.work or tmp)
        work.mkdir(parents=True, exist_ok=True)
        stream, parquet = make_inputs(args, work)
        if args.phases:
            warm_up(args)
            return write_phases(args, parquet, counts, Path(tmp))
        alone, want = engine_alone(args, stream)
        print(f"engine alone: {alone:.2f} s, {len(want)} rows", flush=True)
        rows = [dict(mode="engine", partitions=0, wall_s=round(alone, 3), rows=len(want),
                     load=load())]
        for p in counts:
            out = Path(tmp) / f"out-p{p}"
            wall, stdout = run_cli(cli_argv(args, parquet, p, out), args.timeout)
            got = output_rows(out)
            print(f"cli --partitions {p}: {wall:.1f} s, {len(got)} rows | "
                  f"{stdout.strip().splitlines()[0] if stdout.strip() else ''}", flush=True)
            if got != want:
                bad = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b),
                           min(len(got), len(want)))
                raise SystemExit(f"--partitions {p} wrote other rows than the engine's: first "
                                 f"difference at row {bad}: cli {got[bad:bad + 1]} engine "
                                 f"{want[bad:bad + 1]} ({len(got)} vs {len(want)} rows)")
            rows.append(dict(mode=f"cli-p{p}", partitions=p, wall_s=round(wall, 3), rows=len(got),
                             load=load()))
    by = {r["mode"]: r["wall_s"] for r in rows}
    ratios = {}
    if "cli-p1" in by:
        ratios["cli_p1_over_engine"] = round(by["cli-p1"] / by["engine"], 2)
    if "cli-p1" in by and "cli-p2" in by:
        ratios["cli_p1_over_cli_p2"] = round(by["cli-p1"] / by["cli-p2"], 2)
    for name, value in ratios.items():
        print(f"{name.replace('_over_', ' / ').replace('_', '-')} = {value}")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    fixed = dict(when=stamp, commit=commit(), machine=machine(), sets=args.sets, k=args.k,
                 window=args.window, similarity=args.similarity, engine=args.engine, **ratios)
    fields = ["when", "commit", "machine", "sets", "k", "window", "similarity", "engine", "mode",
              "partitions", "wall_s", "rows", "load", "cli_p1_over_engine", "cli_p1_over_cli_p2"]
    append_rows(args.out, fields, [{**fixed, **r} for r in rows])
    return 0


def write_phases(args, parquet: Path, counts: list[int], tmp: Path) -> int:
    for p in counts:
        profile = Path(args.work or tmp) / f"pyspy-simjoin-{args.sets}-p{p}.txt" if args.profile else None
        wall, _, timed = phased_cli(cli_argv(args, parquet, p, tmp / f"phases-p{p}"), args.timeout,
                                    profile)
        print(f"--partitions {p}: {wall:.1f} s: " + ", ".join(f"{k} {v:.1f}" for k, v in timed.items())
              + (f" (py-spy: {profile})" if profile else ""), flush=True)
        stamp, head = time.strftime("%Y-%m-%dT%H:%M:%S"), commit()
        append_rows(args.out, ["when", "commit", "sets", "partitions", "phase", "wall_s", "load",
                               "profiled"],
                    [dict(when=stamp, commit=head, sets=args.sets, partitions=p, phase=phase,
                          wall_s=wall, load=load(), profiled=bool(profile))
                     for phase, wall in [*timed.items(), ("total", round(wall, 3))]])
    return 0

if __name__ == "__main__":
    sys.exit(main())
