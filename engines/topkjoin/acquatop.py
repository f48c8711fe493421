"""AcquaTop: Topk+N over a local replica refreshed by a maintenance policy.

Paper §5 (Algorithm 5: process arrivals, UpdateReplica, UpdateChangedObjects,
report, purge) and §4 (Topk+N); analysis note §5 (one evaluation step by
step) and §3.9; decisions of notes/topkjoin.md.

What the engine keeps, and why:

- ``aggs``: per-slot partial aggregates of the windows not yet evaluated
  (``window_aggregates``): the exact streaming score of every id of the
  current window (memory O(distinct ids per window), not O(items)).
- ``slist``: the Super-MTK+N list (K+N slots per active window, window marks,
  LBPs; ``super_list``).
- ``replica``/``last_refresh``/``changes_seen``: the local replica of the
  remote values of the keys seen so far, loaded with ``value(key, t0)`` the
  first time a key is seen (the uncounted bulk load, done lazily), when each
  was last fetched, and how many of its fetches found a change (online change
  rates for WBM).
- ``rng``: the seeded generator of WSJ-RND.

One evaluation of window ``c`` at ``tau`` (the Java's batch flow, §3.9, made
exact for static data): (1) every id of window ``c`` arrives with its exact
streaming score and replica value: ids already in the list are re-scored in
one ``rescore`` + rebuild (their old window's score is stale: an indistinct
arrival), the others are inserted in ``(last ts, id)`` order and may be
discarded; (2) the policy elects at most gamma keys, fetched through the
``FetchCounter`` (which refuses the gamma+1-th); a changed value updates the
replica; (3) changed ids are re-inserted: in the list by ``replace``, outside
it (but in the window) with the exact count under ``sum`` and with the
per-window minimum streaming score ``S_min[c]`` (a lower bound: paper §4.3,
Theorem 3) under ``latest``; (4) the first K entries are the answer; (5) the
window is purged.  Changes of keys not in the window are ignored (they do
not join); they are applied to the replica all the same.
"""
from __future__ import annotations

from typing import Callable, ClassVar

import numpy as np

from engines.topkjoin import policies
from engines.topkjoin.super_list import SuperTopKList
from engines.topkjoin.window_aggregates import SlotAggregates
from spec.topkjoin import TopkJoinEngine, rank_key


