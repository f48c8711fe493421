"""Keyword search over relational data streams (S-KWS): the contract.

This docstring is the normative semantics; paper: Markowetz, Yang, Papadias,
"Keyword Search on Relational Data Streams" (SIGMOD 2007), Section 3.1.
Schema, tokens and values: ``streamspec.spec.kws_schema``; events and outputs:
``streamspec.spec.kws_events`` (re-exported here).

- Events: ``Insert(relation, tid, values, t)``, ``Delete(tid, t)`` and the
  schema changes ``AddRelation``, ``RemoveRelation``, ``AddEdge``,
  ``RemoveEdge``; timestamps are ints, non-decreasing; events of one instant
  apply in arrival order and ``G(t)`` is the graph after all of them.
- Lifespans: sliding window ``w`` (``t_end = t_start + w``) when
  ``Params.window`` is set, else the positive-negative model (alive until
  deleted).  ``Delete`` is accepted in both models (it ends a tuple early).
- A result (MTJNT, at most ``t_max`` tuples) is identified by its sorted tids
  and its sorted labelled edges ``(edge_id, left_tid, right_tid)``
  (``left_tid`` plays ``edge.left_attr``).
- Outputs, per maximal interval ``[appear, end)`` of a result:
  ``Appear(time, tids, edges, end)`` at ``appear``; ``end`` is the window end
  ``min t_end`` (window model) or ``None`` (positive-negative model).  ``End(time,
  tids, edges)`` when the result leaves ``R(t)`` at an event time other than
  that window end (a deletion, a schema change).  Order: time, then tids,
  then edges.  An instant's outputs are emitted once a later event, a
  watermark (``advance_to``) or ``flush`` closes it.

Decisions the paper leaves open:

- tids are ints or strs (not bools); tids sort ints first (numerically),
  then strs.  ``values`` is a mapping (or pairs) attribute -> value; missing
  attributes are null; unknown ones are an ``InvalidRecord``.
- ``RemoveRelation`` also removes the edges touching it and ends its tuples
  (they are dead: deleting them afterwards is an error); re-adding a relation
  of that name starts empty.
- Validation is all-or-nothing per ``process`` call (a list or tuple, or a
  ``TupleBatch``: inserts and deletions as columns, the same outputs and the
  same first error as its events), or per ``BATCH`` records of a lazy
  iterable.  ``flush`` ends the stream.
"""
from __future__ import annotations

from collections import deque
from itertools import repeat
from typing import ClassVar, Iterator

import attrs
import numpy as np

from streamspec.spec._kws_tids import SeenTids
from streamspec.spec.engine import validation_units
from streamspec.spec.errors import (ContractViolation, InvalidParameter, InvalidRecord,
                                    MalformedRecord, OutOfOrder, StreamspecError, describe,
                                    engine_label)
from streamspec.spec.kws_events import (EVENTS, SCHEMA_EVENTS, AddEdge, AddRelation, Appear,  # noqa: F401
                             Delete, End, Insert, RemoveEdge, RemoveRelation, Result, Row,
                             edge_key, output_key, tid_key)
from streamspec.spec.kws_schema import (JoinEdge, Relation, Schema, check_edge, clean_value,
                             keyword_bits, normalise_keyword, tokens)

PROBLEM = "kws"
BATCH = 4096
_RESULTS = "an iterable of streamspec.spec.kws.Result (Result.of(tids, edges))"


def _int(name):
    def check(instance, attribute, value):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidParameter(f"{name} must be an integer, got {value!r}")
    return check


def _keywords(value) -> tuple:
    if isinstance(value, str):
        value = value.split(",")
    out = []
    for k in value:
        k = normalise_keyword(k)
        if k not in out:
            out.append(k)
    if not out:
        raise InvalidParameter("the query needs at least one keyword")
    return tuple(out)


@attrs.frozen
class Params:
    """Initial schema, query keywords, ``t_max`` and the window (None: positive-negative)."""

    schema: Schema
    keywords: tuple = attrs.field(converter=_keywords)
    t_max: int = attrs.field(validator=_int("t_max"))
    window: int | None = None

    def __attrs_post_init__(self):
        if not isinstance(self.schema, Schema):
            raise InvalidParameter(f"schema must be a streamspec.spec.kws_schema.Schema, got {self.schema!r}")
        if self.t_max < 1:
            raise InvalidParameter(f"t_max must be >= 1, got {self.t_max}")
        if self.window is not None:
            _int("window w")(self, None, self.window)
            if self.window <= 0:
                raise InvalidParameter(f"window w must be > 0, got {self.window}")


