"""What is in the slowest batches of swoop's 80%-load replay (issue 27, stop 37, H2).

    python bench/results/simjoin/latency-probe-s37-h2.py --window 1000000 --sets 1000000 [--rate R]

The replay of ``streamspec.bench.simjoin.latency`` (a fresh engine filled with the window,
one ``gc.collect()``, then ``--sets`` sets arriving at ``--rate`` sets/s, default 80% of the
rate measured as the throughput benchmark does, served FIFO on a clock advanced by each
batch's CPU time, at most 10,000 sets a batch), with per batch: its size and CPU time, the
system time and minor page faults (``getrusage``), each housekeeping method's CPU time
(``_grow_*``, ``_prefault``), garbage collections (``gc.callbacks``), the arena's top and
size and the entries on its free lists.  Prints the summary as the latency benchmark does,
the ten slowest batches, the arena's growth per 100,000 sets, the service time per set by
batch size, and where the latency maximum sits (the queue's build-up before it).
"""
from __future__ import annotations

import argparse
import gc
import resource
import time

import numpy as np

from streamspec.bench.simjoin.latency import summarize
from streamspec.bench.simjoin.throughput import GENERATORS, STEP, measure, window_slice
from streamspec.engines.simjoin import _swoop_kernels as K
from streamspec.spec.registry import Registry
from streamspec.spec.simjoin import Params

CHORES = ("_grow_rings", "_grow_arena", "_grow_stock", "_grow_out", "_prefault", "_reserve", "_collect")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default="swoop")
    ap.add_argument("--window", type=int, default=1_000_000)
    ap.add_argument("--sets", type=int, default=1_000_000)
    ap.add_argument("--rate", type=float, default=0.0)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--budget", type=float, default=60.0)
    args = ap.parse_args(argv)
    w, k = args.window, args.k
    stream = GENERATORS["tweet"](w + args.sets, seed=1)
    rate = args.rate
    if not rate:
        peak = measure(args.engine, stream, w, k, args.sets, args.budget)
        rate = 0.8 * peak["sets_per_s"]
        print(f"max rate {peak['sets_per_s']:.1f} sets/CPU-s, replay at {rate:.1f}", flush=True)
    eng = Registry.get("simjoin", args.engine)(Params(k=k, w=w))
    warm = min(w, len(stream) - args.sets)
    for a in range(0, warm, STEP):
        list(eng.process(window_slice(stream, a, min(a + STEP, warm))))
    gc.collect()
    acc = {name: 0.0 for name in CHORES}

    def timed(name, method):
        def wrapper(*a, **kw):
            t0 = time.process_time()
            try:
                return method(*a, **kw)
            finally:
                acc[name] += time.process_time() - t0
        return wrapper
    for name in CHORES:
        if hasattr(eng, name):
            setattr(eng, name, timed(name, getattr(eng, name)))
    gcs = [0, 0.0, 0]
    gc_t = [0.0]

    def on_gc(phase, info):
        if phase == "start":
            gc_t[0] = time.process_time()
        else:
            gcs[0] += 1
            gcs[1] += time.process_time() - gc_t[0]
            gcs[2] = max(gcs[2], info["generation"])
    gc.callbacks.append(on_gc)
    n = min(args.sets, len(stream) - warm)
    arrival = np.arange(n, dtype=np.float64) / rate
    latency = np.empty(n)
    cols = {c: [] for c in ("i", "b", "svc", "sys", "flt", "gc_n", "gc_s", "top", "size", "free", "queue",
                            *CHORES)}
    clock, i, outputs = 0.0, 0, 0
    while i < n:
        if arrival[i] > clock:
            clock = arrival[i]
        j = max(i + 1, min(min(n, int(clock * rate) + 1), i + STEP))
        for name in CHORES:
            acc[name] = 0.0
        gcs[:] = [0, 0.0, 0]
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.process_time()
        outputs += len(list(eng.process(window_slice(stream, warm + i, warm + j))))
        spent = time.process_time() - t0
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        clock += spent
        latency[i:j] = clock - arrival[i:j]
        m = eng.meta
        for c, v in (("i", i), ("b", j - i), ("svc", spent), ("sys", r1.ru_stime - r0.ru_stime),
                     ("flt", r1.ru_minflt - r0.ru_minflt), ("gc_n", gcs[0]), ("gc_s", gcs[1]),
                     ("top", int(m[K.A_TOP])), ("size", eng.a_rec.size), ("free", int(m[K.A_FREE])),
                     ("queue", min(n, int(clock * rate) + 1) - j)):
            cols[c].append(v)
        for name in CHORES:
            cols[name].append(acc[name])
        i = j
    gc.callbacks.remove(on_gc)
    c = {key: np.asarray(v) for key, v in cols.items()}
    run = {"latency": latency, "queue": c["queue"], "batch": c["b"], "service": c["svc"],
           "housekeeping": c["_grow_arena"] + c["_grow_rings"] + c["_grow_stock"] + c["_grow_out"],
           "system": c["sys"], "faults": c["flt"], "outputs": outputs, "arrival": arrival}
    print(summarize(run, rate))
    print("slowest batches: first set, sets, ms, sys ms, faults, gc (n, ms), chores ms (nonzero), top, size")
    for x in np.argsort(c["svc"])[::-1][:10]:
        ch = {name: round(c[name][x] * 1e3, 2) for name in CHORES if c[name][x] > 0}
        print(f"  {c['i'][x]:8d} {c['b'][x]:6d} {c['svc'][x] * 1e3:7.2f} {c['sys'][x] * 1e3:6.2f} "
              f"{c['flt'][x]:6d} ({c['gc_n'][x]}, {c['gc_s'][x] * 1e3:.1f}) {ch} {c['top'][x]} {c['size'][x]}")
    print("per 100,000 sets: arena top, size, free entries; us/set; faults; sys ms; _prefault ms; gc ms")
    for a in range(0, n, 100_000):
        sel = (c["i"] >= a) & (c["i"] < a + 100_000)
        if not sel.any():
            continue
        last = np.flatnonzero(sel)[-1]
        print(f"  {a:8d} top {c['top'][last]:10d} size {c['size'][last]:10d} free {c['free'][last]:9d} "
              f"{c['svc'][sel].sum() / c['b'][sel].sum() * 1e6:6.2f} us/set {c['flt'][sel].sum():7d} flt "
              f"{c['sys'][sel].sum() * 1e3:7.1f} sys {c['_prefault'][sel].sum() * 1e3:6.1f} pf "
              f"{c['gc_s'][sel].sum() * 1e3:6.1f} gc  batches {sel.sum()} mean {c['b'][sel].mean():.0f}")
    print("service by batch size: sets -> batches, us a set (mean), ms a batch (max)")
    for lo, hi in ((1, 10), (10, 30), (30, 100), (100, 300), (300, 1000), (1000, 3000), (3000, 10001)):
        sel = (c["b"] >= lo) & (c["b"] < hi)
        if sel.any():
            print(f"  [{lo}, {hi}): {sel.sum():6d}  {c['svc'][sel].sum() / c['b'][sel].sum() * 1e6:7.2f} "
                  f"{c['svc'][sel].max() * 1e3:7.2f}")
    x = int(latency.argmax())
    print(f"max latency {latency[x] * 1e3:.2f} ms at set {x}; queue before it:")
    bx = int(np.searchsorted(c["i"], x, side="right") - 1)
    for y in range(max(0, bx - 12), min(len(c["i"]), bx + 3)):
        print(f"  batch at {c['i'][y]:8d}: {c['b'][y]:5d} sets {c['svc'][y] * 1e3:6.2f} ms, queue after {c['queue'][y]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
