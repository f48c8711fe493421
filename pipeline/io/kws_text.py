"""The kws tuple files read by Spark tasks, not on the driver (issue 11).

``streamspec run kws`` plans its local inputs here (``plan_files``, on the driver:
for each file only its head, a CSV header and the first record, checked as
``pipeline.io.kws.read_events`` checks it, so a bad first record fails before
Spark starts; a Parquet file's footer).  The files are then cut into chunks
(``chunks``): text files (CSV, JSON lines) into byte ranges at line starts
(``pipeline.io.lines.line_cuts``), a single ``.parquet`` file into its row groups.
Each Spark task parses one chunk (``chunk_table``) exactly as the driver's reader
would (the same CSV module calls and field typing, ``json.loads`` per line, the
same row functions ``insert_of``, ``delete_of`` and ``_key`` of
``pipeline.io.kws``) into typed Arrow columns, each row carrying its merge order:
time, the input's position on the command line (deletions last), chunk number
and row in the chunk (file order), and its line number in the chunk (the
default tid ``REL:LINE`` is completed once the chunks' line counts are known,
``assemble``).

The fast path is conservative: whatever the tasks cannot read exactly as the
driver does (a lone ``\\r``, a ``"`` in a CSV cut into several chunks, a bad
record, an unusual key) makes the chunk *unfit*; the job then runs the driver's
validating reader, which names the record (``file:line``, ``file:row N``) or, if
it finds nothing wrong, reads the input itself.  Inputs that are not local
files (a Parquet directory, a remote path) are read on the driver from the start.
"""
from __future__ import annotations

import codecs
import csv
import io
import json
import math
import os
import re

import attrs
import numpy as np

from streamspec.pipeline import fs
from streamspec.pipeline.io import csv_records, is_parquet, json_loads, parquet_files
from streamspec.pipeline.io.kws import _key, csv_row, csv_value, delete_of, insert_of
from streamspec.pipeline.io.lines import count_lines, line_cuts, lone_cr, read_span

HEAD_BYTES = 1 << 16
MIN_CHUNK_BYTES = 1 << 20       # a text file is cut into chunks of at least this many bytes
FIXED = ("t", "order", "chunk", "row", "line", "kind", "rel", "tid", "key", "extra")
_CANONICAL_INT = re.compile(r"-?[0-9]{1,18}")
_NOT_INT = re.compile(r"[^\s+\-_0-9]")


class Unfit(Exception):
    """A chunk the task cannot read exactly as the driver does (or a bad record in it)."""


@attrs.frozen
class TupleFile:
    """One input: its position on the command line, relation (None: the deletions), path,
    format (``csv``, ``json``, ``parquet``), size in bytes, and for CSV the header, the
    byte just after the header line and the lines up to it; for Parquet the rows of
    each row group."""

    order: int
    rel: str | None
    path: str
    fmt: str
    size: int
    declared: tuple = ()                 # ((attribute, type), ...) declared in the schema
    attributes: frozenset = frozenset()  # the relation's attributes
    header: tuple | None = None
    body: int = 0
    head_lines: int = 0
    groups: tuple = ()


@attrs.frozen
class Chunk:
    """Chunk ``number`` (file order within a file) of file ``file``: bytes ``[start, stop)``
    of a text file, or row group ``start`` of a Parquet file (``base`` rows before it)."""

    number: int
    file: int
    start: int
    stop: int
    base: int = 0


def _fmt(path: str) -> str:
    if is_parquet(path):
        return "parquet"
    return "json" if path.endswith((".json", ".jsonl")) else "csv"


def plan_files(inputs: list[tuple[str, str]], deletions: str | None,
               types: dict | None, schema) -> tuple | None:
    """The ``TupleFile`` s of the inputs when every one is a local file the tasks can read
    and its first record is good; else None (the driver's reader then reads them all and
    names any bad record before Spark starts)."""
    files = []
    items = [(rel, path) for rel, path in inputs] + ([(None, deletions)] if deletions else [])
    for order, (rel, path) in enumerate(items):
        declared = tuple(sorted(((types or {}).get(rel, {}) if rel is not None else {}).items()))
        if any(a in ("t", "tid", "key") for a, _ in declared):
            return None
        if not fs.isfile(path):
            return None
        if rel is not None and rel not in {r.name for r in schema.relations}:
            return None
        attributes = frozenset(schema.relation(rel).attributes) if rel is not None else frozenset()
        fmt = _fmt(path)
        try:
            if fmt == "parquet":
                f = _plan_parquet(order, rel, path, declared, attributes)
            else:
                f = _plan_text(order, rel, path, fmt, declared, attributes)
        except (Unfit, ValueError, OSError, csv.Error):
            return None
        if f is None:
            return None
        files.append(f)
    return tuple(files)


