"""Where a stream file Spark's reader refused is bad (issue 30).

Spark's file source reads ``streamspec stream``'s input with a schema in ``FAILFAST``
mode: a record it cannot read (malformed JSON, a string, float or 2^64 where a long
belongs, an array where an object belongs, a CSV line with the wrong field count,
invalid UTF-8) stops the query with ``FAILED_READ_FILE``, naming the file but not the
line nor the reason.  ``locate`` then reads that file on the driver, with the
project's own readers (``streamspec.pipeline.io``: the JSON, CSV and text rules
``streamspec run`` applies), checks each record against the stream's schema, and
returns the first bad record as a ``MalformedRecord`` at ``file:line`` (``file:
column C`` for a Parquet file whose column has the wrong type).  It only runs once
the query has failed: the files of a healthy stream are read once, by Spark.
"""
from __future__ import annotations

import os
import re

from streamspec.pipeline.flags import local_of
from streamspec.pipeline.io import INT64, check_nul, csv_records, int64_or_none, json_object, \
    location, preview
from streamspec.spec.errors import MalformedRecord

_INT_RANGES = {"long": INT64, "bigint": INT64, "int": (-2**31, 2**31 - 1),
               "integer": (-2**31, 2**31 - 1), "short": (-2**15, 2**15 - 1),
               "smallint": (-2**15, 2**15 - 1), "byte": (-128, 127), "tinyint": (-128, 127)}
_FLOATS = ("double", "float", "real")


def schema_fields(schema: str) -> list[tuple[str, str]]:
    """``(name, type)`` of a DDL schema string (``"u long, v long, tokens array<string>"``)."""
    fields, depth, start, quoted = [], 0, 0, False
    for i, ch in enumerate(schema + ","):
        if ch == "`":
            quoted = not quoted
        elif quoted:
            continue
        elif ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == "," and depth == 0:
            part = schema[start:i].strip()
            start = i + 1
            if part.startswith("`"):
                name, _, kind = part[1:].partition("`")
            else:
                name, _, kind = part.partition(" ")
            if part:
                fields.append((name, kind.strip().lower()))
    return fields


def _problem(value, kind: str) -> str | None:
    """Why a JSON value is not of ``kind`` as Spark reads it, None when it is (or when the
    type is one this check does not know: Spark's message stays then)."""
    if value is None:
        return None
    if kind in _INT_RANGES:
        lo, hi = _INT_RANGES[kind]
        if isinstance(value, bool) or not isinstance(value, int):
            return f"expected an integer ({kind}), got {preview(value)}"
        if not lo <= value <= hi:
            return f"integer {preview(value)} does not fit in a {kind} ({lo}..{hi})"
        return None
    if kind in _FLOATS:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"expected a number ({kind}), got {preview(value)}"
        return None
    if kind == "boolean":
        return None if isinstance(value, bool) else f"expected true or false, got {preview(value)}"
    if kind.startswith("array<") and kind.endswith(">"):
        if not isinstance(value, list):
            return f"expected an array ({kind}), got {preview(value)}"
        for item in value:
            why = _problem(item, kind[6:-1].strip())
            if why is not None:
                return f"array item: {why}"
    return None         # string (Spark reads any value as text), or a type not checked here


def _text_lines(path: str, shown: str):
    """``(line number, text)`` of a text file, each line decoded as UTF-8 on its own (an
    invalid byte is an error at its line; a byte order mark on line 1 is skipped); on any
    file system ``streamspec.pipeline.fs`` reads."""
    from streamspec.pipeline.fs import open_input

    with open_input(path) as f:
        for number, raw in enumerate(f, 1):
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as err:
                raise MalformedRecord(f"not UTF-8 text (byte {raw[err.start]:#04x} at column "
                                      f"{err.start + 1}: {err.reason})"
                                      ).at(location(shown, number)) from None
            yield number, text


def check_json(path: str, schema: str, shown: str) -> None:
    fields = schema_fields(schema)
    for number, text in _text_lines(path, shown):
        if not text.strip():
            continue
        where = location(shown, number)
        row = json_object(text, where)
        for name, kind in fields:
            why = _problem(row.get(name), kind)
            if why is not None:
                raise MalformedRecord(f"column {name}: {why}").at(where)


def check_csv(path: str, schema: str, shown: str) -> None:
    kinds = dict(schema_fields(schema))
    lines = (text for _, text in _text_lines(path, shown))
    header = None
    for number, fields in csv_records(lines, lambda n: location(shown, n)):
        if not any(f.strip() for f in fields):
            continue
        where = location(shown, number)
        if header is None:
            header = [name.strip() for name in fields]
            if [h.lower() for h in header] != [name.lower() for name in kinds]:
                raise MalformedRecord(
                    f"the CSV header is {','.join(header)}: a stream's CSV files need the "
                    f"header {','.join(kinds)} (every column, in this order: Spark's CSV "
                    "reader maps columns by position; empty fields are nulls)").at(where)
            continue
        if len(fields) != len(header):
            raise MalformedRecord(f"expected {len(header)} fields ({','.join(header)}), got "
                                  f"{len(fields)}").at(where)
        for name, field in zip(header, fields):
            kind, token = kinds.get(name), field.strip()
            if kind is None or token == "":
                continue
            if kind in _INT_RANGES and int64_or_none(token) is None:
                raise MalformedRecord(f"column {name}: expected an integer ({kind}), got "
                                      f"{preview(token)}").at(where)
            if kind in _INT_RANGES:
                why = _problem(int(token), kind)
                if why is not None:
                    raise MalformedRecord(f"column {name}: {why}").at(where)
            if kind in _FLOATS:
                try:
                    float(token)
                except ValueError:
                    raise MalformedRecord(f"column {name}: expected a number ({kind}), got "
                                          f"{preview(token)}").at(where) from None


