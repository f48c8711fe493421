"""Inputs of the kws job: the streaming schema, one tuple file per relation, deletions
(``streamspec.spec.kws``).

- Schema (``--schema``): JSON, or YAML (``.yaml``/``.yml``, PyYAML is a dependency)::

      {"relations": [{"name": "movie", "attributes": ["mid", "did", "title"],
                      "text": ["title"]}, ...],          # "text" optional
       "edges": [{"id": "md", "left": "movie.did", "right": "director.did"}, ...]}

- Tuples (``--input REL=FILE``): CSV with a header, JSON lines or Parquet
  (``.parquet`` file or directory).  Column ``t`` (integer time) is required,
  ``tid`` optional (default ``REL:LINE``); every other column must be an
  attribute of the relation.  CSV fields are typed one by one: an integer,
  else a float, else the text; an empty field is null.  Attribute types may be
  declared per relation in the schema (``"types": {"mid": "long", "title":
  "string"}``; ``long``, ``double`` or ``string``): a declared attribute is
  converted to its type in every format (a value that is not of it is an error
  at its record; ``"007"`` declared ``string`` stays text, where CSV typing
  would make it 7), and it is the column type of ``streamspec stream kws``'s
  source rows (``streamspec.pipeline.jobs.kws``).
- Deletions (``--deletions FILE``): the same formats with columns ``tid, t``.
- Schema changes (``--schema-changes FILE``): JSON lines, one timed event a line, the
  spec's JSON form (``streamspec.spec.kws.event_to_json``); an edge may also be
  written as in the schema file::

      {"t": 600, "add_relation": {"name": "review", "attributes": ["mid", "text"],
                                  "text": ["text"]}}
      {"t": 600, "add_edge": {"id": "rm", "left": "review.mid", "right": "movie.mid"}}
      {"t": 900, "add_edge": ["rm2", "review", "mid", "movie", "mid"]}
      {"t": 1200, "remove_edge": "rm"}
      {"t": 1800, "remove_relation": "review"}

  A change at time ``t`` applies before the tuples and deletions of ``t`` (so a new
  relation's tuples may start at ``t``); changes of one time apply in file order.  A
  keyed input applies every change to every key's stream.  ``streamspec stream kws
  --schema-changes FILE`` reads the same file (``schema_changes_in_order``) and applies
  each change to a key's engine before that key's first row at or after its time.
- Keys: an optional ``key`` column (integer or string) in the files holds
  independent database streams, one per key (a tenant, a site): each key has
  its own tids, its own lifespans and its own results.  When one row has a
  key every row must (deletions included); keys are ints when every key is an
  integer, else strings (the rule of every reader's ids).

Events are merged in time order; ties keep the order of the inputs on the
command line (deletions last), then the file order (per key, the same order).  Each event remembers
its ``file:line`` for error messages.

What is read where: this module is the validating reader, on the driver
(``read_events``: every tuple, in memory, the located errors).  ``streamspec run
kws`` uses it for inputs that are not local files (a Parquet directory, a remote
path) and whenever the Spark tasks refuse a chunk; local CSV, JSON lines and
``.parquet`` files are otherwise read by Spark tasks (``pipeline.io.kws_text``),
which read each row with this module's own functions (``csv_row``, ``insert_of``,
``delete_of``, ``_key``), so both read the same values.  The schema file is always
read here, on the driver.
"""
from __future__ import annotations

import json

import attrs
import numpy as np

from streamspec.pipeline import fs
from streamspec.pipeline.io import (INT64, TEXT_ENCODING, InputError, csv_table, id_column, int64_or_none,
                                    is_parquet, json_objects, not_utf8, parquet_files, preview)
from streamspec.spec.errors import InvalidParameter, MalformedRecord
from streamspec.spec.kws import AddEdge, AddRelation, Delete, Insert, RemoveEdge, RemoveRelation
from streamspec.spec.kws_schema import JoinEdge, Relation, Schema

TYPES = ("long", "double", "string")    # declarable attribute types (``read_types``)


