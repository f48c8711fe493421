"""Broken connectivity engines: the mutation catalogue of the connectivity suite.

Each is the oracle engine with one realistic mutation, so a mismatch can only
come from that mutation (but one: ``DryCallCachesWrongly`` is msf, the engine with the
fused one-edge call whose dry mode it breaks); ``mutation`` names its class (see
``streamspec.conformance.broken``).  ``MUTANTS`` is the whole catalogue: the
``ci`` profile of the suite must kill every one (``streamspec.conformance.mutation``,
``tests/conformance/test_mutation_gate.py``).
"""
from __future__ import annotations

import numpy as np

from streamspec.engines.connectivity.msf import MsfEngine, _trigger_entry
from streamspec.reference.connectivity import OracleEngine, window_answers
from streamspec.spec.connectivity import EdgeBatch
from streamspec.spec.errors import InvalidRecord


# -- answers -----------------------------------------------------------------------------
class DropsSelfLoops(OracleEngine):
    """Drops self-loops, as the paper's loader does: ``Q(x, x)`` goes wrong."""

    name = "broken-drops-self-loops"
    mutation = "answer"
    description = "self-loops ignored (presence wrong)"

    def _evaluate_window(self, n, queries):
        lo, hi = self.windows.start(n), self.windows.end(n)
        self._edges = [e for e in self._edges if e[2] >= lo and e[0] != e[1]]
        self._last = [(a, b) for a, b, tt in self._edges if tt < hi]
        return window_answers(self._last, queries)


class SelfQueryAlwaysTrue(OracleEngine):
    """Answers ``Q(x, x)`` true whether or not ``x`` is present."""

    name = "broken-self-query"
    mutation = "answer"
    description = "Q(x, x) true even when x is absent"

    def _evaluate_window(self, n, queries):
        answers = super()._evaluate_window(n, queries)
        return tuple(True if a == b else ans for (a, b), ans in zip(queries, answers))


class PresentOnceSeen(OracleEngine):
    """``Q(x, x)`` true once ``x`` has been seen in any window (presence kept in the
    vertex table), not only when an edge of this window touches it."""

    name = "broken-present-once-seen"
    mutation = "answer"
    description = "Q(x, x) true for any vertex seen before"

    def _evaluate_window(self, n, queries):
        answers = super()._evaluate_window(n, queries)
        seen = getattr(self, "_seen_ids", set())
        seen.update(x for e in self._last for x in e)
        self._seen_ids = seen
        return tuple(ans or (a == b and a in seen) for (a, b), ans in zip(queries, answers))


class DuplicateKeepsFirstTime(OracleEngine):
    """Keeps the window's edges as a set of vertex pairs: a duplicate edge does not
    refresh the pair's time, so the pair expires with its first occurrence."""

    name = "broken-duplicate-first-time"
    mutation = "answer"
    description = "a repeated edge keeps the time of its first occurrence"

    def _run(self, u, v, t, upto):
        keep = []
        known = {frozenset((a, b)) for a, b, _ in self._edges}
        for a, b, tt in zip(u.tolist(), v.tolist(), t.tolist()):
            pair = frozenset((a, b))
            keep.append(pair not in known)
            known.add(pair)
        # (windows evaluated before a skipped duplicate are unaffected: it was in none)
        mask = np.array(keep, dtype=bool)
        return super()._run(u[mask], v[mask], t[mask], upto)


# -- window boundaries -------------------------------------------------------------------
class ClosedWindowEnd(OracleEngine):
    """Off by one at the end: applies the triggering edge first and takes the
    paper's closed window ``[start, end]``, so an edge at ``t == end`` counts."""

    name = "broken-closed-end"
    mutation = "window-end"
    description = "window end inclusive; trigger edge applied before evaluation"

    def _run(self, u, v, t, upto):
        rows, queries = [], [tuple(q) for q in self.queries.tolist()]
        n = self.next_window
        for a, b, tt in zip(u.tolist(), v.tolist(), t.tolist()):
            self._edges.append((a, b, tt))
            while n < upto and tt >= self.windows.end(n):
                rows.append(self._evaluate_window(n, queries))
                n += 1
        while n < upto:
            rows.append(self._evaluate_window(n, queries))
            n += 1
        return np.array(rows, dtype=bool).reshape(len(rows), len(queries))

    def _evaluate_window(self, n, queries):
        lo, hi = self.windows.start(n), self.windows.end(n)
        self._edges = [e for e in self._edges if e[2] >= lo]
        self._last = [(a, b) for a, b, tt in self._edges if tt <= hi]
        return window_answers(self._last, queries)


class OpenWindowStart(OracleEngine):
    """Off by one at the start: expires edges at ``t == start`` too."""

    name = "broken-open-start"
    mutation = "window-start"
    description = "window start exclusive"

    def _evaluate_window(self, n, queries):
        lo, hi = self.windows.start(n), self.windows.end(n)
        self._edges = [e for e in self._edges if e[2] > lo]
        self._last = [(a, b) for a, b, tt in self._edges if tt < hi]
        return window_answers(self._last, queries)


