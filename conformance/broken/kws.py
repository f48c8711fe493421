"""Broken S-KWS engines, each with one classic mistake.

Each is a working engine with one mutation, so a mismatch can only come from
that mutation.  ``tests/kws/test_suite_catches_broken.py`` asserts the
conformance runner finds every one.
"""
from __future__ import annotations

from streamspec.engines.kws.forest import ForestEngine
from streamspec.engines.kws.fullmesh import FullMeshEngine
from streamspec.spec.kws import Appear, End, output_key


class NoRefusal(FullMeshEngine):
    """Joins accept a right tuple already in the composite (paper Figure 3.7)."""

    name = "broken-no-refusal"
    description = "join does not refuse a tuple already in the composite"
    refuses = staticmethod(lambda rows, row: False)


class ClosedWindowEnd(ForestEngine):
    """Off by one: a tuple still joins at ``t == t_start + w`` (closed lifespan)."""

    name = "broken-closed-end"
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


class NoInstantNetting(FullMeshEngine):
    """Reports every change as it happens, even a result that appears and ends
    at the same instant (ignores "the graph at t is the one after all events of t")."""

    name = "broken-no-netting"
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


class IgnoresSchemaChanges(ForestEngine):
    """Keeps its operator trees when join edges come and go."""

    name = "broken-static-schema"
    description = "ignores AddEdge/RemoveEdge"

    def _schema_change(self, event, t):
        from streamspec.spec.kws import AddEdge, RemoveEdge
        if isinstance(event, (AddEdge, RemoveEdge)):
            return (), ()
        return super()._schema_change(event, t)


BROKEN = [NoRefusal, ClosedWindowEnd, NoInstantNetting, IgnoresSchemaChanges]


class IgnoresWatermarks(FullMeshEngine):
    """Watermarks do nothing: an instant closes only when a later event arrives or at
    ``flush``.  Every check that ends with ``flush`` passes (``check`` does); a time range
    of the pipeline's partitioned replay ends with the watermark of its end
    (``streamspec.pipeline.jobs.kws.run_range``) and so loses its last instant's outputs:
    ``streamspec.conformance.kws.partitioned_mismatch`` (and ``check_watermark``) catch it."""

    name = "broken-ignores-watermark"
    description = "advance_to closes nothing"

    def advance_to(self, t):
        return []


# caught by the partitioned (Spark) check and the watermark check, not by ``check``
BROKEN_PARTITIONED = [IgnoresWatermarks]
