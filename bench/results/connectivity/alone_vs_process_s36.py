"""BIC and D-Tree on table1's scaled streams: the triggering call's P95 through process()
(measure.run, table1's Figure 8 metric) and engine alone (measure.run_engine: ids remapped up
front, the driver's _evaluate called directly: the paper's in-memory replay).  CPU clock."""
import sys, os
import numpy as np
from streamspec.bench.connectivity import table1, measure

key, edges = sys.argv[1], int(sys.argv[2])
names = sys.argv[3].split(",")
budget = float(sys.argv[4]) if len(sys.argv) > 4 else 20.0
stream, params, scale = table1.scratch_point(key, edges, prefix=int(os.environ.get("PREFIX", "0")) or None,
                                             queries=int(os.environ.get("NQ", table1.QUERIES)))
print(f"{key} scale {scale:.6g} window {params.r*table1.RATE} slide {params.s*table1.RATE}; "
      f"{len(stream)} edges; load {os.getloadavg()[0]:.2f}", flush=True)
for name in names:
    measure.warm_up(name)
    for kind, fn in (("process()", measure.run), ("alone", measure.run_engine)):
        m = fn(name, stream, params, budget=budget, warm=False, clock="cpu")
        lat = m.window_latencies * 1e3
        print(f"  {name:6s} {kind:9s} windows {len(lat):5d} {'(budget)' if m.truncated else '        '} "
              f"P50 {np.percentile(lat,50):.4f} P95 {np.percentile(lat,95):.4f} "
              f"P99 {np.percentile(lat,99):.4f} ms  {m.steady_throughput:,.0f} e/s", flush=True)
print(f"  load {os.getloadavg()[0]:.2f}")