@attrs.frozen(eq=False)
class TupleBatch:
    """Inserts and deletions as columns, in stream order: the columnar input of
    ``process`` (issue 11; one validation unit, like a list).

    - ``t``: int64 times of every row; ``tid``: the tid of every row (int or str);
      ``delete``: bool per row (None: no deletions); a deletion row ends tuple
      ``tid`` at ``t``.
    - ``relation``: the relation of every insert row (ignored on deletion rows).
    - ``values``: relation -> attribute -> the values of that relation's insert
      rows, in stream order (per relation, so no padding: a schema of many
      relations has disjoint attributes).  A missing attribute is null; NaN is null.
      A column that is not an attribute of the relation may hold nulls only (a
      table of several relations has them); a value in it is an ``InvalidRecord``.

    Row ``i`` is ``Insert(relation[i], tid[i], {a: values[relation[i]][a][k]}, t[i])``
    (``k``: its rank among its relation's insert rows; null values left out) or
    ``Delete(tid[i], t[i])``;
    ``events()`` spells them out and ``from_events`` builds a batch from events
    (inserts and deletions only: schema changes stay events).  An engine gives the
    same outputs and the same first error for both (``conformance.kws.check_batch``);
    the batch is validated column by column, makes no Insert objects and reads each
    text value's keywords once (measured: ``bench/kws/batch.py``).
    """

    t: object
    tid: list
    relation: list
    values: dict = attrs.field(factory=dict)
    delete: object = None

    @classmethod
    def of(cls, t, tid, relation, values=None, delete=None) -> "TupleBatch":
        """From sequences or arrays (numpy, pandas, lists); checks the lengths."""
        t = _time_column(t)
        tid = np.asarray(tid) if hasattr(tid, "dtype") and tid.dtype.kind in "iu" \
            else _plain_list(tid)
        relation = _plain_list(relation)
        delete = None if delete is None else np.asarray(delete, dtype=bool)
        n = len(t)
        if len(tid) != n or len(relation) != n or (delete is not None and len(delete) != n):
            raise MalformedRecord(f"batch columns differ in length: t {n}, tid {len(tid)}, "
                                  f"relation {len(relation)}"
                                  + (f", delete {len(delete)}" if delete is not None else ""))
        cols = {}
        for rel, attrs_ in (values or {}).items():
            cols[rel] = {a: (col if hasattr(col, "dtype") and col.dtype.kind in "iufb"
                             else _plain_list(col)) for a, col in attrs_.items()}
        return cls(t, tid, relation, cols, delete)

    @classmethod
    def from_events(cls, events) -> "TupleBatch":
        """The batch of a list of Insert and Delete events."""
        rows: dict = {}
        for ev in events:
            if isinstance(ev, Insert):
                rows.setdefault(ev.relation, []).append(dict(ev.values))
            elif not isinstance(ev, Delete):
                raise MalformedRecord(f"a TupleBatch holds inserts and deletions, not {ev!r}")
        values = {}
        for rel, dicts in rows.items():
            names = list(dict.fromkeys(a for d in dicts for a in d))
            values[rel] = {a: [d.get(a) for d in dicts] for a in names}
        return cls.of([ev.t for ev in events], [ev.tid for ev in events],
                      [ev.relation if isinstance(ev, Insert) else None for ev in events],
                      values, [isinstance(ev, Delete) for ev in events])

    def __len__(self) -> int:
        return len(self.t)

    def events(self) -> list:
        """The batch as events (what ``process`` makes of it)."""
        rank: dict = {}
        out = []
        for i, t in enumerate(self.t.tolist()):
            if self.delete is not None and self.delete[i]:
                out.append(Delete(_item(self.tid[i]), t))
                continue
            rel = self.relation[i]
            k = rank[rel] = rank.get(rel, -1) + 1
            cols = self.values.get(rel, {})
            values = {a: v for a, col in cols.items() if (v := _at(col, k)) is not None}
            out.append(Insert(rel, _item(self.tid[i]), values, t))
        return out


