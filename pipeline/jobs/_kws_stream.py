"""``streamspec stream kws``: the streaming part of the kws adapter
(``streamspec.pipeline.jobs.kws``, which re-exports its public names: the adapter
functions ``streamspec.pipeline.streaming`` calls, ``SchemaChangeFeed``, and
``KeyStream``, whose checkpoints name it there).  Schema changes are events of each key's stream, the meshes
migrate (paper Section 4.4).

Streaming: ``streamspec stream kws --schema SCHEMA --keywords k1,k2 --tmax T
(--window W | --positive-negative) [--schema-changes FILE] [--schema-rows
[--extra-columns A[:TYPE],...]] --source DIR --checkpoint DIR --output DIR
[--trigger-once]`` (``streamspec.pipeline.streaming``).  The source files hold one
event a row, every relation in one stream:

- ``rel`` (string), ``tid`` (string, required: unique in its key's stream), ``t``
  (long, non-decreasing per key), ``op`` (``insert``, the default when null, or
  ``delete``: ends tuple ``tid`` at ``t``; its other columns are ignored), and one
  column per attribute name of the schema (names shared by relations share the
  column), plus the optional ``key`` (each key its own database stream).
- An insert takes its relation's columns as its values; a value in a column of
  another relation is the spec's error.  Column types: the schema's declared
  ``types`` (``streamspec.pipeline.io.kws``), else ``string``; the attributes of a
  relation the schema changes add share the column of their name (its type), else
  are ``string`` columns; ``--extra-columns`` adds more (for relations that schema
  rows add).  Values are used as
  their column gives them: declare ``long`` for numeric join attributes read from
  Parquet; in a ``string`` column ``1`` and ``"1"`` are both the text ``1`` (the
  batch job's CSV reader would make an undeclared ``1`` an integer: declare types
  and both read the same).  A ``long`` column with nulls reaches the engine as
  floats (``1.0 == 1`` joins alike; exact to 2**53).
- An example row (JSON lines): ``{"key": "eu", "rel": "movie", "tid": "m1", "t": 20,
  "mid": 11, "did": 1, "title": "Pulp Fiction"}``; a deletion: ``{"key": "eu",
  "op": "delete", "tid": "m1", "t": 90}``.

Each key's rows of a micro-batch reach its engine as one columnar batch
(``streamspec.spec.kws.TupleBatch``, validated by the spec column by column).
Outputs are the batch job's rows, ``key`` first.  An instant's outputs are written
once a later row of its key arrives (a stream has no end to flush): an expiry needs
no output of its own (``Appear`` carries the window end), a deletion's ``End`` comes
with the key's next later row.

Schema changes in a stream (``--schema-changes FILE``, the batch job's file and parser,
``streamspec.pipeline.io.kws``): read and checked on the driver before the query starts
(``stream_feed``: a bad line is the batch job's error at ``file:line``, exit 2, no
checkpoint, nothing written).  Each key's engine applies every change whose time is at
most the time of the row it is about to process, in order, before that row
(``SchemaChangeFeed``): where the batch job's merge puts it, before the tuples of its
time, so the outputs are the batch job's (``tests/pipeline/test_kws_stream_schema.py``).
A key's group state keeps its engine and how many changes it applied (``KeyStream``):
a restart from the checkpoint applies none twice, a key first seen late gets every
earlier change before its first row, and a change after a key's last row waits for its
next row (then its outputs come with the row after that, as every instant's do).  A
restart may take a file with more changes after the times already streamed; one whose
applied changes differ is refused (their digest), and a change added at a time a key
has passed stops the query at its ``file:line``.

Schema rows (``--schema-rows``): a row with ``op`` = ``schema`` is a schema change of
its key only, at its place among the key's rows: column ``change`` holds the JSON
object of a schema-changes line (the same parser; its time is the row's ``t``, a ``t``
of its own must equal it), e.g. ``{"key": "eu", "op": "schema", "t": 600, "change":
{"add_edge": ["rm", "review", "mid", "movie", "mid"]}}`` (Spark's JSON reader gives the
string column an object's text; Parquet and CSV hold the text).  The file's changes due
at or before its time go first.  A bad change stops the query at the row's ``file:line``;
a relation it adds must find its attributes among the columns.  Its changes live in
the key's engine (its schema), so a restart keeps them.
"""
from __future__ import annotations

