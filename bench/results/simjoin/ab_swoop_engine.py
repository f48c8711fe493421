"""Whole-engine in-process A/B for swoop's stock module (issue 27, stop 34): twin engines,
one filled engine and its deep copy, fed the same batches of the TWEET-like stream; A runs
``run_ops`` compiled against an older ``_swoop_stock_kernels`` (a module file, ``--old``),
B the current one; batches alternate A B / B A, outputs compared batch by batch (the script
fails on any difference).  CPU clock through ``process()``.

    python bench/results/simjoin/ab_swoop_engine.py --old OLD_STOCK.py --window 10000 --sets 100000
"""
from __future__ import annotations

import argparse
import copy
import gc
import importlib.util
import os
import sys
import tempfile
import time

import numpy as np

from streamspec.bench.simjoin.generators import tweet_like
from streamspec.bench.simjoin.throughput import window_slice
from streamspec.engines.simjoin import _swoop_kernels as K
from streamspec.engines.simjoin import swoop as S
from streamspec.spec.simjoin import Params

FILL = 10_000


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def old_kernels(old_stock: str):
    """``_swoop_kernels`` (the current file) compiled against the stock module ``old_stock``."""
    load(old_stock, "ab_stock_old")
    src = open(K.__file__).read()
    imp = "from streamspec.engines.simjoin._swoop_stock_kernels import"
    assert imp in src
    d = tempfile.mkdtemp(prefix="ab_swoop_")
    path = os.path.join(d, "ab_kernels_old.py")
    with open(path, "w") as f:
        f.write(src.replace(imp, "from ab_stock_old import"))
    return load(path, "ab_kernels_old")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", required=True)
    ap.add_argument("--window", type=int, default=10_000)
    ap.add_argument("--sets", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=5_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    KO = old_kernels(args.old)
    new_run = K.run_ops
    w, n = args.window, args.sets
    stream = tweet_like(w + args.rounds * n, seed=1)
    eng = S.SwoopEngine(Params(k=10, w=w))
    for a in range(0, w, FILL):
        list(eng.process(window_slice(stream, a, min(a + FILL, w))))
    twin = copy.deepcopy(eng)
    engines = {"A": (twin, KO.run_ops), "B": (eng, new_run)}
    for label, (e, run) in engines.items():     # compile both kernels outside the clock
        K.run_ops = run
        list(copy.deepcopy(e).process(window_slice(stream, w, w + 100)))
    K.run_ops = new_run
    gc.collect()
    print(f"# |W| = {w}, k = 10, {n} sets a round in batches of {args.batch}; load {os.getloadavg()[0]:.2f}")
    at = w
    try:
        for rnd in range(args.rounds):
            t = {"A": 0.0, "B": 0.0}
            for q, a in enumerate(range(at, at + n, args.batch)):
                batch = window_slice(stream, a, a + args.batch)
                outs = {}
                for label in (("A", "B") if q % 2 == 0 else ("B", "A")):
                    e, run = engines[label]
                    K.run_ops = run
                    c0 = time.process_time()
                    outs[label] = list(e.process(batch))
                    t[label] += time.process_time() - c0
                if outs["A"] != outs["B"]:
                    raise SystemExit(f"outputs differ in the batch at set {a}")
            at += n
            print(f"round {rnd}: A {n / t['A']:.0f} sets/CPU-s  B {n / t['B']:.0f}  B/A {t['A'] / t['B']:.3f}")
    finally:
        K.run_ops = new_run
    print(f"# load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
