"""Broken S-KWS engines: the mutation catalogue of the kws suite.

Each is a working engine (the oracle, the forest or the full mesh) with one
realistic mutation, so a mismatch can only come from that mutation; ``mutation``
names its class (see ``streamspec.conformance.broken``).  ``MUTANTS`` is the
whole catalogue: the ``ci`` profile of the suite must kill every one.
"""
from __future__ import annotations

from streamspec.engines.kws.forest import ForestEngine
from streamspec.engines.kws.fullmesh import FullMeshEngine
from streamspec.reference.kws import OracleEngine, _Graph, results_at
from streamspec.spec.errors import InvalidRecord
from streamspec.spec.kws import Appear, End, output_key


# -- answers -------------------------------------------------------------------------------
class NoRefusal(FullMeshEngine):
    """Joins accept a right tuple already in the composite (paper Figure 3.7)."""

    name = "broken-no-refusal"
    mutation = "answer"
    description = "join does not refuse a tuple already in the composite"
    refuses = staticmethod(lambda rows, row: False)


class AppearEndLatest(OracleEngine):
    """An ``Appear``'s window end is the latest of its tuples' ends, not the earliest."""

    name = "broken-appear-end-max"
    mutation = "answer"
    description = "Appear.end = max t_end of its tuples"

    def _close(self):
        t = self.last_t
        ended, appeared = self._close_instant(t)
        self._note("E", ended)
        self._note("A", appeared)
        out = []
        for r, (first, last) in self._spec_changes.items():
            if first == "E" and last == "E":
                out.append(End(t, r.tids, r.edges))
            elif first == "A" and last == "A":
                end = None
                if self.params.window is not None:
                    end = max(self._spec_ends[tid] for tid in r.tids)
                out.append(Appear(t, r.tids, r.edges, end))
        self._spec_changes = {}
        out.sort(key=output_key)
        return out


def _case_sensitive(value):
    """A text value as a case-sensitive matcher sees it: upper-case letters match nothing."""
    return "".join(" " if c.isupper() else c for c in value) if isinstance(value, str) else value


class _GraphCaseSensitive(_Graph):
    def results(self, t):
        w = self.params.window
        alive = {tid: (r, {a: _case_sensitive(x) for a, x in v.items()})
                 for tid, (r, v, ts) in self.rows.items() if ts <= t and (w is None or t < ts + w)}
        return results_at(self.schema, alive, self.params.keywords, self.params.t_max)


class CaseSensitiveKeywords(OracleEngine):
    """Matches keywords case-sensitively: ``"K1"`` does not hold the keyword ``k1``."""

    name = "broken-case-sensitive"
    mutation = "answer"
    description = "keywords matched without casefolding"

    def _start(self):
        super()._start()
        self._graph = _GraphCaseSensitive(self.params)


class _GraphBelowTmax(_Graph):
    def results(self, t):
        w = self.params.window
        alive = {tid: (r, v) for tid, (r, v, ts) in self.rows.items()
                 if ts <= t and (w is None or t < ts + w)}
        return results_at(self.schema, alive, self.params.keywords, max(1, self.params.t_max - 1))


class TreesBelowTmax(OracleEngine):
    """Off by one in the result size: trees of fewer than ``t_max`` tuples only."""

    name = "broken-below-t-max"
    mutation = "answer"
    description = "results of t_max tuples left out"

    def _start(self):
        super()._start()
        self._graph = _GraphBelowTmax(self.params)


class IgnoresSchemaChanges(ForestEngine):
    """Keeps its operator trees when join edges come and go."""

    name = "broken-static-schema"
    mutation = "schema"
    description = "ignores AddEdge/RemoveEdge"

    def _schema_change(self, event, t):
        from streamspec.spec.kws import AddEdge, RemoveEdge
        if isinstance(event, (AddEdge, RemoveEdge)):
            return (), ()
        return super()._schema_change(event, t)


# -- window boundaries, gaps ------------------------------------------------------------------
class ClosedWindowEnd(ForestEngine):
    """Off by one: a tuple still joins at ``t == t_start + w`` (closed lifespan)."""

    name = "broken-closed-end"
    mutation = "window-end"
    description = "tuples expire one instant late"

    def _advance(self, t):
        if self.now == t:
            return
        self.now = t - 1          # liveness checks use t_end > now: off by one
        q = self._expiry
        while q and q[0].t_end < t:
            row = q.popleft()
            if self._rows.get(row.tid) is row:
                self._remove(row)


class _GraphFromNextInstant(_Graph):
    """``G(t)`` with the tuples inserted before ``t`` only (``t_start < t``)."""

    def results(self, t):
        w = self.params.window
        alive = {tid: (r, v) for tid, (r, v, ts) in self.rows.items()
                 if ts < t and (w is None or t < ts + w)}
        return results_at(self.schema, alive, self.params.keywords, self.params.t_max)


class OpenWindowStart(OracleEngine):
    """Off by one at the start: a tuple takes part from the instant after its arrival
    (``t_start < t``), not from its arrival (``t_start <= t``)."""

    name = "broken-open-start"
    mutation = "window-start"
    description = "a tuple joins from the next instant on"

    def _start(self):
        super()._start()
        self._graph = _GraphFromNextInstant(self.params)


