"""Broken top-k join engines: the mutation catalogue of the topkjoin suite.

Each is a correct engine (the oracle or AT-TSM) with one realistic mutation, so a
mismatch can only come from that mutation; ``mutation`` names its class (see
``streamspec.conformance.broken``).  ``MUTANTS`` is the whole catalogue: the ``ci``
profile of the suite must kill every one.

``CountsOnColumns`` (also ``BROKEN_COLUMNAR``) is wrong only on the columnar path
the Spark pipeline takes (an ``ItemBatch`` handed to ``process``): the checks feed
a third of their examples as columnar batches, and the Spark lane's
``conformance.topkjoin.partitioned_mismatch`` catches it too
(``tests/topkjoin/test_spark_fuzz.py``).
"""
from __future__ import annotations

import numpy as np

from streamspec.engines.topkjoin.acquatop import AtTsmEngine, WsjRndEngine
from streamspec.reference.topkjoin import OracleEngine, aggregate
from streamspec.spec.errors import InvalidRecord
from streamspec.spec.topkjoin import ItemBatch


def _ranked(engine, inside, tau, *, how=None, remote_tau=None, key=None):
    """The oracle's answer over ``inside`` with one part swappable (for the mutants)."""
    ext = engine.keys.external
    value = engine.params.remote.value
    agg = how(inside) if how is not None else aggregate(inside, engine.params.aggregate)
    at = tau if remote_tau is None else remote_tau
    scored = [(d, engine.score(s, value(ext(d), at))) for d, s in agg.items()]
    scored.sort(key=key or (lambda e: (-e[1], ext(e[0]))))
    return scored[:engine.params.k]


# -- the fetch budget --------------------------------------------------------------------------
class OverspendingPolicy(AtTsmEngine):
    """AT-TSM electing gamma + 1 entries: the fetch counter must refuse the extra fetch."""

    name = "broken-overspend"
    mutation = "budget"
    description = "AT-TSM refreshing one key more than the budget"

    @staticmethod
    def policy(engine, cands, ctx):
        return cands[:ctx.gamma + 1]


class CounterResetPolicy(AtTsmEngine):
    """AT-TSM that restarts the fetch counter mid-evaluation to fetch twice its budget."""

    name = "broken-counter-reset"
    mutation = "budget"
    description = "AT-TSM resetting the fetch counter to get a second budget"

    @staticmethod
    def policy(engine, cands, ctx):
        first = cands[:ctx.gamma]
        for d in first:
            engine.fetcher.fetch(engine.keys.external(d))
        engine.fetcher.begin(ctx.tau)  # the cheat
        return first + cands[ctx.gamma:2 * ctx.gamma]


# -- answers -----------------------------------------------------------------------------------
class StaleArrivals(AtTsmEngine):
    """Keeps the previous window's scores for ids already in the list (no indistinct arrival)."""

    name = "broken-stale"
    mutation = "answer"
    description = "list entries not re-scored when their id arrives again"

    def _arrivals(self, ids, sval, tsd, arrays):
        ext = self.keys.external
        for d in sorted((d for d in ids if d not in self.slist), key=lambda d: (tsd[d], ext(d))):
            self.slist.insert(d, *self._entry(d, sval[d], tsd[d]))


class UnnormalisedScores(OracleEngine):
    """Scores with the weights but without normalising by the ranges (as if both were
    ``(0, 1)``, the default)."""

    name = "broken-unnormalised"
    mutation = "answer"
    description = "F(s, v) = w_s * s + w_v * v, ranges ignored"

    def _start(self):
        super()._start()
        ws, wv = self.params.weights
        self.score = _Linear(ws, wv)


class _Linear:
    def __init__(self, ws, wv):
        self.ws, self.wv = ws, wv

    def __call__(self, s, v):
        return self.ws * s + self.wv * v


class RemoteAtWindowStart(OracleEngine):
    """Reads the remote value as of the window's start, not its evaluation time ``tau``."""

    name = "broken-remote-at-start"
    mutation = "answer"
    description = "remote values read at the window start"

    def _evaluate(self, window, start, tau):
        self._items = [r for r in self._items if r[2] >= start]
        return _ranked(self, [r for r in self._items if r[2] < tau], tau, remote_tau=start)


