"""BIC through process() on a table1 stream (scaled to 16M edges, its first EDGES edges), the
kept union-find of the next window's BFBG on (shipped: ``kern.keep_window_uf``) and off (a
stand-in that builds nothing, so every trigger runs the union-find itself; with ``--no-warm`` the
stand-in builds J but reports no build, so no pre-warm follows), or with ``--fused`` the fused
triggering call (``kern.trigger``) on and off (``_fuse_trigger`` handing the driver none),
alternated in one process: throughput, P50/P95/P99 of the triggering call (CPU clock, GC
frozen), answers compared equal.  The triggering edge alone, then the slide's rest, as
measure._timed feeds them.

  python ab_bic_kept_uf_s38.py KEY EDGES [REPS] [--no-warm | --fused]
"""
import os
import sys
import time

import numpy as np

from streamspec.bench import heap
from streamspec.bench.connectivity import measure, table1
from streamspec.engines.connectivity import _bic_kernels as kern, bic

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver_floor_s36 import slide  # noqa: E402  (the timed slide, shared by the A/Bs here)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    no_warm = "--no-warm" in sys.argv
    key, edges = args[0], int(args[1])
    reps = int(args[2]) if len(args) > 2 else 3
    stream, params, scale = table1.scratch_point(key, edges)
    pieces = measure.pieces(stream, params)
    batches = [(stream.batch(lo, lo + 1), stream.batch(lo + 1, hi) if hi > lo + 1 else None)
               for lo, hi in pieces]
    print(f"{key} scale {scale:.6g}: {len(stream)} edges, {len(pieces)} pieces, "
          f"load {os.getloadavg()[0]:.2f}", flush=True)
    measure.warm_up("bic")
    fused = "--fused" in sys.argv
    keep = kern.keep_window_uf
    fuse = bic.BicEngine._fuse_trigger
    other = (lambda *a: keep(*a) and 0) if no_warm else (lambda *a: 0)
    names = ("fused", "not fused") if fused else ("kept", "kept, no pre-warm" if no_warm else "off")
    now = time.process_time
    ref = None
    for rep in range(reps):
        for mode in (names[::-1] if rep % 2 else names):
            if fused:
                bic.BicEngine._fuse_trigger = fuse if mode == "fused" else _no_fused_call
            else:
                kern.keep_window_uf = keep if mode == "kept" else other
            engine = measure.create("bic", params, hold_back=False)
            lat, outs, total = [], [], 0.0
            with heap.frozen():
                for trig, rest in batches:
                    out, tt, tr = slide(engine, trig, rest, now)
                    total += tt + tr
                    lat += [tt / len(out)] * len(out) if out else []
                    outs += out
            if ref is None:
                ref = outs
            assert outs == ref
            lat = np.array(lat) * 1e3
            print(f"  rep {rep} {mode:17s}: {len(stream) / total:,.0f} edges/CPU-s  P50 "
                  f"{np.percentile(lat, 50):.4f} P95 {np.percentile(lat, 95):.4f} P99 "
                  f"{np.percentile(lat, 99):.4f} ms; load {os.getloadavg()[0]:.2f}", flush=True)
    kern.keep_window_uf = keep
    bic.BicEngine._fuse_trigger = fuse


def _no_fused_call(engine):
    engine._trigger_args = None


if __name__ == "__main__":
    main()
