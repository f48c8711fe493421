"""Where the microseconds of msf's triggering call go through process() (issue 28, stop 34).

Scratch profiler, kept beside its log (msf-trigger-profile-s34.log): perf_counter_ns stamps
in a copy of the driver's ``_feed_int64`` one-edge fused branch,
llvm.readcyclecounter stamps in copies of ``msf_trigger`` and ``msf_run`` (entry, after
feed_one, after the window's answers, after the edge, exit).  Fed as measure.py feeds
(trigger edge alone, then the rest of the slide), hold_back=False, gc frozen.
Each stamp adds ~0.05-0.1 us.  Wall clock; not a figure of record (msf_targets is).
Run: KIND=rmat|yg REPS=2 python bench/results/connectivity/prof_msf_trigger_s34.py
"""
import gc
import os
import time

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

import streamspec.spec.connectivity as SC
from streamspec.bench.connectivity.generators import rmat_stream, workload
from streamspec.bench.connectivity.measure import pieces, warm_up
from streamspec.engines.connectivity import _msf_kernels as K
from streamspec.engines.connectivity import msf as M
from streamspec.spec._numba import njit
from streamspec.spec.connectivity import Params


@intrinsic
def cycles(typingctx):
    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(64), []),
                                            "llvm.readcyclecounter")
        return builder.call(fn, [])
    return types.int64(), codegen


@njit
def now():
    return cycles()


# copies of msf_run and msf_trigger with cycle stamps into P[0..4]
src = open(K.__file__).read()
run_src = src[src.index("@njit(cache=True, _nrt=False)\ndef msf_run("):
              src.index("@njit(cache=True, _nrt=False)\ndef msf_run_link_cut")]
run_src = run_src.replace("@njit(cache=True, _nrt=False)\ndef msf_run(V, st, u, v, t, Q, out, first_window, upto):",
                          "@njit(_nrt=False)\ndef msf_run_p(V, st, u, v, t, Q, out, first_window, upto, P):")
run_src = run_src.replace("            w += 1\n", "            w += 1\n            P[2] = cycles()\n", 1)
trig_src = src[src.index("@njit(cache=True, _nrt=False)\ndef msf_trigger("):]
trig_src = trig_src.replace("@njit(cache=True, _nrt=False)\ndef msf_trigger(V, st, Q, out, u, v, t, last_t, check_last, table, size, first_window):",
                            "@njit(_nrt=False)\ndef msf_trigger_p(V, st, Q, out, u, v, t, last_t, check_last, table, size, first_window, P):\n    P[0] = cycles()")
trig_src = trig_src.replace("    if status != -1:\n        return status, 0, 0, 0, tl, upto, 0\n",
                            "    P[1] = cycles()\n    if status != -1:\n        return status, 0, 0, 0, tl, upto, 0\n", 1)
trig_src = trig_src.replace("done = msf_run(V, st, gu, gv, gt, Q, out, first_window, upto)",
                            "done = msf_run_p(V, st, gu, gv, gt, Q, out, first_window, upto, P)\n    P[3] = cycles()")
trig_src = trig_src.replace("    return status, nf, f0, f1, tl, upto, 1 if same else 2",
                            "    P[4] = cycles()\n    return status, nf, f0, f1, tl, upto, 1 if same else 2")
assert all(f"P[{i}]" in trig_src for i in (0, 1, 3, 4)) and "P[2]" in run_src
ns = dict(K.__dict__)
ns.update(cycles=cycles, njit=njit)
exec(compile(run_src + "\n" + trig_src, "msf_trigger_p", "exec"), ns)
P = np.zeros(8, np.int64)
pc = time.perf_counter_ns
S = {}
_ENTRY = []


class Prof(M.MsfEngine):
    pass


# the driver's _feed_int64 (its fused one-edge branch) with stamps
_ORIGINAL = SC.ConnectivityEngine._feed_int64