def _schema_doc(path: str):
    if not fs.exists(path):       # a local path, or a URI read through pyarrow.fs (s3://...)
        raise InputError(f"{path}: no such file")
    try:
        with fs.open_text(path, TEXT_ENCODING) as f:
            text = f.read()
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise not_utf8(path, err) from None
    if path.endswith((".yaml", ".yml")):
        try:
            import yaml
        except ImportError:
            raise InputError(f"{path}: YAML schemas need PyYAML; use JSON") from None
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as err:
            raise InputError(f"{path}: not YAML: {str(err).splitlines()[0]}") from None
        except RecursionError:
            raise InputError(f"{path}: not YAML: nested too deep") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"{path}: not JSON: {err.msg} (line {err.lineno})") from None
    except RecursionError:
        raise InputError(f"{path}: not JSON: nested too deep (more levels of arrays and "
                         "objects than the reader's recursion limit)") from None


def read_schema(path: str) -> Schema:
    doc = _schema_doc(path)
    try:
        rels = tuple(Relation(r["name"], r["attributes"], r.get("text")) for r in doc["relations"])
        edges = []
        for e in doc.get("edges", []):
            (lr, la), (rr, ra) = (_qualified(e["left"]), _qualified(e["right"]))
            edges.append(JoinEdge(e["id"], lr, la, rr, ra))
        return Schema(rels, tuple(edges))
    except (KeyError, TypeError, AttributeError) as err:
        raise InputError(f"{path}: bad schema ({err!r}); see pipeline/io/kws.py") from None
    except InvalidParameter as err:
        raise InputError(f"{path}: {err}") from None


def read_types(path: str) -> dict[str, dict[str, str]]:
    """The declared attribute types of the schema file: relation -> {attribute: type}
    (``TYPES``); attributes without a declaration are absent."""
    schema = read_schema(path)
    out = {}
    for r in _schema_doc(path)["relations"]:
        declared = r.get("types") or {}
        if not isinstance(declared, dict):
            raise InputError(f"{path}: relation {r['name']}: types must map attributes to "
                             f"{', '.join(TYPES)}")
        rel = schema.relation(r["name"])
        for attr, kind in declared.items():
            if attr not in rel.attributes:
                raise InputError(f"{path}: relation {rel.name}: typed attribute {attr!r} is not "
                                 "an attribute")
            if kind not in TYPES:
                raise InputError(f"{path}: relation {rel.name}: type {kind!r} of {attr!r} is not "
                                 f"one of {', '.join(TYPES)}")
        out[rel.name] = dict(declared)
    return out