class AcquaTopEngine(TopkJoinEngine):
    """Topk+N with a replica refreshed by ``policy`` over ``candidates``."""

    name = "acquatop"
    description = "AcquaTop: Topk+N list, replica refreshed by a policy"
    policy: ClassVar[Callable] = staticmethod(policies.nothing)
    candidates: ClassVar[str] = "list"     # "list" (AT-*) or "window" (WSJ-*)
    use_n: ClassVar[bool] = True           # False: plain MinTopK (N = 0)

    def _start(self):
        p = self.params
        n = p.n if self.use_n else 0
        self.slist = SuperTopKList(p.k + n)
        self.aggs = SlotAggregates(self.windows.t0, p.omega, p.beta, p.aggregate)
        self.replica: dict[int, float] = {}
        self.last_refresh: dict[int, int] = {}
        self.changes_seen: dict[int, int] = {}
        self.rng = np.random.default_rng(p.seed)
        self.smin: float | None = None

    def _ingest(self, ids, x, ts):
        self.aggs.ingest(ids, x, ts)

    # -- one evaluation (Algorithm 5) ---------------------------------------------
    def _evaluate(self, window, start, tau):
        ids, svals, last_ts = self.aggs.window(window)
        ext = self.keys.external
        ids_l, sv_l, ts_l = ids.tolist(), svals.tolist(), last_ts.tolist()
        for d in ids_l:
            if d not in self.replica:
                self.replica[d] = self.fetcher.load(ext(d), self.windows.t0)
                self.last_refresh[d] = self.windows.t0
        sval = dict(zip(ids_l, sv_l))
        tsd = dict(zip(ids_l, ts_l))
        self.smin = min(sv_l) if sv_l else None
        self._arrivals(ids_l, sval, tsd, (ids, svals, last_ts))
        changed = self._refresh(window, start, tau, ids_l, tsd)
        for d in sorted(changed, key=ext):
            self._changed_object(d, sval, tsd)
        answer = [(e.dense, e.score) for e in self.slist.top(self.params.k)]
        self.slist.purge()
        self.aggs.drop_before_window(window + 1)
        return answer

    def _entry(self, d, s, ts):
        return (rank_key(self.score(s, self.replica[d]), self.keys.external(d)), s, ts,
                (ts - self.windows.t0) // self.params.beta)

    def _hopeless(self, ids, svals, last_ts, ids_l) -> set:
        """Ids that MinTopK's discard test would reject, found in one vectorised pass.

        Qualifying is monotone in the window (later windows' thresholds are
        weaker) and thresholds only tighten while objects are inserted, so an
        object scoring strictly below the LBP of its newest window ``ew`` now is
        discarded later too.  Ties are left to ``insert`` (the id decides).
        """
        if self.score.fn is not None or ids.size == 0:
            return set()
        vals = np.fromiter((self.replica[d] for d in ids_l), dtype=np.float64, count=ids.size)
        scores = self.score(svals, vals)
        ew = (last_ts - self.windows.t0) // self.params.beta
        drop = np.zeros(ids.size, dtype=bool)
        slist = self.slist
        for w in np.unique(ew).tolist():
            if slist.cnt.get(w, 0) == slist.cap:
                drop |= (ew == w) & (scores < slist.lbp[w].score)
        return set(ids[drop].tolist())

    def _arrivals(self, ids, sval, tsd, arrays):
        """Step 1: the window's ids arrive (re-arrivals re-scored, new ones inserted)."""
        self.slist.rescore({e.dense: self._entry(e.dense, sval[e.dense], tsd[e.dense])
                            for e in self.slist.entries if e.dense in sval})
        hopeless = self._hopeless(*arrays, ids)  # after the re-scoring: its thresholds are current
        ext = self.keys.external
        fresh = (d for d in ids if d not in self.slist and d not in hopeless)
        for d in sorted(fresh, key=lambda d: (tsd[d], ext(d))):
            self.slist.insert(d, *self._entry(d, sval[d], tsd[d]))

    def _refresh(self, window, start, tau, ids, tsd) -> list[int]:
        """Step 2 (UpdateReplica): fetch the elected keys; return those whose value changed."""
        if self.candidates == "list":
            cands = [e.dense for e in self.slist.entries]
        else:
            cands = sorted(ids, key=self.keys.external)
        ctx = policies.Context(window, start, tau, self.params.budget, self.params.k, tsd)
        changed = []
        for d in self.policy(self, cands, ctx):
            v = self.fetcher.fetch(self.keys.external(d))
            self.last_refresh[d] = tau
            if v != self.replica[d]:
                self.replica[d] = v
                self.changes_seen[d] = self.changes_seen.get(d, 0) + 1
                changed.append(d)
        return changed

    def _changed_object(self, d, sval, tsd):
        """Step 3: re-score a changed object and put it back where it belongs."""
        if d in self.slist:
            s = self.slist.by_dense[d].sval
        elif d in sval:
            s = sval[d] if self.params.aggregate == "sum" else self.smin
        else:
            return  # not in the window: does not join
        self.slist.replace(d, *self._entry(d, s, tsd[d]))

    # -- introspection (tests, bench) --------------------------------------------
    def memory_rows(self) -> int:
        """Rows the engine holds: list entries plus per-slot partial aggregates."""
        return len(self.slist) + self.aggs.size


def _policy_engine(name: str, policy, candidates: str, text: str, **extra):
    attrs = {"name": name, "policy": staticmethod(policy), "candidates": candidates,
             "description": text, "__doc__": text, **extra}
    return type(f"{''.join(p.title() for p in name.split('-'))}Engine", (AcquaTopEngine,), attrs)


_EXACT_AT = ("static", "unlimited")
AtTsmEngine = _policy_engine("at-tsm", policies.top, "list",
                             "AcquaTop, top selection: refresh the first gamma list entries",
                             exact_when=_EXACT_AT)
AtBsmEngine = _policy_engine("at-bsm", policies.border, "list",
                             "AcquaTop, border selection: refresh around the K/N border",
                             exact_when=_EXACT_AT)
AtAsmEngine = _policy_engine("at-asm", policies.everything, "list",
                             "AcquaTop, all selection: refresh every list entry (no budget)",
                             exact_when=("static", "unlimited", "full_list"), unbounded=True)
AtLruEngine = _policy_engine("at-lru", policies.lru, "list",
                             "AcquaTop with LRU over the list entries", exact_when=_EXACT_AT)
AtWbmEngine = _policy_engine("at-wbm", policies.wbm, "list",
                             "AcquaTop with the WBM ranker over the list entries",
                             exact_when=_EXACT_AT)
WstEngine = _policy_engine("wst", policies.nothing, "window",
                           "ACQUA WST baseline: never refresh the replica", exact_when=("static",))
WsjRndEngine = _policy_engine("wsj-rnd", policies.rnd, "window",
                              "ACQUA WSJ-RND: gamma random window keys (seeded, no replacement)",
                              exact_when=_EXACT_AT)
WsjLruEngine = _policy_engine("wsj-lru", policies.lru, "window",
                              "ACQUA WSJ-LRU: least recently refreshed window keys",
                              exact_when=_EXACT_AT)
WsjWbmEngine = _policy_engine("wsj-wbm", policies.wbm, "window",
                              "ACQUA WSJ-WBM: WBM ranker over the window keys",
                              exact_when=_EXACT_AT)

ENGINES = (AtTsmEngine, AtBsmEngine, AtAsmEngine, AtLruEngine, AtWbmEngine,
           WstEngine, WsjRndEngine, WsjLruEngine, WsjWbmEngine)
