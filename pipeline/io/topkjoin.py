"""Inputs of the topkjoin job: the item stream and the remote timeline (``streamspec.spec.topkjoin``).

Items (``--input``; ``--stream`` is its alias), by file name:

- ``*.parquet`` or a directory: columns ``id, x, ts`` (optionally ``key``);
  errors at ``file:row N``;
- ``*.json``/``*.jsonl``: JSON lines ``{"id", "x", "ts"[, "key"]}``; errors at
  ``file:line``;
- anything else: CSV with a header naming ``id, x, ts`` (optionally ``key``);
  errors at ``file:line``.

A ``key`` column holds independent streams (many queries or key groups), each
replayed by its own engine.  Ids are ints when every id parses as an int, else
strings (``streamspec.pipeline.io.id_column``; integers beyond 64 bits are
errors); ``ts`` must be 64-bit integers; ``x`` finite numbers.  ``read_items``
validates each key's stream on the driver with the spec's own checks before
Spark starts, and its first item must not be before the origin when one is
given.  A local Parquet input whose column types the spec takes as they are
is not read here: ``plan_parquet_items`` plans it from its footers and the
executors read its row groups (``read_groups``), the engines' spec check
validating each key's items there (``streamspec.pipeline.jobs.topkjoin``);
its errors name ``file:row N`` within the file.  A local CSV or JSON lines
file of 1 MB or more is not read here either, unless the Spark tasks decline
it: its header and first lines are checked on the driver, its byte ranges parsed by the
tasks exactly as ``read_items`` parses them
(``streamspec.pipeline.io.topkjoin_text``), and ``read_items`` reads it only
when a range is one the tasks cannot take, or to raise its own ``file:line``
error when the spec rejects an item in a task.

Remote timeline (``--remote``): ``*.db``/``*.sqlite``/``*.sqlite3`` is a
SQLite file with a table ``timeline(key, time, value)``; Parquet or CSV
(header ``key, time, value``) is loaded in memory.  Keys follow the same
int-or-string rule as ids.

``streamspec stream topkjoin`` keeps each key's engine pickled in Spark's
group state after every micro-batch (``streamspec.pipeline.streaming``), and
the engine holds its remote dataset (``Params.remote``, the ``FetchCounter``).
An in-memory timeline pickled there would be copied into the state of every
key at every micro-batch (the bundled 400-user sample alone is 100 KB, three
quarters of an AT-TSM engine's state), so the stream reads a Parquet/CSV
timeline as a ``TimelineFile``: it pickles as its path and the SHA-256 of its
content, and each Python worker loads the file once (the SQLite dataset
already pickles as its path).  A timeline file changed since the query started
is an error when a worker loads it, never a silent change of the remote values
under engines that already read the old ones.
"""
from __future__ import annotations

import hashlib
import os
import threading

import attrs
import numpy as np
import pandas as pd

from streamspec.pipeline import fs
from streamspec.pipeline.io import (INT64, InputError, check_window_room, csv_table, id_column, is_parquet,
                                    json_objects, parquet_files, preview)
from streamspec.spec.errors import InvalidParameter, MalformedRecord, OutOfOrder, RecordError
from streamspec.spec.topkjoin import ItemBatch, id_type, validate
from streamspec.spec.topkjoin_remote import SqliteDataset, TimelineDataset

SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")


@attrs.frozen
class ItemStream:
    """Validated items: a frame ``key, seq, id, x, t`` (``seq`` = input order) and its source."""

    frame: pd.DataFrame
    source: str
    keyed: bool


def _read_table(path: str, needed: tuple[str, ...]) -> tuple[pd.DataFrame, list[str]]:
    """The rows as strings-or-values and the ``file:line`` of each row."""
    if not is_parquet(path) and not fs.exists(path):
        raise InputError(f"{path}: no such file")
    if is_parquet(path):
        import pyarrow.parquet as pq
        parquet_files(path)
        try:
            frame = fs.read_table(path).to_pandas()
        except (OSError, ValueError) as err:
            raise InputError(f"{path}: cannot read Parquet: {err}") from None
        wheres = [f"{path}:row {n}" for n in range(1, len(frame) + 1)]
    elif path.endswith((".json", ".jsonl")):
        pairs = list(json_objects(path))
        wheres, rows = [w for w, _ in pairs], [r for _, r in pairs]
        # object columns keep each value as JSON gave it: pandas' inference would turn an id
        # column of 1 and 1.5 into floats (the error landing on the wrong row) and fail with
        # an untyped OverflowError on an integer beyond a double
        frame = pd.DataFrame(rows, columns=sorted({c for r in rows for c in r}) or list(needed),
                             dtype=object)
    else:
        frame, wheres = csv_table(path)
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise InputError(f"{path}: needs columns {', '.join(needed)} (missing {', '.join(missing)})")
    return frame, wheres