def _plan_parquet(order, rel, path, declared, attributes) -> TupleFile | None:
    import pyarrow.parquet as pq

    parquet_files(path)
    pf = pq.ParquetFile(fs.parquet_source(path))
    meta = pf.metadata
    f = TupleFile(order, rel, path, "parquet", fs.getsize(path), declared, attributes,
                  groups=tuple(meta.row_group(g).num_rows for g in range(meta.num_row_groups)))
    for batch in pf.iter_batches(batch_size=1):
        if batch.num_rows:
            _process(f, [_parquet_row(batch.to_pylist()[0])], [1])
            break
    return f


def _parquet_row(r: dict) -> dict:
    return {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in r.items()}


def _plan_text(order, rel, path, fmt, declared, attributes) -> TupleFile | None:
    size = fs.getsize(path)
    with fs.open_input(path) as f:
        head = f.read(HEAD_BYTES)
    if len(head) < size:
        cut = head.rfind(b"\n")
        if cut < 0:
            return None
        head = head[:cut + 1]
    if lone_cr(head) or head.startswith(codecs.BOM_UTF8):
        return None             # the driver's reader skips a byte order mark, the tasks do not
    tf = TupleFile(order, rel, path, fmt, size, declared, attributes)
    if fmt == "json":
        rows, numbers = _json_rows(head)
        if rows:
            _process(tf, rows[:1], numbers[:1])
        return tf
    text = head.decode("utf-8")
    lines = io.StringIO(text, newline="").readlines()
    header, at, n = None, 0, 0
    for n, line in enumerate(lines, 1):
        at += len(line.encode("utf-8"))
        if '"' in line:
            return None
        fields = next(csv.reader([line], skipinitialspace=True), [])
        if any(field.strip() for field in fields):
            header = tuple(name.strip() for name in fields)
            break
    if header is None or len(set(header)) < len(header):
        return None
    tf = attrs.evolve(tf, header=header, body=at, head_lines=n)
    rows, numbers = _csv_rows(tf, head[at:])      # a bad line in the head: the driver
    if rows:
        _process(tf, rows[:1], numbers[:1])
    return tf


def chunks(files: tuple, partitions: int, chunk_bytes: int | None = None) -> list[Chunk]:
    """The chunks of every file, numbered in command-line and file order: text files in
    byte ranges of about ``chunk_bytes`` (default: the text bytes over ``2 * partitions``,
    at least ``MIN_CHUNK_BYTES``), cut at line starts; Parquet files by row group."""
    text = sum(f.size - f.body for f in files if f.fmt != "parquet")
    if chunk_bytes is None:
        chunk_bytes = max(MIN_CHUNK_BYTES, text // max(1, 2 * partitions))
    out = []
    for i, f in enumerate(files):
        if f.fmt == "parquet":
            base = 0
            for g, rows in enumerate(f.groups):
                out.append(Chunk(len(out), i, g, g + 1, base))
                base += rows
            continue
        parts = max(1, math.ceil((f.size - f.body) / max(1, chunk_bytes)))
        cuts = [c for c in line_cuts(f.path, f.size, parts)[1:-1] if c > f.body]
        bounds = [f.body] + cuts + [f.size]
        for a, b in zip(bounds, bounds[1:]):
            out.append(Chunk(len(out), i, a, b))
    return out


def line_bases(files: tuple, cs: list, lines: list) -> dict:
    """chunk number -> the lines of its file before it (text files; ``lines``: each chunk's
    line count, ``count_lines``), what a chunk's line numbers add up to: its task numbers
    lines from 1 within its bytes.  Parquet chunks number their rows themselves."""
    bases, seen = {}, {}
    for chunk, n in zip(cs, lines):
        f = files[chunk.file]
        if f.fmt != "parquet":
            bases[chunk.number] = seen.get(chunk.file, f.head_lines)
            seen[chunk.file] = bases[chunk.number] + n
    return bases


def _json_rows(data: bytes) -> tuple[list, list]:
    """Each non-blank line's object and its line number in ``data``, as ``json_objects``
    reads them; anything it would reject is ``Unfit``."""
    rows, numbers = [], []
    try:
        for n, raw in enumerate(io.StringIO(data.decode("utf-8"), newline=None), 1):
            if not raw.strip():
                continue
            row = json_loads(raw)
            if not isinstance(row, dict):
                raise Unfit("not a JSON object")
            rows.append(row)
            numbers.append(n)
    except ValueError as err:       # JSON and UTF-8 errors
        raise Unfit(str(err)) from None
    return rows, numbers


def _csv_rows(f: TupleFile, data: bytes) -> tuple[list, list]:
    """The typed rows of CSV bytes after the header and their line numbers in ``data``, as
    ``csv_table`` and ``_rows`` read them."""
    declared = dict(f.declared)
    fields, numbers = _csv_fields(f, data)
    return [csv_row(dict(zip(f.header, x)), declared) for x in fields], numbers


def _csv_fields(f: TupleFile, data: bytes) -> tuple[list, list]:
    """The fields (text) of each data row of CSV bytes after the header and their line
    numbers in ``data``, as ``csv_table`` reads them."""
    csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))
    header = f.header
    rows, numbers = [], []
    try:
        for number, fields in csv_records(io.StringIO(data.decode("utf-8"), newline=""),
                                          lambda n: f"{f.path}:+{n}"):
            if not any(field.strip() for field in fields):
                continue
            if len(fields) != len(header):
                raise Unfit("fields")
            rows.append(fields)
            numbers.append(number)
    except (ValueError, csv.Error) as err:
        raise Unfit(str(err)) from None
    return rows, numbers