class NoExpiry(OracleEngine):
    """Never expires edges: a landmark window instead of a sliding one."""

    name = "broken-no-expiry"
    mutation = "window-start"
    description = "edges never leave the window"

    def _evaluate_window(self, n, queries):
        hi = self.windows.end(n)
        self._last = [(a, b) for a, b, tt in self._edges if tt < hi]
        return window_answers(self._last, queries)


class WholeSlideWindows(OracleEngine):
    """A window made of whole slides, the last ``r // s`` before its end (a pane-based
    engine): right only when ``s`` divides ``r``; otherwise it starts late (or, with
    ``r < s``, is empty)."""

    name = "broken-whole-slides"
    mutation = "r-not-multiple"
    description = "window start computed as end - (r // s) * s"

    def _evaluate_window(self, n, queries):
        w = self.windows
        hi = w.end(n)
        lo = hi - (w.r // w.s) * w.s
        self._edges = [e for e in self._edges if e[2] >= lo]
        self._last = [(a, b) for a, b, tt in self._edges if tt < hi]
        return window_answers(self._last, queries)


class EpochAlignedWindows(OracleEngine):
    """Windows aligned to multiples of the slide (as stream processors align them to the
    epoch) instead of anchored at the origin ``t0``: right only when ``s`` divides ``t0``."""

    name = "broken-epoch-aligned"
    mutation = "window-start"
    description = "window origin rounded down to a multiple of s"

    def _set_origin(self, t0):
        super()._set_origin(t0 - t0 % self.params.s)


class SkipsEmptyWindows(OracleEngine):
    """Emits no row for a window with no true answer (the Java driver skips gaps)."""

    name = "broken-skips-empty"
    mutation = "gap"
    description = "windows with all answers false are not emitted"

    def process(self, events):
        return (w for w in super().process(events) if any(w.answers))

    def advance_to(self, t):
        return [w for w in super().advance_to(t) if any(w.answers)]

    def flush(self):
        return [w for w in super().flush() if any(w.answers)]


# -- state lost by pickling ----------------------------------------------------------------
class PicklesWithoutPending(OracleEngine):
    """Its pickled state leaves out the edges the driver holds back for windows not yet
    due (``_pending``, ``hold_back=True``), as if a checkpoint only needed what was
    evaluated: right until pickled, an unpickled copy forgets them."""

    name = "broken-pickles-without-pending"
    mutation = "pickling-hold-back"
    description = "pickled state drops the held-back edges"

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_pending"] = tuple(column[:0] for column in self._pending)
        return state


class PicklesWithoutEagerTail(OracleEngine):
    """Its pickled state keeps only the edges of evaluated windows, trusting the driver to
    hold the rest back: true with ``hold_back=True``; with ``hold_back=False`` every edge
    is handed over on arrival and the edges after the last evaluated window are lost."""

    name = "broken-pickles-without-eager-tail"
    mutation = "pickling-eager"
    description = "pickled state drops the applied edges of windows not yet due"

    def __getstate__(self):
        state = dict(self.__dict__)
        if self.windows is not None:
            end = self.windows.end(self.next_window - 1) if self.next_window else self.windows.t0
            state["_edges"] = [e for e in self._edges if e[2] < end]
        return state


class AdHocFromDroppedCache(OracleEngine):
    """``connected()`` answers from the last window's edge list, which the pickled state
    leaves out as a cache "rebuilt at the next window": an unpickled copy answers
    ad-hoc queries on an empty graph until then.  Its windows are all right."""

    name = "broken-adhoc-after-unpickle"
    mutation = "pickling-ad-hoc"
    description = "pickled state drops the graph ad-hoc queries answer from"

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_last"] = []
        return state


class AdHocOnPreviousWindow(OracleEngine):
    """``connected()`` answers for the window before the last evaluated one (its graph is
    swapped in one window late)."""

    name = "broken-adhoc-previous-window"
    mutation = "answer"
    description = "connected() answers on the window before the last"

    def _evaluate_window(self, n, queries):
        before = getattr(self, "_before", [])
        answers = super()._evaluate_window(n, queries)
        self._before = self._last
        self._last_for_adhoc = before
        return answers

    def _connected(self, a, b):
        return window_answers(getattr(self, "_last_for_adhoc", []), [(a, b)])[0]


class AdHocOnCurrentGraph(OracleEngine):
    """``connected()`` answers on every edge since the last window's start, the held-back
    ones included (the graph "now"), not on the last evaluated window."""

    name = "broken-adhoc-current-graph"
    mutation = "answer"
    description = "connected() counts the held-back edges too"

    def _connected(self, a, b):
        lo = self.windows.start(self.next_window - 1)
        pu, pv, pt = self._pending
        edges = [(x, y) for x, y, t in self._edges if t >= lo]
        edges += list(zip(pu.tolist(), pv.tolist()))
        return window_answers(edges, [(a, b)])[0]


# -- lateness, watermarks, bad records ------------------------------------------------------
class LateEdgesAdmitted(OracleEngine):
    """Under ``lateness="drop"`` a late edge is admitted at the latest time seen instead
    of dropped (a reader that "repairs" disorder)."""

    name = "broken-late-admitted"
    mutation = "lateness"
    description = "lateness=drop keeps late edges, at the latest time seen"

    def _feed_checked(self, batch):
        if self.params.lateness == "drop" and len(batch):
            t = batch.t.astype(np.int64)
            floor = t[0] if self.last_t is None else max(self.last_t, t[0])
            t = np.maximum(np.maximum.accumulate(t), floor)
            batch = EdgeBatch(batch.u, batch.v, t)
        return super()._feed_checked(batch)


class WatermarkOneShort(OracleEngine):
    """``advance_to(t)`` closes only the windows ending before ``t`` (``end < t``), not
    those ending at ``t``: a strict watermark."""

    name = "broken-strict-watermark"
    mutation = "watermark"
    description = "advance_to(t) closes windows with end < t only"

    def advance_to(self, t):
        return super().advance_to(t - 1)


class StaleWatermarkRewinds(OracleEngine):
    """``advance_to(t)`` with ``t`` behind the time already seen sets the engine's time back
    to ``t`` (a watermark taken as the current time): the stream's order is then checked
    against the stale watermark, so edges between it and the latest edge get in."""

    name = "broken-stale-watermark"
    mutation = "watermark"
    description = "a watermark behind the latest edge rewinds the engine's time"

    def advance_to(self, t):
        out = super().advance_to(t)
        if self.last_t is not None and t < self.last_t:
            self.last_t = int(t)
        return out


class NoEdgesNoWindows(OracleEngine):
    """``_run`` handed no edges evaluates nothing ("no new edges, nothing to do"): the
    windows a watermark (or ``flush``) makes due with no edge in between are lost."""

    name = "broken-no-edges-no-windows"
    mutation = "watermark"
    description = "_run with no edges returns no rows"

    def _run(self, u, v, t, upto):
        if not len(t):
            return np.zeros((0, len(self.queries)), dtype=bool)
        return super()._run(u, v, t, upto)


class SkipsInvalidRecords(OracleEngine):
    """A lenient reader: an edge with a vertex of the wrong type is skipped, not refused
    (the rest of the call goes in)."""

    name = "broken-skips-invalid"
    mutation = "bad-record"
    description = "InvalidRecord edges are skipped silently"

    def process(self, events):
        events = list(events) if not isinstance(events, EdgeBatch) else events
        while True:
            try:
                return list(super().process(events))
            except InvalidRecord as err:
                if err.index is None or isinstance(events, EdgeBatch):
                    raise
                del events[err.index - self._seen]
                self._seen += 1


# -- the hook's contract -------------------------------------------------------------------
class TransposedAnswers(OracleEngine):
    """``_run`` returns its answers one row per query (queries x windows) instead of one
    row per window."""

    name = "broken-transposed-answers"
    mutation = "contract-shape"
    description = "_run returns a (queries, windows) array"

    def _run(self, u, v, t, upto):
        return np.ascontiguousarray(super()._run(u, v, t, upto).T)


class ListAnswers(OracleEngine):
    """``_run`` returns a list of answer tuples instead of a bool ndarray."""

    name = "broken-list-answers"
    mutation = "contract-shape"
    description = "_run returns a list, not an ndarray"

    def _run(self, u, v, t, upto):
        return [tuple(row) for row in super()._run(u, v, t, upto).tolist()]


# -- the driver's pre-warm (a fused one-edge call run dry) ------------------------------
def _leaves_a_wrong_bottleneck(*args):
    # msf's fused call; in its dry mode it then overwrites the answers' cached
    # bottlenecks (Q's row 2) as if every pair were connected from the far future
    out = _trigger_entry()(*args)
    if args[-1] and out[0] == -4:
        args[2][2, :] = 1 << 60
    return out


class DryCallCachesWrongly(MsfEngine):
    """msf whose dry one-edge call (``ConnectivityEngine._prewarm``) writes a cache it
    must leave alone: every later query of a present pair answers true.  Not the oracle
    with a mutation: the dry call belongs to engines with a fused trigger (msf's)."""

    name = "broken-dry-call-caches"
    mutation = "prewarm"
    description = "the pre-warm's dry call corrupts the answers' cache"

    def _fuse_trigger(self):
        super()._fuse_trigger()
        if self._trigger_args is not None:
            DryCallCachesWrongly._trigger_kernel = staticmethod(_leaves_a_wrong_bottleneck)


MUTANTS = [DropsSelfLoops, SelfQueryAlwaysTrue, PresentOnceSeen, DuplicateKeepsFirstTime,
           ClosedWindowEnd, OpenWindowStart, NoExpiry, EpochAlignedWindows, WholeSlideWindows,
           SkipsEmptyWindows, PicklesWithoutPending, PicklesWithoutEagerTail,
           AdHocFromDroppedCache, AdHocOnPreviousWindow, AdHocOnCurrentGraph, LateEdgesAdmitted,
           WatermarkOneShort, StaleWatermarkRewinds, NoEdgesNoWindows, SkipsInvalidRecords,
           TransposedAnswers, ListAnswers, DryCallCachesWrongly]