def _number(v, integer: bool):
    if isinstance(v, (bool, np.bool_)) or v is None:
        raise ValueError
    if integer:
        if not isinstance(v, (int, np.integer)):
            v = str(v).strip()
            if len(v) > 20:             # never parse a huge digit run
                raise OverflowError
            v = int(v)                  # "1.5" and "" are errors, not truncated
        if not INT64[0] <= v <= INT64[1]:
            raise OverflowError
        return int(v)
    return float(v)


def _numbers(values, wheres, what: str, integer: bool) -> np.ndarray:
    out = np.empty(len(values), dtype=np.int64 if integer else np.float64)
    for n, v in enumerate(values):
        try:
            out[n] = _number(v, integer)
        except (TypeError, ValueError, OverflowError):
            if v is None or integer and isinstance(v, float) and np.isnan(v):  # absent in JSON
                raise MalformedRecord(f"{what} is missing (null or no such field)"
                                      ).at(wheres[n]) from None
            raise MalformedRecord(f"{what} must be {'a 64-bit integer' if integer else 'a number'}, "
                                  f"got {preview(v)}").at(wheres[n]) from None
    return out


def _ids(values, wheres, what: str) -> np.ndarray:
    """Ids (or keys) by the int-or-string rule; a value of another type is an error."""
    for n, v in enumerate(values):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer, str)):
            raise MalformedRecord(f"{what} must be an integer or a string, got {preview(v)}"
                                  ).at(wheres[n])
    if all(isinstance(v, (int, np.integer)) for v in values):   # Parquet/JSON ints: no parsing
        big = [n for n, v in enumerate(values) if not INT64[0] <= v <= INT64[1]]
        if not big:
            return np.asarray(values, dtype=np.int64) if values else np.empty(0, np.int64)
    return id_column([str(v) for v in values], lambda i: wheres[i])


def read_items(path: str, origin: int | None = None, window: int | None = None) -> ItemStream:
    """Parse and validate the item stream on the driver (module docstring); with ``window``
    (omega), an item whose ``ts + window`` does not fit in 64 bits is an error at it
    (``pipeline.io.check_window_room``)."""
    frame, wheres = _read_table(path, ("id", "x", "ts"))
    keyed = "key" in frame.columns
    ids = _ids(frame["id"].tolist(), wheres, "id")
    x = _numbers(frame["x"].tolist(), wheres, "x", integer=False)
    ts = _numbers(frame["ts"].tolist(), wheres, "ts", integer=True)
    keys = _ids(frame["key"].tolist(), wheres, "key") if keyed else np.zeros(len(frame), dtype=np.int64)
    out = pd.DataFrame({"key": keys, "seq": np.arange(len(frame), dtype=np.int64),
                        "id": ids, "x": x, "t": ts})
    kind = id_type(ids[0]) if len(ids) else int
    if window is not None:
        check_window_room(ts, window, wheres.__getitem__, "item time")
    for _, group in out.groupby("key", sort=False):
        rows = group.index.to_numpy()
        try:
            validate(ItemBatch(ids[rows], x[rows], ts[rows]), kind, None)
        except RecordError as err:
            raise err.at(wheres[rows[err.index]]) from None
        if origin is not None and ts[rows[0]] < origin:
            raise OutOfOrder(f"item time {int(ts[rows[0]])} is before the origin t0={origin}"
                             ).at(wheres[rows[0]])
    return ItemStream(out, path, keyed)


