"""``java_compat``: the authors' Java experimental setting, for the bench only.

What the authors' Java does unlike the paper: the per-slide counter bug (its
mention value is 1 or 2), AT-TSM refreshing gamma - 1 entries, and its WBM
ranker.  The default of every engine, the spec and the
oracle stays the paper's intent; this module changes the *input* the Java
produced and adds two diagnostic engines that copy the Java's policies, so the
budget experiment can be run "as the authors ran it" (``experiment.py
--java-compat``).

- ``slide_presence(ids, ts, t0, omega, beta)``: a rewrite of the mention
  stream such that the ``sum`` of x over window ``i`` is the Java's value
  ``mn_i(u)`` = the number of the window's slide pieces in which ``u`` is
  mentioned (window ``i`` = slides ``i .. i+m-1`` plus the first
  ``r = omega mod beta`` ms of slide ``i+m``; {1, 2} at omega 100 s, beta
  60 s).  The Java builds its per-window objects from per-slide counters that
  always store 1 (a String lookup in a Long-keyed map), which is the same
  number.  Per (id, slide) it emits an item at the id's last mention in the
  slide's first ``r`` ms (x = 1) and one at its last mention in the rest of
  the slide (x = 1 if there was none in the first part, else 0).  So each
  window holds, per id, exactly one x = 1 item per slide piece with a
  mention, the id joins a window iff it is mentioned there, and its last item
  in the window is its last mention there (the Java's ``ts_i(u)``).  This
  lives in the stream preparation because that is where the Java's bug
  sits (``TwitterStreamCollector.extractSlides``): engines, oracle and spec
  are unchanged, and the exact engines still equal the oracle on it.
- ``JavaWsjWbmEngine`` (``wsj-wbm-java``): WSJ-WBM as the Java's
  ``WBMJoinOperator`` runs it: change rates ``f_u`` from the whole
  remote table (the future included; pairs of rows less than
  ``delta = 100 s`` apart with different values, per row, rounded to 4
  places), users that never change are no candidates, change interval
  ``floor(1/f_u)`` minutes, possibly stale = first best-before time
  ``<= tau``, score ``min(L, V)`` with the Java's ``L = (ts_u + omega_s -
  tau) / beta`` in truncating integer arithmetic (omega in *seconds* added to
  ms: -1 or 0), stale ones by score desc then best-before asc, then fresh ones
  by best-before asc fill the budget; and, as in the Java, the filler
  refreshes update only the operator's replica, not the copy that scores
  arrivals (a filler-refreshed user's next arrival is scored with its
  stale value).  Candidate order among ties: ascending id (the Java: hash
  order).  The replica's refresh times start at t0 (the Java: each user's
  first snapshot, ~t0 + 15 s).
- ``JavaAtTsmEngine`` (``at-tsm-java``): AT-TSM refreshing the first
  ``gamma - 1`` list entries (``MTKNTJoinOperator``'s loop starts at 1).

Not reproduced: the Java's list comparator and hash-order ties (one total
order is used everywhere), its order-insensitive nDCG (reported beside ours
as ``ndcg_java`` by the experiment), AT-WBM's window-hash-order candidates.
"""
from __future__ import annotations

import numpy as np

from streamspec.engines.topkjoin.acquatop import AtTsmEngine, WsjWbmEngine

DELTA = 100_000     # ms: the pair horizon of the Java's change-rate table


def slide_presence(ids, ts, t0: int, omega: int, beta: int):
    """``(ids, x, ts)`` (sorted by ts) whose window ``sum`` is the Java's {1, 2} value (module doc)."""
    ids, ts = np.asarray(ids, np.int64), np.asarray(ts, np.int64)
    if ids.size == 0:
        return ids, np.zeros(0), ts
    r = omega % beta
    slide = (ts - t0) // beta
    late = (ts - t0 - slide * beta) >= r        # in the slide's part after its first r ms
    # one group per (id, slide, part); keep the last mention of each
    order = np.lexsort((ts, late, slide, ids))
    i, s, p = ids[order], slide[order], late[order]
    last = np.ones(order.size, bool)
    last[:-1] = (i[1:] != i[:-1]) | (s[1:] != s[:-1]) | (p[1:] != p[:-1])
    keep = order[last]
    ki, ks, kp = ids[keep], slide[keep], late[keep]
    # a late-part item counts only if its (id, slide) has no early-part item (the previous group)
    x = np.ones(keep.size)
    same = np.zeros(keep.size, bool)
    same[1:] = (ki[1:] == ki[:-1]) & (ks[1:] == ks[:-1]) & ~kp[:-1]
    x[kp & same] = 0.0
    out = np.argsort(ts[keep], kind="stable")
    return ki[out], x[out], ts[keep][out]