def _time_column(t):
    """Times as an array: int64 when every one is a 64-bit int, else objects as given
    (validation names the first bad one; numpy would make ``[0, "late"]`` all text)."""
    if hasattr(t, "to_numpy"):
        t = t.to_numpy()
    if isinstance(t, np.ndarray):
        return t
    seq = list(t)
    if all(type(v) is int and -2**63 <= v < 2**63 for v in seq):
        return np.array(seq, dtype=np.int64)
    out = np.empty(len(seq), dtype=object)
    out[:] = seq
    return out


def _plain_list(seq) -> list:
    """Python values of a sequence or array (numpy scalars as Python ones)."""
    if hasattr(seq, "to_numpy"):
        seq = seq.to_numpy()
    return seq.tolist() if hasattr(seq, "tolist") else list(seq)


def _item(v):
    return v.item() if hasattr(v, "item") else v


def _at(col, k):
    """Value ``k`` of a column as the spec reads it (NaN is null)."""
    v = _item(col[k])
    return None if isinstance(v, float) and v != v else v


def _first_value(col, n: int) -> int | None:
    """The first of ``n`` values of a column that is not null (None or NaN), or None."""
    if hasattr(col, "dtype") and col.dtype.kind in "iub":
        return 0 if n else None
    if hasattr(col, "dtype") and col.dtype.kind == "f":
        hits = np.flatnonzero(~np.isnan(col[:n]))
        return int(hits[0]) if hits.size else None
    return next((k for k, v in enumerate(col[:n]) if v is not None and v == v), None)


_GONE = object()


class _Layer:
    """A dict seen through pending changes, committed only when a batch is valid."""

    def __init__(self, base: dict):
        self.base, self.over = base, {}

    def get(self, key):
        if key in self.over:
            v = self.over[key]
            return None if v is _GONE else v
        return self.base.get(key)

    def keys(self):
        return [k for k in {**self.base, **self.over} if self.get(k) is not None]

    def __setitem__(self, key, value):
        self.over[key] = value

    def pop(self, key):
        self.over[key] = _GONE

    def commit(self):
        for k, v in self.over.items():
            if v is _GONE:
                self.base.pop(k, None)
            else:
                self.base[k] = v
        self.over = {}


