"""Set streams for the simjoin job (notes/simjoin.md, "Records and streams").

Inputs, by file name:

- ``*.parquet`` or a directory: a Parquet dataset with columns ``id, ts`` and
  ``tokens`` (list of int or str) or ``text``, optionally ``side`` and
  ``key``; errors are located at ``file:row N`` (rows in file order).
- anything else: JSON lines, one object per line: ``{"id", "ts", "tokens":
  [...]}`` or ``"text"`` instead of ``tokens``; ``"side"`` ("R"/"S") for the
  two-stream join; ``"key"`` for independent streams (keyed replay).  Blank
  lines are skipped.  Errors name ``file:line``.

Tokenising rule for ``text``: lower-case, then every maximal run of Unicode
word characters (``re.findall(r"\\w+", text.lower())``) is a token; the set
of those tokens is the record (so ``"Ham, ham & eggs!"`` -> ``{ham, eggs}``).

Everything is read and validated on the driver with the spec's own checks
(``streamspec.spec.simjoin``), per key, before Spark starts: a bad record is a typed
error naming its line and nothing is written.  Lateness ``drop`` removes
out-of-order records here (counted), so the replayed streams are clean.
Ids (and keys) must be all ints or all strs; tokens likewise.
"""
from __future__ import annotations

import math
import re

import attrs
import pandas as pd

from streamspec.pipeline.io import InputError, is_parquet, json_objects, parquet_files, preview
from streamspec.spec.errors import InvalidRecord, MalformedRecord, RecordError
from streamspec.spec.simjoin import Params, Record, SimJoinEngine

WORD = re.compile(r"\w+")


def tokenize(text: str) -> list[str]:
    """The documented text rule: lower-cased runs of word characters."""
    return WORD.findall(text.lower())


@attrs.frozen
class SetStream:
    """A validated set stream: a pandas frame ``pos, id, tokens, ts, side[, key]``
    (``pos`` = position in its key's stream) and what the driver knows of it."""

    frame: pd.DataFrame
    source: str
    keyed: bool
    records: int
    dropped: int


class _Checker(SimJoinEngine):
    """The spec boundary's validation, used on the driver (no engine state)."""

    name = "checker"
    description = "validation only"


def _row_record(row: dict, where: str) -> tuple[Record, object]:
    if not isinstance(row, dict):
        raise MalformedRecord("expected a JSON object").at(where)
    for col in ("id", "ts"):
        if col not in row or row[col] is None:
            raise MalformedRecord(f"missing field {col!r}").at(where)
    if row.get("tokens") is not None:
        tokens = row["tokens"]
        if not isinstance(tokens, (list, tuple)):
            raise MalformedRecord(f"tokens must be a list, got {tokens!r}").at(where)
    elif row.get("text") is not None:
        if not isinstance(row["text"], str):
            raise MalformedRecord(f"text must be a string, got {row['text']!r}").at(where)
        tokens = tokenize(row["text"])
    else:
        raise MalformedRecord("needs 'tokens' or 'text'").at(where)
    key = row.get("key")
    if key is not None and (isinstance(key, bool) or not isinstance(key, (int, str))
                            or isinstance(key, int) and not -2**63 <= key < 2**63):
        raise MalformedRecord(f"key must be a 64-bit integer or a string, got {preview(key)}").at(where)
    return Record(row["id"], list(tokens), row["ts"], row.get("side")), key


def _parquet_rows(path: str):
    import pyarrow.parquet as pq
    parquet_files(path)
    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as err:
        raise InputError(f"{path}: cannot read Parquet: {err}") from None
    missing = {"id", "ts"} - set(table.column_names)
    if missing or not ({"tokens", "text"} & set(table.column_names)):
        raise InputError(f"{path}: Parquet needs columns id, ts and tokens or text "
                         f"(has {table.column_names})")
    for n, row in enumerate(table.to_pylist(), 1):
        if isinstance(row.get("ts"), float) and math.isnan(row["ts"]):
            row["ts"] = float("nan")
        yield f"{path}:row {n}", row


def _one_kind(values, what: str, wheres) -> None:
    first = None
    for n, v in enumerate(values):
        if v is None:
            continue
        kind = str if isinstance(v, str) else int
        if first is None:
            first = kind
        elif kind is not first:
            raise InvalidRecord(f"{what} mix ints and strings").at(wheres[n])


def read_sets(path: str, params: Params) -> SetStream:
    """Parse and validate a set stream on the driver (see the module docstring)."""
    rows = _parquet_rows(path) if is_parquet(path) else json_objects(path)
    wheres, records, keys = [], [], []
    for where, row in rows:
        record, key = _row_record(row, where)
        wheres.append(where), records.append(record), keys.append(key)
    keyed = any(k is not None for k in keys)
    if keyed and any(k is None for k in keys):
        bad = keys.index(None)
        raise MalformedRecord("some records have a key and this one has none").at(wheres[bad])
    _one_kind([r.id for r in records], "record ids", wheres)
    _one_kind(keys, "keys", wheres)
    _one_kind([next(iter(r.tokens), None) for r in records], "tokens", wheres)
    groups: dict = {}
    for n, k in enumerate(keys):
        groups.setdefault(k, []).append(n)
    kept, dropped = [], 0
    for k, members in groups.items():
        checker = _Checker(params)
        try:
            keep, _ = checker._validate([records[n] for n in members])
        except RecordError as err:
            raise err.at(wheres[members[err.index]]) from None
        ok = [n for n, flag in zip(members, keep) if flag]
        dropped += len(members) - len(ok)
        kept.extend((pos, n) for pos, n in enumerate(ok))
    kept.sort(key=lambda x: x[1])
    frame = pd.DataFrame({
        "pos": pd.Series([p for p, _ in kept], dtype="int64"),
        "id": [records[n].id for _, n in kept],
        "tokens": [list(records[n].tokens) for _, n in kept],
        "ts": pd.Series([float(records[n].ts) for _, n in kept], dtype="float64"),
        "side": pd.Series([records[n].side for _, n in kept], dtype=object),
    })
    if keyed:
        frame["key"] = [keys[n] for _, n in kept]
    return SetStream(frame, path, keyed, len(kept), dropped)


def sides_present(path: str) -> bool:
    """Whether any record names a side (the job's default join kind)."""
    rows = _parquet_rows(path) if is_parquet(path) else json_objects(path)
    return any(isinstance(row, dict) and row.get("side") is not None for _, row in rows)
