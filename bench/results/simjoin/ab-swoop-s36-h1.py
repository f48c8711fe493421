"""In-process A/B of swoop's engine modules (issue 27, stop 36, H1; a side may be a directory since stop 37; stop 39: _swoop_batch, shared by both sides, allowed).

    python bench/results/simjoin/ab-swoop-s36-h1.py --old REV|DIR --window 10000 --sets 100000 --rounds 3

Both sides are loaded from files under other module names: the old side is REV's
``swoop.py``, ``_swoop_kernels.py`` and ``_swoop_stock_kernels.py``, the new side the
working tree's; both use REV's ``_swoop_index_kernels.py`` (``--index`` names another
revision), so a change to the index lists in the shared tree is on neither side, and the
engine class, its arrays and the kernels' signatures may differ between the sides.  One
engine per side is filled with a window of the TWEET-like stream (k = 10), then ``--sets``
sets go through ``process`` in batches of 10,000, alternating between the two engines (old
first in even rounds, new first in odd ones), outputs compared batch by batch.  A round's
figure is new/old of the summed CPU time (``time.process_time``); ``--k`` for other k.
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
from streamspec.spec.simjoin import Params

STEP = 10_000
PKG = "streamspec.engines.simjoin"
MODS = ("_swoop_index_kernels", "_swoop_stock_kernels", "_swoop_kernels", "swoop")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def source(rev, name):
    if rev == "WORK":
        with open(os.path.join(ROOT, "engines", "simjoin", f"{name}.py")) as f:
            return f.read()
    if os.path.isdir(rev):      # a directory: its copy of the module if it holds one, else the working tree's
        path = os.path.join(rev, f"{name}.py")
        if not os.path.exists(path):
            path = os.path.join(ROOT, "engines", "simjoin", f"{name}.py")
        with open(path) as f:
            return f.read()
    return subprocess.run(["git", "show", f"{rev}:engines/simjoin/{name}.py"], capture_output=True,
                          text=True, cwd=ROOT, check=True).stdout


def side(tag, rev, index_rev):
    """The engine class of ``rev``'s modules (``WORK``: the working tree), loaded as ``ab_<tag>_*``."""
    d = tempfile.mkdtemp(prefix=f"ab_{tag}_")
    srcs = {name: source(index_rev if name == "_swoop_index_kernels" else rev, name) for name in MODS}
    for name, src in list(srcs.items()):
        for other in MODS:
            src = src.replace(f"{PKG}.{other} import", f"ab_{tag}{other} import")
            src = src.replace(f"from {PKG} import {other} as", f"import ab_{tag}{other} as")
            src = src.replace(f"{PKG} import _remap, {other} as", f"{PKG} import _remap\nimport ab_{tag}{other} as")
        srcs[name] = src
        with open(os.path.join(d, f"ab_{tag}{name}.py"), "w") as f:
            f.write(src)
    sys.path.insert(0, d)
    mods = {}
    for name in MODS:
        spec = importlib.util.spec_from_file_location(f"ab_{tag}{name}", os.path.join(d, f"ab_{tag}{name}.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[f"ab_{tag}{name}"] = mod
        spec.loader.exec_module(mod)
        mods[name] = mod
    for name, mod in mods.items():      # every cross-module import resolved to this side's copies
        imports = [x for x in srcs[name].splitlines() if x.startswith(("from ", "import "))]
        assert not any("_swoop" in x and "ab_" not in x and "_swoop_batch" not in x for x in imports), name
    return mods["swoop"].SwoopEngine


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", default="HEAD")
    ap.add_argument("--new", default="WORK")
    ap.add_argument("--index", default=None, help="revision of _swoop_index_kernels for both sides (default --old)")
    ap.add_argument("--window", type=int, default=10_000)
    ap.add_argument("--sets", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args(argv)
    w, n = args.window, args.sets
    index_rev = args.index or (args.old if args.old != "WORK" else "HEAD")
    classes = {"old": side("old", args.old, index_rev), "new": side("new", args.new, index_rev)}
    stream = tweet_like(w + n, seed=1)
    fill = [window_slice(stream, a, min(a + STEP, w)) for a in range(0, w, STEP)]
    batches = [window_slice(stream, a, min(a + STEP, w + n)) for a in range(w, w + n, STEP)]
    print(f"# old = {args.old}, new = {args.new}, index kernels of {index_rev}, |W| = {w}, k = {args.k}, "
          f"{n} sets, load {os.getloadavg()[0]:.2f}", flush=True)
    for r in range(args.rounds):
        eng = {}
        for name, cls in classes.items():
            e = cls(Params(k=args.k, w=w))
            for b in fill:
                list(e.process(b))
            eng[name] = e
        gc.collect()
        spent = {"old": 0.0, "new": 0.0}
        order = ("old", "new") if r % 2 == 0 else ("new", "old")
        for b in batches:
            outs = {}
            for name in order:
                t = time.process_time()
                outs[name] = list(eng[name].process(b))
                spent[name] += time.process_time() - t
            if outs["old"] != outs["new"]:
                raise SystemExit("old and new engines disagree")
        if eng["old"].stock() != eng["new"].stock():
            raise SystemExit("old and new stocks differ")
        print(f"round {r}: new/old {spent['old'] / spent['new']:.3f}  old {n / spent['old'] / 1e3:.1f}K  "
              f"new {n / spent['new'] / 1e3:.1f}K sets/CPU-s  load {os.getloadavg()[0]:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
