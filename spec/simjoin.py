"""Continuous top-k set similarity join over a sliding window: the contract.

This docstring is the normative semantics; paper: Mann, Augsten, Jensen,
"SWOOP: Top-k Similarity Joins over Set Streams" (PVLDB), Sections 2-3 (the
framework: ``insert``, ``set_index_time``, ``topk``) and 6 (the stock order).

- ``Record(id, tokens, ts, side=None)``: ``seq`` (arrival position) plays the
  paper's index ``i``.  ``Advance(t)`` is ``set_index_time(t)``.
- Record ``j`` is valid at index time ``t`` iff ``t < ts_j + w``; a pair
  ``(i, j)``, ``seq_i > seq_j``, ends at ``e = ts_j + w`` (float64).
- Pairs are ordered by ``(-score, -e, seq_i, seq_j)`` (``order_key``); the
  top-k list at ``t`` is the first ``min(k, n)`` valid pairs with overlap > 0.
- After each record or advance whose top-k list differs (content or order)
  from the previous one, ``TopK(ts, pairs)`` is emitted with
  ``pairs = ((id_new, id_old, score, end_time), ...)``.

Decisions the paper leaves open (a user's expectations):

- Times are int or float (not bool, finite) and are compared as float64:
  validity is ``t < ts_j + w`` evaluated in float64, the same expression as
  the pair end time, so a record and its pairs expire at the same instant
  (the paper's ``t - w < ts_j`` could disagree with it by one rounding).  An
  int time must be exactly representable (``|ts| <= 2**53``).  Outputs carry
  float times.
- ``join="self"``: records have no side; ``join="rs"``: every record has
  ``side`` ``"R"`` or ``"S"`` and only R-S pairs qualify.
- Tokens are all ints or all strs; the first token seen fixes the kind.
  Record ids are ints or strs, unique over the whole stream.
- ``Advance(t)`` earlier than the index time is out of order like a record.
  Lateness ``drop`` drops such records/advances and counts them.
- Validation is all-or-nothing per call for sized inputs; a lazy iterable is
  validated in batches of ``BATCH`` events.  ``flush`` emits nothing (time
  does not move at end of stream) and closes the engine.
"""
from __future__ import annotations

import math
from operator import itemgetter
from typing import ClassVar, Iterator

import attrs
import numpy as np

from streamspec.spec.engine import validation_units
from streamspec.spec._simjoin_batch import MAX_EXACT, plain_batch
from streamspec.spec._simjoin_rows import plain_changes, shared_rows
from streamspec.spec._simjoin_similarity import KIND
from streamspec.spec._simjoin_tokens import TokenNumbering
from streamspec.spec.errors import (ContractViolation, InvalidParameter, InvalidRecord,
                                    MalformedRecord, OutOfOrder, StreamspecError, describe,
                                    engine_label)

PROBLEM = "simjoin"
BATCH = 4096
SIMILARITIES = tuple(KIND)
JOINS = ("self", "rs")
SIDES = {"R": 0, "S": 1}
LATENESS = ("error", "drop")
_I8 = np.dtype(np.int64)
_F8 = np.dtype(np.float64)
_I8_MIN, _I8_MAX = -2 ** 63, 2 ** 63 - 1
_APPLY = "SimJoinEngine._apply"
_ARRAY = np.ndarray
_CHANGES = ("a list of (position, ((seq_i, seq_j, score, end), ...)) by increasing position, "
            "or Changes columns")


@attrs.frozen(eq=True)
class Record:
    """A set ``tokens`` with user key ``id`` at time ``ts``; ``side`` R/S in the two-stream join."""

    id: int | str
    tokens: object
    ts: int | float
    side: str | None = None


@attrs.frozen
class Advance:
    """``set_index_time(t)``: move the index time to ``t`` (expiring what ends by then)."""

    t: int | float


@attrs.frozen
class TopK:
    """The top-k list at index time ``ts``, best first: ``(id_new, id_old, score, end_time)``."""

    ts: float
    pairs: tuple = attrs.field(converter=lambda ps: tuple(map(tuple, ps)))


_NEW, _SET = object.__new__, object.__setattr__


