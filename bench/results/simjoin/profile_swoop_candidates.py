"""Where swoop's candidate generation spends a set (issue 27), finer than ``profile_swoop.py``.

    python bench/results/simjoin/profile_swoop_candidates.py --window 10000 --sets 100000

A copy of ``engines/simjoin/_swoop_kernels.py`` is made at run time with the CPU's
cycle counter read between the parts of ``get_candidates`` (the list setup, each
list's crop threshold, each list's scan, the filter over the pre-candidates and, in
it, each verification) and around the append and the stock insert; the counts go
to extra ``meta`` slots.  The engine runs on that copy (TWEET-like stream, k = 10,
the window filled first, then ``--sets`` sets in batches of 10,000 through
``process``), and cycles are turned into microseconds a set by the whole
``process`` time, so the parts include the counter reads (about 0.3 us a set).
The copy is checked against the committed kernel: the same outputs.
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

from streamspec.bench.simjoin.generators import tweet_like
from streamspec.bench.simjoin.throughput import window_slice
from streamspec.engines.simjoin import _swoop_kernels as K
from streamspec.engines.simjoin import swoop as S
from streamspec.spec.simjoin import Params

STEP = 10_000
NAMES = ("lists: keys, lengths, tail prefetch, order", "crop thresholds", "list scans",
         "filter over pre-candidates", "get_candidates in all", "append", "stock insert",
         "run_ops in all", "  of the filter: verifications")
PATCHES = (
    ("META = A_FREE_LISTS + N_CLASS", "T0 = A_FREE_LISTS + N_CLASS\nMETA = T0 + 10"),
    ("from streamspec.spec._simjoin_similarity import",
     "from profile_swoop import cycles\nfrom streamspec.spec._simjoin_similarity import"),
    ("    n_thr = 0          # thresholds of the non-empty lists, non-decreasing (ub falls with rho)\n",
     "    n_thr = 0          # thresholds of the non-empty lists, non-decreasing (ub falls with rho)\n"
     "    c0 = cycles()\n"),
    ("        _list_order(lens, lr, order, shortest_first)\n",
     "        _list_order(lens, lr, order, shortest_first)\n        c1 = cycles()\n        meta[T0] += c1 - c0\n"),
    ("            n_thr += 1\n",
     "            n_thr += 1\n            c2 = cycles()\n"
     "            meta[T0 + 1] += c2 - c1\n"),
    ("                else:\n                    rec[lj, HITS] += 1\n",
     "                else:\n                    rec[lj, HITS] += 1\n            c1 = cycles()\n"
     "            meta[T0 + 2] += c1 - c2\n"),
    ("    meta[SCANNED] += scanned\n", "    c3 = cycles()\n    meta[SCANNED] += scanned\n"),
    ("    meta[CAND] += nc\n    return nc\n", "    meta[CAND] += nc\n    meta[T0 + 3] += cycles() - c3\n    return nc\n"),
    ("                verified += 1\n                # the hits count",
     "                verified += 1\n                cv = cycles()\n                # the hits count"),
    ("                    o += holds(p_tok, b0, ls, p_tok[a0 + order[y]])\n",
     "                    o += holds(p_tok, b0, ls, p_tok[a0 + order[y]])\n                meta[T0 + 8] += cycles() - cv\n"),
    ("            nc = 0\n            if lr > 0:", "            nc = 0\n            cc = cycles()\n            if lr > 0:"),
    ("            for q in range(lr):          # Section 5.2: append at the tails",
     "            meta[T0 + 4] += cycles() - cc\n            cc = cycles()\n"
     "            for q in range(lr):          # Section 5.2: append at the tails"),
    ("            meta[N_REC] += 1\n            if nc > 0:",
     "            meta[N_REC] += 1\n            meta[T0 + 5] += cycles() - cc\n            cc = cycles()\n"
     "            if nc > 0:"),
    ("            meta[MAX_STOCK] = max(meta[MAX_STOCK], meta[NS])",
     "            meta[T0 + 6] += cycles() - cc\n            meta[MAX_STOCK] = max(meta[MAX_STOCK], meta[NS])"),
    ("    n = op.size\n    tg = meta[A_TOP:]", "    n = op.size\n    c_all = cycles()\n    tg = meta[A_TOP:]"),
    ("            meta[OUT_ROW] = row + m\n    return n, 0",
     "            meta[OUT_ROW] = row + m\n    meta[T0 + 7] += cycles() - c_all\n    return n, 0"),
    ("@njit(cache=True", "@njit(cache=False"),
)


def timed_copy():
    src = open(K.__file__).read()
    for old, new in PATCHES:
        if old not in src:
            raise SystemExit(f"_swoop_kernels.py changed: update the patch for {old[:60]!r}")
        src = src.replace(old, new)
    path = os.path.join(tempfile.mkdtemp(), "_swoop_kernels_timed.py")
    with open(path, "w") as f:
        f.write(src)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))      # profile_swoop.cycles
    spec = importlib.util.spec_from_file_location("_swoop_kernels_timed", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--window", type=int, default=10_000)
    ap.add_argument("--sets", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=2)
    args = ap.parse_args(argv)
    w, n = args.window, args.sets
    stream = tweet_like(w + n, seed=1)
    batches = [window_slice(stream, a, min(a + STEP, w + n)) for a in range(w, w + n, STEP)]
    eng = S.SwoopEngine(Params(k=10, w=w))
    for a in range(0, w, STEP):
        list(eng.process(window_slice(stream, a, min(a + STEP, w))))
    want = [list(copy.deepcopy(eng).process(b)) for b in batches[:1]]
    T = timed_copy()
    saved = S.K
    try:
        S.K = T
        twin = S.SwoopEngine(Params(k=10, w=w))         # meta with the timer slots
        for a in range(0, w, STEP):
            list(twin.process(window_slice(stream, a, min(a + STEP, w))))
        if [list(copy.deepcopy(twin).process(b)) for b in batches[:1]] != want:
            raise SystemExit("the timed copy disagrees with the kernel")
        for r in range(args.reps):
            e = copy.deepcopy(twin)
            gc.collect()
            e.meta[T.T0:] = 0
            spent = 0.0
            for b in batches:
                t = time.process_time()
                list(e.process(b))
                spent += time.process_time() - t
            acc = e.meta[T.T0:].astype(float)
            per = spent / acc[7] * 1e6 / n
            print(f"# rep {r}: |W| = {w}, {n} sets, process() {1e6 * spent / n:.2f} us/set "
                  f"({n / spent:.0f} sets/CPU-s), load {os.getloadavg()[0]:.2f}")
            for name, a in zip(NAMES, acc):
                print(f"{name:44s} {a * per:6.2f} us/set")
    finally:
        S.K = saved
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
