"""Broken top-k join engines, each with one classic mistake.

Each is a correct engine with one mutation, so a mismatch can only come from
that mutation.  ``tests/topkjoin/test_suite_catches_broken.py`` asserts the
conformance runner finds every one of ``BROKEN``.  ``BROKEN_COLUMNAR`` are
wrong only on the columnar path the Spark pipeline takes (an ``ItemBatch``
handed to ``process``), which the step-by-step check (``Item`` lists) never
takes: ``conformance.topkjoin.partitioned_mismatch`` must catch them
(``tests/topkjoin/test_spark_fuzz.py``).
"""
from __future__ import annotations


import numpy as np

from streamspec.engines.topkjoin.acquatop import AtTsmEngine
from streamspec.reference.topkjoin import OracleEngine, aggregate
from streamspec.spec.topkjoin import ItemBatch


class OverspendingPolicy(AtTsmEngine):
    """AT-TSM electing gamma + 1 entries: the fetch counter must refuse the extra fetch."""

    name = "broken-overspend"
    description = "AT-TSM refreshing one key more than the budget"

    @staticmethod
    def policy(engine, cands, ctx):
        return cands[:ctx.gamma + 1]


class CounterResetPolicy(AtTsmEngine):
    """AT-TSM that restarts the fetch counter mid-evaluation to fetch twice its budget."""

    name = "broken-counter-reset"
    description = "AT-TSM resetting the fetch counter to get a second budget"

    @staticmethod
    def policy(engine, cands, ctx):
        first = cands[:ctx.gamma]
        for d in first:
            engine.fetcher.fetch(engine.keys.external(d))
        engine.fetcher.begin(ctx.tau)  # the cheat
        return first + cands[ctx.gamma:2 * ctx.gamma]


class ClosedWindowEnd(OracleEngine):
    """Off by one at the end: the paper's closed window, an item at ``ts == tau`` counts."""

    name = "broken-closed-end"
    description = "window end inclusive"

    def _evaluate(self, window, start, tau):
        self._items = [r for r in self._items if r[2] >= start]
        ext = self.keys.external
        inside = [r for r in self._items if r[2] <= tau]
        scored = [(d, self.score(s, self.params.remote.value(ext(d), tau)))
                  for d, s in aggregate(inside, self.params.aggregate).items()]
        scored.sort(key=lambda e: (-e[1], ext(e[0])))
        return scored[:self.params.k]


class TiesByArrival(OracleEngine):
    """Ties broken by first appearance instead of ascending id (the Java's HashMap order)."""

    name = "broken-ties"
    description = "ties by arrival order"

    def _evaluate(self, window, start, tau):
        self._items = [r for r in self._items if r[2] >= start]
        ext = self.keys.external
        inside = [r for r in self._items if r[2] < tau]
        scored = [(d, self.score(s, self.params.remote.value(ext(d), tau)))
                  for d, s in aggregate(inside, self.params.aggregate).items()]
        scored.sort(key=lambda e: (-e[1], e[0]))
        return scored[:self.params.k]


class StaleArrivals(AtTsmEngine):
    """Keeps the previous window's scores for ids already in the list (no indistinct arrival)."""

    name = "broken-stale"
    description = "list entries not re-scored when their id arrives again"

    def _arrivals(self, ids, sval, tsd, arrays):
        ext = self.keys.external
        for d in sorted((d for d in ids if d not in self.slist), key=lambda d: (tsd[d], ext(d))):
            self.slist.insert(d, *self._entry(d, sval[d], tsd[d]))


class RemoteAtTau(OracleEngine):
    """Reads the remote value at or before tau (``<=``) instead of strictly before."""

    name = "broken-remote-inclusive"
    description = "remote lookup includes entries at tau"

    def _evaluate(self, window, start, tau):
        self._items = [r for r in self._items if r[2] >= start]
        ext = self.keys.external
        inside = [r for r in self._items if r[2] < tau]
        scored = [(d, self.score(s, self.params.remote.value(ext(d), tau + 1)))
                  for d, s in aggregate(inside, self.params.aggregate).items()]
        scored.sort(key=lambda e: (-e[1], ext(e[0])))
        return scored[:self.params.k]


BROKEN = [OverspendingPolicy, CounterResetPolicy, ClosedWindowEnd, TiesByArrival, StaleArrivals,
          RemoteAtTau]



class CountsOnColumns(OracleEngine):
    """The oracle with a columnar fast path for mention counts: an ``ItemBatch``'s x is taken
    as whole counts (the paper's experiments stream x = 1 per mention), so x = 0.5 counts 0.
    ``Item`` lists take the exact path."""

    name = "broken-columnar-counts"
    description = "ItemBatch x truncated to whole counts"

    def process(self, events):
        if isinstance(events, ItemBatch):
            events = ItemBatch(events.id, np.trunc(events.x), events.ts)
        return super().process(events)


BROKEN_COLUMNAR = [CountsOnColumns]
