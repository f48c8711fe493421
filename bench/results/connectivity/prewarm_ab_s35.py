"""In-process A/B of the driver's pre-warm: one msf engine, each slide's batch fed with
PREWARM on or off (alternating), the next trigger's CPU time and the batch's recorded."""
import sys, time, numpy as np
from streamspec.spec import connectivity
from streamspec.bench.connectivity import msf_targets, measure
from streamspec.bench.connectivity.peers import create
from streamspec.bench import heap
which = sys.argv[1]; quick = len(sys.argv) > 2 and sys.argv[2] == 'quick'
name, s, params, desc = next(msf_targets.streams(quick, [which]))
measure.warm_up('msf')
eng = create('msf', params, hold_back=False)
now = time.process_time
res = {True: ([], [], []), False: ([], [], [])}   # trigger latency, batch time, batch edges
mode = False
ON = connectivity.PREWARM          # the shipped threshold
with heap.frozen():
    for i, (lo, hi) in enumerate(measure.pieces(s, params)):
        trig = s.batch(lo, lo + 1)
        rest = s.batch(lo + 1, hi) if hi > lo + 1 else None
        a = now(); out = list(eng.process(trig)); b = now()
        if out and i > 0:
            res[mode][0].append((b - a) / len(out))
        mode = (i % 2 == 0)      # the mode of this batch decides the next trigger's warmth
        connectivity.PREWARM = ON if mode else connectivity.NO_PREWARM
        if rest is not None:
            c = now(); list(eng.process(rest)); d = now()
            res[mode][1].append(d - c); res[mode][2].append(hi - lo - 1)
for mode in (True, False):
    lat = np.array(res[mode][0]) * 1e3
    bt, be = sum(res[mode][1]), sum(res[mode][2])
    print(which, 'prewarm' if mode else 'none   ', 'triggers', len(lat), 'P50 %.4f P95 %.4f P99 %.4f ms' % tuple(np.percentile(lat, [50, 95, 99])), 'batches %.3f us/edge over %d edges' % (bt / be * 1e6, be))