def chunk_rows(f: TupleFile, chunk: Chunk) -> tuple[list, list, int]:
    """A chunk's rows (dicts as the driver's ``_rows`` makes them), the line number of each
    within the chunk (Parquet: its row number in the file) and the chunk's lines."""
    if f.fmt == "parquet":
        import pyarrow.parquet as pq

        table = pq.ParquetFile(fs.parquet_source(f.path)).read_row_group(chunk.start)
        rows = [_parquet_row(r) for r in table.to_pylist()]
        return rows, list(range(chunk.base + 1, chunk.base + 1 + len(rows))), len(rows)
    data = read_span(f.path, chunk.start, chunk.stop)
    if lone_cr(data):
        raise Unfit("a lone carriage return")
    if f.fmt == "json":
        rows, numbers = _json_rows(data)
    else:
        if b'"' in data and (chunk.start != f.body or chunk.stop != f.size):
            raise Unfit("a quote in a CSV cut into chunks")
        rows, numbers = _csv_rows(f, data)
    return rows, numbers, count_lines(data)


def key_kind(key: str) -> str:
    """``int`` when ``id_column`` surely reads the key as this integer, ``str`` when it surely
    reads it as text, else ``unfit``."""
    if _CANONICAL_INT.fullmatch(key):
        return "int"
    if key.isascii() and _NOT_INT.search(key):
        return "str"
    return "unfit"


def _process(f: TupleFile, rows: list, numbers: list) -> list:
    """``(t, tid, values, key)`` of each row, read by ``pipeline.io.kws``'s own row
    functions (a bad row raises ``MalformedRecord``, a ``ValueError``)."""
    declared = dict(f.declared)
    out = []
    for row, n in zip(rows, numbers):
        where = f"{f.path}:{n}"
        if f.rel is None:
            t, tid = delete_of(row, where)
            values = None
        else:
            t, tid, values = insert_of(f.rel, row, where, declared)
            if not f.attributes.issuperset(values):
                # the spec's events refuse even a null of another attribute; a batch's
                # column would take it: the driver's reader names the record
                raise Unfit("an attribute of no relation")
        key = _key(row, where) if row.get("key") is not None else None
        out.append((t, tid, values, key))
    return out


def _column_type(values: list) -> str | None:
    from streamspec.pipeline.jobs._kws_columns import _value_type
    return _value_type(values)


