"""BIC through process() on a table1 stream at a given scale: throughput, trigger P50/P95, and the CPU time of
each kept union-find build (``kern.keep_window_uf``, timed by a wrapper).  Old code: run it with PYTHONPATH on a
``git archive`` of the old tree, alternated with the working tree in separate processes; rep 0 compiles.

  python bic_keep_cost_s39.py KEY EDGES MAX_EDGES REPS [LABEL]
"""
import sys, os, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
from streamspec.bench import heap
from streamspec.bench.connectivity import measure, table1
from streamspec.engines.connectivity import _bic_kernels as kern
from driver_floor_s36 import slide
key, edges, maxe, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
stream, params, scale = table1.scratch_point(key, edges, max_edges=maxe, echo=lambda s: None)
pieces = measure.pieces(stream, params)
batches = [(stream.batch(lo, lo + 1), stream.batch(lo + 1, hi) if hi > lo + 1 else None) for lo, hi in pieces]
measure.warm_up("bic")
keep = kern.keep_window_uf
acc = [0.0, 0]
def timed(*a):
    s = time.process_time(); r = keep(*a); 
    if r: acc[0] += time.process_time() - s; acc[1] += 1
    return r
kern.keep_window_uf = timed
now = time.process_time
for rep in range(reps):
    acc[:] = [0.0, 0]
    eng = measure.create("bic", params, hold_back=False)
    lat, tot = [], 0.0
    with heap.frozen():
        for trig, rest in batches:
            out, a, b = slide(eng, trig, rest, now)
            tot += a + b
            if out: lat.append(a * 1e3)
    print(f"{sys.argv[5] if len(sys.argv)>5 else ''} rep {rep}: {len(stream)/tot:,.0f} e/s, P50 {np.percentile(lat,50):.4f} P95 {np.percentile(lat,95):.4f}; keeps {acc[1]} at {acc[0]/max(acc[1],1)*1e3:.3f} ms each, {acc[0]:.2f} s of {tot:.2f}; load {os.getloadavg()[0]:.2f}", flush=True)