import argparse
import json

import attrs
import numpy as np
import pandas as pd

from streamspec.pipeline import flags
from streamspec.pipeline.jobs._kws_columns import OUTPUT_SCHEMA, output_rows
from streamspec.pipeline.streaming import EngineFeed
from streamspec.spec.kws import PROBLEM, KwsEngine, Params, TupleBatch, event_to_json


# -- streamspec stream kws (streamspec.pipeline.streaming) ---------------------------------
STREAM_COLUMNS = ("rel", "tid", "t", "op")      # before the attribute columns
OPS = ("insert", "delete")
SCHEMA_OP, CHANGE = "schema", "change"          # --schema-rows: op and column of a change row


def add_stream_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--schema", required=True,
                        help="schema file, JSON or YAML; its attributes are the source rows' "
                             "columns (required)")
    parser.add_argument("--keywords", required=True, help="comma-separated query keywords (required)")
    parser.add_argument("--tmax", type=flags.int64, required=True, metavar="T",
                        help="max tuples per result (required)")
    model = parser.add_mutually_exclusive_group(required=True)
    flags.add_window(parser, kind=flags.int64, aliases=("-w",), required=False, target=model,
                     note="(the sliding-window model; one of --window and --positive-negative "
                          "is required)")
    model.add_argument("--positive-negative", action="store_true",
                       help="tuples live until a delete row ends them, the positive-negative "
                            "model, instead of a window (one of --window and --positive-negative "
                            "is required)")
    parser.add_argument("--schema-changes", metavar="FILE",
                        help="JSON lines of timed schema changes, the file of streamspec run kws "
                             "(streamspec.pipeline.io.kws), read before the query starts; each "
                             "key applies a change before its first row at or after the change's "
                             "time (default: none, the schema is fixed)")
    parser.add_argument("--schema-rows", action="store_true",
                        help="rows with op schema are schema changes of their key only: column "
                             "change holds the JSON object of a --schema-changes line, its time "
                             "the row's t (default: off, op is insert or delete)")
    parser.add_argument("--extra-columns", type=_extra_columns, default=(), metavar="A[:TYPE],...",
                        help="more attribute columns of the source rows (TYPE long, double or "
                             "string, the default), for relations that schema rows add "
                             "(default: none)")
    from streamspec.pipeline.jobs.kws import PREFERRED_ENGINES

    flags.add_engine(parser, PROBLEM, PREFERRED_ENGINES)


def _extra_columns(text: str) -> tuple:
    """``--extra-columns``: ``((name, type), ...)``."""
    from streamspec.pipeline.io.kws import TYPES

    out = []
    for item in filter(None, (x.strip() for x in text.split(","))):
        name, _, kind = item.partition(":")
        if kind and kind not in TYPES:
            raise argparse.ArgumentTypeError(f"type {kind!r} of column {name!r} is not one of "
                                             f"{', '.join(TYPES)}")
        out.append((name, kind or "string"))
    return tuple(out)


def stream_columns(schema, types: dict, changes=(), rows: bool = False,
                   extra=()) -> list[tuple[str, str]]:
    """The attribute columns of the source rows, ``(name, Spark type)``: every attribute of
    the schema once, in schema order, typed as declared (``read_types``) else ``string``,
    then the attributes of the relations the schema ``changes`` add (an attribute named
    like an earlier column shares it and its type, a new one is ``string``), then the
    ``extra`` columns (``--extra-columns``).  With schema rows (``rows``) no attribute may
    be named ``change``."""
    from streamspec.spec.errors import InvalidParameter
    from streamspec.spec.kws import AddRelation

    columns: dict = {}
    sources = [(r.name, r.attributes, types.get(r.name, {})) for r in schema.relations]
    sources += [(ev.relation.name, ev.relation.attributes, None) for ev in changes
                if isinstance(ev, AddRelation)]
    if extra:
        sources.append(("of --extra-columns", tuple(n for n, _ in extra), dict(extra)))
    reserved = (*STREAM_COLUMNS, "key", *((CHANGE,) if rows else ()))
    for name, attributes, declared in sources:
        for attr in attributes:
            if attr in reserved:
                raise InvalidParameter(f"relation {name}: attribute {attr!r} has the name of "
                                       "a column of the stream's rows; rename it")
            if declared is None:
                columns.setdefault(attr, "string")
                continue
            kind = declared.get(attr, "string")
            if columns.setdefault(attr, kind) != kind:
                raise InvalidParameter(f"attribute {attr!r} is typed {columns[attr]} and {kind} "
                                       "in different relations; one column holds both in a stream")
    return list(columns.items())


