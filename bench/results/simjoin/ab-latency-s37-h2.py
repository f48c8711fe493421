"""In-process A/B of the 80%-load latency replay (issue 27, stop 37, H2): two engines, the
old spec boundary (``spec/simjoin.py`` and ``_simjoin_tokens.py`` at ``--rev``, loaded as
``ab_spec_boundary.py`` does) and the working tree's, each replaying the same sets at the
same ``--rate`` on its own simulated clock (``streamspec.bench.simjoin.latency``'s server:
a batch takes every set arrived, at most 10,000, the clock advances by the batch's CPU
time), their batches alternated one for one so both see the same host over time.

    python bench/results/simjoin/ab-latency-s37-h2.py --rev HEAD~1 --window 1000000 --sets 1000000 --rate 100000
    (``--old-side percall``: A is swoop.py and the spec modules at --rev, stop 38's per-call A/B)

Prints per side the latency summary of ``latency.summarize`` and per 100,000 sets each
side's CPU time a set; outputs are compared at the end (the same top-k lists, by hashes of their text).  The CPU time of garbage collections
(``gc.callbacks``) is summed per batch.
"""
from __future__ import annotations

import argparse
import gc
import os
import resource
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ab_spec_boundary import at_rev, old_engine  # noqa: E402

from streamspec.bench.simjoin.latency import summarize  # noqa: E402
from streamspec.bench.simjoin.throughput import GENERATORS, STEP, window_slice  # noqa: E402
from streamspec.engines.simjoin.swoop import SwoopEngine  # noqa: E402
from streamspec.spec.simjoin import Params  # noqa: E402


GC = [0.0, 0.0]


def _on_gc(phase, info):
    if phase == "start":
        GC[1] = time.process_time()
    else:
        GC[0] += time.process_time() - GC[1]


class Replay:
    def __init__(self, eng, stream, warm, n, rate):
        self.eng, self.stream, self.warm, self.n, self.rate = eng, stream, warm, n, rate
        self.arrival = np.arange(n, dtype=np.float64) / rate
        self.latency = np.empty(n)
        self.q, self.b, self.s, self.sys, self.flt, self.out = [], [], [], [], [], []
        self.clock, self.i = 0.0, 0
        self.gc = []                     # CPU time in garbage collections, per batch

    def step(self):
        i, n = self.i, self.n
        if self.arrival[i] > self.clock:
            self.clock = self.arrival[i]
        j = max(i + 1, min(min(n, int(self.clock * self.rate) + 1), i + STEP))
        GC[0] = 0.0
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.process_time()
        outs = list(self.eng.process(window_slice(self.stream, self.warm + i, self.warm + j)))
        spent = time.process_time() - t0
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        # kept as hashes of their text (ints, which the garbage collector does not track: keeping
        # the TopK objects themselves made full collections of ~230 ms that the harness never sees)
        self.out.extend(hash(repr(t)) for t in outs)
        self.clock += spent
        self.latency[i:j] = self.clock - self.arrival[i:j]
        self.q.append(min(n, int(self.clock * self.rate) + 1) - j)
        self.b.append(j - i)
        self.s.append(spent)
        self.sys.append(r1.ru_stime - r0.ru_stime)
        self.flt.append(r1.ru_minflt - r0.ru_minflt)
        self.gc.append(GC[0])
        self.i = j

    def summary(self):
        z = np.zeros(len(self.s))
        return summarize({"latency": self.latency, "queue": np.asarray(self.q), "batch": np.asarray(self.b),
                          "service": np.asarray(self.s), "housekeeping": z, "system": np.asarray(self.sys),
                          "faults": np.asarray(self.flt), "outputs": len(self.out), "arrival": self.arrival},
                         self.rate)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rev", default="HEAD~1")
    ap.add_argument("--window", type=int, default=1_000_000)
    ap.add_argument("--sets", type=int, default=1_000_000)
    ap.add_argument("--rate", type=float, default=100_000.0)
    ap.add_argument("--old-side", choices=("spec", "percall"), default="spec",
                    help="what A takes at --rev: the spec boundary (ab_spec_boundary.py, stop 37) or "
                         "swoop.py and the spec modules (ab-percall-s38-h1.py, stop 38 H1)")
    args = ap.parse_args(argv)
    if args.old_side == "percall":
        import importlib.util
        spec = importlib.util.spec_from_file_location(
            "ab_percall_s38_h1", os.path.join(os.path.dirname(os.path.abspath(__file__)), "ab-percall-s38-h1.py"))
        percall = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(percall)
        Old = percall.old_engine(args.rev)
    else:
        d = tempfile.mkdtemp(prefix="ab_lat_")
        Old = old_engine(at_rev(args.rev, "spec/simjoin.py", d), at_rev(args.rev, "spec/_simjoin_tokens.py", d))
    w = args.window
    stream = GENERATORS["tweet"](w + args.sets, seed=1)
    reps = {}
    for label, cls in (("A", Old), ("B", SwoopEngine)):
        e = cls(Params(k=10, w=w))
        for a in range(0, w, STEP):
            list(e.process(window_slice(stream, a, min(a + STEP, w))))
        reps[label] = Replay(e, stream, w, args.sets, args.rate)
    gc.collect()
    gc.callbacks.append(_on_gc)
    print(f"# A = {'swoop.py and spec' if args.old_side == 'percall' else 'spec'} at {args.rev}, B = working tree; |W| = {w}, {args.sets} sets at {args.rate:.0f} sets/s; "
          f"load {os.getloadavg()[0]:.2f}", flush=True)
    turn = 0
    while any(r.i < r.n for r in reps.values()):
        order = ("A", "B") if turn % 2 == 0 else ("B", "A")
        for label in order:
            if reps[label].i < reps[label].n:
                reps[label].step()
        turn += 1
    for label, r in reps.items():
        print(label, r.summary())
        b, s = np.asarray(r.b), np.asarray(r.s)
        first = np.cumsum(b) - b
        per = [s[(first >= a) & (first < a + 100_000)].sum() / 100_000 * 1e6 for a in range(0, r.n, 100_000)]
        print(f"  {label} us/set per 100,000: " + " ".join(f"{x:.2f}" for x in per))
        g = np.asarray(r.gc)
        print(f"  {label} garbage collection: {g.sum() * 1e3:.1f} ms in all, at most {g.max() * 1e3:.1f} ms a batch, "
              f"{g[s.argmax()] * 1e3:.1f} ms in the slowest batch")
    if reps["A"].out != reps["B"].out:
        raise SystemExit("outputs differ")
    print(f"# outputs equal; load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