def chunk_table(f: TupleFile, chunk: Chunk):
    """``(table, stats)`` of a chunk: its rows as Arrow columns (``FIXED``, plus ``a:NAME``
    per attribute whose values share a type; other attributes' values in the row's
    ``extra`` JSON, their names in the schema metadata ``mixed``) and what the job checks
    across chunks (``stats``).  ``Unfit`` (or a ``ValueError``) when the chunk cannot be
    read as the driver reads it, or a record in it is bad."""
    import pyarrow as pa

    if f.fmt != "json":
        done = (_parquet_columns if f.fmt == "parquet" else _csv_columns)(f, chunk)
        if done is not None:
            return done
    rows, numbers, lines = chunk_rows(f, chunk)
    parsed = _process(f, rows, numbers)
    n = len(parsed)
    by_attr: dict = {}
    for i, (_, _, values, _) in enumerate(parsed):
        for a, v in (values or {}).items():
            if v is not None:           # a missing attribute is null
                col = by_attr.get(a)
                if col is None:
                    col = by_attr[a] = [None] * n
                col[i] = v
    typed = {a: kind for a, vs in by_attr.items() if (kind := _column_type(vs)) is not None}
    mixed = [a for a in by_attr if a not in typed]
    extra = [None] * n
    if mixed:
        for i in range(n):
            d = {a: by_attr[a][i] for a in mixed if by_attr[a][i] is not None}
            if d:
                extra[i] = json.dumps(d, allow_nan=True)     # TypeError: not JSON (unfit)
    keys = [k for *_, k in parsed]
    arrays = {
        "t": pa.array([p[0] for p in parsed], pa.int64()),
        "order": pa.array([f.order] * n, pa.int32()),
        "chunk": pa.array([chunk.number] * n, pa.int32()),
        "row": pa.array(np.arange(n, dtype=np.int64)),
        "line": pa.array(numbers, pa.int64()),
        "kind": pa.array(["delete" if f.rel is None else "insert"] * n, pa.string()),
        "rel": pa.array([f.rel] * n, pa.string()),
        "tid": pa.array([p[1] for p in parsed], pa.string()),
        "key": pa.array(keys, pa.string()),
        "extra": pa.array(extra, pa.string()),
    }
    arrow = {"long": pa.int64(), "double": pa.float64(), "string": pa.string()}
    for a, kind in typed.items():
        arrays[f"a:{a}"] = pa.array(by_attr[a], arrow[kind])
    table = pa.table(arrays).replace_schema_metadata({"mixed": json.dumps(mixed)})
    keyed = sum(k is not None for k in keys)
    distinct = sorted({k for k in keys if k is not None})
    stats = {"rows": n, "lines": lines, "keyed": keyed, "unkeyed": n - keyed,
             "t_min": min((p[0] for p in parsed), default=None),
             "t_max": max((p[0] for p in parsed), default=None),
             "explicit": any(p[1] is not None for p in parsed) and f.rel is not None,
             "keys": json.dumps(distinct),
             "key_kinds": ",".join(sorted({key_kind(k) for k in distinct}))}
    return table, stats