class ExpiresOnePerInstant(ForestEngine):
    """Expires at most one tuple per new instant (``if`` for ``while``): after a gap, or
    when several tuples end at once, expired tuples stay in the buffers and join."""

    name = "broken-one-expiry-per-instant"
    mutation = "gap"
    description = "at most one tuple expires per instant"

    def _advance(self, t):
        if self.now == t:
            return
        self.now = t
        q, expired = self._expiry, []
        if q and q[0].t_end <= t:
            row = q.popleft()
            if self._rows.get(row.tid) is row:
                self._remove(row)
                expired.append(row)
        if self.purge == "eager":
            for row in expired:
                self._eager(row, t)


# -- one instant: netting and order -----------------------------------------------------------
class NoInstantNetting(FullMeshEngine):
    """Reports every change as it happens, even a result that appears and ends
    at the same instant (ignores "the graph at t is the one after all events of t")."""

    name = "broken-no-netting"
    mutation = "tie-order"
    description = "does not net the changes of one instant"

    def _close(self):
        t, out = self.last_t, []
        ended, appeared = self._close_instant(t)
        self._note("E", ended)
        self._note("A", appeared)
        for r, (first, last) in self._spec_changes.items():
            if first == "A":
                end = None
                if self.params.window is not None:
                    end = min(self._spec_ends.get(tid, t) for tid in r.tids)
                out.append(Appear(t, r.tids, r.edges, end))
            if last == "E":
                out.append(End(t, r.tids, r.edges))
        self._spec_changes = {}
        out.sort(key=output_key)
        return out


def _text_key(o):
    return (o.time, tuple(map(str, o.tids)), tuple(map(str, o.edges)))


class TidsSortedAsText(FullMeshEngine):
    """Orders an instant's outputs by tids compared as text (``10 < 9``), not ints
    numerically before strs."""

    name = "broken-tids-as-text"
    mutation = "tie-order"
    description = "outputs of one instant ordered by str(tids)"

    def _close(self):
        return sorted(super()._close(), key=_text_key)


# -- watermarks, pickling ----------------------------------------------------------------------
class IgnoresWatermarks(FullMeshEngine):
    """Watermarks do nothing: an instant closes only when a later event arrives or at
    ``flush``.  Every check that ends with ``flush`` passes (``check`` does); a time range
    of the pipeline's partitioned replay ends with the watermark of its end
    (``streamspec.pipeline.jobs.kws.run_range``) and so loses its last instant's outputs:
    ``streamspec.conformance.kws.partitioned_mismatch`` (and ``check_watermark``) catch it."""

    name = "broken-ignores-watermark"
    mutation = "watermark"
    description = "advance_to closes nothing"

    def advance_to(self, t):
        return []


class WatermarkClosesItsInstant(FullMeshEngine):
    """``advance_to(t)`` closes the instant ``t`` itself when it is the latest one
    (``t >= last_t``, not ``t > last_t``), though events of ``t`` may still come."""

    name = "broken-watermark-closes-its-instant"
    mutation = "watermark"
    description = "advance_to(last_t) closes the open instant"

    def advance_to(self, t):
        if self.last_t is not None and t >= self.last_t:
            return self._close()
        return []


class PicklesWithoutOpenInstant(FullMeshEngine):
    """Its pickled state leaves out the changes of the instant still open (held back until
    a later event closes it), as if a checkpoint needed only closed instants."""

    name = "broken-pickles-without-open-instant"
    mutation = "pickling-hold-back"
    description = "pickled state drops the open instant's changes"

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_spec_changes"] = {}
        return state


class PicklesTreesRebuilt(ForestEngine):
    """Its pickled state leaves out the operator trees, "derived from the schema", and an
    unpickled copy builds them again: empty, the composites and tuples their buffers held
    are lost, so the tuples seen before no longer join the ones after."""

    name = "broken-pickles-rebuilt-trees"
    mutation = "pickling"
    description = "operator trees rebuilt (empty) on unpickling"

    def __getstate__(self):
        state = dict(self.__dict__)
        del state["trees"], state["_leaves"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._build()


# -- bad records, the hook's contract ----------------------------------------------------------
class SkipsInvalidRecords(OracleEngine):
    """A lenient reader: an event the spec calls invalid (unknown relation or attribute,
    duplicate or unknown tid, ...) is skipped, not refused (the rest of the call goes in)."""

    name = "broken-skips-invalid"
    mutation = "bad-record"
    description = "InvalidRecord events are skipped silently"

    def _feed(self, events):
        events = list(events)
        while True:
            try:
                return super()._feed(events)
            except InvalidRecord as err:
                if err.index is None:
                    raise
                del events[err.index - self._seen]
                self._seen += 1


class ResultPairs(OracleEngine):
    """``_close_instant`` returns ``(tids, edges)`` pairs instead of ``Result`` objects."""

    name = "broken-result-pairs"
    mutation = "contract-shape"
    description = "_close_instant returns (tids, edges) tuples"

    def _close_instant(self, t):
        ended, appeared = super()._close_instant(t)
        return [(r.tids, r.edges) for r in ended], [(r.tids, r.edges) for r in appeared]


MUTANTS = [NoRefusal, AppearEndLatest, CaseSensitiveKeywords, TreesBelowTmax, IgnoresSchemaChanges,
           ClosedWindowEnd, OpenWindowStart, ExpiresOnePerInstant, NoInstantNetting,
           TidsSortedAsText, IgnoresWatermarks, WatermarkClosesItsInstant,
           PicklesWithoutOpenInstant, PicklesTreesRebuilt, SkipsInvalidRecords, ResultPairs]