class RemoteAtTau(OracleEngine):
    """Reads the remote value at or before tau (``<=``) instead of strictly before."""

    name = "broken-remote-inclusive"
    mutation = "answer"
    description = "remote lookup includes entries at tau"

    def _evaluate(self, window, start, tau):
        self._items = [r for r in self._items if r[2] >= start]
        return _ranked(self, [r for r in self._items if r[2] < tau], tau, remote_tau=tau + 1)


# -- window boundaries, gaps --------------------------------------------------------------------
class ClosedWindowEnd(OracleEngine):
    """Off by one at the end: the paper's closed window, an item at ``ts == tau`` counts."""

    name = "broken-closed-end"
    mutation = "window-end"
    description = "window end inclusive"

    def _evaluate(self, window, start, tau):
        self._items = [r for r in self._items if r[2] >= start]
        return _ranked(self, [r for r in self._items if r[2] <= tau], tau)


class OpenWindowStart(OracleEngine):
    """Off by one at the start: an item at ``ts == start`` is already out."""

    name = "broken-open-start"
    mutation = "window-start"
    description = "window start exclusive"

    def _evaluate(self, window, start, tau):
        self._items = [r for r in self._items if r[2] > start]
        return _ranked(self, [r for r in self._items if r[2] < tau], tau)


class EpochAlignedWindows(OracleEngine):
    """Windows aligned to multiples of the slide (as stream processors align them to the
    epoch) instead of anchored at the origin: right only when ``beta`` divides ``t0``."""

    name = "broken-epoch-aligned"
    mutation = "window-start"
    description = "window origin rounded down to a multiple of beta"

    def _start(self):
        w = self.windows
        self.windows = type(w)(w.r, w.s, w.t0 - w.t0 % w.s)
        super()._start()


