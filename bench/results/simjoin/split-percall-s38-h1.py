"""Per-call split of swoop's process() at small vs large batches (stop 38, H1): one engine per batch size,
the window filled in batches of 10,000, then N sets in chunks of the largest size, each chunk through
every engine in turn (order alternating); CPU time per call of run_ops, _reserve, _prefault,
_collect, _apply, _outputs and add_ints (wrappers cost ~1 us each).

    python bench/results/simjoin/split-percall-s38-h1.py WINDOW SETS 135,10000
"""
import sys, time, gc, os
import numpy as np
from streamspec.bench.simjoin.generators import tweet_like
from streamspec.bench.simjoin.throughput import window_slice
from streamspec.engines.simjoin import swoop as S, _swoop_kernels as K
from streamspec.spec.simjoin import Params

w = int(sys.argv[1]); n = int(sys.argv[2]); batches = [int(x) for x in sys.argv[3].split(",")]
stream = tweet_like(w + n + 200, seed=1)
pc = time.process_time
spent = {}
def wrap(obj, name, key):
    fn = getattr(obj, name)
    def timed(*a, **kw):
        c = pc()
        try: return fn(*a, **kw)
        finally: spent[key] = spent.get(key, 0.0) + pc() - c
    setattr(obj, name, timed)
engs = {}
for b in batches:
    e = S.SwoopEngine(Params(k=10, w=w))
    for a in range(0, w, 10000):
        list(e.process(window_slice(stream, a, min(a + 10000, w))))
    engs[b] = e
wrap(K, "run_ops", "run_ops")
for b, e in engs.items():
    for nm in ("_reserve", "_collect", "_prefault", "_apply", "_outputs"):
        wrap(e, nm, nm)
    wrap(e.tokens, "add_ints", "add_ints")
gc.collect()
print("load", os.getloadavg()[0])
# alternated: each chunk of CHUNK sets goes through every engine (in its batch size) before the next
# chunk, the engines' order alternating, so load changes fall on all sizes alike
CHUNK = max(batches)
res = {b: [0.0, 0, {}] for b in engs}
for q, c0 in enumerate(range(w, w + n, CHUNK)):
    c1 = min(c0 + CHUNK, w + n)
    for b in (batches if q % 2 == 0 else batches[::-1]):
        e = engs[b]
        spent.clear()
        for a in range(c0, c1, b):
            bt = window_slice(stream, a, min(a + b, c1))
            c = pc(); list(e.process(bt)); res[b][0] += pc() - c; res[b][1] += 1
        for k, v in spent.items():
            res[b][2][k] = res[b][2].get(k, 0.0) + v
for b, (tot, calls, parts) in res.items():
    print(f"batch {b}: {1e6*tot/n:.2f} us/set, {1e6*tot/calls:.0f} us/call; run_ops {1e6*parts['run_ops']/n:.2f} us/set;"
          " per call:", "  ".join(f"{k} {1e6*v/calls:.1f}" for k, v in parts.items()), flush=True)
print("load", os.getloadavg()[0])