def _typed_texts(texts: list):
    """``csv_value`` of each text as an Arrow array when the values share a type, else the
    values as a list: canonical integers (``-?[0-9]{1,18}``) cast by Arrow, empty as
    null, every other text through ``csv_value`` itself (once per distinct text)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = pa.array(texts, pa.string())
    ints = pc.match_substring_regex(col, r"^-?[0-9]{1,18}$")
    empty = pc.equal(col, "")
    if pc.all(pc.or_(ints, empty)).as_py():
        return pc.cast(pc.if_else(empty, pa.scalar(None, pa.string()), col), pa.int64())
    memo: dict = {}
    out = []
    for text, whole in zip(texts, ints.to_pylist()):
        if whole:
            out.append(int(text))
        else:
            v = memo.get(text, memo)
            if v is memo:
                v = memo[text] = csv_value(text)
            out.append(v)
    return out


def _csv_columns(f: TupleFile, chunk: Chunk):
    """``chunk_table`` of a CSV chunk read column-wise: the same fields as ``_csv_rows``,
    each column typed at once (``_typed_texts``), for chunks without ``key`` or declared
    attributes whose times are all integers; None otherwise (the row path reads it)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    header = f.header
    if f.declared or "key" in header or "t" not in header:
        return None
    others = [c for c in header if c not in ("t", "tid")]
    if f.rel is not None and not f.attributes.issuperset(others):
        return None
    data = read_span(f.path, chunk.start, chunk.stop)
    if lone_cr(data) or (b'"' in data and (chunk.start != f.body or chunk.stop != f.size)):
        raise Unfit("a lone carriage return or a quote in a CSV cut into chunks")
    rows, numbers = _csv_fields(f, data)
    n = len(rows)
    columns = dict(zip(header, map(list, zip(*rows)))) if n else {c: [] for c in header}
    t = _typed_texts(columns["t"])
    if not isinstance(t, pa.Array) or t.null_count:
        return None                                 # a time the row path must judge
    tid = None
    if "tid" in columns:
        typed = _typed_texts(columns["tid"])
        values = typed.to_pylist() if isinstance(typed, pa.Array) else typed
        tid = pa.array([None if v is None else str(v) for v in values], pa.string())
    if tid is None:
        tid = pa.nulls(n, pa.string())
    if f.rel is None and tid.null_count:
        return None                                 # a deletion without tid: the row path
    from streamspec.pipeline.jobs._kws_columns import _value_type

    arrays, mixed, extra = {}, [], None
    if f.rel is not None:
        lists = {}
        for a in others:
            typed = _typed_texts(columns[a])
            if isinstance(typed, pa.Array):
                if typed.null_count < n:
                    arrays[f"a:{a}"] = typed
                continue
            if all(v is None for v in typed):
                continue
            kind = _value_type(typed)
            if kind is None:
                lists[a] = typed
                mixed.append(a)
            else:
                arrays[f"a:{a}"] = pa.array(typed, {"long": pa.int64(), "double": pa.float64(),
                                                    "string": pa.string()}[kind])
        if mixed:
            cells = [None] * n
            for i in range(n):
                d = {a: lists[a][i] for a in mixed if lists[a][i] is not None}
                if d:
                    cells[i] = json.dumps(d, allow_nan=True)
            extra = pa.array(cells, pa.string())
    span = pc.min_max(t)
    out = pa.table({
        "t": t, "order": pa.array(np.full(n, f.order, dtype=np.int32)),
        "chunk": pa.array(np.full(n, chunk.number, dtype=np.int32)),
        "row": pa.array(np.arange(n, dtype=np.int64)), "line": pa.array(numbers, pa.int64()),
        "kind": pa.array(["delete" if f.rel is None else "insert"] * n, pa.string()),
        "rel": pa.array([f.rel] * n, pa.string()), "tid": tid,
        "key": pa.nulls(n, pa.string()),
        "extra": extra if extra is not None else pa.nulls(n, pa.string()), **arrays,
    }).replace_schema_metadata({"mixed": json.dumps(mixed)})
    stats = {"rows": n, "lines": count_lines(data), "keyed": 0, "unkeyed": n,
             "t_min": span["min"].as_py(), "t_max": span["max"].as_py(),
             "explicit": f.rel is not None and tid.null_count < n, "keys": "[]", "key_kinds": ""}
    return out, stats


