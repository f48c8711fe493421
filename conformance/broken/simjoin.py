"""Broken simjoin engines: the mutation catalogue of the simjoin suite.

Each is the oracle engine with one realistic mutation, so a mismatch can only
come from that mutation; ``mutation`` names its class (see
``streamspec.conformance.broken``).  ``MUTANTS`` is the whole catalogue: the
``ci`` profile of the suite must kill every one.
"""
from __future__ import annotations

import numpy as np

from streamspec.reference.simjoin import OracleEngine, valid_pairs
from streamspec.spec._simjoin_similarity import similarity
from streamspec.spec._simjoin_tokens import TokenNumbering
from streamspec.spec.errors import InvalidRecord
from streamspec.spec.simjoin import order_key


def _pairs(window, params, t, *, end_of=None, score_of=None, same_side=False, key=order_key,
           size_of=len, empty_alike=False):
    """``reference.simjoin.valid_pairs`` with one part swappable (for the mutants)."""
    w, kind = params.wf, params.kind
    live = [r for r in window if t < r[2] + w]
    out = []
    for a in range(len(live)):
        for b in range(a):
            si, ti, tsi, side_i = live[a]
            sj, tj, tsj, side_j = live[b]
            if params.join == "rs" and side_i == side_j and not same_side:
                continue
            o = len(set(ti) & set(tj))
            if o == 0 and not (empty_alike and not ti and not tj):
                continue
            score = 1.0 if o == 0 else float(similarity(kind, size_of(ti), size_of(tj), o))
            if score_of is not None:
                score = score_of(score)
            e = end_of(tsi, tsj) if end_of is not None else tsj + w
            out.append((key(score, e, si, sj), si, sj, score, e))
    out.sort()
    return out


# -- answers -------------------------------------------------------------------------------
class EndOfNewerRecord(OracleEngine):
    """A pair's end time taken from the newer record (``ts_i + w``), not the older."""

    name = "broken-end-of-newer"
    mutation = "answer"
    description = "pair end time ts_i + w instead of ts_j + w"

    def _top(self, t):
        wf = self.params.wf
        pairs = _pairs(self._window, self.params, t, end_of=lambda tsi, tsj: tsi + wf)
        return tuple(q[1:] for q in pairs[:self.params.k])


class SameSidePairs(OracleEngine):
    """The two-stream join pairs records of the same side too (R-R, S-S)."""

    name = "broken-same-side"
    mutation = "answer"
    description = "join=rs also pairs records of one side"

    def _top(self, t):
        pairs = _pairs(self._window, self.params, t, same_side=True)
        return tuple(q[1:] for q in pairs[:self.params.k])


class Float32Scores(OracleEngine):
    """Scores computed in float32 (a GPU-minded kernel): off in the last bits."""

    name = "broken-float32-scores"
    mutation = "answer"
    description = "similarity scores rounded to float32"

    def _top(self, t):
        pairs = _pairs(self._window, self.params, t, score_of=lambda s: float(np.float32(s)))
        return tuple(q[1:] for q in pairs[:self.params.k])


class EmptySetsAlike(OracleEngine):
    """Two empty sets pair with similarity 1 (``0 / 0`` taken as identical sets), though a
    pair qualifies only with an overlap above 0."""

    name = "broken-empty-sets-alike"
    mutation = "answer"
    description = "two empty sets pair with score 1"

    def _top(self, t):
        pairs = _pairs(self._window, self.params, t, empty_alike=True)
        return tuple(q[1:] for q in pairs[:self.params.k])


class DuplicateTokensCounted(OracleEngine):
    """Set sizes count a record's repeated tokens (a bag, not a set): ``{a, a, b}`` has
    size 3, so its similarities come out too low."""

    name = "broken-duplicate-tokens"
    mutation = "answer"
    description = "set sizes count repeated tokens"

    def _apply(self, prep):
        changes = []
        for p in range(len(prep.op)):
            t = float(prep.ts[p])
            if prep.op[p] == 0:
                toks = tuple(prep.tok[prep.tok_ptr[p]:prep.tok_ptr[p + 1]].tolist())   # the bag
                self._window.append((int(prep.seq[p]), toks, t, int(prep.side[p])))
            self._window = [r for r in self._window if self._alive(r, t)]
            pairs = _pairs(self._window, self.params, t)
            current = tuple(q[1:] for q in pairs[:self.params.k])
            if current != self._last:
                changes.append((p, current))
                self._last = current
        return changes