def _feed_int64(self, batch):
    S["a"] = pc()
    u, v, t = batch.u, batch.v, batch.t
    if u.dtype is not SC._I64 or v.dtype is not SC._I64 or t.dtype is not SC._I64:
        return None
    n = len(t)
    if n != 1:
        return _ORIGINAL(self, batch)
    ids, last, t0 = self.vertices, self.last_t, self.params.t0
    if t0 is not None and (last is None or last < t0):
        last = t0
    args = self._trigger_args
    lo = self.next_window
    S["b"] = pc()
    status, fresh, f0, f1, last_t, upto, answered = _ENTRY[0](
        *args, u, v, t, 0 if last is None else last, last is not None, ids._direct,
        ids.size, lo, P)
    S["f"] = pc()
    if status != -1:
        return _ORIGINAL(self, batch)       # (-3: not one window due, or no room: nothing changed)
    assert answered in (1, 2)
    if fresh:
        ids.numbered_pair(fresh, f0, f1)
    self._seen += 1
    self.last_t = last_t
    self.next_window = upto
    S["g"] = pc()
    row = self._trigger_row
    if answered != 1 or row is None:
        row = self._trigger_row = self._trigger_tuple(lo)
    S["h"] = pc()
    w = self.windows
    start = w.t0 + lo * w.s
    res = SC._NEW(SC.WindowResult)
    SC._SET_INDEX(res, lo)
    SC._SET_START(res, start)
    SC._SET_END(res, start + w.r)
    SC._SET_ANSWERS(res, row)
    S["i"] = pc()
    S["answered"] = answered
    return [res]


Prof._feed_int64 = _feed_int64


def main():
    kind = os.environ.get("KIND", "rmat")
    reps = int(os.environ.get("REPS", 2))
    if kind == "yg":
        from streamspec.bench.connectivity import table1
        d = table1.parameters(table1.DATASETS["YG"])
        s = table1.stream_of(d, 1.0, 0, table1.scratch_dir())
        sh = table1.shape(d, 1.0)
        params = Params(r=sh["r"], s=sh["s"], workload=workload(s, 100, seed=0))
    else:
        edges = 10_000_000
        s = rmat_stream(edges // 10, edges, 1000, seed=0)
        r = edges // 10 // 1000
        params = Params(r=r, s=r // 20, workload=workload(s, 100, seed=0))
    c0, a = now(), pc()
    time.sleep(0.2)
    ghz = (now() - c0) / (pc() - a)
    ps = pieces(s, params)
    warm_up("msf")
    e = Prof(params, hold_back=False)
    for lo, hi in ps[:3]:
        if not _ENTRY:
            list(e.process(s.batch(lo, hi)))
            from numba import types as T
            i64, own, col = T.int64, T.int64[::1], T.int64[:]
            _ENTRY.append(ns["msf_trigger_p"].compile((
                i64[:, ::1], own, i64[:, ::1], T.boolean[:, ::1], col, col, col, i64,
                T.boolean, col, i64, i64, own)))
    rows = []
    gc.collect()
    gc.freeze()
    load0 = os.getloadavg()[0]
    for rep in range(reps):
        e = Prof(params, hold_back=False)
        for lo, hi in ps:
            trig = s.batch(lo, lo + 1)
            rest = s.batch(lo + 1, hi) if hi > lo + 1 else None
            S.clear()
            P[:] = 0
            t0 = pc()
            out = list(e.process(trig))
            t1 = pc()
            if out and "i" in S:
                rows.append((t0, dict(S), P.copy(), t1))
            if rest is not None:
                list(e.process(rest))
    gc.unfreeze()
    data = []
    for t0, d, k, t1 in rows:
        kern = (k[4] - k[0]) / ghz
        data.append([d["a"] - t0, d["b"] - d["a"], (d["f"] - d["b"]) - kern, (k[1] - k[0]) / ghz, (k[2] - k[1]) / ghz,
                     (k[3] - k[2]) / ghz, (k[4] - k[3]) / ghz, d["g"] - d["f"],
                     d["h"] - d["g"], d["i"] - d["h"], t1 - d["i"], t1 - t0, d["answered"]])
    D = np.array(data, dtype=float)
    D[:, :12] /= 1e3
    names = ["process() -> _feed_int64 (generator start)", "_feed_int64 py before kernel",
             "kernel call in+out (entry point, 13 args)", "kernel: feed_one + windows due",
             "kernel: answers (100 queries)", "kernel: the edge (insert) + return",
             "kernel: row compare", "driver: numbered/seen/last_t/next_window", "driver: row tuple (reuse or build)",
             "driver: WindowResult", "return [res] + yield from + list", "TOTAL (process call)"]
    same = (D[:, 12] == 1).mean()
    print(f"{kind} windows={len(D)} load={load0:.2f}-{os.getloadavg()[0]:.2f} TSC {ghz:.3f} GHz; "
          f"rows repeated (tuple reused) {same:.0%}; us: P50 mean P90 P99")
    for c, nm in enumerate(names):
        x = D[:, c]
        print(f"  {nm:44} {np.percentile(x, 50):7.2f} {x.mean():7.2f} {np.percentile(x, 90):7.2f} "
              f"{np.percentile(x, 99):7.2f}")
    top = np.argsort(D[:, 11])[-4:]
    print("  slowest calls (columns as above):")
    for i in top:
        print("   ", " ".join(f"{D[i, c]:.1f}" for c in range(12)))


main()