def _topk(ts: float, pairs: tuple) -> TopK:
    """``TopK(ts, pairs)`` for ``pairs`` already a tuple of 4-tuples (the engine
    results' hot path): the same object without the converter's copy."""
    out = _NEW(TopK)
    _SET(out, "ts", ts)
    _SET(out, "pairs", pairs)
    return out


_SMALL = 64       # below this many items a Python loop over the list beats numpy's per-call cost


def _rising(items: list, a: np.ndarray, strict: bool) -> bool:
    """``items`` (= ``a.tolist()``) increasing (``strict``) or non-decreasing."""
    if len(items) < _SMALL:
        return all(x < y for x, y in zip(items, items[1:])) if strict else \
            all(x <= y for x, y in zip(items, items[1:]))
    return bool((a[1:] > a[:-1]).all() if strict else (a[1:] >= a[:-1]).all())


def _time(x) -> float | None:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
        return None
    if isinstance(x, (int, np.integer)):
        return float(x) if abs(int(x)) <= MAX_EXACT else None
    return float(x) if math.isfinite(x) else None


@attrs.frozen
class Params:
    """``k`` result pairs, window duration ``w``, similarity by name, join kind, lateness."""

    k: int
    w: int | float
    similarity: str = "jaccard"
    join: str = "self"
    lateness: str = "error"

    def __attrs_post_init__(self):
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)) or self.k < 1:
            raise InvalidParameter(f"k must be an integer >= 1, got {self.k!r}")
        w = _time(self.w)
        if w is None or w <= 0:
            raise InvalidParameter(f"window w must be a finite number > 0, got {self.w!r}")
        if self.similarity not in KIND:
            raise InvalidParameter(f"similarity must be one of {SIMILARITIES}, got {self.similarity!r}")
        if self.join not in JOINS:
            raise InvalidParameter(f"join must be one of {JOINS}, got {self.join!r}")
        if self.lateness not in LATENESS:
            raise InvalidParameter(f"lateness must be one of {LATENESS}, got {self.lateness!r}")

    @property
    def kind(self) -> int:
        return KIND[self.similarity]

    @property
    def wf(self) -> float:
        return float(self.w)


def order_key(score: float, end: float, seq_i: int, seq_j: int) -> tuple:
    """The canonical total order of pairs (stock order of Section 6): best first."""
    return (-score, -end, seq_i, seq_j)


def _token_kind(x) -> type | None:
    if isinstance(x, (bool, np.bool_)):
        return None
    if isinstance(x, (int, np.integer)):
        return int
    return str if isinstance(x, str) else None


def _id_ok(x) -> bool:
    return not isinstance(x, (bool, np.bool_)) and isinstance(x, (int, np.integer, str))


def _beyond_int64(x) -> bool:
    """A Python int the engines' int64 columns cannot hold."""
    return type(x) is int and not -2**63 <= x < 2**63


def _short(x) -> str:
    text = repr(x)
    return text if len(text) <= 40 else f"{text[:40]}... ({len(text)} characters)"


@attrs.frozen(eq=False)
class RecordBatch:
    """Records as columns, the fast path for large inputs: ``id`` int64,
    ``ts`` int64 or float64, the tokens of record ``n`` are
    ``tok[tok_ptr[n]:tok_ptr[n+1]]`` (int64; duplicates collapse), ``side``
    None (self join) or int8 0 = R / 1 = S.  Integer ids and tokens only."""

    id: np.ndarray
    ts: np.ndarray
    tok_ptr: np.ndarray
    tok: np.ndarray
    side: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.ts)


@attrs.define
class Prepared:
    """A validated batch in engine form: ``op`` 0 insert / 1 advance, float
    times, R/S side (0 for the self join), ``seq`` of inserts, and the dense
    token ids of each insert as CSR ``tok_ptr``/``tok`` (a record's tokens
    may repeat: engines treat them as a set)."""

    op: np.ndarray
    ts: np.ndarray
    side: np.ndarray
    seq: np.ndarray
    tok_ptr: np.ndarray
    tok: np.ndarray


@attrs.frozen(eq=False)
class Changes:
    """The ``_apply`` hook's result as columns (the fast form for numba
    engines): change ``x`` happened at operation ``pos[x]`` and its list is
    rows ``ptr[x]:ptr[x+1]`` of ``(seq_i, seq_j, score, end)``."""

    pos: np.ndarray
    ptr: np.ndarray
    seq_i: np.ndarray
    seq_j: np.ndarray
    score: np.ndarray
    end: np.ndarray