def check_parquet(path: str, schema: str, shown: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from streamspec.pipeline.fs import parquet_source

    try:
        arrow = pq.read_schema(parquet_source(path))
    except Exception as err:     # pyarrow's ArrowInvalid and OSError
        raise MalformedRecord(f"not a Parquet file ({err})").at(shown) from None
    for name, kind in schema_fields(schema):
        if name not in arrow.names:
            continue
        have = arrow.field(name).type
        ok = (pa.types.is_integer(have) if kind in _INT_RANGES else
              pa.types.is_floating(have) or pa.types.is_integer(have) if kind in _FLOATS else
              pa.types.is_string(have) or pa.types.is_large_string(have) if kind == "string" else
              pa.types.is_list(have) or pa.types.is_large_list(have) if kind.startswith("array<")
              else True)
        if not ok:
            raise MalformedRecord(f"column {name} holds {have}, expected {kind}").at(
                f"{shown}: column {name}")


def record_line(path: str, fmt: str, n: int, start: int = 0) -> int | None:
    """The line where data record ``n`` (from 0, in the order Spark's reader counts them)
    of a JSON-lines or CSV stream file starts, or None when the file has no such record:
    Spark skips blank lines, a CSV file's first record is its header, and a quoted CSV
    field may hold newlines (its record then spans lines: counting records is not
    counting lines).  ``start``: the first byte of the file split Spark read (a large
    JSON-lines file is read in splits, each numbering its records from 0), whose records
    are counted from the first line starting after byte ``start`` (``split_lines``)."""
    if fmt == "json" and start:
        seen = -1
        for number, raw in split_lines(path, start):
            if raw.decode("utf-8", "replace").strip():
                seen += 1
                if seen == n:
                    return number
        return None
    if start:
        return None             # a CSV stream file is never split (multiLine)
    if fmt == "json":
        seen = -1
        for number, text in _text_lines(path, path):
            if text.strip():
                seen += 1
                if seen == n:
                    return number
        return None
    lines = (text for _, text in _text_lines(path, path))
    seen = -2                                       # the header, then the records from 0
    for number, fields in csv_records(lines, lambda m: location(path, m)):
        if fields:                                  # an empty line is no record
            seen += 1
            if seen == n:
                return number
    return None


_CHUNK = 1 << 20


def split_lines(path: str, start: int):
    """``(line number, raw bytes)`` of the lines of the file split from byte ``start`` > 0
    on, as Hadoop's line reader (Spark's for JSON lines) takes them: it drops the line
    holding byte ``start`` (the previous split reads it, even one starting right at
    ``start``), so the split's first line is the one after it.  Its number is found by
    counting the newlines before ``start``, read in chunks (only on the error path)."""
    from streamspec.pipeline.fs import open_input

    with open_input(path) as f:
        before, left = 0, start
        while left > 0:
            chunk = f.read(min(_CHUNK, left))
            if not chunk:
                return
            before += chunk.count(b"\n")
            left -= len(chunk)
        f.readline()                            # the rest of line before + 1: not this split's
        yield from enumerate(f, before + 2)


_LONG_DIGITS = re.compile(rb"\d{16,}")       # 2**53 has 16 digits: a shorter run is exact


def check_exact_json_numbers(path: str, column: str, shown: str | None = None) -> None:
    """A ``MalformedRecord`` at the first line of a JSON-lines file whose ``column`` is an
    integer beyond 2**53 in magnitude.  Spark reads such a column of type double: ±(2**53 + 1)
    rounds to ±2**53, an exact double, so the spec (which rejects only inexact times) would
    take it silently where ``streamspec run``, reading the integer itself, rejects it.  Only
    lines holding a run of 16 digits or more are parsed, so a file of ordinary times costs
    one regular-expression scan."""
    from streamspec.pipeline.fs import open_input

    shown = shown or os.path.basename(path)
    with open_input(path) as f:
        for number, raw in enumerate(f, 1):
            if not _LONG_DIGITS.search(raw):
                continue
            try:
                row = json_object(raw.decode("utf-8-sig" if number == 1 else "utf-8"), "")
            except (MalformedRecord, UnicodeDecodeError):
                continue            # Spark refuses it: located when the query fails
            value = row.get(column)
            if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2 ** 53:
                raise MalformedRecord(f"column {column}: timestamp must be a finite int or "
                                      f"float, got {value!r} (an integer beyond 2**53 is not "
                                      "exact as a double)").at(location(shown, number))


class ExactJsonNumbers:
    """``check_exact_json_numbers`` of ``column`` as a picklable ``check(path[, shown])``,
    run on the driver over each arriving file (``streamspec.pipeline.arrivals``), and in
    the stream's tasks over the files Spark read directly (a ``--source`` on another file
    system, a glob, a checkpoint made before the arrival log): ``suspect_files`` names the
    files whose rows Spark read as a double of magnitude 2**53 or more, where an integer
    beyond 2**53 lands; only those are read again."""

    def __init__(self, column: str):
        self.column = column

    def __call__(self, path: str, shown: str | None = None) -> None:
        check_exact_json_numbers(path, self.column, shown)

    def suspect_files(self, pdf) -> list[str]:
        """The ``_file`` names of a micro-batch's rows (``pdf``) worth a scan, in order."""
        import pandas as pd

        if self.column not in pdf.columns or "_file" not in pdf.columns:
            return []
        values = pd.to_numeric(pdf[self.column], errors="coerce").abs()
        return list(dict.fromkeys(pdf.loc[values >= 2 ** 53, "_file"]))


class CsvFiles:
    """``check_file`` of CSV files under ``schema`` (the project's CSV rule: quoting as
    ``streamspec run`` reads it, an unterminated quote at the line it opened) as a
    picklable ``check(path[, shown])``: run on the driver over each arriving file
    (``streamspec.pipeline.arrivals``), and, ``for_tasks``, in the stream's tasks over
    every file of a micro-batch that Spark read directly (a glob or another file
    system's ``--source``, a checkpoint made before the arrival log), where Spark's own
    CSV reader would take an unterminated quote without a word.  In the tasks each file
    is read once per worker process (a micro-batch's keys share its files)."""

    def __init__(self, schema: str, in_tasks: bool = False):
        self.schema = schema
        self.in_tasks = in_tasks

    def for_tasks(self, in_tasks: bool) -> "CsvFiles":
        return CsvFiles(self.schema, in_tasks)

    def __call__(self, path: str, shown: str | None = None) -> None:
        seen = (path, self.schema, _identity(path)) if self.in_tasks else None
        if seen in _CHECKED:
            return
        check_file(path, "csv", self.schema, shown)
        if seen is not None:
            _CHECKED.add(seen)

    def suspect_files(self, pdf) -> list[str]:
        """Every ``_file`` of a micro-batch's rows when the tasks check, in order."""
        if not self.in_tasks or "_file" not in pdf.columns:
            return []
        return list(dict.fromkeys(pdf["_file"]))


_CHECKED: set = set()     # the task-side CsvFiles checks passed in this process


def _identity(path: str):
    """Size and modification time of a local ``path`` (a file rewritten in place is read
    again), None elsewhere."""
    try:
        stat = os.stat(path)
    except (OSError, ValueError):
        return None
    return stat.st_size, stat.st_mtime_ns


def source_file(source: str, name: str) -> str | None:
    """The path of stream file ``name`` under ``--source`` (a directory or a glob of local
    directories, or a directory URI ``streamspec.pipeline.fs`` reads: ``hdfs://``...),
    None when it is not found (or under a glob of another file system)."""
    import glob

    local = local_of(source)
    if local is None:
        from streamspec.pipeline import fs
        from streamspec.spec.errors import PathError

        if any(c in source for c in "*?[{"):
            return None
        path = source.rstrip("/") + "/" + name
        try:
            return path if fs.isfile(path) else None
        except (OSError, PathError):
            return None
    dirs = glob.glob(local) if any(c in local for c in "*?[{") else [local]
    for d in dirs:
        path = os.path.join(d, name)
        if os.path.isfile(path):
            return path
    return None


CHECKS = {"json": check_json, "csv": check_csv, "parquet": check_parquet}


def check_file(path: str, fmt: str, schema: str, shown: str | None = None) -> None:
    """A ``MalformedRecord`` at the first record of ``path`` Spark's reader would refuse
    under ``schema`` (module docstring); None when this check finds none."""
    CHECKS[fmt](path, schema, shown or os.path.basename(path))


_FAILED_FILE = re.compile(r"(?:reading|read) file (\S+?)\.?(?:\s|$)")


def locate(message: str, fmt: str, schema: str) -> MalformedRecord | None:
    """The located error behind a query's ``FAILED_READ_FILE`` ``message``, or None when
    the message names no readable file or the file shows nothing wrong."""
    if "FAILED_READ_FILE" not in message:
        return None
    found = _FAILED_FILE.search(message)
    if found is None:
        return None
    from streamspec.pipeline import fs
    from streamspec.spec.errors import PathError

    path = local_of(found.group(1)) or found.group(1)     # a URI of another file system
    try:
        if not fs.isfile(path):
            return None
    except (OSError, PathError):
        return None
    try:
        check_file(path, fmt, schema)
    except MalformedRecord as err:
        return err
    except OSError:
        return None
    return None
