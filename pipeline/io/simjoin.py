"""Set streams for the simjoin job (the records of ``streamspec.spec.simjoin``).

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

``read_sets`` reads and validates on the driver with the spec's own checks
(``streamspec.spec.simjoin``), per key, before Spark starts: a bad record is a typed
error naming its line and nothing is written.  Lateness ``drop`` removes
out-of-order records here (counted), so the replayed streams are clean.
Ids (and keys) must be all ints or all strs; tokens likewise.

The columnar path (issue 11): for an unkeyed Parquet input with lateness
``error``, ``plan_scan`` reads only the footers on the driver (row counts, each
row group's least and greatest ``ts``, the column types), and each record-range
task of the job reads its own row groups (``read_groups``, ``group_span``) into
one ``RecordBatch`` (``table_batch``), which the engine's spec boundary
validates in the task.  An unkeyed JSON lines file with lateness ``error``
likewise: ``plan_lines`` reads its first line only, ``pipeline.io.lines.line_cuts`` cuts it into
byte ranges at line starts, and each task parses its own range and reads its
halo back from the range's first byte (``chunk_records``, ``halo_records``),
line by line exactly as ``read_sets`` does.  The tasks report rows they cannot
take or the spec rejects; the job then runs ``read_sets`` for the located
error, so bad input gets the same message on every path (after Spark has
started when the bad row is not the first).
"""
from __future__ import annotations

import math
import re

import attrs
import numpy as np
import pandas as pd

from streamspec.pipeline import fs
from streamspec.pipeline.io import (InputError, check_nul, is_parquet, json_loads, json_objects,
                                    open_binary, parquet_files, preview)
from streamspec.pipeline.io.lines import read_span
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
        table = fs.read_table(path)
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
    """Whether any record names a side (the job's default join kind).  Parquet: the
    ``side`` column alone is read (a column of any other type counts when not all
    null: the reader then names the bad value)."""
    if is_parquet(path):
        import pyarrow.parquet as pq
        files = parquet_files(path)
        try:
            if not any("side" in pq.read_schema(fs.parquet_source(f)).names for f in files):
                return False
            side = fs.read_table(path, columns=["side"]).column("side")
        except (OSError, ValueError):
            rows = _parquet_rows(path)      # its typed error for an unreadable input
            return any(row.get("side") is not None for _, row in rows)
        return side.null_count < len(side)
    return any(isinstance(row, dict) and row.get("side") is not None for _, row in json_objects(path))


# -- the columnar path: Parquet row groups read by the range tasks (issue 11) ---------------
@attrs.frozen
class ScanPlan:
    """What the footers tell of a Parquet input the range tasks can read themselves
    (``plan_scan``): the data files, their non-empty row groups in input order
    (``groups``: (file number, row group)), each group's first row in the whole
    input (``starts``, one more entry: the row count) and its least and greatest
    ``ts`` (``lows``, ``highs``), and the columns' kinds."""

    source: str
    files: tuple
    groups: tuple
    starts: tuple
    lows: tuple
    highs: tuple
    tokens: str                  # "tokens" or "text"
    str_ids: bool
    sides: bool                  # a side column

    @property
    def rows(self) -> int:
        return self.starts[-1]

    @property
    def id_type(self) -> str:
        return "string" if self.str_ids else "long"