class KwsEngine:
    """Base class of S-KWS engines and the oracle: the spec boundary.

    It validates, keeps the schema and the lifespans, nets each instant's
    changes and orders the outputs.  Subclasses implement the hooks:

    - ``_start()``: ``self.schema`` and ``self.keywords`` are set.
    - ``_insert(row, t) -> iterable of Result``: the MTJNTs that contain the
      new tuple (all of them are new).
    - ``_delete(tid, t) -> iterable of Result``: the MTJNTs of ``G(t)`` before
      the deletion that contain the tuple.
    - ``_schema_change(event, t) -> (ended, appeared)``: ``self.schema`` is
      already the new schema; ended/appeared are Results alive at ``t``.
    - ``_close_instant(t) -> (ended, appeared)``: optional, after the last event of ``t``.

    A return value of another shape (``None``, an element that is not a
    ``Result``, not a pair) is a ``ContractViolation`` naming the hook.
    """

    problem: ClassVar[str] = PROBLEM
    name: ClassVar[str]
    exact: ClassVar[bool] = True
    description: ClassVar[str]

    def __init__(self, params: Params):
        if not isinstance(params, Params):
            raise InvalidParameter(f"expected streamspec.spec.kws.Params, got {type(params).__name__}")
        self.params = params
        self.keywords = params.keywords
        self.schema = params.schema
        self.closed = False
        self.last_t: int | None = None
        self._spec_relations = {r.name: (r, 0) for r in params.schema.relations}  # name -> (rel, gen)
        self._spec_edges = {e.id: e for e in params.schema.edges}
        self._spec_gen = 0
        self._spec_tids = SeenTids()          # every tid seen (duplicates are errors)
        self._spec_live: dict = {}            # tid -> (relation, gen, t_end)
        self._spec_expiry: deque = deque()    # (t_end, tid), window model: prunes _live
        self._spec_ends: dict = {}       # tid -> t_end of applied, unexpired tuples (window model)
        self._seen = 0
        self._spec_changes: dict = {}         # Result -> [first, last] action of this instant
        self._start()

    # -- the public contract -------------------------------------------------
    def process(self, events) -> Iterator:
        if self.closed:
            raise StreamspecError("the stream was flushed; create a new engine")
        for chunk in validation_units(events, (TupleBatch,), BATCH):
            if isinstance(chunk, TupleBatch):
                yield from self._feed_batch(chunk)
            else:
                yield from self._feed(list(chunk))

    def advance_to(self, t: int) -> list:
        """Watermark: no event earlier than ``t`` will come; close the instants before ``t``."""
        if self.last_t is not None and t > self.last_t:
            return self._close()
        return []

    def flush(self) -> list:
        self.closed = True
        return self._close() if self.last_t is not None else []

    # -- validation ----------------------------------------------------------
    def _validate(self, events: list) -> list:
        rels, edges = _Layer(self._spec_relations), _Layer(self._spec_edges)
        live = _Layer(self._spec_live)
        seen, fresh, fresh_set = self._spec_tids, [], set()
        gen, last, w = self._spec_gen, self.last_t, self.params.window
        prepared = []
        for i, ev in enumerate(events, self._seen):
            if not isinstance(ev, EVENTS):
                raise MalformedRecord(f"expected a kws event, got {ev!r}", index=i)
            t = ev.t
            if isinstance(t, bool) or not isinstance(t, int):
                raise MalformedRecord(f"event time must be an integer, got {t!r}", index=i)
            if last is not None and t < last:
                raise OutOfOrder(f"event time {t} is earlier than {last} already seen", index=i)
            last = t
            if isinstance(ev, Insert):
                entry = rels.get(ev.relation)
                if entry is None:
                    raise InvalidRecord(f"unknown relation {ev.relation!r}", index=i)
                rel, rgen = entry
                tid = ev.tid
                if isinstance(tid, bool) or not isinstance(tid, (int, str)):
                    raise InvalidRecord(f"tid must be an int or a str, got {tid!r}", index=i)
                if tid in fresh_set or tid in seen:
                    raise InvalidRecord(f"duplicate tid {tid!r}", index=i)
                values = {}
                for pair in ev.values:
                    if len(pair) != 2:
                        raise MalformedRecord(f"values must be (attribute, value) pairs, got {pair!r}",
                                              index=i)
                    a, v = pair
                    if a not in rel.attributes:
                        raise InvalidRecord(f"relation {rel.name!r} has no attribute {a!r}", index=i)
                    try:
                        values[a] = clean_value(v)
                    except ValueError as exc:
                        raise InvalidRecord(f"attribute {a!r}: {exc}", index=i) from None
                for a in rel.attributes:
                    values.setdefault(a, None)
                t_end = None if w is None else t + w
                fresh.append(tid)
                fresh_set.add(tid)
                live[tid] = (rel.name, rgen, t_end)
                row = Row(i, tid, rel.name, values, t, t_end, keyword_bits(rel, values, self.keywords))
                prepared.append(row)
                continue
            if isinstance(ev, Delete):
                entry = live.get(ev.tid) if isinstance(ev.tid, (int, str)) else None
                if entry is None or not _alive(entry, rels, t):
                    raise InvalidRecord(f"deletion of unknown or dead tid {ev.tid!r}", index=i)
                live.pop(ev.tid)
            elif isinstance(ev, AddRelation):
                if not isinstance(ev.relation, Relation):
                    raise MalformedRecord(f"AddRelation needs a Relation, got {ev.relation!r}", index=i)
                if rels.get(ev.relation.name) is not None:
                    raise InvalidRecord(f"relation {ev.relation.name!r} exists already", index=i)
                gen += 1
                rels[ev.relation.name] = (ev.relation, gen)
            elif isinstance(ev, RemoveRelation):
                if rels.get(ev.name) is None:
                    raise InvalidRecord(f"unknown relation {ev.name!r}", index=i)
                rels.pop(ev.name)
                for eid in edges.keys():
                    e = edges.get(eid)
                    if ev.name in (e.left, e.right):
                        edges.pop(eid)
            elif isinstance(ev, AddEdge):
                e = ev.edge
                if not isinstance(e, JoinEdge):
                    raise MalformedRecord(f"AddEdge needs a JoinEdge, got {e!r}", index=i)
                if edges.get(e.id) is not None:
                    raise InvalidRecord(f"edge {e.id!r} exists already", index=i)
                known = {n: r for n in {e.left, e.right} if (r := rels.get(n)) is not None}
                try:
                    check_edge(e, {n: r for n, (r, _) in known.items()})
                except InvalidParameter as exc:
                    raise InvalidRecord(str(exc), index=i) from None
                edges[e.id] = e
            elif isinstance(ev, RemoveEdge):
                if edges.get(ev.edge_id) is None:
                    raise InvalidRecord(f"unknown edge {ev.edge_id!r}", index=i)
                edges.pop(ev.edge_id)
            prepared.append(ev)
        # valid: commit the bookkeeping
        for layer in (rels, edges, live):
            layer.commit()
        for tid in fresh:
            seen.add(tid)
        self._spec_gen = gen
        return prepared


    # -- the columnar batch (TupleBatch) ----------------------------------------
    def _feed_batch(self, batch: "TupleBatch") -> list:
        if not len(batch):
            return []
        prepared = self._validate_batch(batch)
        self._seen += len(batch)
        return self._apply(prepared)

    def _validate_batch(self, b: "TupleBatch") -> list:
        """``_validate`` for a batch: the same checks, the same first error, nothing
        changed unless the whole batch is valid; then the rows in engine form.

        Each check runs over whole columns and finds its first bad row; the error
        raised is the first bad row's, and at one row the check the event path makes
        first (time, relation, tid, duplicate, values; deletions in stream order)."""
        n, i0, w = len(b), self._seen, self.params.window
        bad: list = [n, 9, None]         # first bad row, its check's rank, the error

        def found(k: int, rank: int, err) -> None:
            if (k, rank) < (bad[0], bad[1]):
                bad[:] = [k, rank, err]

        dele = np.zeros(n, dtype=bool) if b.delete is None else np.asarray(b.delete, dtype=bool)
        # 0: times, 64-bit integers, non-decreasing
        t = b.t
        if t.dtype.kind not in "iu":
            for k, v in enumerate(t.tolist()):
                if isinstance(v, bool) or not isinstance(v, int) or not -2**63 <= v < 2**63:
                    found(k, 0, MalformedRecord(f"event time must be a 64-bit integer, got {v!r}",
                                                index=i0 + k))
                    break
            t = np.array(t[:bad[0]].tolist(), dtype=np.int64)
        m = bad[0]                       # rows before it have good times
        last = self.last_t
        if m and last is not None and t[0] < last:
            found(0, 0, OutOfOrder(f"event time {t[0]} is earlier than {last} already seen",
                                   index=i0))
        back = np.flatnonzero(t[1:m] < t[:m - 1]) if m > 1 else ()
        if len(back):
            k = int(back[0]) + 1
            found(k, 0, OutOfOrder(f"event time {t[k]} is earlier than {t[k - 1]} already seen",
                                   index=i0 + k))
        m = bad[0]
        ts = t[:m].tolist()

        # 1: relations known; the insert rows of each relation, in order
        rels = self._spec_relations
        relation = b.relation
        positions: dict = {}
        if not dele[:m].any():
            for i, name in enumerate(relation[:m]):
                pos = positions.get(name)
                if pos is None:
                    positions[name] = [i]
                else:
                    pos.append(i)
        else:
            for i in np.flatnonzero(~dele[:m]).tolist():
                positions.setdefault(relation[i], []).append(i)
        for name, pos in positions.items():
            if not isinstance(name, str) or rels.get(name) is None:
                found(pos[0], 1, InvalidRecord(f"unknown relation {name!r}", index=i0 + pos[0]))

        # 2, 3: tids of the inserts: int or str, never seen before (in the batch or the stream)
        tids = b.tid
        ins = np.flatnonzero(~dele[:m])
        ins_tids = (tids[:m] if len(ins) == m else tids[ins] if hasattr(tids, "dtype")
                    else [tids[i] for i in ins.tolist()])
        integral = hasattr(ins_tids, "dtype") and ins_tids.dtype.kind in "iu"
        ins_tids = ins_tids.tolist() if hasattr(ins_tids, "tolist") else ins_tids
        typed = len(ins_tids)
        if not integral:
            for k, tid in enumerate(ins_tids):
                if isinstance(tid, bool) or not isinstance(tid, (int, str)):
                    i = int(ins[k])
                    found(i, 2, InvalidRecord(f"tid must be an int or a str, got {tid!r}",
                                              index=i0 + i))
                    typed = k
                    break
        seen = self._spec_tids
        if len(set(ins_tids[:typed])) < typed or any(map(seen.__contains__, ins_tids[:typed])):
            earlier: set = set()
            for k, tid in enumerate(ins_tids[:typed]):
                if tid in earlier or tid in seen:
                    i = int(ins[k])
                    found(i, 3, InvalidRecord(f"duplicate tid {tid!r}", index=i0 + i))
                    break
                earlier.add(tid)

        # 4: values of attributes of the relation, of the supported types
        columns: dict = {}               # relation -> {attribute: clean values}
        for name, cols in b.values.items():
            if name not in positions or not isinstance(name, str) or rels.get(name) is None:
                continue                 # no rows (before the first error), or unknown
            rel, pos = rels[name][0], positions[name]
            columns[name] = clean = {}
            for a, col in cols.items():
                if len(col) < len(pos):
                    raise MalformedRecord(f"relation {name!r}: column {a!r} has {len(col)} "
                                          f"values for at least {len(pos)} rows")
                if a not in rel.attributes:     # nulls only (the other relations' rows)
                    k = _first_value(col, len(pos))
                    if k is not None:
                        found(pos[k], 4, InvalidRecord(f"relation {name!r} has no attribute "
                                                       f"{a!r}", index=i0 + pos[k]))
                    continue
                clean[a] = _clean_column(col, len(pos), a, pos, i0, found)

        # 1 (deletions): of a tuple alive at that time, in stream order
        if dele[:m].any():
            inserted: dict = {}     # tid -> its first insert row in the batch
            for k, tid in enumerate(ins_tids[:typed]):
                if tid not in inserted:
                    inserted[tid] = (int(ins[k]), relation[int(ins[k])])
            live, gone = self._spec_live, set()
            for i in np.flatnonzero(dele[:m]).tolist():
                if i > bad[0]:
                    break
                tid, entry = tids[i], None
                tid = tid.item() if hasattr(tid, "item") else tid
                if isinstance(tid, (int, str)) and tid not in gone:   # as ``_validate`` does
                    first = inserted.get(tid)
                    if first is not None and first[0] < i:
                        if rels.get(first[1]) is not None:
                            entry = (first[1], rels[first[1]][1],
                                     None if w is None else ts[first[0]] + w)
                    else:   # not inserted in the batch before this row (a later insert of
                        entry = live.get(tid)   # the tid is a duplicate, found above)
                if entry is None or not _alive_now(entry, rels, ts[i]):
                    found(i, 1, InvalidRecord(f"deletion of unknown or dead tid {tid!r}",
                                              index=i0 + i))
                    break
                gone.add(tid)
        if bad[2] is not None:
            raise bad[2]
        return self._batch_rows(b, dele, ts, positions, columns, ins_tids)

    def _batch_rows(self, b, dele, ts: list, positions: dict, columns: dict,
                    ins_tids: list) -> list:
        """A valid batch in engine form (a ``Row`` per insert, a ``Delete`` per deletion, in
        stream order), its tuples recorded as seen and alive.  Built a relation at a time:
        one values dict per row straight from the columns, keywords read once per
        distinct text."""
        n, i0, w = len(b), self._seen, self.params.window
        rels, live = self._spec_relations, self._spec_live
        keywords, cache = self.keywords, {}
        t = np.asarray(ts, dtype=np.int64)
        tids = b.tid
        out = np.empty(n, dtype=object)
        for name, pos in positions.items():
            rel, gen = rels[name]
            cols = columns.get(name, {})
            count = len(pos)
            blank = [None] * count
            values = list(map(dict, map(zip, repeat(rel.attributes),
                                        zip(*[cols.get(a, blank) for a in rel.attributes]))))
            bits = [0] * count
            for a in (rel.text if rel.text is not None else rel.attributes):
                col = cols.get(a)
                if col is None:
                    continue
                for v in set(col):
                    if isinstance(v, str) and v not in cache:
                        words = set(tokens(v))
                        cache[v] = sum(1 << j for j, kw in enumerate(keywords) if kw in words)
                get = cache.get
                bits = [x | get(v, 0) if isinstance(v, str) else x for x, v in zip(bits, col)]
            at = np.asarray(pos)
            starts = t[at]
            row_tids = tids[at].tolist() if hasattr(tids, "dtype") else [tids[i] for i in pos]
            ends = blank if w is None else (starts + w).tolist()
            rows = list(map(Row, (at + i0).tolist(), row_tids, repeat(name), values,
                            starts.tolist(), ends, bits))
            out[at] = rows
            live.update(zip(row_tids, zip(repeat(name), repeat(gen), ends)))
        seen = self._spec_tids
        for tid in ins_tids:             # in stream order: int tids stay compact runs
            seen.add(tid)
        if dele.any():
            for i in np.flatnonzero(dele).tolist():
                tid = tids[i]
                tid = tid.item() if hasattr(tid, "item") else tid
                live.pop(tid, None)
                out[i] = Delete(tid, ts[i])
        return out.tolist()

    # -- the driver ----------------------------------------------------------
    def _feed(self, events: list) -> list:
        if not events:
            return []
        prepared = self._validate(events)
        self._seen += len(events)
        return self._apply(prepared)

    def _apply(self, prepared: list) -> list:
        """Validated input into the engine: a ``Row`` per insert (the columnar batch makes
        no Insert objects), the other events as they are."""
        out = []
        window = self.params.window is not None
        for item in prepared:
            row = item if type(item) is Row else None
            t = item.t if row is None else row.t_start
            if t != self.last_t:
                if self.last_t is not None and t > self.last_t:
                    out.extend(self._close())
                self.last_t = t
                self._prune(t)      # once per instant: later events of it expire nothing
            if row is not None:
                if window:
                    self._spec_expiry.append((row.t_end, row.tid))
                    self._spec_ends[row.tid] = row.t_end
                self._note("A", self._insert(row, t), "KwsEngine._insert")
            elif isinstance(item, Delete):
                self._note("E", self._delete(item.tid, t), "KwsEngine._delete")
            else:
                self.schema = self._schema_after(item)
                ended, appeared = self._pair(self._schema_change(item, t),
                                             "KwsEngine._schema_change")
                self._note("E", ended, "KwsEngine._schema_change")
                self._note("A", appeared, "KwsEngine._schema_change")
        return out

    def _schema_after(self, ev) -> Schema:
        s = self.schema
        if isinstance(ev, AddRelation):
            return s.with_relation(ev.relation)
        if isinstance(ev, RemoveRelation):
            return s.without_relation(ev.name)
        if isinstance(ev, AddEdge):
            return s.with_edge(ev.edge)
        return s.without_edge(ev.edge_id)

    def _prune(self, t: int) -> None:
        q, live = self._spec_expiry, self._spec_live
        while q and q[0][0] <= t:
            _, tid = q.popleft()
            live.pop(tid, None)
            self._spec_ends.pop(tid, None)

    def _note(self, action: str, results, hook: str = "a KwsEngine hook") -> None:
        ch = self._spec_changes
        try:
            results = iter(results)     # (runs no engine code: a generator starts on next)
        except TypeError:
            raise ContractViolation.of(self, hook, results, _RESULTS) from None
        for r in results:
            if type(r) is not Result:
                raise ContractViolation(hook, f"an iterable holding {describe(r)}", _RESULTS,
                                        engine=engine_label(self))
            slot = ch.get(r)
            if slot is None:
                ch[r] = [action, action]
            else:
                slot[1] = action

    def _pair(self, returned, hook: str) -> tuple:
        """A hook's ``(ended, appeared)``."""
        if type(returned) not in (tuple, list) or len(returned) != 2:
            raise ContractViolation.of(self, hook, returned,
                                       f"a pair (ended, appeared), each {_RESULTS}")
        return returned

    def _close(self) -> list:
        t = self.last_t
        ended, appeared = self._pair(self._close_instant(t), "KwsEngine._close_instant")
        self._note("E", ended, "KwsEngine._close_instant")
        self._note("A", appeared, "KwsEngine._close_instant")
        out = []
        for r, (first, last) in self._spec_changes.items():
            if first == "E" and last == "E":
                out.append(End(t, r.tids, r.edges))
            elif first == "A" and last == "A":
                end = None
                if self.params.window is not None:
                    end = min(self._spec_ends[tid] for tid in r.tids)
                out.append(Appear(t, r.tids, r.edges, end))
        self._spec_changes = {}
        out.sort(key=output_key)
        return out

    # -- engine hooks ----------------------------------------------------------
    def _start(self) -> None:
        pass

    def _insert(self, row: Row, t: int):
        raise NotImplementedError

    def _delete(self, tid, t: int):
        raise NotImplementedError

    def _schema_change(self, event, t: int):
        raise NotImplementedError

    def _close_instant(self, t: int):
        return (), ()


