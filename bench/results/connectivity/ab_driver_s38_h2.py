"""Stop 38 (H2): in-process A/B of the connectivity driver's per-call cost through
process(), on table1's scaled streams (triggering edge, then the slide's rest, as
measure._timed feeds them; CPU clock as measure's 'cpu').  The variants are switched
in one process, alternated round by round (order flipped each round), same data.

  python ab_driver_s38_h2.py KEY EDGES ENGINES ROUNDS VARIANTS
  python ab_driver_s38_h2.py blocks KEY EDGES ENGINES ENGINES_PER_NAME VARIANTS
      (one engine, the variants' driver methods swapped every 20 slides; each block's
      first 2 slides not counted)

VARIANTS (comma-separated) among (the first is the base of the ratios):
  REV:NAME the driver methods as committed at git revision REV; new: as in the tree
  old      SCRATCH_EDGES = 0: every slide's call allocates its columns (np.empty, 4 slices)
  scratch  SCRATCH_EDGES = BATCH: an eager engine with retains_columns = False reuses them
ENGINES among null, nullfused (driver_floor_s36.py) and registered names.
Per run: the triggering call's P50/P95 (ms), the rest call's P50 (ms), edges per CPU-second
over every call (trigger + rest), the load.
"""
import os, sys, time
import numpy as np
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import driver_floor_s36 as D
from streamspec.bench.connectivity import table1, measure
from streamspec.bench import heap
from streamspec.spec import connectivity as C

VARIANTS = {
    "old": dict(SCRATCH_EDGES=0),
    "scratch": dict(SCRATCH_EDGES=C.BATCH),
}
NEW = dict(C.ConnectivityEngine.__dict__)
# "REV:NAME": ConnectivityEngine's driver methods as committed at git revision REV (the
# module loaded under another name from `git show REV:spec/connectivity.py`), the rest
# of the module as now
OLD = {}


def _methods(rev):
    if rev not in OLD:
        import subprocess, types
        src = subprocess.run(["git", "show", f"{rev}:spec/connectivity.py"], capture_output=True,
                             text=True, check=True, cwd=Path(__file__).resolve().parents[3]).stdout
        mod = types.ModuleType(f"h2_connectivity_{rev}")
        exec(compile(src, f"{rev}:spec/connectivity.py", "exec"), mod.__dict__)
        for name in ("Edge", "EdgeBatch", "Params", "WindowResult", "_SET_INDEX", "_SET_START",
                     "_SET_END", "_SET_ANSWERS", "_ROWS"):
            setattr(mod, name, getattr(C, name))      # the data types and memos shared
        OLD[rev] = mod
    return OLD[rev]


DRIVER = ("process", "_feed", "_feed_int64", "_feed_checked", "_results", "_accept", "_evaluate",
          "_trigger_tuple", "_prewarm")


def use(variant):
    if ":" in variant:
        rev = variant.split(":")[0]
        old = _methods(rev).ConnectivityEngine.__dict__
        for name in DRIVER:
            setattr(C.ConnectivityEngine, name, old[name])
        return
    for name in DRIVER:
        setattr(C.ConnectivityEngine, name, NEW[name])
    for k, v in VARIANTS.get(variant, {}).items():
        setattr(C, k, v)


def timed(eng, stream, P):
    now = time.process_time
    trig, rest = [], []
    total = 0.0
    for lo, hi in P:
        out, tt, tr = D.slide(eng, stream.batch(lo, lo + 1),
                              stream.batch(lo + 1, hi) if hi > lo + 1 else None, now)
        total += tt + tr
        if out:
            trig.append(tt / len(out))
            rest.append(tr)
    return np.asarray(trig) * 1e3, np.asarray(rest) * 1e3, total


