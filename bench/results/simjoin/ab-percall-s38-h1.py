"""In-process A/B of swoop's whole per-call path (issue 27, stop 38, H1): the spec
boundary and the engine's Python of two versions, at small batches.

    python bench/results/simjoin/ab-percall-s38-h1.py --rev REV --window 10000 --sets 40500 --batch 135

A is ``SwoopEngine`` built from REV's ``engines/simjoin/swoop.py`` on REV's
``spec/simjoin.py``, ``spec/_simjoin_rows.py`` and ``spec/_simjoin_tokens.py`` (and
``engines/simjoin/_swoop_batch.py`` where REV has one), loaded from files under other
module names; the record, output and change classes are the current ones (same fields).
B is the working tree.  The kernels (``_swoop_kernels``, ``_swoop_stock_kernels``,
``_swoop_index_kernels``, ``_buffers``) are the working tree's on both sides.  Each side
fills its own window (batches of 10,000), then ``--rounds`` rounds of ``--sets`` sets
in batches of ``--batch`` alternate A B / B A batch by batch; outputs are compared batch
by batch and the stocks at the end (the script fails on any difference).  CPU clock
(``time.process_time``) around each ``process``.
"""
from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import subprocess
import sys
import tempfile
import time

from streamspec.bench.simjoin.generators import tweet_like
from streamspec.bench.simjoin.throughput import window_slice
from streamspec.engines.simjoin import swoop as S
from streamspec.spec import simjoin as SJ
from streamspec.spec.simjoin import Params

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ab_spec_boundary import filled  # noqa: E402  (an engine with its window filled)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
FILES = {"ab_old_rows": "spec/_simjoin_rows.py", "ab_old_tokens": "spec/_simjoin_tokens.py",
         "ab_old_simjoin": "spec/simjoin.py", "ab_old_batch": "engines/simjoin/_swoop_batch.py",
         "ab_old_swoop": "engines/simjoin/swoop.py"}
RENAME = {"streamspec.spec._simjoin_rows": "ab_old_rows", "streamspec.spec._simjoin_tokens": "ab_old_tokens",
          "streamspec.spec.simjoin": "ab_old_simjoin",
          "streamspec.engines.simjoin._swoop_batch": "ab_old_batch"}


def old_engine(rev: str):
    d = tempfile.mkdtemp(prefix="ab_percall_")
    sys.path.insert(0, d)
    mods = {}
    for name, rel in FILES.items():
        got = subprocess.run(["git", "-C", ROOT, "show", f"{rev}:{rel}"], capture_output=True, text=True)
        if got.returncode:
            continue                        # (a module REV does not have)
        src = got.stdout
        for a, b in RENAME.items():
            src = src.replace(f"from {a} import", f"from {b} import")
        with open(os.path.join(d, f"{name}.py"), "w") as f:
            f.write(src)
        spec = importlib.util.spec_from_file_location(name, os.path.join(d, f"{name}.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        if name == "ab_old_simjoin":        # one set of record/output classes for both sides
            for cls in ("Record", "Advance", "TopK", "RecordBatch", "Prepared", "Changes", "Params"):
                setattr(mod, cls, getattr(SJ, cls))
        mods[name] = mod
    return type("SwoopOld", (mods["ab_old_swoop"].SwoopEngine,), {"name": "swoop-old"})


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--window", type=int, default=10_000)
    ap.add_argument("--sets", type=int, default=40_500)
    ap.add_argument("--batch", type=int, default=135)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    Old = old_engine(args.rev)
    w, n = args.window, args.sets
    stream = tweet_like(w + args.rounds * n + 200, seed=1)
    engines = {label: filled(cls, stream, w, 10_000) for label, cls in (("A", Old), ("B", S.SwoopEngine))}
    gc.collect()
    print(f"# |W| = {w}, k = 10, {n} sets a round in batches of {args.batch}; A = {args.rev}, "
          f"B = working tree; load {os.getloadavg()[0]:.2f}", flush=True)
    at = w
    for rnd in range(args.rounds):
        t = {"A": 0.0, "B": 0.0}
        calls = 0
        for q, a in enumerate(range(at, at + n, args.batch)):
            batch = window_slice(stream, a, min(a + args.batch, at + n))
            outs = {}
            for label in (("A", "B") if q % 2 == 0 else ("B", "A")):
                c0 = time.process_time()
                outs[label] = list(engines[label].process(batch))
                t[label] += time.process_time() - c0
            calls += 1
            if outs["A"] != outs["B"]:
                raise SystemExit(f"outputs differ in the batch at set {a}")
        at += n
        print(f"round {rnd}: A {1e6 * t['A'] / n:.3f} us/set ({1e6 * t['A'] / calls:.0f} us/call)  "
              f"B {1e6 * t['B'] / n:.3f} ({1e6 * t['B'] / calls:.0f})  A/B {t['A'] / t['B']:.3f}  "
              f"A-B {1e6 * (t['A'] - t['B']) / calls:.1f} us/call  load {os.getloadavg()[0]:.2f}", flush=True)
    if engines["A"].stock() != engines["B"].stock():
        raise SystemExit("stocks differ")
    print("# outputs and stocks equal")


if __name__ == "__main__":
    main()
