"""Figure 5.7's ablation taken apart: FM with and without demand-driven operator
execution (Section 4.1) on the same stream, at steady state (issue 28).

``python -m streamspec.bench.kws.demand [--seconds 18000] [--windows 300,1200,4800]
[--every 1800] [--csv demand_5h.csv]``

For each window ``w`` and each mode (``fullmesh``, ``fullmesh:demand_driven=false``),
in a fresh process, the paper's default stream (``generator``: |K| 2, T_max 4, |SR| 15,
KWF 0.01, 1/sel 1/1000) is fed one instant at a time, as ``figures`` feeds it.  At
every ``--every`` seconds from ``w`` on (the window is full) the run samples what the
mode holds:

- ``nodes_nonempty``: expanded-schema nodes (relation, keyword set) with alive tuples,
  of ``nodes``; a join's right source is one of them, and demand-driven execution
  sends a join to sleep only when its right source is empty or all its parents sleep;
- ``joins`` (operators made; CN joins still held as rows, ``cn_rows``, are not
  operators yet), ``joins_running``;
- ``composites``: partial matches held in the joins' output buffers (``cn_composites``
  those of CN joins, the results), ``dead`` of them expired but not purged yet (lazy
  purging), and ``leaf_composites`` (the sources' single-tuple buffers);
and (memory: Figure 5.7's ``--memory`` pass in ``figures_5h.csv``; tracemalloc here would
slow the runs), over the steady part (from the first sample to the end), its CPU untraced
(``steady_cpu_s``) and, in a second run of the same mode, under ``cProfile``: the
functions taking the most of it (``profile``: ``name tottime_s ncalls``, process CPU time as
cProfile's clock, inflated by its per-call cost) and the calls
of the engine's work functions (``calls_*``), and the cumulative time (``cumulative``) of
``process`` (all of it), the spec boundary's ``_validate``, the engine's ``_insert`` and
what it calls: ``_advance`` (expiry; ``_remove``) and ``_route`` (the probes; ``_emit``,
``_probe_right`` the composites going up).
"""
from __future__ import annotations

import argparse
import cProfile
import csv
import json
import os
import pstats
import subprocess
import sys
import time
from itertools import groupby

MODES = ("fullmesh", "fullmesh:demand_driven=false")
WORK = ("_route", "_emit", "_probe_right", "_wake", "_sleep", "_live", "_index_buffer",
        "_materialise")
# cumulative profile time of: everything fed, the spec boundary's checks, the engine's
# tuple processing (expiry, routing), routing (probes), the joins' outputs going up
CUM = ("process", "_validate", "_insert", "_advance", "_remove", "_route", "_emit", "_probe_right")
FIELDS = ("window", "engine", "seconds", "t", "nodes", "nodes_nonempty", "joins", "cn_rows",
          "joins_running", "composites", "cn_composites", "dead", "leaf_composites",
          "steady_from", "steady_cpu_s", "outputs", "profile", "cumulative") + tuple(f"calls{w}" for w in WORK) \
    + ("commit", "load1")


def snapshot(eng, t: int) -> dict:
    """What the engine holds at instant ``t``."""
    ops = eng._made_ops()
    joins = [op for op in ops if op.left is not None]
    rows = eng._cn_rows
    return dict(t=t, nodes=len(eng._sources),
                nodes_nonempty=sum(1 for s in eng._sources.values() if s),
                joins=len(joins), cn_rows=0 if rows is None else len(rows),
                joins_running=sum(1 for op in joins if op.running),
                composites=sum(len(op.out) for op in joins),
                cn_composites=sum(len(op.out) for op in joins if op.cn),
                dead=sum(1 for op in joins for c in op.out if c[0] <= t),
                leaf_composites=sum(len(op.out) for op in ops if op.left is None))


def run(engine: str, window: int, seconds: int, every: int, profile: bool) -> dict:
    """One mode over the stream; samples from ``window`` on; CPU (or a profile) from there."""
    from streamspec.bench.kws.generator import params, stream
    from streamspec.spec.kws import Appear
    from streamspec.spec.registry import Registry

    p = params(15, 2, 4, window)
    events = list(stream(p, seconds, 0.01, 1000))
    eng = Registry.get("kws", engine)(p)
    samples, outputs, c0, prof = [], 0, None, None
    for t, instant in groupby(events, key=lambda e: e.t):
        if t >= window and (t - window) % every == 0:
            if c0 is None:
                if profile:
                    prof = cProfile.Profile(time.process_time)   # CPU, not wall: the machine is shared
                    prof.enable()
                c0 = time.process_time()
            if not profile:
                samples.append(snapshot(eng, t))
        outputs += sum(isinstance(o, Appear) for o in eng.process(list(instant)))
    c1 = time.process_time()
    if not profile:
        samples.append(snapshot(eng, seconds))
        return dict(samples=samples, steady_from=window, steady_cpu_s=c1 - c0, outputs=outputs)
    prof.disable()
    st = pstats.Stats(prof)
    top = sorted(st.stats.items(), key=lambda kv: -kv[1][2])[:8]
    calls = {f"calls{fn}": sum(v[1] for k, v in st.stats.items() if k[2] == fn) for fn in WORK}
    cum = {fn: max((v[3] for k, v in st.stats.items() if k[2] == fn), default=0.0) for fn in CUM}
    return dict(profile="; ".join(f"{k[2]} {v[2]:.2f} {v[1]}" for k, v in top),
                cumulative="; ".join(f"{fn} {c:.2f}" for fn, c in cum.items()), **calls)


def _one(engine: str, window: int, seconds: int, every: int, profile: bool) -> dict:
    code = ("import json, sys; from streamspec.bench.kws.demand import run; "
            "print(json.dumps(run(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), "
            "int(sys.argv[4]), sys.argv[5] == '1')))")
    res = subprocess.run([sys.executable, "-c", code, engine, str(window), str(seconds),
                          str(every), "1" if profile else "0"], capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"{engine} w={window}:\n{res.stderr}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    from streamspec.bench.pipeline_util import commit

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=int, default=18000)
    ap.add_argument("--windows", default="300,1200,4800")
    ap.add_argument("--every", type=int, default=1800)
    ap.add_argument("--csv", default=os.path.join("bench", "results", "kws", "demand_5h.csv"))
    a = ap.parse_args(argv)
    rows = []
    for w in (int(x) for x in a.windows.split(",")):
        for eng in MODES:
            load1 = round(os.getloadavg()[0], 2)
            res = _one(eng, w, a.seconds, a.every, False)
            prof = _one(eng, w, a.seconds, a.every, True)
            for s in res["samples"]:
                rows.append(dict(s, window=w, engine=eng, seconds=a.seconds,
                                 steady_from=res["steady_from"], steady_cpu_s=res["steady_cpu_s"],
                                 outputs=res["outputs"], **prof, commit=commit(), load1=load1))
            last = res["samples"][-1]
            print(f"w={w} {eng:<30} steady CPU {res['steady_cpu_s']:.2f} s from t={w}; at the end "
                  f"{last['joins_running']}/{last['joins']} joins running, {last['composites']} "
                  f"composites ({last['dead']} dead), {last['nodes_nonempty']}/{last['nodes']} "
                  f"nodes non-empty; profile {prof['profile']}", flush=True)
            with open(a.csv, "w", newline="") as f:
                wr = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
                wr.writeheader()
                wr.writerows(rows)


if __name__ == "__main__":
    main()
