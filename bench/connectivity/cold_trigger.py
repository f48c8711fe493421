"""Where a window's triggering call spends its microseconds on evicted caches (issue 28).

BIC's latency (technical report Section 7.1) is one edge's ``process`` call: the
window's queries and that edge's insert.  In ``measure``'s runs that call follows a
slide of inserts whose random reads and writes over the engine's records have
evicted the caches, so every Python frame, numpy call and object the call touches
misses: on the YG-shaped stream (3.2M vertices, 150K-edge slides) the 32 MB L3 is
replaced entirely and msf's call costs ~50 us where its kernel takes ~2 us; on
R-MAT 10M (smaller records, smaller slides) partly.  Those runs cannot say which
step costs what, and their P99 moves by tens of microseconds with whatever else the
host runs.

This harness replays the situation under control.  An engine is fed half of a
1M-edge R-MAT stream; then, for each trigger, a numba kernel writes ``--evict``
random int64 cells of a 256 MB array (150K: part of the L3 replaced, like R-MAT;
600K: all of it, like YG), and one edge between the first edge's ends, one slide
later, is fed through ``process`` (one window due) and timed on the CPU clock as
``measure`` times it.  Each engine is run beside four ablations of itself, the
five fed in a random order at every trigger so that host noise falls on all alike:

- ``process``: ``process`` yields a result built in advance (a generator, ``list``,
  the clock itself: the floor of any call);
- ``feed``: the driver's ``_feed_int64`` for real, ``_run`` returns a row made in
  advance and ``_results`` a list made in advance;
- ``run``: also the engine's ``_run`` (the kernel), ``_results`` made in advance;
- ``full``: the engine as shipped.

Differences of P50 give the stages: ``process``, feed (validation, id remapping,
the windows due), run (the hook: kernel and its Python), results (the
``WindowResult``).  The ablations are measurement devices, not engines: their
answers are wrong by construction, so nothing checks them.

``python -m streamspec.bench.connectivity.cold_trigger --engines msf,bic --evict 150000,600000``
appends rows to ``bench/results/connectivity/cold-trigger.csv``.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

import numpy as np

from streamspec.bench.connectivity.generators import rmat_stream, workload
from streamspec.bench.pipeline_util import commit
from streamspec.bench.runlog import append_rows
from streamspec.spec._numba import njit
from streamspec.spec.connectivity import EdgeBatch, Params, WindowResult
from streamspec.spec.registry import Registry

RESULTS = Path("bench", "results", "connectivity")   # relative to the checkout
VARIANTS = ("process", "feed", "run", "full")
THRASH_BYTES = 256 << 20


@njit(cache=True)
def evict(big, cells):
    """Read and write ``big`` at ``cells`` (random), as a slide of inserts does."""
    acc = 0
    for i in cells:
        acc += big[i]
        big[i] = acc & 7
    return acc


def ablation(cls, variant: str):
    """``cls`` with the stages after ``variant`` replaced by results made in advance."""
    if variant == "full":
        return cls
    made = {}

    def one_window(self, lo, upto, answers):
        if upto != lo + 1:          # the warm-up's many windows: the real thing
            return cls._results(self, lo, upto, answers)
        if "results" not in made:
            made["results"] = cls._results(self, lo, upto, answers)
        return made["results"]

    def no_kernel(self, u, v, t, upto):
        if upto != self.next_window + 1:
            return cls._run(self, u, v, t, upto)
        if "row" not in made:
            made["row"] = np.zeros((1, len(self.queries)), dtype=bool)
        return made["row"]

    def canned(self, events):
        if self.closed:
            raise RuntimeError("flushed")
        if "one" not in made:
            made["one"] = WindowResult(0, 0, 1, (False,) * len(self.queries))
        yield made["one"]

    body = {"run": {"_results": one_window},
            "feed": {"_results": one_window, "_run": no_kernel},
            "process": {"process": canned}}[variant]
    return type(f"{cls.__name__}_{variant}", (cls,), dict(body))


def measure(engines: list[str], evictions: list[int], triggers: int, seed: int = 0,
            edges: int = 1_000_000, thrash_bytes: int = THRASH_BYTES) -> list[dict]:
    """One row per engine, ablation and eviction (``VARIANTS``; module docstring)."""
    stream = rmat_stream(edges // 10, edges, 1000, seed=seed)
    r = max(2, edges // 10_000)         # 1000 edges a time unit: 1M edges, r 100 s 5
    params = Params(r=r, s=max(1, r // 20), workload=workload(stream, 100, seed=seed))
    half = len(stream) // 2
    big = np.zeros(thrash_bytes // 8, np.int64)
    rng = np.random.default_rng(seed)
    rows = []
    for cells in evictions:
        subjects = []
        for name in engines:
            cls = type(Registry.create("connectivity", name, params, hold_back=False))
            for variant in VARIANTS:
                engine = ablation(cls, variant)(params, hold_back=False)
                list(engine.process(stream.batch(0, half)))
                subjects.append((name, variant, engine))
        where = rng.integers(0, big.size, cells)
        evict(big, where[:10])
        a, b = int(stream.u[0]), int(stream.v[0])
        t = int(stream.t[half - 1])
        took = [[] for _ in subjects]
        load = os.getloadavg()[0]
        now = time.process_time
        gc.collect()
        gc.freeze()
        try:
            for _ in range(triggers):
                t += params.s
                for k in rng.permutation(len(subjects)):
                    edge = EdgeBatch(np.array([a], np.int64), np.array([b], np.int64),
                                     np.array([t], np.int64))
                    evict(big, where)
                    start = now()
                    out = list(subjects[k][2].process(edge))
                    took[k].append(now() - start)
                    assert len(out) == 1
        finally:
            gc.unfreeze()
        for (name, variant, _), xs in zip(subjects, took):
            us = np.asarray(xs) * 1e6
            rows.append(dict(engine=name, variant=variant, evict_cells=cells, triggers=triggers,
                             p50_us=round(float(np.percentile(us, 50)), 2),
                             mean_us=round(float(us.mean()), 2),
                             p90_us=round(float(np.percentile(us, 90)), 2),
                             p99_us=round(float(np.percentile(us, 99)), 2),
                             load1_before=round(load, 2),
                             load1_after=round(os.getloadavg()[0], 2)))
    return rows


def stages(rows: list[dict]) -> list[str]:
    """The P50 split per engine and eviction: process, feed, run, results."""
    lines = []
    by = {(r["engine"], r["evict_cells"], r["variant"]): r["p50_us"] for r in rows}
    for name, cells in dict.fromkeys((r["engine"], r["evict_cells"]) for r in rows):
        p = [by[name, cells, v] for v in VARIANTS]
        lines.append(f"{name} evict {cells}: P50 {p[3]:.1f} us = process {p[0]:.1f} + feed "
                     f"{p[1] - p[0]:.1f} + run {p[2] - p[1]:.1f} + results {p[3] - p[2]:.1f}")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m streamspec.bench.connectivity.cold_trigger",
                                description="the triggering call's stages on evicted caches "
                                            "(module docstring)")
    p.add_argument("--engines", default="msf", help="registered connectivity engines, comma-separated")
    p.add_argument("--evict", default="150000,600000",
                   help="random cells written before each trigger (comma-separated runs)")
    p.add_argument("--triggers", type=int, default=1000)
    p.add_argument("--label", default="")
    p.add_argument("--out", default=str(RESULTS / "cold-trigger.csv"))
    args = p.parse_args(argv)
    command = "python -m streamspec.bench.connectivity.cold_trigger " + " ".join(
        argv if argv is not None else sys.argv[1:])
    rows = measure(args.engines.split(","), [int(x) for x in args.evict.split(",")],
                   args.triggers)
    code = commit()
    for r in rows:
        r.update(commit=code, command=command)
        print(f"  {r['engine']:8} {r['variant']:8} evict {r['evict_cells']:>7}  P50 "
              f"{r['p50_us']:7.1f}  P90 {r['p90_us']:7.1f}  P99 {r['p99_us']:7.1f} us  "
              f"load {r['load1_before']}-{r['load1_after']}")
    for line in stages(rows):
        print(line)
    fields = ["commit", "engine", "variant", "evict_cells", "triggers", "p50_us", "mean_us",
              "p90_us", "p99_us", "load1_before", "load1_after", "command"]
    print("wrote", append_rows(args.out, rows, fields, args.label))
    return 0


if __name__ == "__main__":
    sys.exit(main())