def java_change_rates(remote, delta: int = DELTA) -> dict:
    """``{key: f}``: pairs ``(a, b)`` of the key's rows with ``0 < t_a - t_b < delta`` and different
    values, divided by its row count, rounded to 4 places; keys with no change are absent."""
    rows: dict = {}
    for key, t, v in remote.rows():
        rows.setdefault(key, []).append((t, v))
    rates = {}
    for key, entries in rows.items():
        entries.sort()
        t = np.array([e[0] for e in entries], np.int64)
        v = np.array([e[1] for e in entries])
        pairs = 0
        for lag in range(1, t.size):
            dt = t[lag:] - t[:-lag]
            if not (dt < delta).any():
                break
            pairs += int(np.sum((dt > 0) & (dt < delta) & (v[lag:] != v[:-lag])))
        f = round(pairs / t.size, 4)
        if f > 0:
            rates[key] = f
    return rates


def java_wbm(engine, cands, ctx):
    """The Java's WSJ-WBM election (module doc); records the filler picks in ``engine.fillers``."""
    engine.fillers = set()
    c = np.asarray([d for d in cands if engine.java_rate(d) > 0], np.int64)
    if not c.size:
        return []
    tau, beta = ctx.tau, engine.params.beta
    f = np.array([engine.java_rate(d) for d in c])
    minutes = np.floor(1.0 / f)
    lr = engine.last_refresh[c]
    bb1 = lr + minutes * 60_000
    stale = bb1 <= tau
    # the Java's L: omega in seconds added to ms times, integer division truncating towards zero
    num = np.asarray(ctx.last_ts)[c] + engine.params.omega // 1000 - tau
    life = np.sign(num) * (np.abs(num) // beta)
    step = np.maximum(minutes * 60_000, 1)
    current_bb = lr + np.ceil((tau - lr) / step) * step
    renewed = np.ceil((current_bb + 60_000 / f - tau) / beta)
    score = np.minimum(life, renewed)
    pos = np.arange(c.size)
    s_idx, f_idx = pos[stale], pos[~stale]
    s_order = s_idx[np.lexsort((s_idx, bb1[s_idx], -score[s_idx]))]
    f_order = f_idx[np.lexsort((f_idx, bb1[f_idx]))]
    picked = s_order[:ctx.gamma].tolist()
    fill = f_order[:ctx.gamma - len(picked)].tolist()
    engine.fillers = set(c[fill].tolist())
    return c[picked + fill].tolist()


class JavaWsjWbmEngine(WsjWbmEngine):
    """Diagnostic: WSJ-WBM as the authors' Java runs it (module docstring)."""

    name = "wsj-wbm-java"
    policy = staticmethod(java_wbm)

    def _start(self):
        super()._start()
        self.rates = java_change_rates(self.params.remote)
        self.fillers: set = set()
        self.arrival_replica = np.zeros(0, np.float64)   # the Java's MinTopK copy

    def java_rate(self, d: int) -> float:
        return self.rates.get(self.keys.external(int(d)), 0.0)

    def _new_keys(self, old, n):
        super()._new_keys(old, n)
        self.arrival_replica = np.concatenate((self.arrival_replica, self.replica[old:n]))

    def _arrivals(self, ids, sval, tsd, arrays):
        _, svals, _ = arrays
        scores = self._scores_of(svals, self.arrival_replica[ids])
        self.slist.arrive(ids, scores, sval, tsd, self.tie, self.windows.t0, self.params.beta)

    def _refresh(self, window, start, tau, ids, tsd):
        before = self.last_refresh.copy()
        changed = super()._refresh(window, start, tau, ids, tsd)
        fetched = np.flatnonzero(self.last_refresh != before)
        keep = [d for d in fetched.tolist() if d not in self.fillers]
        self.arrival_replica[keep] = self.replica[keep]
        return changed


def java_top(engine, cands, ctx):
    """The Java's AT-TSM: the first gamma - 1 list entries."""
    return cands[:max(ctx.gamma - 1, 0)]


class JavaAtTsmEngine(AtTsmEngine):
    """Diagnostic: AT-TSM with the Java's gamma - 1 refreshes."""

    name = "at-tsm-java"
    policy = staticmethod(java_top)


DIAGNOSTICS = {e.name: e for e in (JavaWsjWbmEngine, JavaAtTsmEngine)}

__all__ = ["slide_presence", "java_change_rates", "java_wbm", "JavaWsjWbmEngine", "JavaAtTsmEngine",
           "DIAGNOSTICS"]
