"""Latency of swoop at 80% of its maximum set rate (SWOOP Section 7.3): the
maximum, P50 and P99 latency of a set and the maximum input queue.

    python -m streamspec.bench.simjoin.latency --windows 10000,100000,1000000 --k 10 --sets 1000000
    python -m streamspec.bench.simjoin.latency --windows 10000 --rate 47200 --no-plot   # the paper's rate

The paper replays TWEET with its timestamps rewritten to a constant number of
sets per second, at 80% of the stream rate SWOOP sustains for that window size,
and measures each set's latency: from its appearance in the stream to the update
of the top-k result, waiting in the input queue included.  Here, for each
window size ``w``:

1. the maximum rate is measured as ``streamspec.bench.simjoin.throughput``
   does (a fresh engine, the window filled with ``w`` sets of the TWEET-like
   stream, then ``--sets`` sets in batches of 10,000, CPU clock);
2. a fresh engine is filled the same way and the same ``--sets`` sets arrive at
   a constant rate of ``--load-factor`` (0.8) times that maximum, on a
   *simulated clock that advances by the CPU time the server spends*: a
   single server takes every set that has arrived (at most 10,000) as one
   ``RecordBatch``, really runs ``process`` on it (slicing the batch off the
   stream included) and the clock moves on by the ``time.process_time`` that
   took; when the queue is empty the clock jumps to the next arrival.  Each set
   of a batch gets the latency ``clock at the batch's end - its arrival``; the
   queue (sets arrived and not yet taken into service) is read at each batch's
   end, where it peaks.

As in the throughput experiment, one full garbage collection runs after the
fill (``gc.collect()``), so the process's first one (~60 ms: every object the
imports made) is not served as one set's latency.

This is a discrete-event run of a single-server FIFO queue whose service times
are the engine's real CPU times, measured as it runs, not a real-time paced
run: the shared machine's preemption (other processes' load) does not count,
the Python/numba per-call cost of ``process`` does (about 60 us a call on the
development machine, against ~6 us a set in a large batch), which is why the
server takes the whole queue as one batch (micro-batching) instead of one set
a call as the paper's C++ does: one set per call would not sustain 80% of the
batched maximum.  Writes ``latency-<generator>-k<k>.csv`` (one row per window
size; with ``--append`` added to the rows already there, each with ``commit``,
``machine``, 1-minute ``load`` at its start-end and ``--label``) and a PNG of
the latency of each set against its arrival under ``--out``.  ``--rate`` replaces
the 80% by a fixed rate (the paper's own 80%-load rates, to compare at the same
arrivals); ``load_factor`` in the CSV is then that rate over the measured maximum.
"""
from __future__ import annotations

import argparse
import gc
import os
import resource
import time

import numpy as np

from streamspec.bench.pipeline_util import commit, load, machine
from streamspec.bench.simjoin.throughput import (GENERATORS, STEP, append_csv, measure,
                                                 window_slice, write_csv)
from streamspec.spec.registry import Registry
from streamspec.spec.simjoin import Params, RecordBatch

# the paper's Section 7.3 figures: |W| -> (sets/s at 80%, maximum latency s, maximum queue)
PAPER = {10_000: (4.72e4, 0.25, 12_015), 1_000_000: (3.62e4, 0.03, 1365)}
# swoop's state housekeeping (engines/simjoin/swoop.py): growing its record and token rings, its
# index arena, its stock and output buffers (before 2026-11-28's de-amortization also dropping
# expired records, ``_compact``, and compacting the arena, in ``_grow_arena``).
# Timed per batch (a diagnosis column: which batches are slow because of it), when the engine has them.
HOUSEKEEPING = ("_compact", "_grow_rings", "_grow_arena", "_grow_stock", "_grow_out")


def _timed(method, acc: list):
    def wrapper(*args, **kwargs):
        t0 = time.process_time()
        try:
            return method(*args, **kwargs)
        finally:
            acc[0] += time.process_time() - t0
    return wrapper


def replay(engine: str, stream: RecordBatch, w: int, k: int, sets: int, rate: float,
           similarity: str = "jaccard", max_batch: int = STEP) -> dict:
    """Fill a fresh ``engine`` with the first ``w`` sets of ``stream`` (untimed), then
    let the next ``sets`` sets arrive every ``1 / rate`` simulated seconds and serve
    them FIFO as described in the module docstring.  Returns the per-set latencies
    (seconds, in arrival order), the queue at each batch's end, the batch sizes and
    service times, and the outputs (top-k updates) produced."""
    eng = Registry.get("simjoin", engine)(Params(k=k, w=w, similarity=similarity))
    warm = min(w, len(stream) - sets)
    for a in range(0, warm, STEP):
        list(eng.process(window_slice(stream, a, min(a + STEP, warm))))
    gc.collect()              # the process's first full collection, outside the replay (as in measure)
    chores = [0.0]                         # CPU time in the engine's housekeeping, this batch
    for name in HOUSEKEEPING:
        if hasattr(eng, name):
            setattr(eng, name, _timed(getattr(eng, name), chores))
    n = min(sets, len(stream) - warm)
    arrival = np.arange(n, dtype=np.float64) / rate
    latency = np.empty(n, dtype=np.float64)
    queues, batches, services, housekeeping, system, faults = [], [], [], [], [], []
    outputs = 0
    clock, i = 0.0, 0

    def arrived(t: float) -> int:          # sets arrived by simulated time t
        return min(n, int(t * rate) + 1)

    while i < n:
        if arrival[i] > clock:             # idle server: wait for the next set
            clock = arrival[i]
        j = max(i + 1, min(arrived(clock), i + max_batch))   # i has arrived (float rounding)
        chores[0] = 0.0
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.process_time()
        outputs += len(list(eng.process(window_slice(stream, warm + i, warm + j))))
        spent = time.process_time() - t0
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        housekeeping.append(chores[0])
        system.append(r1.ru_stime - r0.ru_stime)     # the OS's share (page faults), a diagnosis
        faults.append(r1.ru_minflt - r0.ru_minflt)
        clock += spent
        latency[i:j] = clock - arrival[i:j]
        queues.append(arrived(clock) - j)
        batches.append(j - i)
        services.append(spent)
        i = j
    return {"latency": latency, "queue": np.asarray(queues), "batch": np.asarray(batches),
            "service": np.asarray(services), "housekeeping": np.asarray(housekeeping),
            "system": np.asarray(system), "faults": np.asarray(faults),
            "outputs": outputs, "arrival": arrival}