def _sqlite_remote(path: str) -> SqliteDataset:
    """A SQLite timeline, checked here: a file that is not SQLite or a missing table is an
    ``InputError``; a time that is not an integer (``'soon'``, ``1.5``, null: the CSV
    timeline's rule) or a value that is not a finite number is a ``MalformedRecord`` named
    by its rowid."""
    import sqlite3
    try:
        dataset = SqliteDataset(path)
        conn = dataset._connection()
        bad_time = conn.execute(
            f"SELECT rowid, time FROM {dataset.table} WHERE typeof(time) != 'integer' "
            f"ORDER BY rowid LIMIT 1").fetchone()
        bad = conn.execute(
            f"SELECT rowid, value FROM {dataset.table} WHERE typeof(value) NOT IN ('integer', 'real') "
            f"OR value IN (9e999, -9e999) ORDER BY rowid LIMIT 1").fetchone()
    except sqlite3.Error as err:
        raise InputError(f"{path}: cannot read the SQLite timeline: {err}") from None
    except InvalidParameter as err:
        raise InputError(str(err)) from None
    if bad_time is not None and (bad is None or bad_time[0] < bad[0]):
        raise MalformedRecord(f"time must be a 64-bit integer, got {preview(bad_time[1])}"
                              ).at(f"{path}:table {dataset.table} rowid {bad_time[0]}")
    if bad is not None:
        raise MalformedRecord(f"value must be a finite number, got {preview(bad[1])}"
                              ).at(f"{path}:table {dataset.table} rowid {bad[0]}")
    return dataset


def read_remote(path: str):
    """The remote dataset: SQLite by suffix, else a Parquet/CSV timeline loaded in memory.

    A Parquet/CSV/JSON timeline may be a URI (``s3://``, ``gs://``, ``hdfs://``: read
    through ``streamspec.pipeline.fs``); a SQLite file may not (``PathError``, exit 2):
    the engines query it by path inside the Spark tasks, and SQLite opens local files
    only, so a copy on the driver would not reach a cluster's executors."""
    if path.endswith(SQLITE_SUFFIXES):
        if fs.is_remote(path):
            from streamspec.spec.errors import PathError
            raise PathError(f"--remote {path}: a SQLite remote dataset must be a local path "
                            "(every worker's, on a cluster): SQLite opens local files only and "
                            "the Spark tasks query it by path; copy it to a file system every "
                            "worker mounts, or give the timeline as Parquet or CSV "
                            "(key,time,value), which is read from any URI --input takes")
        if not os.path.exists(path):
            raise InputError(f"{path}: no such file")
        return _sqlite_remote(path)
    frame, wheres = _read_table(path, ("key", "time", "value"))
    keys = _ids(frame["key"].tolist(), wheres, "key")
    times = _numbers(frame["time"].tolist(), wheres, "time", integer=True)
    values = _numbers(frame["value"].tolist(), wheres, "value", integer=False)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise MalformedRecord(f"value must be finite, got {values[bad[0]]}").at(wheres[bad[0]])
    return TimelineDataset.from_rows(zip(keys.tolist(), times.tolist(), values.tolist()))


# -- the remote timeline by reference (streaming state; module docstring) ------------------
_LOADED: dict[tuple[str, str], TimelineDataset] = {}     # (path, digest) -> the loaded timeline
_LOADING = threading.Lock()


def _timeline_files(path: str) -> list[str]:
    return parquet_files(path) if is_parquet(path) else [path]


def content_digest(path: str) -> str:
    """SHA-256 over the names and bytes of the timeline's files (a directory: every data file)."""
    digest = hashlib.sha256()
    for name in _timeline_files(path):
        if fs.is_remote(path):          # a URI: the name below it (os.path would mangle //)
            rel = name[len(path.rstrip("/")):].lstrip("/") or "."
        else:
            rel = os.path.relpath(name, path)
        digest.update(rel.encode() + b"\0")
        try:
            with fs.open_input(name) as f:      # a local path or a URI (s3://...)
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
        except OSError as err:
            raise InputError(f"{name}: cannot read the remote timeline: {err.strerror or err}"
                             ) from None
    return digest.hexdigest()


