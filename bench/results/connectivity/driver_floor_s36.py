"""The driver's floor for a window's triggering call through process(): a null engine
(answers a fixed all-False row, applies nothing) beside bic/msf/dtree, on table1's scaled
streams.  CPU clock, P50/P95/P99 of the triggering call, as measure._timed times it.

  python driver_floor_s36.py table1 KEY EDGES ENGINES        (table1's stream KEY scaled to 16M
      edges, its first EDGES edges; ENGINES among null,nullfused and registered names)
  [QUICK=1] python driver_floor_s36.py msf STREAMS ENGINES REPS   (msf_targets' streams)
"""
import sys, time, os, gc
import numpy as np
from pathlib import Path
from streamspec.spec.connectivity import ConnectivityEngine
from streamspec.bench.connectivity import table1, measure
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


from streamspec.spec._numba import njit
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
    _entry = None
    def _start(self):
        Null._start(self)
        w = self.windows
        self._st = np.array([w.t0, w.r, w.s, 0, 0, 0, 0, 0], dtype=np.int64)
        self._trigger_answers = np.zeros((1, len(self.queries)), dtype=bool)
        if NullFused._entry is None:      # the compiled function, no dispatcher (as msf's)
            from numba import types
            from streamspec.spec._numba import entry_point
            i64, col = types.int64, types.int64[:]
            NullFused._entry = entry_point(null_trigger, i64[::1], types.boolean[:, ::1], col, col,
                                           col, i64, types.boolean, col, i64, i64, types.boolean)
        NullFused._trigger_kernel = staticmethod(NullFused._entry)
        self._trigger_args = (self._st, self._trigger_answers)

def slide(engine, trig, rest, now=time.process_time):
    """One slide as measure._timed feeds it: the triggering edge's batch alone (timed),
    then the slide's rest (``None``: none).  Returns the windows answered, the
    triggering call's time and the rest's (the results scripts' A/Bs share this)."""
    s = now()
    out = list(engine.process(trig))
    m = now()
    if rest is not None:
        list(engine.process(rest))
    return out, m - s, now() - m


def timed(engine, stream, params, now=time.process_time, info=None):
    """The triggering calls' CPU time; ``info`` (a list) gets, per window, the call's
    minor page faults and voluntary / involuntary context switches (getrusage, read
    outside the timed span)."""
    import resource
    lat = []
    ru = resource.getrusage
    me = resource.RUSAGE_SELF
    for lo, hi in measure.pieces(stream, params):
        trig = stream.batch(lo, lo + 1)
        rest = stream.batch(lo + 1, hi) if hi > lo + 1 else None
        r0 = ru(me)
        s = now(); out = list(engine.process(trig)); m = now()
        r1 = ru(me)
        if rest is not None:
            list(engine.process(rest))
        if out:
            lat.extend([(m - s) / len(out)] * len(out))
            if info is not None:
                info.extend([(r1.ru_minflt - r0.ru_minflt, r1.ru_nvcsw - r0.ru_nvcsw,
                              r1.ru_nivcsw - r0.ru_nivcsw)] * len(out))
    return np.asarray(lat)

def engine(name, params):
    if name == "null":
        return Null(params, hold_back=False)
    if name == "nullfused":
        return NullFused(params, hold_back=False)
    measure.warm_up(name)
    return measure.create(name, params, hold_back=False)


def report(label, lat, info):
    order = np.argsort(lat)[::-1]
    print(f"  {label} windows {len(lat):5d}  P50 {np.percentile(lat,50):.4f}  P95 "
          f"{np.percentile(lat,95):.4f}  P99 {np.percentile(lat,99):.4f}  top3 "
          + " ".join(f"{lat[i]:.4f}" for i in order[:3]) + " ms; slowest 5 (faults, vcsw, ivcsw) "
          + " ".join(f"{lat[i]:.3f}:{info[i]}" for i in order[:5])
          + f"; calls with faults {sum(1 for x in info if x[0])}, switched "
          f"{sum(1 for x in info if x[1] or x[2])}", flush=True)


def run(label, eng, stream, params):
    info = []
    with heap.frozen():
        lat = timed(eng, stream, params, info=info) * 1e3
    report(label, lat, info)


def main():
    if sys.argv[1] == "table1":
        key, edges, names = sys.argv[2], int(sys.argv[3]), sys.argv[4].split(",")
        stream, params, scale = table1.scratch_point(key, edges)
        print(f"{key} scale {scale:.6g} window {params.r*table1.RATE} slide {params.s*table1.RATE} edges; "
              f"{len(stream)} edges fed; load {os.getloadavg()[0]:.2f}", flush=True)
        for name in names:
            run(f"{name:9s}", engine(name, params), stream, params)
        print(f"  load {os.getloadavg()[0]:.2f}")
        return
    from streamspec.bench.connectivity import msf_targets
    which, names, reps = sys.argv[2].split(","), sys.argv[3].split(","), int(sys.argv[4])
    for sname, stream, params, note in msf_targets.streams(bool(os.environ.get("QUICK")), which):
        print(note, f"load {os.getloadavg()[0]:.2f}", flush=True)
        for rep in range(reps):
            for name in names:
                run(f"{sname} rep {rep} {name:9s}", engine(name, params), stream, params)
        print(f"  load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