def summarize(run: dict, rate: float) -> dict:
    lat, q, b, s = run["latency"], run["queue"], run["batch"], run["service"]
    return {"sets": lat.size, "rate": round(rate, 1),
            "lat_p50_ms": round(float(np.percentile(lat, 50)) * 1e3, 3),
            "lat_p99_ms": round(float(np.percentile(lat, 99)) * 1e3, 3),
            "lat_max_ms": round(float(lat.max()) * 1e3, 3),
            "queue_max": int(q.max()), "queue_mean": round(float(q.mean()), 1),
            "batches": b.size, "batch_mean": round(float(b.mean()), 1), "batch_max": int(b.max()),
            "service_max_ms": round(float(s.max()) * 1e3, 3),
            "housekeeping_max_ms": round(float(run["housekeeping"].max()) * 1e3, 3),
            "housekeeping_in_service_max_ms": round(float(run["housekeeping"][s.argmax()]) * 1e3, 3),
            "system_in_service_max_ms": round(float(run["system"][s.argmax()]) * 1e3, 3),
            "faults_in_service_max": int(run["faults"][s.argmax()]),
            "user_service_max_ms": round(float((s - run["system"]).max()) * 1e3, 3),
            "system_s": round(float(run["system"].sum()), 3),
            "busy": round(float(s.sum()) / max(float(run["arrival"][-1]), 1e-12), 3),
            "outputs": run["outputs"]}


def plot(runs: list[tuple[int, float, dict]], path: str, k: int) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(10, 4))
    for w, rate, run in runs:
        ax.plot(run["arrival"], run["latency"] * 1e3, linewidth=0.6,
                label=f"|W| = {w:.0e}, {rate:.3g} sets/s")
        if w in PAPER:
            ax.axhline(PAPER[w][1] * 1e3, linestyle="--", linewidth=0.8,
                       color=ax.lines[-1].get_color(), label=f"paper's maximum, |W| = {w:.0e}")
    ax.set_yscale("log")
    ax.set_xlabel("arrival (simulated s, CPU clock)"), ax.set_ylabel("latency (ms)")
    ax.set_title(f"swoop latency at a constant arrival rate, TWEET-like, k={k}")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))   # outside: the spikes fill the axes
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", default="swoop")
    ap.add_argument("--windows", default="10000,100000")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--sets", type=int, default=200_000, help="sets replayed after the window is full")
    ap.add_argument("--load-factor", type=float, default=0.8, help="arrival rate / maximum rate")
    ap.add_argument("--rate", type=float, default=0.0,
                    help="arrival rate in sets/s instead of --load-factor times the measured maximum "
                         "(e.g. the paper's 80%% rate, 47200 at |W| = 1e4, 36200 at 1e6)")
    ap.add_argument("--generator", choices=sorted(GENERATORS), default="tweet")
    ap.add_argument("--budget", type=float, default=60.0, help="CPU seconds for the maximum-rate run")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.path.join("bench", "results", "simjoin"))
    ap.add_argument("--append", action="store_true", help="add the rows to the existing CSV")
    ap.add_argument("--label", default="", help="a note stored in each row")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)
    windows = [int(x) for x in args.windows.split(",")]
    stream = GENERATORS[args.generator](max(windows) + args.sets, seed=args.seed)
    rows, runs = [], []
    for w in windows:
        load0 = load()
        peak = measure(args.engine, stream, w, args.k, args.sets, args.budget)
        rate = args.rate or args.load_factor * peak["sets_per_s"]
        run = replay(args.engine, stream, w, args.k, args.sets, rate)
        row = {"engine": args.engine, "generator": args.generator, "w": w, "k": args.k,
               "max_rate": peak["sets_per_s"],
               "load_factor": round(rate / peak["sets_per_s"], 3), **summarize(run, rate)}
        paper = PAPER.get(w)
        row.update(paper_rate=paper[0] if paper else "", paper_lat_max_ms=paper[1] * 1e3 if paper else "",
                   paper_queue_max=paper[2] if paper else "",
                   commit=commit(), machine=machine(), load=f"{load0}-{load()}", label=args.label)
        print(row, flush=True)
        rows.append(row)
        runs.append((w, rate, run))
    os.makedirs(args.out, exist_ok=True)
    name = f"latency-{args.generator}-k{args.k}"
    if args.append:
        append_csv(rows, os.path.join(args.out, f"{name}.csv"))
    else:
        write_csv(rows, os.path.join(args.out, f"{name}.csv"))
    if not args.no_plot:
        plot(runs, os.path.join(args.out, f"{name}.png"), args.k)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
