"""Issue 28: per-triggering-call timing on a table1 full-size prefix with the id map's and the
engines' growth logged (table1-prefix-FS-growth.log). Run from the checkout:
``python bench/results/connectivity/table1-prefix-FS-growth.py FS 12000000 msf 6``."""
import os, sys, time, resource
from pathlib import Path
import numpy as np
from streamspec.bench.connectivity import table1 as T
from streamspec.bench.connectivity.generators import workload
from streamspec.bench.connectivity.measure import pieces, warm_up
from streamspec.bench.connectivity.peers import create
from streamspec.spec.connectivity import Params
from streamspec.spec import vertices as V
from streamspec.bench import heap

key, prefix, engine_name, budget = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
d = T.parameters(T.DATASETS[key], T.load_fit())
stream = T.stream_of(d, 1.0, 0, T.scratch_dir(), print, prefix)
sh = T.shape(d, 1.0)
params = Params(r=sh["r"], s=sh["s"], workload=workload(stream, T.QUERIES, seed=0, top=1000))
EV = []
def wrap(cls, name):
    f = getattr(cls, name)
    def g(self, *a, **k):
        t = time.process_time(); w = time.perf_counter()
        r = f(self, *a, **k)
        EV.append((name, time.process_time() - t, time.perf_counter() - w))
        return r
    setattr(cls, name, g)
wrap(V.IdIndex, "_grow"); wrap(V.SparseIds, "insert"); wrap(V.SparseIds, "__init__")
from streamspec.engines.connectivity import msf as M
wrap(M.MsfEngine, "_reserve")
from streamspec.engines.connectivity import bic as B
wrap(B.BicEngine, "_grow"); wrap(B.BicEngine, "_grow_vertices"); wrap(B.BicEngine, "_run")
warm_up(engine_name)
eng = create(engine_name, params, hold_back=False)
total = 0.0; lat = []; slow = []
ru = lambda: resource.getrusage(resource.RUSAGE_SELF)
with heap.frozen():
  for i, (lo, hi) in enumerate(pieces(stream, params)):
    b1 = stream.batch(lo, lo + 1); b2 = stream.batch(lo + 1, hi) if hi > lo + 1 else None
    EV.clear()
    r0 = ru(); c0 = time.process_time(); w0 = time.perf_counter()
    out = list(eng.process(b1))
    c1 = time.process_time(); w1 = time.perf_counter(); r1 = ru()
    ev1 = list(EV); EV.clear()
    if b2 is not None: list(eng.process(b2))
    c2 = time.process_time()
    ev2 = list(EV)
    total += c2 - c0
    dt = (c1 - c0) * 1e3
    if out:
        lat.append(dt)
    vs = eng.vertices
    if dt > 3 or ev1:
        slow.append(i)
        print(f"piece {i} win={bool(out)} trig cpu {dt:.2f} ms wall {(w1-w0)*1e3:.2f} "
              f"usr {(r1.ru_utime-r0.ru_utime)*1e3:.1f} sys {(r1.ru_stime-r0.ru_stime)*1e3:.1f} "
              f"minflt {r1.ru_minflt-r0.ru_minflt} | size {vs.size} cap {vs._direct.size} "
              f"sparse {len(vs._sparse)} col {vs._sparse._column.size} | ev {[(e[0], round(e[1]*1e3,1)) for e in ev1]} | rest ev {[(e[0], round(e[1]*1e3,1)) for e in ev2][:6]}", flush=True)
    if lat and total > budget:
        break
lat = np.array(lat)
print(f"windows {len(lat)} P50 {np.percentile(lat,50):.3f} P95 {np.percentile(lat,95):.3f} P99 {np.percentile(lat,99):.3f} max {lat.max():.1f} total cpu {total:.1f}s")
vs = eng.vertices
print(f"final size {vs.size} cap {vs._direct.size} sparse {len(vs._sparse)}")