def _parquet_columns(f: TupleFile, chunk: Chunk):
    """``chunk_table`` of a Parquet row group whose columns need no per-row reading: ``t``
    int64 without nulls, ``tid`` absent, int64 or string, no ``key``, attribute columns
    int64, float64 (NaN is null, as ``_rows`` reads it) or string, nothing declared.  The
    same table and checks as the row path (``chunk_table``); None for any other row group
    (the row path then reads it)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    if f.declared:
        return None
    table = pq.ParquetFile(fs.parquet_source(f.path)).read_row_group(chunk.start)
    names, n = table.column_names, table.num_rows
    if len(set(names)) < len(names) or "key" in names or "t" not in names \
            or table["t"].type != pa.int64() or table["t"].null_count:
        return None
    tid = table["tid"] if "tid" in names else pa.chunked_array([pa.nulls(n, pa.string())])
    if tid.type == pa.int64():
        tid = pc.cast(tid, pa.string())                 # str() of each int
    elif tid.type != pa.string():
        return None
    arrays = {}
    if f.rel is None:
        if tid.null_count:
            return None                                 # a deletion without tid: the driver's
    else:
        others = [c for c in names if c not in ("t", "tid")]
        if not f.attributes.issuperset(others):
            return None
        for a in others:
            col = table[a]
            if col.type == pa.float64():
                col = pc.if_else(pc.is_nan(col), pa.scalar(None, pa.float64()), col)
            elif col.type not in (pa.int64(), pa.string()):
                return None
            if col.null_count < n:                      # a missing attribute is null
                arrays[f"a:{a}"] = col
    t = table["t"]
    span = pc.min_max(t)
    out = pa.table({
        "t": t, "order": pa.array(np.full(n, f.order, dtype=np.int32)),
        "chunk": pa.array(np.full(n, chunk.number, dtype=np.int32)),
        "row": pa.array(np.arange(n, dtype=np.int64)),
        "line": pa.array(np.arange(chunk.base + 1, chunk.base + 1 + n, dtype=np.int64)),
        "kind": pa.array(["delete" if f.rel is None else "insert"] * n, pa.string()),
        "rel": pa.array([f.rel] * n, pa.string()), "tid": tid,
        "key": pa.nulls(n, pa.string()), "extra": pa.nulls(n, pa.string()), **arrays,
    }).replace_schema_metadata({"mixed": "[]"})
    stats = {"rows": n, "lines": n, "keyed": 0, "unkeyed": n,
             "t_min": span["min"].as_py(), "t_max": span["max"].as_py(),
             "explicit": f.rel is not None and tid.null_count < n, "keys": "[]", "key_kinds": ""}
    return out, stats


def assemble(tables: list, bases: dict):
    """The rows of chunk tables (any order) in merge order as the job's event table
    (``pipeline.jobs.kws.event_table``'s columns, ``seq`` the merge rank) and its typed
    attributes; default tids completed as ``REL:LINE`` (``bases``: chunk -> lines before
    it in its file)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    tables = [t for t in tables if t.num_rows]
    if not tables:
        return None, ()
    fixed = pa.concat_tables([t.select(list(FIXED)).replace_schema_metadata(None)
                              for t in tables])
    # attribute columns: one type in every chunk -> one column; else values in extra
    kinds: dict = {}
    mixed: set = set()
    for t in tables:
        mixed |= set(json.loads((t.schema.metadata or {}).get(b"mixed", b"[]")))
        for name in t.column_names:
            if name.startswith("a:"):
                kinds.setdefault(name[2:], set()).add(str(t.schema.field(name).type))
    mixed |= {a for a, k in kinds.items() if len(k) > 1}
    typed = [a for a in kinds if a not in mixed]
    extra = fixed["extra"]
    if mixed & set(kinds):
        # rebuild extra with the values of attributes typed in some chunks only
        merged = []
        for t in tables:
            olds = t["extra"].to_pylist()
            cols = {a: t[f"a:{a}"].to_pylist() for a in mixed if f"a:{a}" in t.column_names}
            for i, old in enumerate(olds):
                d = json.loads(old) if old is not None else {}
                for a, col in cols.items():
                    if col[i] is not None:
                        d[a] = col[i]
                merged.append(json.dumps(d, allow_nan=True) if d else None)
        extra = pa.array(merged, pa.string())
    columns = {}
    for a in typed:
        kind = next(iter(kinds[a]))
        typ = {"int64": pa.int64(), "double": pa.float64()}.get(kind, pa.string())
        parts = [t[f"a:{a}"] if f"a:{a}" in t.column_names else pa.nulls(t.num_rows, typ)
                 for t in tables]
        columns[a] = pa.chunked_array([c for p in parts for c in
                                       (p.chunks if hasattr(p, "chunks") else [p])])
    order = pc.sort_indices(pa.table({"t": fixed["t"], "order": fixed["order"],
                                      "chunk": fixed["chunk"], "row": fixed["row"]}),
                            [("t", "ascending"), ("order", "ascending"),
                             ("chunk", "ascending"), ("row", "ascending")])
    tid = fixed["tid"].to_pylist()
    if None in tid:
        rel, chunk, line = (fixed[c].to_pylist() for c in ("rel", "chunk", "line"))
        tid = [x if x is not None else f"{r}:{bases.get(c, 0) + ln}"
               for x, r, c, ln in zip(tid, rel, chunk, line)]
    n = fixed.num_rows
    arrays = {"seq": pa.array(np.arange(n, dtype=np.int64)),
              "t": fixed["t"].take(order), "kind": fixed["kind"].take(order),
              "rel": fixed["rel"].take(order),
              "tid_int": pa.nulls(n, pa.int64()),
              "tid_str": pa.array(tid, pa.string()).take(order),
              "event": pa.nulls(n, pa.string()), "extra": extra.take(order),
              "key": fixed["key"].take(order)}
    attributes = []
    for j, a in enumerate(typed):
        arrays[f"v{j}"] = columns[a].take(order)
        attributes.append((a, f"v{j}"))
    return pa.table(arrays), tuple(attributes)