def plan_scan(path: str, params: Params) -> ScanPlan | None:
    """A ``ScanPlan`` when the range tasks can read ``path`` themselves, else None (the
    validating reader above then reads it on the driver).

    Eligible: a local Parquet file or directory (files in name order, one
    schema), lateness ``error``, no ``key``; ``id`` a signed integer or string,
    ``ts`` a signed integer or float, either ``tokens`` (list of signed
    integers or strings) or ``text`` (string) but not both, ``side`` a string
    if present; every non-empty row group with ``ts`` statistics (least,
    greatest, no nulls), their spans in order across groups.  What the
    footers cannot tell (nulls elsewhere, times out of order inside a group,
    duplicate ids, bad sides) the tasks find; the job then reads the input
    again with ``read_sets`` for the located error.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if params.lateness != "error" or not is_parquet(path):
        return None
    files = parquet_files(path)
    schema, groups, starts, lows, highs, rows = None, [], [], [], [], 0
    for number, name in enumerate(files):
        meta = pq.ParquetFile(fs.parquet_source(name)).metadata
        this = meta.schema.to_arrow_schema()
        if schema is not None and not this.equals(schema):
            return None
        schema = this
        if "ts" not in this.names:
            return None
        ts_col = this.names.index("ts")
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            if group.num_rows == 0:
                continue
            stats = group.column(ts_col).statistics
            if stats is None or not stats.has_min_max or stats.null_count is None \
                    or stats.null_count > 0:
                return None
            groups.append((number, g))
            starts.append(rows)
            lows.append(stats.min)
            highs.append(stats.max)
            rows += group.num_rows
    if any(float(high) > float(low) for high, low in zip(highs, lows[1:])):
        return None                  # out of order across row groups: the reader locates it
    kinds = _scan_columns(schema, pa)
    if kinds is None:
        return None
    tokens, str_ids, sides = kinds
    return ScanPlan(path, tuple(files), tuple(groups), tuple(starts + [rows]), tuple(lows),
                    tuple(highs), tokens, str_ids, sides)


def _scan_columns(schema, pa) -> tuple | None:
    """``(tokens column, str ids, side column)`` of an eligible schema, else None."""
    names = set(schema.names)
    if "key" in names or not {"id", "ts"} <= names or len({"tokens", "text"} & names) != 1 \
            or names - {"id", "ts", "tokens", "text", "side"}:
        return None
    ident, ts = schema.field("id").type, schema.field("ts").type
    if not (pa.types.is_signed_integer(ident) or pa.types.is_string(ident)):
        return None
    if not (pa.types.is_signed_integer(ts) or pa.types.is_floating(ts)):
        return None
    if "tokens" in names:
        tok = schema.field("tokens").type
        if not (pa.types.is_list(tok) or pa.types.is_large_list(tok)) or not (
                pa.types.is_signed_integer(tok.value_type) or pa.types.is_string(tok.value_type)):
            return None
    elif not pa.types.is_string(schema.field("text").type):
        return None
    if "side" in names and not pa.types.is_string(schema.field("side").type):
        return None
    return ("tokens" if "tokens" in names else "text", pa.types.is_string(ident), "side" in names)


def read_groups(plan: ScanPlan, first: int, last: int):
    """Row groups ``first..last`` (numbers in ``plan.groups``) as one Arrow table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    wanted: dict[int, list[int]] = {}
    for number, g in plan.groups[first:last + 1]:
        wanted.setdefault(number, []).append(g)
    columns = ["id", "ts", plan.tokens] + (["side"] if plan.sides else [])
    tables = [pq.ParquetFile(fs.parquet_source(plan.files[n])).read_row_groups(gs, columns=columns)
              for n, gs in sorted(wanted.items())]
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]


def group_span(plan: ScanPlan, lo: int, hi: int, w: float) -> tuple[int, int]:
    """The row groups a task of records ``[lo, hi)`` reads: from the first that may hold
    a record still valid at the time of record ``lo - 1`` (its greatest ``ts`` plus ``w``
    beyond the least ``ts`` of record ``lo - 1``'s group, which bounds that time from
    below: times never decrease) to the group of record ``hi - 1``."""
    import bisect

    last = bisect.bisect_right(plan.starts, hi - 1) - 1
    if lo == 0:
        return 0, last
    first = bisect.bisect_right(plan.starts, lo - 1) - 1
    floor = float(plan.lows[first])
    while first > 0 and float(plan.highs[first - 1]) + w > floor:
        first -= 1
    return first, last


class Unfit(Exception):
    """Rows the columnar path does not take (nulls, bad sides): the reader locates them."""