class SimJoinEngine:
    """Base class of simjoin engines and the oracle: the spec boundary.

    ``process`` validates a batch completely, numbers records (``seq``) and
    tokens (dense ids by first appearance, the order SWOOP Section 5.6 uses),
    then calls the hook ``_apply(prepared) -> [(position, ((seq_i, seq_j,
    score, e), ...)), ...]``: for each operation of the batch (by position)
    whose top-k list changed, the new list (or the same as ``Changes``
    columns).  The base class maps seqs back to ids and builds ``TopK`` outputs;
    a result of another shape (not a list, positions out of order or range,
    a pair that is not four numbers, unknown seqs) is a ``ContractViolation``.
    """

    problem: ClassVar[str] = PROBLEM
    name: ClassVar[str]
    exact: ClassVar[bool] = True
    description: ClassVar[str]

    def __init__(self, params: Params):
        if not isinstance(params, Params):
            raise InvalidParameter(f"expected streamspec.spec.simjoin.Params, got {type(params).__name__}")
        self.params = params
        self.index_time: float | None = None
        self.dropped_late = 0
        self.closed = False
        self.ids: list = []                 # seq -> external id
        # int ids seen: all are <= _int_hi; the set of them is built from ``ids`` only when an
        # id <= _int_hi arrives (ids in increasing order, the common case, never need it)
        self._int_hi: int | None = None
        self._int_ids: set | None = None
        self._str_ids: set = set()
        self.tokens = TokenNumbering()      # external token -> dense id (first appearance)
        self.token_kind: type | None = None
        self._seen = 0
        self._start()

    # -- the public contract -------------------------------------------------
    def process(self, events) -> Iterator[TopK]:
        """Consume records and advances in order; yield a ``TopK`` whenever the list changes."""
        if self.closed:
            raise StreamspecError("the stream was flushed; create a new engine")
        if isinstance(events, RecordBatch):
            yield from self._feed_columns(events)
            return
        for chunk in validation_units(events, (), BATCH):
            yield from self._feed(list(chunk))

    def changes(self, events) -> list[tuple[int, TopK]]:
        """Like ``process`` over a sized batch, with each output's position in ``events``
        (the pipeline numbers output events with it)."""
        if self.closed:
            raise StreamspecError("the stream was flushed; create a new engine")
        return self._feed(list(events), positions=True)

    def flush(self) -> list[TopK]:
        """End of stream: nothing is pending (every change was emitted); closes the engine."""
        self.closed = True
        return []

    @property
    def n_records(self) -> int:
        return len(self.ids)

    # -- the driver ------------------------------------------------------------
    def _feed(self, events: list, positions: bool = False) -> list:
        if not events:
            return []
        keep, kind = self._validate(events)
        # validated: from here on nothing can fail on the input
        self._seen += len(events)
        where = [n for n, k in enumerate(keep) if k]
        events = [events[n] for n in where]
        self.dropped_late += len(keep) - len(events)
        if not events:
            return []
        if self.token_kind is None:
            self.token_kind = kind
        prepared = self._prepare(events)
        out = self._outputs(self._apply(prepared), prepared.ts)
        return [(where[pos], topk) for pos, topk in out] if positions else [topk for _, topk in out]

    def _outputs(self, changes, ts: np.ndarray) -> list[tuple[int, TopK]]:
        """``(position, TopK)`` of each change, seqs mapped back to ids; a result
        of another shape is a ``ContractViolation``."""
        ids = self.ids
        if isinstance(changes, Changes):        # in bulk: each distinct row built once
            c = changes
            # the common case (int64 and float64 columns) checked and its distinct rows found in
            # one compiled pass (_simjoin_rows.plain_changes): a dozen numpy calls cost more than
            # a small batch's rows; anything else, or a failed check, takes the checks below
            nu = -1
            if type(c.pos) is _ARRAY and type(c.ptr) is _ARRAY and type(c.seq_i) is _ARRAY \
                    and type(c.seq_j) is _ARRAY and type(c.score) is _ARRAY and type(c.end) is _ARRAY \
                    and c.pos.ndim == 1 and c.ptr.ndim == 1 and c.seq_i.ndim == 1 and c.seq_j.ndim == 1 \
                    and c.score.ndim == 1 and c.end.ndim == 1 \
                    and c.pos.dtype == _I8 and c.ptr.dtype == _I8 and c.seq_i.dtype == _I8 \
                    and c.seq_j.dtype == _I8 and c.score.dtype == _F8 and c.end.dtype == _F8:
                rows = len(c.seq_i)
                rep = np.empty(rows, np.int64)
                u_i, u_j, u_sc, u_e = (np.empty(rows, np.int64), np.empty(rows, np.int64),
                                       np.empty(rows, np.float64), np.empty(rows, np.float64))
                nu = plain_changes(c.pos, c.ptr, c.seq_i, c.seq_j, c.score, c.end, c.score.view(_I8),
                                   c.end.view(_I8), len(ts), rep, u_i, u_j, u_sc, u_e)
            if nu >= 0:
                pos, ptr = c.pos.tolist(), c.ptr.tolist()
                if not pos:
                    return []
                u_i, u_j, u_sc, u_e = u_i[:nu], u_j[:nu], u_sc[:nu], u_e[:nu]
            else:
                pos, ptr = self._check_changes(changes, len(ts))
                if not pos:
                    return []
                rep, first = shared_rows(changes.seq_i, changes.seq_j, changes.score, changes.end,
                                         changes.ptr)
                u_i, u_j, u_sc, u_e = (changes.seq_i[first], changes.seq_j[first], changes.score[first],
                                       changes.end[first])
            try:        # (every seq is some distinct row's: a seq too large fails here)
                uniq = list(zip([ids[x] for x in u_i.tolist()], [ids[x] for x in u_j.tolist()],
                                u_sc.tolist(), u_e.tolist()))
            except IndexError:
                top = max(int(changes.seq_i.max()), int(changes.seq_j.max()))
                raise ContractViolation(
                    _APPLY, f"Changes with seqs up to {top}",
                    f"Changes columns: seqs of known records, 0..{len(ids) - 1}",
                    engine=engine_label(self)) from None
            rows = itemgetter(*rep.tolist())(uniq) if len(rep) > 1 else tuple(uniq)
            return [(p, _topk(t, rows[a:b]))
                    for p, t, a, b in zip(pos, ts[changes.pos].tolist(), ptr, ptr[1:])]
        if type(changes) not in (list, tuple):
            raise ContractViolation.of(self, _APPLY, changes, _CHANGES)
        out, last, n, m = [], -1, len(ts), len(ids)
        for change in changes:
            if type(change) not in (tuple, list) or len(change) != 2:
                raise self._bad_change(change, "an element is not a pair (position, pairs)")
            pos, pairs = change
            if type(pos) is not int and not isinstance(pos, np.integer):
                raise self._bad_change(change, "a position is not an int")
            if not last < pos < n:
                raise self._bad_change(change, f"positions increase, each in 0..{n - 1}")
            last = pos
            if type(pairs) not in (tuple, list):
                raise self._bad_change(change, "a top-k list is not a tuple or list")
            rows = []
            for pair in pairs:
                try:
                    i, j, sc, e = pair
                    if not (0 <= i < m and 0 <= j < m):
                        raise IndexError(i, j)
                    rows.append((ids[i], ids[j], float(sc), float(e)))
                except (TypeError, ValueError, IndexError):
                    raise self._bad_change(
                        change, f"each pair is (seq_i, seq_j, score, end), seqs in 0..{m - 1}; "
                                f"{describe(pair)} is not") from None
            out.append((pos, TopK(float(ts[pos]), tuple(rows))))
        return out

    def _bad_change(self, change, why: str) -> ContractViolation:
        return ContractViolation(_APPLY, f"a list holding {describe(change)}",
                                 f"{_CHANGES}: {why}", engine=engine_label(self))

    def _check_changes(self, c: Changes, n: int) -> tuple[list, list]:
        """``Changes`` columns checked: six 1-d arrays, ``ptr`` of one more than
        ``pos`` and non-decreasing from 0 to the rows, positions increasing in
        ``0..n-1``, seqs not negative (too large ones fail in ``_outputs``),
        numeric scores and ends.  Returns ``pos`` and ``ptr`` as lists (checked on
        the lists ``_outputs`` makes anyway: numpy's per-call cost dominates small
        changes)."""
        cols = (c.pos, c.ptr, c.seq_i, c.seq_j, c.score, c.end)
        why = None
        if not (type(c.pos) is _ARRAY and type(c.ptr) is _ARRAY and type(c.seq_i) is _ARRAY
                and type(c.seq_j) is _ARRAY and type(c.score) is _ARRAY
                and type(c.end) is _ARRAY):
            why = "six 1-d numpy arrays"
        elif not (c.pos.dtype.kind in "iu" and c.ptr.dtype.kind in "iu"
                  and c.seq_i.dtype.kind in "iu" and c.seq_j.dtype.kind in "iu"
                  and c.score.dtype.kind in "iuf" and c.end.dtype.kind in "iuf"):
            why = "integer pos, ptr, seq_i and seq_j; numeric score and end"
        elif c.pos.ndim != 1 or c.ptr.ndim != 1 or c.seq_i.ndim != 1 or c.seq_j.ndim != 1 \
                or c.score.ndim != 1 or c.end.ndim != 1:
            why = "six 1-d numpy arrays"
        else:
            pos, ptr = c.pos.tolist(), c.ptr.tolist()
            k, rows = len(pos), len(c.seq_i)
            if len(ptr) != k + 1 or len(c.seq_j) != rows or len(c.score) != rows \
                    or len(c.end) != rows:
                why = "len(ptr) == len(pos) + 1 and seq_i, seq_j, score, end of one length"
            elif k and (pos[0] < 0 or pos[-1] >= n or not _rising(pos, c.pos, True)):
                why = f"positions increasing, each in 0..{n - 1}"
            elif ptr[0] != 0 or ptr[-1] != rows or not _rising(ptr, c.ptr, False):
                why = f"ptr non-decreasing from 0 to the {rows} rows"
            elif rows and (c.seq_i.min() < 0 or c.seq_j.min() < 0):
                # (too large: _outputs' IndexError)
                why = f"seqs of known records, 0..{len(self.ids) - 1}"
            else:
                return pos, ptr
        returned = ", ".join(f"{name} {describe(a)}" for name, a in
                             zip(("pos", "ptr", "seq_i", "seq_j", "score", "end"), cols))
        raise ContractViolation(_APPLY, f"Changes with {returned}", f"Changes columns: {why}",
                                engine=engine_label(self))

    def _feed_columns(self, batch: RecordBatch) -> list[TopK]:
        """``process`` of a ``RecordBatch``: the same checks, vectorised."""
        n = len(batch)
        if n == 0:
            return []
        first = self._seen
        if self.token_kind is str:
            raise InvalidRecord("int tokens in a stream of str tokens", index=first)
        ids, ts, ptr, tok = (np.asarray(a) for a in (batch.id, batch.ts, batch.tok_ptr, batch.tok))
        if ids.dtype.kind not in "iu" or tok.dtype.kind not in "iu" or ptr.shape != (n + 1,):
            raise MalformedRecord("RecordBatch: int ids and tokens, tok_ptr of length n+1", index=first)
        if ts.dtype.kind not in "iuf":
            raise MalformedRecord("RecordBatch: numeric ts", index=first)
        tf = ts.astype(np.float64)
        two = self.params.join == "rs"
        hi = self._int_hi
        t0 = self.index_time
        # the common case (in order, increasing new ids, int64 columns) checked in one compiled
        # pass (spec/_simjoin_batch.py): some twenty numpy calls cost more than a small batch
        plain = (not two and batch.side is None and ids.dtype == _I8 and ptr.dtype == _I8
                 and (hi is None or _I8_MIN <= hi <= _I8_MAX)
                 and plain_batch(tf, 0.0 if t0 is None else t0, t0 is not None, ids,
                                 0 if hi is None else hi, hi is not None, ptr, tok.size))
        if plain:
            every = rising = True
            id_list = ids.tolist()
        else:
            bad = np.flatnonzero(~np.isfinite(tf) | (np.abs(tf) > MAX_EXACT))
            if bad.size:
                raise MalformedRecord(f"timestamp {ts[bad[0]]!r} is not finite/exact",
                                      index=first + int(bad[0]))
            if two != (batch.side is not None):
                raise InvalidRecord("side column required exactly for the two-stream join", index=first)
            if two and not np.isin(batch.side, (0, 1)).all():
                raise InvalidRecord("side must be 0 (R) or 1 (S)", index=first)
            prev = np.empty(n)
            prev[0] = self.index_time if self.index_time is not None else tf[0]
            prev[1:] = np.maximum.accumulate(tf)[:-1]
            prev[1:] = np.maximum(prev[1:], prev[0])
            keep = tf >= prev
            if not keep.all() and self.params.lateness == "error":
                i = int(np.flatnonzero(~keep)[0])
                raise OutOfOrder(f"time {tf[i]!r} is earlier than {prev[i]!r}", index=first + i)
            every = bool(keep.all())
            kid = ids if every else ids[keep]
            # increasing ids above every id seen (the common case) cannot repeat: no set needed
            rising = kid.size == 0 or ((hi is None or int(kid[0]) > hi)
                                       and bool((kid[1:] > kid[:-1]).all()))
            id_list = kid.tolist()
            if not rising:
                known = self._known_ints()
                if len(set(id_list)) != len(id_list) or not known.isdisjoint(id_list):
                    seen, where = set(), np.flatnonzero(keep)
                    for x, at in zip(id_list, where.tolist()):
                        if x in seen or x in known:
                            raise InvalidRecord(f"duplicate record id {x!r}", index=first + at)
                        seen.add(x)
        # validated
        self._seen += n
        m = len(id_list)
        self.dropped_late += n - m
        if self.token_kind is None and tok.size:
            self.token_kind = int
        # (a plain batch's ptr was checked in plain_batch: no numpy call here)
        if plain or (every and ptr[-1] - ptr[0] == tok.size and bool((np.diff(ptr) >= 0).all())):
            tok_ptr = ptr.astype(np.int64)
            if tok_ptr[0]:
                tok_ptr -= tok_ptr[0]
            tok = self.tokens.add_ints(tok)
        else:           # (a tok_ptr that does not fit tok fails here, in numpy, as it always did)
            sizes = np.diff(ptr)
            tok = self.tokens.add_ints(tok[np.repeat(keep, sizes)])
            tok_ptr = np.zeros(m + 1, np.int64)
            np.cumsum(sizes[keep], out=tok_ptr[1:])
        seq = np.arange(len(self.ids), len(self.ids) + m, dtype=np.int64)
        self.ids.extend(id_list)
        if m:
            top = id_list[-1] if rising else max(id_list)
            self._int_hi = top if hi is None or top > hi else hi
            if self._int_ids is not None:
                self._int_ids.update(id_list)
        tk = tf if every else tf[keep]
        self.index_time = float(tk[-1]) if m else self.index_time
        side = batch.side[keep].astype(np.int64) if two else np.zeros(m, np.int64)
        prepared = Prepared(np.zeros(m, np.int64), tk, side, seq, tok_ptr, tok)
        return [topk for _, topk in self._outputs(self._apply(prepared), tk)]

    def __setstate__(self, state: dict) -> None:
        """Unpickling (engines' ``__getstate__`` return their ``__dict__``, trimmed).  An
        engine pickled before ``_int_hi`` existed (a stream checkpoint of 235c162's parent
        or older) holds every int id seen in ``_int_ids``: its largest is ``_int_hi``."""
        self.__dict__.update(state)
        if "_int_hi" not in state:
            ints = state.get("_int_ids")
            self._int_hi = max(ints) if ints else None

    def _known_ints(self) -> set:
        """The int ids seen so far, as a set: built from ``ids`` the first time an id
        that could repeat one arrives (at or below ``_int_hi``), then kept up to date."""
        if self._int_ids is None:
            self._int_ids = {int(x) for x in self.ids if not isinstance(x, str)}
        return self._int_ids

    def _validate(self, events: list) -> tuple[list[bool], type | None]:
        two = self.params.join == "rs"
        last = self.index_time
        kind = self.token_kind
        fresh: set = set()
        hi = self._int_hi           # the largest int id seen, this batch's valid records included
        keep = []
        for n, ev in enumerate(events):
            index = self._seen + n
            if isinstance(ev, Advance):
                t = _time(ev.t)
                if t is None:
                    raise MalformedRecord(f"advance time must be a finite int or float, got {ev.t!r}",
                                          index=index)
            elif isinstance(ev, Record):
                t = _time(ev.ts)
                if t is None:
                    raise MalformedRecord(f"timestamp must be a finite int or float, got {ev.ts!r}",
                                          index=index)
                if not _id_ok(ev.id):
                    raise MalformedRecord(f"record id must be an int or str, got {_short(ev.id)}",
                                          index=index)
                if _beyond_int64(ev.id):
                    raise MalformedRecord(f"record id {_short(ev.id)} does not fit in 64 bits",
                                          index=index)
                if isinstance(ev.tokens, (str, bytes)) or not hasattr(ev.tokens, "__iter__"):
                    raise MalformedRecord(f"tokens must be a collection, got {ev.tokens!r}", index=index)
                for tok in ev.tokens:
                    tk = _token_kind(tok)
                    if tk is None:
                        raise InvalidRecord(f"token {_short(tok)} is neither int nor str", index=index)
                    if _beyond_int64(tok):
                        raise InvalidRecord(f"token {_short(tok)} does not fit in 64 bits",
                                            index=index)
                    if kind is None:
                        kind = tk
                    elif tk is not kind:
                        raise InvalidRecord(f"token {tok!r} is not of the stream's token type "
                                            f"{kind.__name__}", index=index)
                if two and ev.side not in SIDES:
                    raise InvalidRecord(f"two-stream join: side must be 'R' or 'S', got {ev.side!r}",
                                        index=index)
                if not two and ev.side is not None:
                    raise InvalidRecord(f"self join: records have no side, got {ev.side!r}", index=index)
            else:
                raise MalformedRecord(f"expected a Record or Advance, got {ev!r}", index=index)
            if last is not None and t < last:
                if self.params.lateness == "error":
                    raise OutOfOrder(f"time {t!r} is earlier than the index time {last!r}", index=index)
                keep.append(False)
                continue
            if isinstance(ev, Record):
                key = (type(ev.id) is str, ev.id)
                if isinstance(ev.id, str):
                    if ev.id in self._str_ids or key in fresh:
                        raise InvalidRecord(f"duplicate record id {ev.id!r}", index=index)
                elif hi is None or int(ev.id) > hi:      # above every int id seen: new
                    hi = int(ev.id)
                elif ev.id in self._known_ints() or key in fresh:
                    raise InvalidRecord(f"duplicate record id {ev.id!r}", index=index)
                fresh.add(key)
            keep.append(True)
            last = t
        return keep, kind

    def _prepare(self, events: list) -> Prepared:
        n = len(events)
        op = np.zeros(n, np.int64)
        ts = np.empty(n, np.float64)
        side = np.zeros(n, np.int64)
        seq = np.full(n, -1, np.int64)
        ptr = np.zeros(n + 1, np.int64)
        toks: list = []
        for p, ev in enumerate(events):
            if isinstance(ev, Advance):
                op[p], ts[p] = 1, float(ev.t)
            else:
                ts[p] = float(ev.ts)
                side[p] = SIDES[ev.side] if ev.side is not None else 0
                seq[p] = len(self.ids)
                self.ids.append(ev.id)
                if isinstance(ev.id, str):
                    self._str_ids.add(ev.id)
                else:
                    x = int(ev.id)
                    if self._int_hi is None or x > self._int_hi:
                        self._int_hi = x
                    if self._int_ids is not None:
                        self._int_ids.add(x)
                toks.extend(ev.tokens)
            ptr[p + 1] = len(toks)
        dense = (self.tokens.add_strs(toks) if self.token_kind is str
                 else self.tokens.add_ints(np.asarray(toks, dtype=np.int64)))
        self.index_time = float(ts[-1]) if self.index_time is None else max(self.index_time, float(ts[-1]))
        return Prepared(op, ts, side, seq, ptr, dense)

    # -- engine hooks ------------------------------------------------------------
    def _start(self) -> None:
        pass

    def _apply(self, prepared: Prepared) -> list:
        raise NotImplementedError