# -- window boundaries, gaps, order ---------------------------------------------------------
class ClosedWindowEnd(OracleEngine):
    """Off by one at the end: a record is still valid at ``t == ts + w``."""

    name = "broken-closed-end"
    mutation = "window-end"
    description = "window end inclusive"

    def _alive(self, record, t):
        return t <= record[2] + self.params.wf

    def _top(self, t):
        # pairs still count at t == ts_j + w (a hair before t is the closed window)
        return tuple(q[1:] for q in valid_pairs(self._window, self.params, t - 1e-9)[:self.params.k])


class NoEmptyList(OracleEngine):
    """Reports a change only when there is something to report: once every pair has
    expired (a gap longer than the window), the empty list is never emitted."""

    name = "broken-no-empty-list"
    mutation = "gap"
    description = "an empty top-k list is not emitted"

    def _apply(self, prep):
        return [(p, pairs) for p, pairs in super()._apply(prep) if pairs]


class ScoreOnlyOrder(OracleEngine):
    """Ignores the tie-breaking rule: equal scores keep the newest pair first."""

    name = "broken-score-only"
    mutation = "tie-order"
    description = "ties broken by recency, not by (-e, seq_i, seq_j)"

    def _top(self, t):
        pairs = sorted(valid_pairs(self._window, self.params, t), key=lambda q: (-q[3], -q[1], -q[2]))
        return tuple(q[1:] for q in pairs[:self.params.k])


class OrderWithoutEnd(OracleEngine):
    """Orders pairs by ``(-score, seq_i, seq_j)``: forgets the end time between score and
    arrival."""

    name = "broken-order-without-end"
    mutation = "tie-order"
    description = "ties broken by (seq_i, seq_j), end time ignored"

    def _top(self, t):
        pairs = _pairs(self._window, self.params, t, key=lambda s, e, si, sj: (-s, si, sj))
        return tuple(q[1:] for q in pairs[:self.params.k])


class KeepsExpiredTop(OracleEngine):
    """Only recomputes on inserts: an ``Advance`` (simjoin's watermark) never expires the list."""

    name = "broken-no-advance"
    mutation = "watermark"
    description = "ignores Advance events"

    def _apply(self, prep):
        keep = prep.op == 0
        changes = super()._apply(prep)
        return [(p, c) for p, c in changes if keep[p]]


# -- state lost by pickling ----------------------------------------------------------------
class PicklesWithoutLastList(OracleEngine):
    """Its pickled state leaves out the last emitted list (a cache "recomputed on the
    next operation"): an unpickled copy emits an unchanged list again."""

    name = "broken-pickles-without-last"
    mutation = "pickling"
    description = "pickled state drops the previous top-k list"

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_last"] = ()
        return state


class PicklesFreshTokenNumbering(OracleEngine):
    """Its pickled state leaves out the token dictionary ("rebuilt from the stream"): an
    unpickled copy numbers the next records' tokens afresh, so they collide with the
    dense ids of the window's records."""

    name = "broken-pickles-token-numbering"
    mutation = "pickling"
    description = "pickled state drops the token numbering"

    def __getstate__(self):
        state = dict(self.__dict__)
        state["tokens"] = TokenNumbering()
        return state


# -- lateness, bad records ------------------------------------------------------------------
class LateRecordsAdmitted(OracleEngine):
    """Under ``lateness="drop"`` late records and advances are admitted as if on time."""

    name = "broken-late-admitted"
    mutation = "lateness"
    description = "lateness=drop keeps late events"

    def _validate(self, events):
        keep, kind = super()._validate(events)
        return [True] * len(keep), kind


class SkipsInvalidRecords(OracleEngine):
    """A lenient reader: an event the spec calls invalid (duplicate id, bad token or
    side) is skipped, not refused (the rest of the call goes in)."""

    name = "broken-skips-invalid"
    mutation = "bad-record"
    description = "InvalidRecord events are skipped silently"

    def _feed(self, events, positions=False):
        events = list(events)
        while True:
            try:
                return super()._feed(events, positions)
            except InvalidRecord as err:
                if err.index is None:
                    raise
                del events[err.index - self._seen]
                self._seen += 1


# -- the hook's contract -------------------------------------------------------------------
class DictChanges(OracleEngine):
    """``_apply`` returns its changes as a dict ``{position: pairs}`` instead of a list of
    ``(position, pairs)``."""

    name = "broken-dict-changes"
    mutation = "contract-shape"
    description = "_apply returns a dict"

    def _apply(self, prep):
        return dict(super()._apply(prep))


MUTANTS = [EndOfNewerRecord, SameSidePairs, Float32Scores, EmptySetsAlike, DuplicateTokensCounted,
           ClosedWindowEnd, NoEmptyList, ScoreOnlyOrder, OrderWithoutEnd, KeepsExpiredTop,
           PicklesWithoutLastList, PicklesFreshTokenNumbering, LateRecordsAdmitted,
           SkipsInvalidRecords, DictChanges]