def typed_value(value, kind: str | None):
    """``value`` as an attribute of declared type ``kind`` (``TYPES``; None: as read);
    null and NaN are null.  ``ValueError`` when it is not of that type."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if kind is None:
        return value
    if isinstance(value, bool):
        raise ValueError(f"expected a {kind}, got {preview(value)}")
    if kind == "string":
        return value if isinstance(value, str) else str(value)
    if kind == "long":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        elif isinstance(value, str):
            value = int64_or_none(value.strip())
        if isinstance(value, int) and INT64[0] <= value <= INT64[1]:
            return value
        raise ValueError(f"expected a 64-bit integer, got {preview(value)}")
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"expected a number, got {preview(value)}") from None


def _qualified(text: str) -> tuple[str, str]:
    rel, dot, attr = str(text).partition(".")
    if not dot:
        raise InvalidParameter(f"edge end {text!r} must be RELATION.ATTRIBUTE")
    return rel, attr


def csv_value(text: str):
    """A CSV field typed: an integer, else a float, else the text; empty is null."""
    if text == "":
        return None
    if len(text) <= 4000:           # int() refuses more than 4300 digits
        try:
            return int(text)
        except ValueError:
            pass
    elif text.strip().lstrip("+-").isdigit():
        return text                 # a huge integer stays text; float() would make it inf
    try:
        return float(text)
    except ValueError:
        return text


def _rows(path: str, declared=()) -> tuple[list[dict], list[str]]:
    """Rows as dicts and the ``file:line`` of each; CSV fields of ``declared`` attributes
    stay text (their declared type converts them)."""
    if is_parquet(path):
        import pyarrow.parquet as pq
        parquet_files(path)
        try:
            table = fs.read_table(path)
        except (OSError, ValueError) as err:
            raise InputError(f"{path}: cannot read Parquet: {err}") from None
        # Python values (lists stay lists, for the spec to refuse), NaN as missing
        rows = [{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in r.items()}
                for r in table.to_pylist()]
        return rows, [f"{path}:row {n}" for n in range(1, len(rows) + 1)]
    if not fs.exists(path):
        raise InputError(f"{path}: no such file")
    if path.endswith((".json", ".jsonl")):
        pairs = list(json_objects(path))
        wheres, rows = [w for w, _ in pairs], [r for _, r in pairs]
        return rows, wheres
    frame, wheres = csv_table(path)
    return [csv_row(r, declared) for r in frame.to_dict("records")], wheres


def csv_row(fields: dict, declared=()) -> dict:
    """A CSV row's fields (header -> text) typed: ``csv_value``, but the fields of
    ``declared`` attributes stay text (empty is null) for their declared type."""
    return {k: (v or None) if k in declared else csv_value(v) for k, v in fields.items()}


def _time(row: dict, where: str):
    t = row.get("t")
    if isinstance(t, float) and t.is_integer():
        t = int(t)
    if isinstance(t, (np.integer,)):
        t = int(t)
    if isinstance(t, bool) or not isinstance(t, int):
        raise MalformedRecord(f"column t must be an integer time, got {preview(t)}").at(where)
    if not INT64[0] <= t <= INT64[1]:
        raise MalformedRecord(f"time {preview(t)} does not fit in 64 bits").at(where)
    return t


@attrs.frozen
class Tuples:
    """The events of the relation files in stream order, the ``file:line`` of each and,
    for a keyed input, the key of each (ints when every key is an integer, else strs;
    ``streamspec.pipeline.io.id_column``), else None."""

    events: list
    wheres: list
    keys: list | None = None

    def by_key(self) -> dict:
        """key -> (events, wheres) of that key's stream, in stream order (keys sorted)."""
        groups: dict = {}
        for ev, where, key in zip(self.events, self.wheres, self.keys):
            events, wheres = groups.setdefault(key, ([], []))
            events.append(ev)
            wheres.append(where)
        return dict(sorted(groups.items()))


def _key(row: dict, where: str):
    key = row.get("key")
    if isinstance(key, float) and key.is_integer():
        key = int(key)
    if isinstance(key, np.integer):
        key = int(key)
    if isinstance(key, bool) or not isinstance(key, (int, str)):
        raise MalformedRecord(f"a keyed input needs an integer or string key on every row, "
                              f"got {preview(key)}").at(where)
    return str(key)


def insert_of(rel: str, row: dict, where: str, declared: dict) -> tuple[int, str | None, dict]:
    """The time, the tid (None: the default ``REL:LINE``) and the values of a relation
    file's row, declared attributes converted; ``MalformedRecord`` at ``where``.  The
    driver's reader and the Spark tasks' (``pipeline.io.kws_text``) both read rows here."""
    t = _time(row, where)
    tid = row.get("tid")
    values = {k: v for k, v in row.items() if k not in ("t", "tid", "key")}
    for attr, kind in declared.items():
        try:
            values[attr] = typed_value(values.get(attr), kind)
        except ValueError as err:
            raise MalformedRecord(f"attribute {attr!r}: {err}").at(where) from None
    return t, None if tid is None else str(tid), values


def delete_of(row: dict, where: str) -> tuple[int, str]:
    """The time and tid of a deletion row; ``MalformedRecord`` at ``where``."""
    if row.get("tid") is None:
        raise MalformedRecord("a deletion needs a tid").at(where)
    return _time(row, where), str(row["tid"])


SCHEMA_CHANGES = ("add_relation", "remove_relation", "add_edge", "remove_edge")