def _alive_now(entry, rels: dict, t: int) -> bool:
    name, gen, t_end = entry
    rel = rels.get(name)
    return rel is not None and rel[1] == gen and (t_end is None or t < t_end)


def _clean_column(col, n: int, attr: str, pos: list, i0: int, found) -> list:
    """The first ``n`` values of a batch column as the spec stores them (``clean_value``:
    NaN is null; bools and other types are errors, reported at their row through
    ``found``)."""
    if hasattr(col, "dtype") and col.dtype.kind in "iuf":
        part = col[:n]
        values = part.tolist()
        if part.dtype.kind == "f" and np.isnan(part).any():
            values = [None if v != v else v for v in values]
        return values
    values = col[:n].tolist() if hasattr(col, "tolist") else list(col[:n])
    for k, v in enumerate(values):
        if v is None or type(v) in (str, int):
            continue
        try:
            values[k] = clean_value(v)
        except ValueError as exc:
            found(pos[k], 4, InvalidRecord(f"attribute {attr!r}: {exc}", index=i0 + pos[k]))
            break
    return values


def _alive(entry, rels: _Layer, t: int) -> bool:
    name, gen, t_end = entry
    rel = rels.get(name)
    return rel is not None and rel[1] == gen and (t_end is None or t < t_end)



