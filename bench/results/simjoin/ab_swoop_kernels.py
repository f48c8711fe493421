"""In-process A/B of swoop's candidate kernels (issue 27): old against new, the same data.

    python bench/results/simjoin/ab_swoop_kernels.py --old REV --window 10000 --sets 100000 --rounds 4

(``--old`` may also name a directory holding the two old module files.)

``_swoop_kernels.py`` and ``_swoop_index_kernels.py`` of git revision ``REV`` are copied
into a scratch directory and imported under other names (the old kernel module imports
the old index module; both use the working tree's stock kernels and similarity
functions), the working tree's modules are the new side.  One engine is filled with a
window of the TWEET-like stream (k = 10) under each side, then the ``--sets`` following
sets go through ``process`` in batches of 10,000, the batches alternating between the
two engines (old first in even rounds, new first in odd ones), outputs compared batch
by batch.  A round's figure is new/old of the summed CPU time (``time.process_time``).
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
from streamspec.engines.simjoin import _swoop_kernels as K
from streamspec.engines.simjoin import swoop as S
from streamspec.spec.simjoin import Params

STEP = 10_000
PKG = "streamspec.engines.simjoin"


def old_modules(rev: str):
    root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                          cwd=os.path.dirname(os.path.abspath(K.__file__)), check=True).stdout.strip()
    d = tempfile.mkdtemp()
    mods = {}
    for name in ("_swoop_index_kernels", "_swoop_kernels"):
        if os.path.isdir(rev):          # a directory holding the two module files
            with open(os.path.join(rev, f"{name}.py")) as f:
                src = f.read()
        else:
            src = subprocess.run(["git", "show", f"{rev}:engines/simjoin/{name}.py"], capture_output=True,
                                 text=True, cwd=root, check=True).stdout
        src = src.replace(f"{PKG}._swoop_index_kernels import", "_old_swoop_index_kernels import")
        src = src.replace(f"{PKG} import _swoop_index_kernels", "import _old_swoop_index_kernels")
        path = os.path.join(d, f"_old{name}.py")
        with open(path, "w") as f:
            f.write(src)
    sys.path.insert(0, d)
    for name in ("_swoop_index_kernels", "_swoop_kernels"):
        spec = importlib.util.spec_from_file_location(f"_old{name}", os.path.join(d, f"_old{name}.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[f"_old{name}"] = mod
        spec.loader.exec_module(mod)
        mods[name] = mod
    return mods


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", default="HEAD")
    ap.add_argument("--window", type=int, default=10_000)
    ap.add_argument("--sets", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args(argv)
    w, n = args.window, args.sets
    old = old_modules(args.old)
    sides = {"old": (old["_swoop_kernels"], old["_swoop_index_kernels"]), "new": (K, S.IK)}
    stream = tweet_like(w + n, seed=1)
    fill = [window_slice(stream, a, min(a + STEP, w)) for a in range(0, w, STEP)]
    batches = [window_slice(stream, a, min(a + STEP, w + n)) for a in range(w, w + n, STEP)]
    saved = S.K, S.IK
    print(f"# old = {args.old}, |W| = {w}, {n} sets, load {os.getloadavg()[0]:.2f}")
    try:
        for r in range(args.rounds):
            eng = {}
            for name, (k_mod, ik_mod) in sides.items():
                S.K, S.IK = k_mod, ik_mod
                e = S.SwoopEngine(Params(k=10, w=w))
                for b in fill:
                    list(e.process(b))
                eng[name] = e
            gc.collect()
            spent = {"old": 0.0, "new": 0.0}
            order = ("old", "new") if r % 2 == 0 else ("new", "old")
            for b in batches:
                outs = {}
                for name in order:
                    S.K, S.IK = sides[name]
                    t = time.process_time()
                    outs[name] = list(eng[name].process(b))
                    spent[name] += time.process_time() - t
                if outs["old"] != outs["new"]:
                    raise SystemExit("old and new kernels disagree")
            st = {name: eng[name].stats for name in eng}
            print(f"round {r}: new/old {spent['old'] / spent['new']:.3f}  old {n / spent['old'] / 1e3:.1f}K  "
                  f"new {n / spent['new'] / 1e3:.1f}K sets/CPU-s  load {os.getloadavg()[0]:.2f}\n  "
                  + "  ".join(f"{x}/set old {st['old'][x] / (w + n):.2f} new {st['new'][x] / (w + n):.2f}"
                              for x in ("precandidates", "scanned", "verified", "candidates")))
    finally:
        S.K, S.IK = saved
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