def source_schema(args) -> str:
    """One event a row: ``rel, tid, t, op`` and the attribute columns (module docstring of
    ``streamspec.pipeline.streaming``: ``key`` is added there)."""
    from streamspec.pipeline.io.kws import read_schema, read_types

    changes = [ev for ev, _ in _read_changes(args)]
    rows = getattr(args, "schema_rows", False)
    columns = stream_columns(read_schema(args.schema), read_types(args.schema), changes, rows,
                             getattr(args, "extra_columns", ()))
    return ", ".join(["rel string", "tid string", "t long", "op string",
                      *(f"`{name}` {kind}" for name, kind in columns),
                      *([f"{CHANGE} string"] if rows else [])])


def stream_params(args) -> Params:
    from streamspec.pipeline.io.kws import read_schema, read_types

    schema = read_schema(args.schema)
    # clashing names fail before Spark
    stream_columns(schema, read_types(args.schema), rows=getattr(args, "schema_rows", False),
                   extra=getattr(args, "extra_columns", ()))
    return Params(schema, args.keywords, args.tmax, None if args.positive_negative else args.window)


def _read_changes(args) -> list[tuple]:
    from streamspec.pipeline.io.kws import schema_changes_in_order

    path = getattr(args, "schema_changes", None)
    return schema_changes_in_order(path) if path else []


def stream_feed(args, engine_cls, params: Params):
    """The ``SchemaChangeFeed`` of the flags: with ``--schema-changes``, the file read and
    checked on the driver, before Spark starts (a bad line is the batch job's error at
    ``file:line``, exit 2, no checkpoint), applied to every key; with ``--schema-rows``,
    the change rows of each key; with neither, a feed of the rows alone whose states
    still say that no change was applied (a restart with changes then finds them due)."""
    from streamspec.pipeline.io.kws import read_schema, read_types
    from streamspec.pipeline.jobs.kws import validate

    rows = getattr(args, "schema_rows", False)
    pairs = _read_changes(args)
    changes, wheres = [ev for ev, _ in pairs], [where for _, where in pairs]
    validate(params, changes, wheres)       # each change fits the schema its predecessors left
    stream_columns(read_schema(args.schema), read_types(args.schema), changes, rows,
                   getattr(args, "extra_columns", ()))
    return SchemaChangeFeed(engine_cls, params, changes, wheres,
                            getattr(args, "schema_changes", None), rows)


@attrs.define
class KeyStream:
    """A key's state in ``streamspec stream kws``, pickled into Spark's group state: its
    engine and how many of the ``--schema-changes`` (in their order,
    ``schema_changes_in_order``) it has applied, with a digest of those (a restart with
    a file whose first ``applied`` changes differ is refused, not silently misapplied).
    Changes of ``--schema-rows`` live in the engine's schema alone."""

    # the name Spark's checkpoints hold (pickle stores a class by module and name): the
    # adapter's, which defined it before this module was split off and re-exports it, so
    # checkpoints of either version load in the other
    __module__ = "streamspec.pipeline.jobs.kws"

    engine: KwsEngine
    applied: int = 0
    digest: str = ""


def change_digests(changes: list) -> list[str]:
    """``digests[i]``: SHA-256 of the first ``i`` changes' JSON (``event_to_json``)."""
    import hashlib

    h, out = hashlib.sha256(), [hashlib.sha256().hexdigest()]
    for ev in changes:
        h.update(json.dumps(event_to_json(ev), sort_keys=True).encode() + b"\n")
        out.append(h.copy().hexdigest())
    return out