# -- events as JSON objects --------------------------------------------------------------
# One plain-JSON form per event kind: the conformance reproducers (JSON lines) and the
# pipeline's event rows (``streamspec.pipeline.jobs._kws_columns``: events through Spark and back)
# share it.  JSON keeps what the spec distinguishes: int and str tids (they sort
# differently, ``tid_key``), int, float and str values and null.
def relation_json(r: Relation) -> dict:
    return {"name": r.name, "attributes": list(r.attributes),
            "text": None if r.text is None else list(r.text)}


def edge_json(e: JoinEdge) -> list:
    return [e.id, e.left, e.left_attr, e.right, e.right_attr]


def event_to_json(ev) -> dict:
    """The JSON object of an event (``event_from_json`` inverts it)."""
    if isinstance(ev, Insert):
        return {"insert": ev.relation, "tid": ev.tid, "values": dict(ev.values), "t": ev.t}
    if isinstance(ev, Delete):
        return {"delete": ev.tid, "t": ev.t}
    if isinstance(ev, AddRelation):
        return {"add_relation": relation_json(ev.relation), "t": ev.t}
    if isinstance(ev, RemoveRelation):
        return {"remove_relation": ev.name, "t": ev.t}
    if isinstance(ev, AddEdge):
        return {"add_edge": edge_json(ev.edge), "t": ev.t}
    if isinstance(ev, RemoveEdge):
        return {"remove_edge": ev.edge_id, "t": ev.t}
    raise TypeError(f"not a kws event: {ev!r}")


def event_from_json(d: dict):
    t = d["t"]
    if "insert" in d:
        return Insert(d["insert"], d["tid"], d["values"], t)
    if "delete" in d:
        return Delete(d["delete"], t)
    if "add_relation" in d:
        return AddRelation(Relation(**d["add_relation"]), t)
    if "remove_relation" in d:
        return RemoveRelation(d["remove_relation"], t)
    if "add_edge" in d:
        return AddEdge(JoinEdge(*d["add_edge"]), t)
    return RemoveEdge(d["remove_edge"], t)