def table_batch(table, a: int, b: int, join: str):
    """Rows ``a..b-1`` of a task's table as a ``RecordBatch`` and the ids to map the
    engine's ids back through (None: they are the ids).

    String tokens and the tokens of ``text`` become their position in a
    dictionary of the task's tokens (the engines only compare tokens for
    equality, and a task's engine sees only its own rows); string ids become
    their position in a dictionary of the task's ids, so a duplicate id is
    still a duplicate for the spec.  A null, or a side the join does not
    take, raises ``Unfit``.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from streamspec.spec.simjoin import RecordBatch

    part = table.slice(a, b - a)
    ids, ts = part.column("id").combine_chunks(), part.column("ts").combine_chunks()
    if ids.null_count or ts.null_count:
        raise Unfit("null id or ts")
    back = None
    if pa.types.is_string(ids.type):
        encoded = pc.dictionary_encode(ids)
        back, ids = encoded.dictionary, encoded.indices
    id_col = ids.to_numpy().astype(np.int64, copy=False)
    if "tokens" in part.column_names:
        lists = part.column("tokens").combine_chunks()
        if lists.null_count:
            raise Unfit("null tokens")
        sizes = pc.list_value_length(lists).to_numpy(zero_copy_only=False)
        values = pc.list_flatten(lists)
    else:
        text = part.column("text").combine_chunks()
        if text.null_count:
            raise Unfit("null text")
        token_lists = [tokenize(x) for x in text.to_pylist()]
        sizes = np.fromiter(map(len, token_lists), np.int64, len(token_lists))
        values = pa.array([t for toks in token_lists for t in toks], pa.string())
    if values.null_count:
        raise Unfit("null token")
    if pa.types.is_string(values.type):
        values = pc.dictionary_encode(values).indices
    tok = values.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    ptr = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes, out=ptr[1:])
    side = None
    if "side" in part.column_names:
        col = part.column("side").combine_chunks()
        if join == "rs":
            side = np.full(len(col), -1, np.int8)
            side[pc.equal(col, "R").fill_null(False).to_numpy(zero_copy_only=False)] = 0
            side[pc.equal(col, "S").fill_null(False).to_numpy(zero_copy_only=False)] = 1
            if (side < 0).any():
                raise Unfit("side not R or S")
        elif col.null_count < len(col):
            raise Unfit("a side in the self join")
    elif join == "rs":
        raise Unfit("no side column in the two-stream join")
    return RecordBatch(id_col, ts.to_numpy(zero_copy_only=False), ptr, tok, side), back


def split_batch(batch, n: int):
    """A ``RecordBatch`` cut into its first ``n`` records and the rest."""
    from streamspec.spec.simjoin import RecordBatch

    ptr, cut = batch.tok_ptr, int(batch.tok_ptr[n])
    side = (None, None) if batch.side is None else (batch.side[:n], batch.side[n:])
    return (RecordBatch(batch.id[:n], batch.ts[:n], ptr[:n + 1], batch.tok[:cut], side[0]),
            RecordBatch(batch.id[n:], batch.ts[n:], ptr[n:] - cut, batch.tok[cut:], side[1]))


# -- the columnar path for JSON lines: byte ranges parsed by the range tasks ------------------
@attrs.frozen
class LinesPlan:
    """A JSON lines input the range tasks parse themselves (``plan_lines``): its size and
    the Spark type of its ids, fixed by its first record (a stream mixing id kinds is an
    error the tasks report)."""

    source: str
    size: int
    id_type: str


HALO_BLOCK = 1 << 22         # bytes read back at a time for a task's halo (doubled as needed)


def plan_lines(path: str, params: Params) -> LinesPlan | None:
    """A ``LinesPlan`` for a local JSON lines file with lateness ``error`` whose first
    line is a valid record without a key; else None (``read_sets`` then reads it on the
    driver and names any bad line before Spark starts).  A bad line further on is found
    by the task that parses it, after Spark has started."""
    import os

    if params.lateness != "error" or is_parquet(path) or not fs.isfile(path):
        return None
    size = fs.getsize(path)
    try:
        with open_binary(path) as f:
            head = f.read(1 << 16)
            while head.count(b"\n") == 0 and len(head) < size:
                head += f.read(1 << 16)
        first = json_records(head.split(b"\n")[0] + b"\n" if b"\n" in head else head, path)
        if first:           # the spec's checks too: a bad first record fails before Spark
            _Checker(params)._validate([first[0][0]])
    except (Unfit, ValueError):
        return None
    if not first or first[0][1] is not None or isinstance(first[0][0].id, bool):
        return None
    return LinesPlan(path, size, "string" if isinstance(first[0][0].id, str) else "long")


def mentions_side(path: str) -> bool:
    """Whether the bytes ``"side"`` occur in the file: when they do not, no record names a
    side, unless a key is written with escapes (the range tasks see every record's side
    and report it, so that case is still caught)."""
    import mmap

    if fs.is_remote(path):                  # no mmap of an object: read it in blocks
        with open_binary(path) as f:
            tail = b""
            for block in iter(lambda: f.read(1 << 22), b""):
                if (tail + block).find(b'"side"') >= 0:
                    return True
                tail = block[-5:]
        return False
    with open_binary(path) as f:
        if not f.seek(0, 2):
            return False
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            return m.find(b'"side"') >= 0


KEYED_MIN_BYTES = 1 << 24     # smaller keyed files are read on the driver (``plan_keyed_lines``)


def plan_keyed_lines(path: str, params: Params, min_bytes: int | None = None
                     ) -> LinesPlan | None:
    """A ``LinesPlan`` for a local keyed JSON lines file of at least ``min_bytes``
    (default ``KEYED_MIN_BYTES``: a smaller file costs less on the driver, and its errors
    come before Spark starts) with lateness ``error`` whose first line is a valid keyed
    record; else None (``read_sets`` reads it).  The tasks of ``stage_keyed_span`` parse
    it; each key's engine validates its records (``jobs.simjoin.replay_keyed_lines``)."""
    import os

    if params.lateness != "error" or is_parquet(path) or not fs.isfile(path):
        return None
    size = fs.getsize(path)
    if size < (KEYED_MIN_BYTES if min_bytes is None else min_bytes):
        return None
    try:
        with open_binary(path) as f:
            first = json_records(f.readline(1 << 20), path)
        if first:
            _Checker(params)._validate([first[0][0]])
    except (Unfit, ValueError):
        return None
    if not first or first[0][1] is None or isinstance(first[0][0].id, bool):
        return None
    return LinesPlan(path, size, "string" if isinstance(first[0][0].id, str) else "long")