class WholeSlideWindows(OracleEngine):
    """A window made of whole slides, the last ``omega // beta`` before ``tau`` (panes of
    ``beta``): right only when ``beta`` divides ``omega``."""

    name = "broken-whole-slides"
    mutation = "r-not-multiple"
    description = "window start computed as tau - (omega // beta) * beta"

    def _evaluate(self, window, start, tau):
        p = self.params
        start = tau - (p.omega // p.beta) * p.beta
        self._items = [r for r in self._items if r[2] >= start]
        return _ranked(self, [r for r in self._items if r[2] < tau], tau)


class SkipsEmptyWindows(OracleEngine):
    """Emits no evaluation for a window without items (across a gap)."""

    name = "broken-skips-empty"
    mutation = "gap"
    description = "windows with an empty answer are not emitted"

    def _run_windows(self, upto):
        return [e for e in super()._run_windows(upto) if e.answer]


# -- order ---------------------------------------------------------------------------------------
class TiesByArrival(OracleEngine):
    """Ties broken by first appearance instead of ascending id (the Java's HashMap order)."""

    name = "broken-ties"
    mutation = "tie-order"
    description = "ties by arrival order"

    def _evaluate(self, window, start, tau):
        self._items = [r for r in self._items if r[2] >= start]
        return _ranked(self, [r for r in self._items if r[2] < tau], tau,
                       key=lambda e: (-e[1], e[0]))


def _latest_first_on_ties(inside) -> dict:
    """``latest`` taking, among items of one ts, the first in stream order."""
    out, when = {}, {}
    for key, x, ts in inside:
        if key not in when or ts > when[key]:
            out[key], when[key] = x, ts
    return out


class LatestFirstOfTies(OracleEngine):
    """``aggregate="latest"`` breaks a ts tie by the first item of that ts, not the last
    in stream order."""

    name = "broken-latest-ties"
    mutation = "tie-order"
    description = "latest: first item of the latest ts"

    def _evaluate(self, window, start, tau):
        self._items = [r for r in self._items if r[2] >= start]
        inside = [r for r in self._items if r[2] < tau]
        how = _latest_first_on_ties if self.params.aggregate == "latest" else None
        return _ranked(self, inside, tau, how=how)


# -- state lost by pickling ------------------------------------------------------------------------
class PicklesWithoutTail(OracleEngine):
    """Its pickled state keeps only the items of evaluated windows, as if later windows
    would see the rest again: an unpickled copy loses the items of windows not yet due."""

    name = "broken-pickles-without-tail"
    mutation = "pickling-hold-back"
    description = "pickled state drops the items after the last evaluated window"

    def __getstate__(self):
        state = dict(self.__dict__)
        if self.windows is not None:
            end = self.windows.end(self.next_window - 1) if self.next_window else self.windows.t0
            state["_items"] = [r for r in self._items if r[2] < end]
        return state


class ReseedsOnUnpickle(WsjRndEngine):
    """WSJ-RND whose unpickled copy seeds its generator again from ``params.seed`` ("the
    seed is in the parameters"), so after a round trip it draws other keys to refresh
    than an engine never pickled: its answers are approximate, so only the never-pickled
    twin of the round trips can tell."""

    name = "broken-reseeded-rng"
    mutation = "pickling"
    description = "WSJ-RND reseeding its generator on unpickling"

    def __setstate__(self, state):
        super().__setstate__(state)
        self.rng = np.random.default_rng(self.params.seed)


# -- bad records, the hook's contract ------------------------------------------------------------
class SkipsInvalidRecords(OracleEngine):
    """A lenient reader: an item the spec calls invalid (NaN value, id of the other type)
    is skipped, not refused (the rest of the call goes in)."""

    name = "broken-skips-invalid"
    mutation = "bad-record"
    description = "InvalidRecord items are skipped silently"

    def process(self, events):
        if isinstance(events, ItemBatch):
            return super().process(events)
        events = list(events)
        while True:
            try:
                return list(super().process(events))
            except InvalidRecord as err:
                if err.index is None:
                    raise
                del events[err.index - self._seen]
                self._seen += 1


class ReturnsListOfKPlusN(OracleEngine):
    """``_evaluate`` returns the whole K + N list it keeps, not its first K entries."""

    name = "broken-k-plus-n"
    mutation = "contract-shape"
    description = "_evaluate returns K + N entries"

    def _evaluate(self, window, start, tau):
        self._items = [r for r in self._items if r[2] >= start]
        inside = [r for r in self._items if r[2] < tau]
        ext = self.keys.external
        scored = [(d, self.score(s, self.params.remote.value(ext(d), tau)))
                  for d, s in aggregate(inside, self.params.aggregate).items()]
        scored.sort(key=lambda e: (-e[1], ext(e[0])))
        return scored[:self.params.k + self.params.n]


class ReturnsExternalIds(OracleEngine):
    """``_evaluate`` returns external ids where the hook owes dense ones."""

    name = "broken-external-ids"
    mutation = "contract-shape"
    description = "_evaluate returns external ids"

    def _evaluate(self, window, start, tau):
        ext = self.keys.external
        return [(ext(d), s) for d, s in super()._evaluate(window, start, tau)]




class CountsOnColumns(OracleEngine):
    """The oracle with a columnar fast path for mention counts: an ``ItemBatch``'s x is taken
    as whole counts (the paper's experiments stream x = 1 per mention), so x = 0.5 counts 0.
    ``Item`` lists take the exact path."""

    name = "broken-columnar-counts"
    mutation = "columnar"
    description = "ItemBatch x truncated to whole counts"

    def process(self, events):
        if isinstance(events, ItemBatch):
            events = ItemBatch(events.id, np.trunc(events.x), events.ts)
        return super().process(events)


MUTANTS = [OverspendingPolicy, CounterResetPolicy, StaleArrivals, UnnormalisedScores,
           RemoteAtWindowStart, RemoteAtTau, ClosedWindowEnd, OpenWindowStart, EpochAlignedWindows,
           WholeSlideWindows, SkipsEmptyWindows, TiesByArrival, LatestFirstOfTies,
           PicklesWithoutTail, ReseedsOnUnpickle, SkipsInvalidRecords, ReturnsListOfKPlusN,
           ReturnsExternalIds, CountsOnColumns]

BROKEN_COLUMNAR = [CountsOnColumns]
