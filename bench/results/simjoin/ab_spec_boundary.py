"""In-process A/B of the simjoin spec boundary (issue 27, stop 35): swoop through
``process(RecordBatch)`` with the base class and token numbering of two versions.

A is ``SwoopEngine`` on older copies of ``spec/simjoin.py`` and
``spec/_simjoin_tokens.py`` (module files given by ``--old-simjoin`` /
``--old-tokens``, default: the files at git revision ``--rev``), imported under
other names; B is the current tree.  Each engine fills its own window with its
own code (growth of the token tables included), then ``--rounds`` rounds of
``--sets`` sets in batches of ``--batch`` (the throughput benchmark's 10,000)
alternate A B / B A; outputs are compared batch by batch (the script fails on
any difference).  CPU clock (``time.process_time``) around each ``process``.

    python bench/results/simjoin/ab_spec_boundary.py --rev HEAD --window 10000 --sets 100000
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

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def at_rev(rev: str, rel: str, d: str) -> str:
    path = os.path.join(d, rel.replace("/", "_"))
    with open(path, "wb") as f:
        f.write(subprocess.check_output(["git", "-C", ROOT, "show", f"{rev}:{rel}"]))
    return path


def old_engine(simjoin_path: str, tokens_path: str):
    """``SwoopEngine`` whose base-class methods and token numbering come from the old files.
    The old module's record, change and output classes are the current ones (same fields),
    so ``isinstance`` checks and output comparison see one class."""
    tok = load(tokens_path, "ab_tokens_old")
    d = tempfile.mkdtemp(prefix="ab_spec_")
    src = open(simjoin_path).read()
    imp = "from streamspec.spec._simjoin_tokens import TokenNumbering"
    assert imp in src
    path = os.path.join(d, "ab_simjoin_old.py")
    with open(path, "w") as f:
        f.write(src.replace(imp, "from ab_tokens_old import TokenNumbering"))
    old = load(path, "ab_simjoin_old")
    for name in ("Record", "Advance", "TopK", "RecordBatch", "Prepared", "Changes", "Params"):
        setattr(old, name, getattr(SJ, name))
    methods = {k: v for k, v in vars(old.SimJoinEngine).items()
               if callable(v) and k not in vars(S.SwoopEngine) and not k.startswith("__class")}
    methods.pop("__init_subclass__", None)
    return type("SwoopOld", (S.SwoopEngine,), {**methods, "name": "swoop-old"})


PARTS = ("tokens", "outputs", "engine")


def _wrap(obj, name, spent, key):
    fn = getattr(obj, name)

    def timed(*args, **kwargs):
        c = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[key] += time.process_time() - c
    setattr(obj, name, timed)


def filled(cls, stream, w, step):
    """An engine of ``cls`` (k = 10) with its window of ``w`` sets filled in batches of
    ``step``, after a throwaway one compiled and loaded the kernels outside the clock."""
    warm = cls(Params(k=10, w=w))
    list(warm.process(window_slice(stream, 0, 200)))
    e = cls(Params(k=10, w=w))
    for a in range(0, w, step):
        list(e.process(window_slice(stream, a, min(a + step, w))))
    return e


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--old-simjoin")
    ap.add_argument("--old-tokens")
    ap.add_argument("--window", type=int, default=10_000)
    ap.add_argument("--sets", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    d = tempfile.mkdtemp(prefix="ab_spec_rev_")
    old_sj = args.old_simjoin or at_rev(args.rev, "spec/simjoin.py", d)
    old_tk = args.old_tokens or at_rev(args.rev, "spec/_simjoin_tokens.py", d)
    Old = old_engine(old_sj, old_tk)
    w, n = args.window, args.sets
    stream = tweet_like(w + args.rounds * n + 200, seed=1)
    engines = {label: filled(cls, stream, w, args.batch) for label, cls in (("A", Old), ("B", S.SwoopEngine))}
    spent = {(label, part): 0.0 for label in engines for part in PARTS}
    for label, e in engines.items():            # per-part CPU time (the wrappers cost A and B alike)
        _wrap(e.tokens, "add_ints", spent, (label, "tokens"))
        _wrap(e, "_outputs", spent, (label, "outputs"))
        _wrap(e, "_apply", spent, (label, "engine"))
    gc.collect()
    print(f"# |W| = {w}, k = 10, {n} sets a round in batches of {args.batch}; A = {args.rev if not args.old_simjoin else old_sj}"
          f" ({old_tk}), B = working tree; load {os.getloadavg()[0]:.2f}")
    at = w
    ratios = []
    for rnd in range(args.rounds):
        t = {"A": 0.0, "B": 0.0}
        for q, a in enumerate(range(at, at + n, args.batch)):
            batch = window_slice(stream, a, a + args.batch)
            outs = {}
            for label in (("A", "B") if q % 2 == 0 else ("B", "A")):
                c0 = time.process_time()
                outs[label] = list(engines[label].process(batch))
                t[label] += time.process_time() - c0
            if outs["A"] != outs["B"]:
                raise SystemExit(f"outputs differ in the batch at set {a}")
        at += n
        parts = "  ".join(f"{part} {1e6 * spent['A', part] / n:.3f}/{1e6 * spent['B', part] / n:.3f}"
                          for part in PARTS)
        rest = [1e6 * (t[x] - sum(spent[x, part] for part in PARTS)) / n for x in "AB"]
        print(f"  us/set A/B: {parts}  rest {rest[0]:.3f}/{rest[1]:.3f}")
        spent.update(dict.fromkeys(spent, 0.0))
        ratios.append(t["A"] / t["B"])
        print(f"round {rnd}: A {n / t['A']:.0f} sets/CPU-s ({1e6 * t['A'] / n:.2f} us/set)  "
              f"B {n / t['B']:.0f} ({1e6 * t['B'] / n:.2f})  B/A {t['A'] / t['B']:.3f}", flush=True)
    print(f"# load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
