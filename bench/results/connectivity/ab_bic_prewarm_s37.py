"""BIC through process() on a table1 stream (scaled to 16M edges, its first EDGES edges), the
driver's pre-warm on (shipped PREWARM) and off (NO_PREWARM), alternated in one process: throughput,
P50/P95/P99 of the triggering call (CPU clock, GC frozen) and the P50 by window position in the
chunk (n mod K: after BIC's chunk-scale work, the backward build and the last slot's pre-reduction,
positions 0 and 1 were 3-4x the rest).  The triggering edge alone, then the slide's rest, as
measure._timed feeds them.

  python ab_bic_prewarm_s37.py KEY EDGES ENGINE [REPS]
"""
import os
import sys
import time

import numpy as np

from streamspec.bench import heap
from streamspec.bench.connectivity import measure, table1
from streamspec.spec import connectivity as conn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver_floor_s36 import slide  # noqa: E402  (the timed slide, shared by the A/Bs here)


def main():
    key, edges, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    reps = int(sys.argv[4]) if len(sys.argv) > 4 else 4
    stream, params, scale = table1.scratch_point(key, edges)
    K = params.r // params.s
    pieces = measure.pieces(stream, params)
    batches = [(stream.batch(lo, lo + 1), stream.batch(lo + 1, hi) if hi > lo + 1 else None)
               for lo, hi in pieces]
    print(f"{key} scale {scale:.6g}: {len(stream)} edges, {len(pieces)} pieces, K {K}, "
          f"load {os.getloadavg()[0]:.2f}", flush=True)
    measure.warm_up(name)
    now = time.process_time
    for rep in range(reps):
        for mode in (("off", "on") if rep % 2 else ("on", "off")):
            engine = measure.create(name, params, hold_back=False)
            lat, idx, total = [], [], 0.0
            with conn.prewarm_after(conn.PREWARM if mode == "on" else conn.NO_PREWARM), heap.frozen():
                for trig, rest in batches:
                    out, tt, tr = slide(engine, trig, rest, now)
                    total += tt + tr
                    for r in out:
                        lat.append(tt / len(out))
                        idx.append(r.index)
            lat, idx = np.array(lat) * 1e3, np.array(idx)
            p50 = [np.percentile(lat[idx % K == q], 50) for q in range(K)]
            print(f"  rep {rep} pre-warm {mode:3s}: {len(stream) / total:,.0f} edges/CPU-s  P50 "
                  f"{np.percentile(lat, 50):.4f} P95 {np.percentile(lat, 95):.4f} P99 "
                  f"{np.percentile(lat, 99):.4f} ms; P50 at positions 0, 1, 2: {p50[0]:.4f} "
                  f"{p50[1]:.4f} {p50[2]:.4f}, the others at most {max(p50[3:]):.4f}; "
                  f"load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