def _kind(value) -> str | None:
    """"int" (64-bit, not bool) or "str"; None for any other value."""
    if isinstance(value, str):
        return "str"
    if isinstance(value, int) and not isinstance(value, bool) and -2**63 <= value < 2**63:
        return "int"
    return None


def stage_keyed_span(plan: LinesPlan, start: int, stop: int, out: str, part: int) -> tuple:
    """The keyed records whose lines start in bytes ``[start, stop)`` as a Parquet file
    ``pos, key, id, tokens, ts, side`` (``pos`` numbers the records in file order from
    ``part << 40``; ``ts`` a double, as ``read_sets`` keeps it).  Returns ``(ok, records,
    id kind, token kind, key kind, sides)``; not ok (nothing written) for anything
    ``read_sets`` must judge: a line it rejects, a record without a key, a value whose
    kind is not one int or str kind per column, a time that is not a number."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    refused = (False, 0, None, None, None, False)
    try:
        parsed = json_records(read_span(plan.source, start, stop), plan.source)
    except ValueError:
        return refused
    if not parsed:
        return (True, 0, None, None, None, False)
    records = [r for r, _ in parsed]
    keys = [k for _, k in parsed]
    ids = {_kind(r.id) for r in records}
    tokens = {_kind(x) for r in records for x in r.tokens}
    key_kinds = {_kind(k) for k in keys}
    times_ok = all(isinstance(r.ts, (int, float)) and not isinstance(r.ts, bool) for r in records)
    sides_ok = all(r.side is None or isinstance(r.side, str) for r in records)
    if len(ids) != 1 or None in ids or len(tokens) > 1 or None in tokens or len(key_kinds) != 1 \
            or None in key_kinds or not times_ok or not sides_ok:
        return refused
    arrow = {"int": pa.int64(), "str": pa.string()}
    token_kind = next(iter(tokens), None)
    try:
        times = [float(r.ts) for r in records]
    except OverflowError:           # an int time beyond a double: the reader names it
        return refused
    table = pa.table({
        "pos": pa.array((part << 40) + np.arange(len(records), dtype=np.int64)),
        "key": pa.array(keys, arrow[next(iter(key_kinds))]),
        "id": pa.array([r.id for r in records], arrow[next(iter(ids))]),
        "tokens": pa.array([list(r.tokens) for r in records],
                           pa.list_(arrow[token_kind or "int"])),
        "ts": pa.array(times, pa.float64()),
        "side": pa.array([r.side for r in records], pa.string()),
    })
    pq.write_table(table, out)
    return (True, len(records), next(iter(ids)), token_kind, next(iter(key_kinds)),
            any(r.side is not None for r in records))


def json_records(data: bytes, where: str) -> list[tuple[Record, object]]:
    """The ``(Record, key)`` of every non-blank line of ``data`` (whole lines of a JSON lines
    file), read as ``json_objects`` and ``read_sets`` read them: UTF-8, universal newlines,
    one JSON object per line, the same fields (``_row_record``).  Anything ``read_sets``
    would reject raises (``ValueError``: a ``RecordError``, a JSON or UTF-8 error)."""
    import io

    out = []
    for raw in io.StringIO(data.decode("utf-8"), newline=None):
        if raw.strip():
            check_nul(raw, where)
            out.append(_row_record(json_loads(raw), where))
    return out


def chunk_records(plan: LinesPlan, start: int, stop: int) -> list[tuple[Record, object]]:
    """The records whose lines start in bytes ``[start, stop)`` (cut by ``line_cuts``)."""
    with fs.open_input(plan.source) as f:
        f.seek(start)
        return json_records(f.read(stop - start), plan.source)


def halo_records(plan: LinesPlan, start: int, w: float) -> list[Record]:
    """The records before byte ``start`` still valid at the time of the last of them (the
    halo of ``jobs.simjoin.run_range``: back from that record while ``ts + w`` exceeds its
    time, which in a stream in order is exactly the records valid then), in file order;
    at least that last record, so its time is checked against the first one at ``start``.
    A bad line in the block read raises, as in ``json_records``."""
    from streamspec.spec.simjoin import _time

    size = HALO_BLOCK
    while True:
        lo = max(0, start - size)
        with fs.open_input(plan.source) as f:
            f.seek(lo)
            data = f.read(start - lo)
        if lo > 0:                        # from the first whole line of the block on
            n = data.find(b"\n")
            data = data[n + 1:] if n >= 0 else b""
        records = [r for r, _ in json_records(data, plan.source)]
        if records:
            t = _time(records[-1].ts)
            if t is None:
                raise Unfit("a bad time in the halo")
            first = len(records) - 1
            while first > 0:
                ts = _time(records[first - 1].ts)
                if ts is None:
                    raise Unfit("a bad time in the halo")
                if not ts + w > t:
                    break
                first -= 1
            if first > 0 or lo == 0:
                return records[first:]
        elif lo == 0:
            return []
        size *= 2


def records_batch(records: list, join: str):
    """``records`` as one ``RecordBatch`` when every value is of a type the columnar path
    takes exactly as the spec takes the records one by one: int ids and tokens (not bool,
    within 64 bits), int or float times within 2**53, sides R/S exactly in the two-stream
    join and none in the self join; else None (the records then go in as they are, and
    the spec's per-record checks name what is wrong)."""
    from streamspec.spec.simjoin import MAX_EXACT, SIDES, RecordBatch

    n = len(records)
    ids = [r.id for r in records]
    times = [r.ts for r in records]
    lists = [r.tokens for r in records]
    if {type(x) for x in ids} - {int} or {type(t) for t in times} - {int, float} \
            or {type(t) for t in lists} - {list}:
        return None
    flat = [x for toks in lists for x in toks]
    if {type(x) for x in flat} - {int}:
        return None
    sides = [r.side for r in records]
    if join == "rs" and not all(s in SIDES for s in sides):
        return None
    if join != "rs" and any(s is not None for s in sides):
        return None
    try:
        id_col, tok = np.array(ids, np.int64), np.array(flat, np.int64)
        ts = np.array(times, np.float64 if float in {type(t) for t in times} else np.int64)
    except OverflowError:              # beyond 64 bits: the spec names the record
        return None
    if n and not np.all(np.abs(ts) <= MAX_EXACT):    # NaN, inf or inexact: the spec judges
        return None
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum([len(t) for t in lists], out=ptr[1:])
    side = np.array([SIDES[s] for s in sides], np.int8) if join == "rs" else None
    return RecordBatch(id_col, ts, ptr, tok, side)