def blocks(eng, stream, P, variants, block=20, skip=2):
    """One engine; the variants' driver methods swapped every ``block`` slides (round
    robin), the first ``skip`` slides of each block not counted (code warm-up): per
    variant the triggering calls, the rest calls and the CPU time per edge."""
    now = time.process_time
    got = {v: ([], [], [0.0], [0]) for v in variants}
    for k, (lo, hi) in enumerate(P):
        var = variants[(k // block) % len(variants)]
        if k % block == 0:
            use(var)
        out, tt, tr = D.slide(eng, stream.batch(lo, lo + 1),
                              stream.batch(lo + 1, hi) if hi > lo + 1 else None, now)
        if out and k % block >= skip:
            trig, rest, total, fed = got[var]
            trig.append(tt / len(out))
            rest.append(tr)
            total[0] += tt + tr
            fed[0] += hi - lo
    return got


def main_blocks(key, edges, names, rounds, variants):
    stream, params, scale = table1.scratch_point(key, edges, echo=lambda *a, **k: None)
    P = measure.pieces(stream, params)
    print(f"{key} scale {scale:.6g} window {params.r*table1.RATE} slide {params.s*table1.RATE} "
          f"edges; {len(stream)} edges fed; blocks of 20 slides alternated in one engine; "
          f"{rounds} engines; load {os.getloadavg()[0]:.2f}", flush=True)
    for name in names:
        timed(D.engine(name, params), stream, P[:200])
        for r in range(rounds):
            order = variants if r % 2 == 0 else variants[::-1]
            eng = D.engine(name, params)
            with heap.frozen():
                got = blocks(eng, stream, P, order)
            for var in variants:
                trig, rest, total, fed = got[var]
                trig, rest = np.asarray(trig) * 1e3, np.asarray(rest) * 1e3
                print(f"  engine {r} {name:9s} {var:12s} trig P50 {np.percentile(trig,50):.4f} "
                      f"P95 {np.percentile(trig,95):.4f} rest P50 {np.percentile(rest,50):.4f} ms  "
                      f"{fed[0]/total[0]:,.0f} e/s  load {os.getloadavg()[0]:.2f}", flush=True)
    use("new")


def main():
    if sys.argv[1] == "blocks":
        return main_blocks(sys.argv[2], int(sys.argv[3]), sys.argv[4].split(","), int(sys.argv[5]),
                           sys.argv[6].split(","))
    key, edges, names, rounds = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(","), int(sys.argv[4])
    variants = sys.argv[5].split(",")
    stream, params, scale = table1.scratch_point(key, edges, echo=lambda *a, **k: None)
    P = measure.pieces(stream, params)
    print(f"{key} scale {scale:.6g} window {params.r*table1.RATE} slide {params.s*table1.RATE} "
          f"edges; {len(stream)} edges fed; rounds {rounds}; load {os.getloadavg()[0]:.2f}", flush=True)
    for name in names:              # numba's entry points and the caches, outside the rounds
        timed(D.engine(name, params), stream, P[:200])
    rows = {}
    for r in range(rounds):
        order = variants if r % 2 == 0 else variants[::-1]
        for name in names:
            for var in order:
                use(var)
                eng = D.engine(name, params)
                with heap.frozen():
                    trig, rest, total = timed(eng, stream, P)
                rows.setdefault((name, var), []).append(
                    (np.percentile(trig, 50), np.percentile(trig, 95), np.percentile(rest, 50),
                     len(stream) / total))
                print(f"  round {r} {name:9s} {var:8s} trig P50 {np.percentile(trig,50):.4f} "
                      f"P95 {np.percentile(trig,95):.4f} rest P50 {np.percentile(rest,50):.4f} ms  "
                      f"{len(stream)/total:,.0f} e/s  load {os.getloadavg()[0]:.2f}", flush=True)
    use("scratch")
    print("  medians over rounds (trig P50, trig P95, rest P50 ms; e/s); paired new/old per round:")
    for (name, var), got in rows.items():
        m = np.median(np.asarray(got), axis=0)
        base = np.asarray(rows[(name, variants[0])])
        ratio = np.median(np.asarray(got) / base, axis=0)
        print(f"  {name:9s} {var:8s} {m[0]:.4f} {m[1]:.4f} {m[2]:.4f} {m[3]:,.0f} e/s;  "
              f"/{variants[0]}: " + " ".join(f"{x:.3f}" for x in ratio), flush=True)
    print(f"  load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