class SchemaChangeFeed(EngineFeed):
    """A key's rows and the schema changes due before them (paper Section 4.4: the
    changes are events of each key's stream, the meshes migrate).  Before a key's rows of
    a micro-batch, every change not yet applied whose time is at most the time of the
    next row goes in, in order, exactly where ``read_events`` puts it in the batch job's
    stream (before the tuples of its time); a key first seen late gets every earlier
    change before its first row.  A change after a key's last row waits for its next row
    (a stream has no end to flush), as the instant's outputs do."""

    def __init__(self, engine_cls, params: Params, changes: list, wheres: list,
                 path: str | None, rows: bool = False):
        from streamspec.pipeline.jobs import kws

        super().__init__(kws, engine_cls, params)     # the adapter module, as before
        self.changes, self.wheres, self.path = tuple(changes), tuple(wheres), path
        self.digests = change_digests(changes)
        self.rows = rows            # --schema-rows: rows with op "schema" are changes

    def start(self) -> KeyStream:
        return KeyStream(self.engine_cls(self.params), 0, self.digests[0])

    def resume(self, state) -> KeyStream:
        # a bare engine: a checkpoint of a version before schema changes were streamed
        return state if isinstance(state, KeyStream) else KeyStream(state, 0, self.digests[0])

    def feed(self, state: KeyStream, pdf: pd.DataFrame) -> list:
        from streamspec.spec.errors import InvalidParameter

        if state.applied > len(self.changes) or state.digest != self.digests[state.applied]:
            raise InvalidParameter(
                f"{self.path or '--schema-changes (none given)'}: its first {state.applied} "
                "schema changes are not those the checkpoint's keys applied; a restarted query "
                "takes the same file, or one with more changes after the times already streamed")
        out, pos, n = [], 0, len(pdf)
        if state.applied < len(self.changes):      # changes pending: the rows' times
            t = pdf["t"]
            known = t.notna().to_numpy(dtype=bool)
            times = t.to_numpy(dtype=np.int64) if known.all() else t.to_numpy(dtype=float)
        while state.applied < len(self.changes) and pos < n:
            change = self.changes[state.applied]
            due = np.flatnonzero(known[pos:] & (times[pos:] >= change.t))
            if not len(due):
                break
            out += self._rows(state.engine, pdf, pos, pos + int(due[0]))
            pos += int(due[0])
            out += self._change(state)
        out += self._rows(state.engine, pdf, pos, n)
        return out

    def _rows(self, engine, pdf: pd.DataFrame, lo: int, hi: int) -> list:
        """The outputs of rows ``[lo, hi)``: runs of tuple rows as the engine's columnar
        batch, a schema row (``--schema-rows``) as its change, in row order; errors
        numbered as rows of ``pdf``."""
        from streamspec.pipeline.streaming import process_rows
        from streamspec.spec.errors import RecordError

        if lo == hi:
            return []
        cuts = []
        if self.rows:
            cuts = [lo + int(i) for i in np.flatnonzero(
                (pdf["op"].iloc[lo:hi] == SCHEMA_OP).to_numpy(dtype=bool))]
        out = []
        for a, b in zip([lo] + [c + 1 for c in cuts], cuts + [hi]):
            if a < b:
                # the common case, a whole micro-batch of tuple rows, without a copy
                part = pdf if (a, b) == (0, len(pdf)) else pdf.iloc[a:b].reset_index(drop=True)
                if CHANGE in part:
                    part = part.drop(columns=[CHANGE])
                try:
                    events = stream_events(part, self.params)
                except RecordError as err:
                    if err.index is None:
                        raise
                    raise type(err)(err.message, index=err.index + a) from None
                out += process_rows(engine, events, engine._seen, a)
            if b < hi:
                out += process_rows(engine, [change_of_row(pdf, b)], engine._seen, b)
        return out

    def _change(self, state: KeyStream) -> list:
        """The next schema change through the key's engine; its errors at ``file:line``."""
        from streamspec.spec.errors import RecordError

        i = state.applied
        try:
            out = list(state.engine.process([self.changes[i]]))
        except RecordError as err:  # only a time order: the driver checked the changes
            raise type(err)(err.message + " (this key's rows had passed the change's time: "
                            "changes may only be added after the times already streamed)",
                            location=self.wheres[i]) from None
        state.applied, state.digest = i + 1, self.digests[i + 1]
        return out


