"""Keyword search over relational data streams (S-KWS): the contract.

Normative semantics: ``notes/kws.md``; paper: Markowetz, Yang, Papadias,
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

Decisions where the note is silent:

- tids are ints or strs (not bools); tids sort ints first (numerically),
  then strs.  ``values`` is a mapping (or pairs) attribute -> value; missing
  attributes are null; unknown ones are an ``InvalidRecord``.
- ``RemoveRelation`` also removes the edges touching it and ends its tuples
  (they are dead: deleting them afterwards is an error); re-adding a relation
  of that name starts empty.
- Validation is all-or-nothing per ``process`` call (a list or tuple), or per
  ``BATCH`` records of a lazy iterable.  ``flush`` ends the stream.
"""
from __future__ import annotations

from collections import deque
from typing import ClassVar, Iterator

import attrs

from streamspec.spec._kws_tids import SeenTids
from streamspec.spec.engine import validation_units
from streamspec.spec.errors import (InvalidParameter, InvalidRecord, MalformedRecord,
                         OutOfOrder, StreamspecError)
from streamspec.spec.kws_events import (EVENTS, SCHEMA_EVENTS, AddEdge, AddRelation, Appear,  # noqa: F401
                             Delete, End, Insert, RemoveEdge, RemoveRelation, Result, Row,
                             edge_key, output_key, tid_key)
from streamspec.spec.kws_schema import (JoinEdge, Relation, Schema, check_edge, clean_value,
                             keyword_bits, normalise_keyword)

PROBLEM = "kws"
BATCH = 4096


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
        for chunk in validation_units(events, (), BATCH):
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
                prepared.append((ev, row))
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
            prepared.append((ev, None))
        # valid: commit the bookkeeping
        for layer in (rels, edges, live):
            layer.commit()
        for tid in fresh:
            seen.add(tid)
        self._spec_gen = gen
        return prepared

    # -- the driver ----------------------------------------------------------
    def _feed(self, events: list) -> list:
        if not events:
            return []
        prepared = self._validate(events)
        self._seen += len(events)
        out = []
        for ev, row in prepared:
            t = ev.t
            if self.last_t is not None and t > self.last_t:
                out.extend(self._close())
            self.last_t = t
            self._prune(t)
            if row is not None:
                if self.params.window is not None:
                    self._spec_expiry.append((row.t_end, row.tid))
                    self._spec_ends[row.tid] = row.t_end
                self._note("A", self._insert(row, t))
            elif isinstance(ev, Delete):
                self._note("E", self._delete(ev.tid, t))
            else:
                self.schema = self._schema_after(ev)
                ended, appeared = self._schema_change(ev, t)
                self._note("E", ended)
                self._note("A", appeared)
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

    def _note(self, action: str, results) -> None:
        ch = self._spec_changes
        for r in results:
            slot = ch.get(r)
            if slot is None:
                ch[r] = [action, action]
            else:
                slot[1] = action

    def _close(self) -> list:
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


def _alive(entry, rels: _Layer, t: int) -> bool:
    name, gen, t_end = entry
    rel = rels.get(name)
    return rel is not None and rel[1] == gen and (t_end is None or t < t_end)



# -- events as JSON objects --------------------------------------------------------------
# One plain-JSON form per event kind: the conformance reproducers (JSON lines) and the
# pipeline's event rows (``streamspec.pipeline.jobs.kws``: events through Spark and back)
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