def schema_change_of(obj: dict, where: str):
    """The schema event of a schema-changes line; ``MalformedRecord`` at ``where``.
    (Whether it fits the schema at its time is the spec's check, at the same place.)"""
    kinds = [k for k in SCHEMA_CHANGES if k in obj]
    other = sorted(set(obj) - set(SCHEMA_CHANGES) - {"t"})
    if len(kinds) != 1 or other:
        raise MalformedRecord(f"a schema change is one of {', '.join(SCHEMA_CHANGES)} with a time t"
                              + (f"; unknown fields {', '.join(map(repr, other))}" if other else "")
                              + (f"; got {len(kinds)} changes" if len(kinds) != 1 else "")).at(where)
    t = _time(obj, where)
    kind, body = kinds[0], obj[kinds[0]]
    try:
        if kind in ("remove_relation", "remove_edge"):
            if not isinstance(body, str):
                raise TypeError(f"{kind} names a {'relation' if kind == 'remove_relation' else 'edge'}")
            return (RemoveRelation if kind == "remove_relation" else RemoveEdge)(body, t)
        if kind == "add_relation":
            if not isinstance(body, dict) or set(body) - {"name", "attributes", "text"}:
                raise TypeError("add_relation takes an object with name, attributes and text")
            return AddRelation(Relation(body["name"], body["attributes"], body.get("text")), t)
        if isinstance(body, dict):
            if set(body) != {"id", "left", "right"}:
                raise TypeError("add_edge takes {id, left: REL.ATTR, right: REL.ATTR}")
            (lr, la), (rr, ra) = _qualified(body["left"]), _qualified(body["right"])
            return AddEdge(JoinEdge(body["id"], lr, la, rr, ra), t)
        if not isinstance(body, list) or len(body) != 5:
            raise TypeError("add_edge takes [id, left relation, attribute, right relation, attribute]")
        return AddEdge(JoinEdge(*body), t)
    except KeyError as err:
        raise MalformedRecord(f"{kind}: missing {err}").at(where) from None
    except (TypeError, ValueError, InvalidParameter) as err:
        raise MalformedRecord(f"{kind}: {err}").at(where) from None


def read_schema_changes(path: str) -> list[tuple]:
    """``(event, file:line)`` of every line of a schema-changes file (JSON lines)."""
    return [(schema_change_of(obj, where), where) for where, obj in json_objects(path)]


def schema_changes_in_order(path: str) -> list[tuple]:
    """``read_schema_changes`` in the order they apply: by time, one time's changes in file
    order.  ``read_events`` merges them so; ``streamspec stream kws`` applies them so to
    each key (``streamspec.pipeline.jobs.kws``)."""
    return sorted(read_schema_changes(path), key=lambda pair: pair[0].t)


def read_events(inputs: list[tuple[str, str]], deletions: str | None,
                types: dict | None = None, schema_changes: str | None = None) -> Tuples:
    """Insert and Delete events in stream order, with their ``file:line`` and keys.

    A ``key`` column (in any file: then in every row of every file, deletions
    included) makes independent streams, one per key, each with its own tids.
    ``types`` (``read_types``) converts the declared attributes.  ``schema_changes``
    (``read_schema_changes``) puts each change before the tuples of its time, in
    every key's stream."""
    tagged = []
    if schema_changes:
        for n, (ev, where) in enumerate(schema_changes_in_order(schema_changes)):
            tagged.append((ev.t, -1, n, ev, where, None))
    for order, (rel, path) in enumerate(inputs):
        declared = (types or {}).get(rel, {})
        rows, wheres = _rows(path, declared)
        for n, (row, where) in enumerate(zip(rows, wheres)):
            t, tid, values = insert_of(rel, row, where, declared)
            if tid is None:
                tid = f"{rel}:{where.rsplit(':', 1)[-1].split()[-1]}"
            tagged.append((t, order, n, Insert(rel, tid, values, t), where, row))
    if deletions:
        rows, wheres = _rows(deletions)
        for n, (row, where) in enumerate(zip(rows, wheres)):
            t, tid = delete_of(row, where)
            tagged.append((t, len(inputs), n, Delete(tid, t), where, row))
    tagged.sort(key=lambda x: x[:3])
    keys = None
    if any(x[5] is not None and x[5].get("key") is not None for x in tagged):
        if any(x[5] is None for x in tagged):  # every key's stream takes the schema changes
            names = sorted({_key(x[5], x[4]) for x in tagged if x[5] is not None})
            tagged = [y for x in tagged
                      for y in ([x] if x[5] is not None else [x[:5] + ({"key": k},) for k in names])]
        # typed as every reader types ids: ints when every key is an integer
        keys = id_column([_key(x[5], x[4]) for x in tagged],
                         lambda i: tagged[i][4]).tolist()
    return Tuples([x[3] for x in tagged], [x[4] for x in tagged], keys)