def change_of_row(pdf: pd.DataFrame, i: int):
    """The schema change of schema row ``i`` (``--schema-rows``): the JSON object of column
    ``change``, a line of the schema-changes file whose time is the row's ``t`` (a ``t``
    of its own must equal it); ``MalformedRecord`` at the row (``index``).  Whether it
    fits the key's schema then is the spec's check, at the same row.  A relation it adds
    takes its values from the source's columns: each of its attributes must be one."""
    from streamspec.pipeline.io.kws import schema_change_of
    from streamspec.spec.errors import MalformedRecord, RecordError
    from streamspec.spec.kws import AddRelation

    text, t = pdf[CHANGE].iloc[i] if CHANGE in pdf else None, pdf["t"].iloc[i]
    try:
        if not isinstance(text, str):
            raise MalformedRecord("a schema row needs its change in column change")
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as err:
            raise MalformedRecord(f"column change is not JSON: {err.msg}") from None
        if not isinstance(obj, dict):
            raise MalformedRecord("column change must hold a JSON object")
        if pd.isna(t):
            raise MalformedRecord("column t must be an integer time, got null")
        t = int(t)
        if obj.setdefault("t", t) != t:
            raise MalformedRecord(f"the change's t {obj['t']!r} is not the row's t {t}")
        change = schema_change_of(obj, "")
        if isinstance(change, AddRelation):
            missing = [a for a in change.relation.attributes if a not in pdf.columns]
            if missing:
                raise MalformedRecord(
                    f"add_relation {change.relation.name}: attribute {missing[0]!r} is not a "
                    "column of the stream (columns: the attributes of --schema, of the "
                    "relations --schema-changes adds, and --extra-columns)")
        return change
    except RecordError as err:
        raise type(err)(err.message, index=i) from None


def stream_events(pdf: pd.DataFrame, params: Params) -> TupleBatch:
    """A micro-batch's rows of one key, in arrival order, as the engine's columnar input
    (``streamspec.spec.kws.TupleBatch``: validated by the spec column by column, no
    Insert objects).  Rows the spec cannot even read as events (no time, no tid, an
    unknown ``op``, an insert without ``rel``) are refused here, with the row's position
    (``index``)."""
    from streamspec.spec.errors import MalformedRecord

    n = len(pdf)

    def column(name):
        return pdf[name] if name in pdf else pd.Series([None] * n, dtype=object)

    op, rel, tid, t = (column(c) for c in ("op", "rel", "tid", "t"))
    dele = (op == "delete").to_numpy(dtype=bool)
    checks = [(t.isna(), "column t must be an integer time, got null"),
              (tid.isna(), "every row needs a tid"),
              (~(op.isna() | op.isin(OPS)), "column op must be insert or delete"),
              (rel.isna() & ~dele, "an insert needs a relation (column rel)")]
    firsts = [(int(np.flatnonzero(bad.to_numpy(dtype=bool))[0]), message)
              for bad, message in checks if bad.any()]
    if firsts:
        i, message = min(firsts)
        if message.startswith("column op"):
            message += f", got {op.iloc[i]!r}"
        raise MalformedRecord(message, index=i)
    times = t.to_numpy()
    if times.dtype.kind == "f" and np.all(times == np.round(times)):
        times = times.astype(np.int64)  # a float column holds the times after a null somewhere
    tids = [v if isinstance(v, str) else _tid_text(v) for v in tid.tolist()]
    relations = rel.tolist()
    names = [c for c in pdf.columns if c not in STREAM_COLUMNS]
    values = {}
    inserts = ~dele
    for name in {r for r, d in zip(relations, dele) if not d}:
        rows = (rel == name).to_numpy(dtype=bool) & inserts
        # every column: the relation's attributes, and the others (nulls, else the spec's error)
        values[name] = {c: pdf[c].to_numpy()[rows] for c in names}
    return TupleBatch.of(times, tids, relations, values, dele)


def _tid_text(v) -> str:
    """A tid read as a number (pandas makes ints floats next to a null) as its text."""
    v = v.item() if isinstance(v, np.generic) else v
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def stream_rows(outputs, first: int) -> pd.DataFrame:
    """The output rows of the batch job (``output_rows``); kws rows carry no event number.
    ``end`` as plain ints and None (not pandas' NA): the rows are plain Python values, as
    every problem's stream rows are (``tests/pipeline/streamcheck.py`` compares them so)."""
    rows = output_rows(outputs)
    rows["end"] = pd.Series([None if pd.isna(e) else int(e) for e in rows["end"]], dtype=object)
    return rows


def stream_schema(args) -> str:
    return OUTPUT_SCHEMA
