"""Throughput and memory of the top-k join engines against the stream rate (issue 5 targets).

``python -m streamspec.bench.topkjoin.throughput [--rates 1e3,1e4,1e5,1e6] [--evaluations 30]
[--engines at-tsm,...]`` replays a seeded Zipf mention stream over the 400
users of the real data (DS-CH-20 remote values, K 5, N 10, gamma 7) at each
rate (items per 100 s window), in batches of 100 000 items, and writes
``bench/results/topkjoin/throughput.csv``: items/s of ``process`` + ``flush``
(generation excluded; numba compilation excluded by a warm-up run; best of
three runs) on the CPU clock of the process (``items_per_cpu_s``: the
per-core rate, robust on a shared machine) and on the wall clock
(``items_per_s``), and, in a further run, the engine's state: the most rows
held after a batch (``memory_rows``: list entries + per-slot partial
aggregates) and the peak traced Python allocation during the replay
(``tracemalloc``; it includes each 100 000-item batch's temporaries).
"""
from __future__ import annotations

import argparse
import csv
import time
import tracemalloc

import numpy as np

from streamspec.bench.topkjoin.data import BETA, OMEGA, T0, ds_ch, load_snapshots, mentions, timeline_rows
from streamspec.bench.topkjoin.experiment import RESULTS
from streamspec.spec.registry import Registry
from streamspec.spec.topkjoin import ItemBatch, Params
from streamspec.spec.topkjoin_remote import TimelineDataset

BATCH = 100_000


def replay(engine: str, params: Params, ids, ts, trace: bool) -> tuple[float, float, int, int]:
    """Wall and CPU seconds, peak traced bytes (``trace``) and the most state rows after a batch."""
    e = Registry.get("topkjoin", engine)(params)
    x = np.ones(ids.size)
    most = 0
    if trace:
        tracemalloc.start()
    began, cpu = time.perf_counter(), time.process_time()
    for a in range(0, ids.size, BATCH):
        for _ in e.process(ItemBatch(ids[a:a + BATCH], x[a:a + BATCH], ts[a:a + BATCH])):
            pass
        most = max(most, e.memory_rows())
    e.flush()
    elapsed, cpu = time.perf_counter() - began, time.process_time() - cpu
    peak = tracemalloc.get_traced_memory()[1] if trace else 0
    if trace:
        tracemalloc.stop()
    return elapsed, cpu, peak, most


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rates", default="1e3,1e4,1e5,1e6")
    ap.add_argument("--evaluations", type=int, default=30)
    ap.add_argument("--engines", default="at-tsm,at-bsm,wsj-wbm,topkn,mintopk")
    args = ap.parse_args(argv)
    snapshots = load_snapshots()
    remote = TimelineDataset.from_rows(timeline_rows(ds_ch(snapshots, 20, 1)))
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = []
    for rate in (float(r) for r in args.rates.split(",")):
        ids, ts = mentions(list(snapshots), 1, evaluations=args.evaluations, per_window=rate)
        params = Params(omega=OMEGA, beta=BETA, k=5, n=10, budget=7, t0=T0, remote=remote,
                        stream_range=(1.0, max(2.0, rate)), remote_range=remote.value_range())
        for engine in args.engines.split(","):
            replay(engine, params, ids, ts, False)            # warm-up: numba compilation
            runs = [replay(engine, params, ids, ts, False) for _ in range(3)]
            elapsed = min(r[0] for r in runs)
            cpu = min(r[1] for r in runs)
            _, _, peak, rows = replay(engine, params, ids, ts, True)
            row = dict(engine=engine, items_per_window=int(rate), items=int(ids.size),
                       cpu_seconds=round(cpu, 4), items_per_cpu_s=round(ids.size / cpu),
                       seconds=round(elapsed, 4), items_per_s=round(ids.size / elapsed),
                       peak_traced_mb=round(peak / 2 ** 20, 2), state_rows=rows)
            out.append(row)
            print(row, flush=True)
    with open(RESULTS / "throughput.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0]))
        w.writeheader()
        w.writerows(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
