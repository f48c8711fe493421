"""Broken connectivity engines, each with one classic mistake.

Each is the oracle engine with one mutation, so a mismatch can only come from
that mutation.  ``tests/connectivity/test_suite_catches_broken.py`` asserts the
conformance runner finds every one of ``BROKEN``, and the pickling contract check
every one of ``BROKEN_CONTRACT`` (which agree with the oracle when never pickled).
"""
from __future__ import annotations

import numpy as np

from streamspec.reference.connectivity import OracleEngine, window_answers


class ClosedWindowEnd(OracleEngine):
    """Off by one at the end: applies the triggering edge first and takes the
    paper's closed window ``[start, end]``, so an edge at ``t == end`` counts."""

    name = "broken-closed-end"
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
    description = "window start exclusive"

    def _evaluate_window(self, n, queries):
        lo, hi = self.windows.start(n), self.windows.end(n)
        self._edges = [e for e in self._edges if e[2] > lo]
        self._last = [(a, b) for a, b, tt in self._edges if tt < hi]
        return window_answers(self._last, queries)


class NoExpiry(OracleEngine):
    """Never expires edges: a landmark window instead of a sliding one."""

    name = "broken-no-expiry"
    description = "edges never leave the window"

    def _evaluate_window(self, n, queries):
        hi = self.windows.end(n)
        self._last = [(a, b) for a, b, tt in self._edges if tt < hi]
        return window_answers(self._last, queries)


class DropsSelfLoops(OracleEngine):
    """Drops self-loops, as the paper's loader does: ``Q(x, x)`` goes wrong."""

    name = "broken-drops-self-loops"
    description = "self-loops ignored (presence wrong)"

    def _evaluate_window(self, n, queries):
        lo, hi = self.windows.start(n), self.windows.end(n)
        self._edges = [e for e in self._edges if e[2] >= lo and e[0] != e[1]]
        self._last = [(a, b) for a, b, tt in self._edges if tt < hi]
        return window_answers(self._last, queries)


class SelfQueryAlwaysTrue(OracleEngine):
    """Answers ``Q(x, x)`` true whether or not ``x`` is present."""

    name = "broken-self-query"
    description = "Q(x, x) true even when x is absent"

    def _evaluate_window(self, n, queries):
        answers = super()._evaluate_window(n, queries)
        return tuple(True if a == b else ans for (a, b), ans in zip(queries, answers))


class SkipsEmptyWindows(OracleEngine):
    """Emits no row for a window with no true answer (the Java driver skips gaps)."""

    name = "broken-skips-empty"
    description = "windows with all answers false are not emitted"

    def process(self, events):
        return (w for w in super().process(events) if any(w.answers))

    def flush(self):
        return [w for w in super().flush() if any(w.answers)]


class PicklesWithoutPending(OracleEngine):
    """Its pickled state leaves out the edges held back for windows not yet due (the
    driver's ``_pending``) and the engine's unexpired edges, as if a checkpoint only
    needed what was evaluated: right until pickled, unpickled copies forget them."""

    name = "broken-pickles-without-pending"
    description = "pickled state drops the held-back and unexpired edges"

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_pending"] = tuple(column[:0] for column in self._pending)
        state["_edges"] = []
        return state


BROKEN = [ClosedWindowEnd, OpenWindowStart, NoExpiry, DropsSelfLoops, SelfQueryAlwaysTrue, SkipsEmptyWindows]
# conform to the oracle step by step; only the contract checks catch them
BROKEN_CONTRACT = [PicklesWithoutPending]
