"""Every problem's `streamspec conform` (5 examples), timing numba's compiles (cache misses only)."""
import time, sys, os
from numba.core import event
tot = {"s": 0.0, "n": 0, "d": 0, "t": 0}
class L(event.Listener):
    def on_start(self, ev):
        if tot["d"] == 0: tot["t"] = time.perf_counter()
        tot["d"] += 1
    def on_end(self, ev):
        tot["d"] -= 1
        if tot["d"] == 0:
            tot["s"] += time.perf_counter() - tot["t"]; tot["n"] += 1
event.register("numba:compile", L())
from streamspec.pipeline.cli import main
t = time.perf_counter(); c = time.process_time()
for problem in ["connectivity", "simjoin", "kws", "topkjoin"]:
    main(["conform", problem, "--examples", "5"])
print(f"compile {tot['s']:.1f} s over {tot['n']} top-level compiles; total wall {time.perf_counter()-t:.1f} cpu {time.process_time()-c:.1f}", file=sys.stderr)
