import sys, os, numpy as np
from streamspec.spec.connectivity import Params
from streamspec.bench.connectivity import table1, measure
from streamspec.bench.connectivity.generators import workload
from streamspec.engines.connectivity.bic import BicEngine
from streamspec.engines.connectivity import _bic_layout as lay
key, edges = sys.argv[1], int(sys.argv[2])
d = table1.parameters(table1.DATASETS[key], table1.load_fit())
scale = table1.scale_of(d, 16_000_000)
stream = table1.stream_of(d, scale, 0, table1.scratch_dir("/tmp/streamspec-table1")).prefix(edges)
sh = table1.shape(d, scale)
params = Params(r=sh["r"], s=sh["s"], workload=workload(stream, table1.QUERIES, seed=0, top=1000))
e = BicEngine(params, hold_back=False)
hits, trues = [], []
for lo, hi in measure.pieces(stream, params):
    before = e._pend[lay.FCONN].copy() if hasattr(e, "_pend") else None
    out = list(e.process(stream.batch(lo, lo + 1)))
    if out and before is not None:
        fe = e._st[lay.F_EP]
        hits.append(int((before == fe).sum()))
        trues.append(sum(out[0].answers))
    if hi > lo + 1:
        list(e.process(stream.batch(lo + 1, hi)))
hits, trues = np.array(hits), np.array(trues)
print(key, "windows", len(hits), "cache hits per window: mean", hits.mean().round(1), "median", np.median(hits),
      "; true answers per window: mean", trues.mean().round(1))
