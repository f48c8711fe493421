"""BIC through process() on a table1 stream (scaled to 16M edges, its first EDGES edges), the
kept union-find of the next window's BFBG on (shipped: ``kern.keep_window_uf``) and off (a
stand-in that builds nothing, so every trigger runs the union-find itself; with ``--no-warm`` the
stand-in builds J but reports no build, so no pre-warm follows), or with ``--fused`` the fused
triggering call (``kern.trigger``) on and off (``_fuse_trigger`` handing the driver none),
alternated in one process: throughput, P50/P95/P99 of the triggering call (CPU clock, GC
frozen), answers compared equal.  The triggering edge alone, then the slide's rest, as
measure._timed feeds them.  ``--large`` (stop 39): kept on every BFBG (shipped since
``lay.KEEP_STREAK``: on one of ``SEARCH_MIN_EDGES`` edges or more after that many windows
in a row needed it) against kept below ``SEARCH_MIN_EDGES`` only (stop 38's rule);
``--max-edges M``: the stream scaled to M edges instead of 16M.

  python ab_bic_kept_uf_s38.py KEY EDGES [REPS] [--no-warm | --fused | --large] [--max-edges M]
"""
import os
import sys
import time

import numpy as np

from streamspec.bench import heap
from streamspec.bench.connectivity import measure, table1
from streamspec.engines.connectivity import _bic_kernels as kern, _bic_layout as lay, bic

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver_floor_s36 import slide  # noqa: E402  (the timed slide, shared by the A/Bs here)


def main():
    argv = sys.argv[1:]
    max_edges = 16_000_000
    if "--max-edges" in argv:
        at = argv.index("--max-edges")
        max_edges = int(argv[at + 1])
        del argv[at:at + 2]
    args = [a for a in argv if not a.startswith("--")]
    no_warm = "--no-warm" in argv
    large = "--large" in argv
    key, edges = args[0], int(args[1])
    reps = int(args[2]) if len(args) > 2 else 3
    stream, params, scale = table1.scratch_point(key, edges, max_edges=max_edges)
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
    if large:       # stop 38's rule: none kept on a BFBG of SEARCH_MIN_EDGES edges or more
        other = lambda *a: 0 if a[0][lay.E_CNT] >= kern.SEARCH_MIN_EDGES else keep(*a)  # noqa: E731
    names = (("fused", "not fused") if fused else
             ("kept", "below 32K only" if large else "kept, no pre-warm" if no_warm else "off"))
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