class TimelineFile:
    """A Parquet/CSV remote timeline that pickles as ``(path, content digest)``.

    ``value``/``value_range``/``rows``/``keys`` read the timeline loaded from
    ``path`` (``read_remote``), once per process; see the module docstring for why.
    """

    def __init__(self, path: str, loaded: TimelineDataset | None = None):
        self.path = path if fs.is_remote(path) else os.path.abspath(path)
        self.digest = content_digest(self.path)
        self._data = loaded
        if loaded is not None:
            _LOADED.setdefault((self.path, self.digest), loaded)

    def _timeline(self) -> TimelineDataset:
        if self._data is None:
            with _LOADING:
                data = _LOADED.get((self.path, self.digest))
                if data is None:
                    now = content_digest(self.path)
                    if now != self.digest:
                        raise InputError(f"{self.path}: the remote timeline changed since the "
                                         f"stream started (content digest {now[:12]}, expected "
                                         f"{self.digest[:12]}); restore it or start a new query "
                                         f"with a new checkpoint")
                    data = _LOADED[(self.path, self.digest)] = read_remote(self.path)
            self._data = data
        return self._data

    def value(self, key, tau: int) -> float:
        return self._timeline().value(key, tau)

    def values(self, keys, tau: int):
        """Many keys in one call (``spec.topkjoin_remote.values``), as the timeline reads them."""
        return self._timeline().values(keys, tau)

    def value_range(self) -> tuple[float, float]:
        return self._timeline().value_range()

    def keys(self) -> list:
        return self._timeline().keys()

    def rows(self):
        return self._timeline().rows()

    @property
    def default(self) -> float:
        return self._timeline().default

    def __getstate__(self):
        return {"path": self.path, "digest": self.digest, "_data": None}

    def __eq__(self, other):
        return isinstance(other, TimelineFile) and (self.path, self.digest) == (other.path, other.digest)

    def __hash__(self):
        return hash((self.path, self.digest))

    def __repr__(self):
        return f"TimelineFile({self.path!r}, sha256 {self.digest[:12]})"


def read_remote_by_reference(path: str):
    """The remote dataset as the stream keeps it: SQLite as is (it pickles as its path), a
    Parquet/CSV timeline read and checked now, on the driver, then held as a ``TimelineFile``."""
    remote = read_remote(path)
    return remote if isinstance(remote, SqliteDataset) else TimelineFile(path, remote)


# -- Parquet items read by the executors (the columnar path of the batch job) ------------------
ITEM_TYPES = {"id": ("int", "string"), "x": ("int", "float"), "ts": ("int",),
              "key": ("int", "string")}
FILE_SHIFT = 40                     # seq = file number << 40 | row in the file (0-based)
ROW_MASK = (1 << FILE_SHIFT) - 1


def _family(arrow_type) -> str | None:
    """The Arrow type's family as the columnar path takes it; None: the driver's reader."""
    import pyarrow as pa
    if pa.types.is_integer(arrow_type) and arrow_type != pa.uint64():
        return "int"
    if pa.types.is_floating(arrow_type):
        return "float"
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return "string"
    return None


@attrs.frozen
class ParquetItems:
    """A Parquet items input planned from its footers, for the executors to read themselves.

    ``groups`` lists every row group as ``(file number, row group, first row in the file,
    rows)``, files in name order (as ``read_items`` takes them); ``seq`` numbers a row
    ``file number << 40 | row in the file``: input order, and where the row is."""

    source: str
    files: tuple
    groups: tuple
    keyed: bool
    kinds: dict = attrs.field(eq=False)     # column -> "int" | "float" | "string"
    count: int = 0

    def where(self, seq: int) -> str:
        """``file:row N`` (N from 1, within the file) of the row numbered ``seq``."""
        return f"{self.files[seq >> FILE_SHIFT]}:row {(seq & ROW_MASK) + 1}"

    def columns(self) -> list[str]:
        return ["id", "x", "ts"] + (["key"] if self.keyed else [])


HIGH_TIME = 2**62       # items this late are read on the driver: ``check_window_room``


