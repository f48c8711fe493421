"""In-process A/B of BIC variants on table1's scaled streams, through process(): the
triggering edge alone, then the slide's rest, as measure._timed feeds them; CPU clock;
the two engines alternated round by round; answers compared equal.

  python ab_bic_s36.py VARIANT KEY EDGES ROUNDS

VARIANT ``idle-settle``: a deferred build finished at the end of a call that answers no
window (845b235, "new") against waiting for build_defer edges or the slot's close ("old":
that branch's _settle skipped).  ``search``: the window's bounded BFBG searches at every BFBG
size (search_shift = -1, "searched") against the shipped engine (no searches below
SEARCH_MIN_EDGES, the union-find decides).  (Stop 36's F-connection cache was measured by
the same loop against a patch that was not kept: bic-tries-s36.log.)"""
import sys, os, time
import numpy as np
from streamspec.bench.connectivity import table1, measure
from streamspec.bench import heap
from streamspec.engines.connectivity.bic import BicEngine

class Old(BicEngine):
    """``idle-settle``'s old: a pending deferred build waits (the new branch's _settle skipped)."""
    _idle = True

    def _run(self, u, v, t, upto):
        self._idle = False
        try:
            return BicEngine._run(self, u, v, t, upto)
        finally:
            self._idle = True

    def _settle(self):
        if self._idle:
            BicEngine._settle(self)


class Searched(BicEngine):
    """``search``: bounded searches at every BFBG size."""
    search_shift = -1


VARIANTS = {"idle-settle": (("old", Old), ("new", BicEngine)),
            "search": (("shipped", BicEngine), ("searched", Searched))}


def timed(engine, stream, params, now=time.process_time):
    lat, rows, total = [], [], 0.0
    for lo, hi in measure.pieces(stream, params):
        trig = stream.batch(lo, lo + 1)
        rest = stream.batch(lo + 1, hi) if hi > lo + 1 else None
        s = now(); out = list(engine.process(trig)); m = now()
        if rest is not None:
            out += list(engine.process(rest))
        total += now() - s
        if out:
            lat.append(m - s)
            rows.extend(r.answers for r in out)
    return np.asarray(lat) * 1e3, rows, total

variant, key, edges, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
stream, params, scale = table1.scratch_point(key, edges)
print(f"{key} scale {scale:.6g} window {params.r*table1.RATE} slide {params.s*table1.RATE} edges; "
      f"{len(stream)} edges; load {os.getloadavg()[0]:.2f}", flush=True)
measure.warm_up("bic")
ref = None
for rnd in range(rounds):
    for label, cls in VARIANTS[variant]:
        eng = cls(params, hold_back=False)
        with heap.frozen():
            lat, rows, total = timed(eng, stream, params)
        if ref is None:
            ref = rows
        assert rows == ref, "answers differ"
        print(f"  round {rnd} {label}: windows {len(lat)} P50 {np.percentile(lat,50):.4f} P95 "
              f"{np.percentile(lat,95):.4f} P99 {np.percentile(lat,99):.4f} ms  "
              f"{len(stream)/total:,.0f} edges/CPU-s", flush=True)
print(f"load {os.getloadavg()[0]:.2f}")
