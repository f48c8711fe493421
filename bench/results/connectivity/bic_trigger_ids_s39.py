"""BIC through process() on a table1 stream at a given scale: the windows whose triggering call took
the general path (``_feed_checked``: an id outside the id map's direct table), and the CPU time of that path
and of ``IdIndex.add`` in it (wrappers), against the fused triggers.

  python bic_trigger_ids_s39.py KEY EDGES MAX_EDGES
"""
import sys, os, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
from streamspec.bench import heap
from streamspec.bench.connectivity import measure, table1
from streamspec.spec import vertices as V
from streamspec.spec import connectivity as C
key, edges, maxe = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
stream, params, scale = table1.scratch_point(key, edges, max_edges=maxe, echo=lambda s: None)
pieces = measure.pieces(stream, params)
batches = [(stream.batch(lo, lo + 1), stream.batch(lo + 1, hi) if hi > lo + 1 else None) for lo, hi in pieces]
measure.warm_up("bic")
acc = {"add": 0.0, "chk": 0.0}
orig_add, orig_chk = V.IdIndex.add, C.ConnectivityEngine._feed_checked
def add(self, values):
    s = time.process_time(); r = orig_add(self, values); acc["add"] += time.process_time() - s; return r
def chk(self, b):
    s = time.process_time(); r = orig_chk(self, b); acc["chk"] += time.process_time() - s; return r
V.IdIndex.add = add; C.ConnectivityEngine._feed_checked = chk
eng = measure.create("bic", params, hold_back=False)
rows = []
with heap.frozen():
    for trig, rest in batches:
        acc["add"] = acc["chk"] = 0.0
        s = time.process_time()
        out = list(eng.process(trig))
        e = time.process_time() - s
        if out: rows.append((e * 1e3, acc["chk"] * 1e3, acc["add"] * 1e3))
        if rest is not None: list(eng.process(rest))
r = np.array(rows)
gen = r[:, 1] > 0
print("windows", len(r), "general path", gen.sum(), "median trigger general", np.median(r[gen, 0]) if gen.any() else None, "fused/other", np.median(r[~gen, 0]))
print("general: median _feed_checked", np.median(r[gen, 1]), "add", np.median(r[gen, 2]))
print("first 10 general:", np.round(r[gen][:10], 3).tolist())
print("last 10 general:", np.round(r[gen][-10:], 3).tolist())
idx = np.flatnonzero(gen); print("general windows idx:", idx[:5], idx[-5:])
