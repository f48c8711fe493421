"""(msf_targets' streams) The driver's floor for a window's triggering call through process(): a null engine
(answers a fixed all-False row, applies nothing) beside bic/msf/dtree, on table1's scaled
streams.  CPU clock, P50/P95/P99 of the triggering call, as measure._timed times it."""
import sys, time, os, gc
import numpy as np
from pathlib import Path
from streamspec.spec.connectivity import ConnectivityEngine, Params
from streamspec.bench.connectivity import table1, measure
from streamspec.bench.connectivity.generators import workload
from streamspec.bench import heap

class Null(ConnectivityEngine):
    name = "null"; description = "floor"; retains_columns = False
    def _start(self):
        self._rows = {}
    def _run(self, u, v, t, upto):
        n = upto - self.next_window
        row = self._rows.get(n)
        if row is None:
            row = self._rows[n] = np.zeros((n, len(self.queries)), dtype=bool)
        return row
    def _connected(self, a, b):
        return False


from numba import njit
from streamspec.spec._connectivity_kernels import feed_one

@njit(cache=False)
def null_trigger(st, out, u, v, t, last_t, check_last, table, size, first_window, dry):
    if dry:
        return -4, 0, 0, 0, last_t, first_window + 1, 1
    ti = t[0]
    end0 = st[0] + st[1]
    upto = (ti - end0) // st[2] + 1 if ti >= end0 else 0
    if upto < first_window:
        upto = first_window
    if upto != first_window + 1:
        return -3, 0, 0, 0, last_t, upto, 0
    status, nf, tl = feed_one(u, v, t, last_t, check_last, table, size, st[3:4], st[4:5], st[5:6], st[6:8])
    if status != -1:
        return status, 0, 0, 0, tl, upto, 0
    return status, nf, st[6], st[7], tl, upto, 1

class NullFused(Null):
    name = "nullfused"
    def _start(self):
        Null._start(self)
        w = self.windows
        self._st = np.array([w.t0, w.r, w.s, 0, 0, 0, 0, 0], dtype=np.int64)
        self._trigger_answers = np.zeros((1, len(self.queries)), dtype=bool)
        NullFused._trigger_kernel = staticmethod(null_trigger)
        self._trigger_args = (self._st, self._trigger_answers)

def timed(engine, stream, params, now=time.process_time):
    lat = []
    for lo, hi in measure.pieces(stream, params):
        trig = stream.batch(lo, lo + 1)
        rest = stream.batch(lo + 1, hi) if hi > lo + 1 else None
        s = now(); out = list(engine.process(trig)); m = now()
        if rest is not None:
            list(engine.process(rest))
        if out:
            lat.extend([(m - s) / len(out)] * len(out))
    return np.asarray(lat)


def main():
    from streamspec.bench.connectivity import msf_targets
    which = sys.argv[1].split(","); names = sys.argv[2].split(","); reps = int(sys.argv[3])
    for sname, stream, params, note in msf_targets.streams(False, which):
        print(note, f"load {os.getloadavg()[0]:.2f}", flush=True)
        for rep in range(reps):
            for name in names:
                if name == "null":
                    eng = Null(params, hold_back=False)
                elif name == "nullfused":
                    eng = NullFused(params, hold_back=False)
                else:
                    measure.warm_up(name)
                    eng = measure.create(name, params, hold_back=False)
                with heap.frozen():
                    lat = timed(eng, stream, params) * 1e3
                top = np.sort(lat)[-3:][::-1]
                print(f"  {sname} rep {rep} {name:9s} windows {len(lat):4d}  P50 {np.percentile(lat,50):.4f}  "
                      f"P95 {np.percentile(lat,95):.4f}  P99 {np.percentile(lat,99):.4f}  top3 "
                      + " ".join(f"{x:.4f}" for x in top) + " ms", flush=True)
        print(f"  load {os.getloadavg()[0]:.2f}", flush=True)

main()