def plan_parquet_items(path: str) -> ParquetItems | None:
    """The columnar plan of a local Parquet items input, from its footers only; None when the
    driver's reader must take it (not Parquet, a remote path, a column missing or of a type
    it parses or rejects with its own located error, files whose columns differ)."""
    import pyarrow.parquet as pq

    if not is_parquet(path) or "://" in path:
        return None
    files = parquet_files(path)          # typed errors for a missing path or a non-Parquet file
    kinds, groups, count = None, [], 0
    for number, name in enumerate(files):
        try:
            meta = pq.ParquetFile(fs.parquet_source(name)).metadata
        except (OSError, ValueError):
            return None
        schema = meta.schema.to_arrow_schema()
        mine = {c: _family(schema.field(c).type) for c in ITEM_TYPES if c in schema.names}
        if any(c not in mine for c in ("id", "x", "ts")) or (kinds is not None and mine != kinds):
            return None
        if any(kind not in ITEM_TYPES[c] for c, kind in mine.items()):
            return None
        kinds, first = mine, 0
        ts_column = schema.names.index("ts")
        for g in range(meta.num_row_groups):
            rows = meta.row_group(g).num_rows
            stats = meta.row_group(g).column(ts_column).statistics if rows else None
            if stats is not None and stats.has_min_max and kinds["ts"] == "int" \
                    and int(stats.max) > HIGH_TIME:
                return None         # the driver's reader checks the window's room, located
            if rows:
                groups.append((number, g, first, rows))
            first += rows
        if first > ROW_MASK:
            return None
        count += first
    return ParquetItems(path, tuple(files), tuple(groups), "key" in kinds, kinds, count)


def read_groups(items: ParquetItems, numbers, as_long: frozenset = frozenset()):
    """Row groups ``numbers`` (indexes into ``items.groups``) as one Arrow table with columns
    ``[key,] seq, id, x, t``: ``x`` as float64, ``t`` as int64, string columns named in
    ``as_long`` (every value spells a 64-bit integer, ``string_columns_as_ints``) as int64;
    nulls kept (the per-key step names them)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    opened: dict = {}
    parts = []
    for g in numbers:
        number, group, first, rows = items.groups[g]
        if number not in opened:
            opened[number] = pq.ParquetFile(fs.parquet_source(items.files[number]))
        table = opened[number].read_row_group(group, columns=items.columns())
        seq = np.arange(first, first + rows, dtype=np.int64) | np.int64(number << FILE_SHIFT)
        cols = {"seq": pa.array(seq)}
        for name in (["key"] if items.keyed else []) + ["id"]:
            col = table.column(name).combine_chunks()
            cols[name] = _as_long(col) if name in as_long else col
        cols["x"] = table.column("x").cast(pa.float64())
        cols["t"] = table.column("ts").cast(pa.int64())
        order = (["key"] if items.keyed else []) + ["seq", "id", "x", "t"]
        parts.append(pa.table({c: cols[c] for c in order}))
    if not parts:
        return None
    return pa.concat_tables(parts)


def _as_long(col):
    """A string column whose every value spells a 64-bit integer, as int64 (nulls kept), by
    the rule of ``pipeline.io.id_column`` (``007`` and ``7`` are one id)."""
    import pyarrow as pa
    valid = col.is_valid().to_numpy(zero_copy_only=False)
    tokens = [t for t in col.to_pylist() if t is not None]
    values = np.zeros(len(col), np.int64)
    values[valid] = id_column(tokens)
    return pa.array(values, mask=~valid)


def string_verdicts(items: ParquetItems, numbers) -> list[tuple[str, str]]:
    """``(column, verdict)`` for each string column among ``id``/``key`` of row groups
    ``numbers``: ``int`` (every value spells a 64-bit integer, ``id_column``'s rule),
    ``string``, or ``overflow`` (integers beyond 64 bits: the driver's reader names them)."""
    import pyarrow.parquet as pq

    names = [c for c in ("id", "key") if items.kinds.get(c) == "string"]
    out = []
    for g in numbers:
        number, group, _, _ = items.groups[g]
        table = pq.ParquetFile(fs.parquet_source(items.files[number])).read_row_group(
            group, columns=names)
        for name in names:
            tokens = [t for t in table.column(name).to_pylist() if t is not None]
            try:
                verdict = "int" if id_column(tokens).dtype.kind == "i" else "string"
            except MalformedRecord:
                verdict = "overflow"
            out.append((name, verdict))
    return out
