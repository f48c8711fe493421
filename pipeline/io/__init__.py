"""Reading and writing: the only module family that touches files.

This package holds what every problem shares:

- ``write_parquet_atomic(df, path, overwrite)``: the job's output is written
  to a temporary sibling directory and put into place only once complete
  (docs/pipeline.md, "Replacing an output": nothing half-written, and on a local
  Linux file system the output path holds the old or the new output at every moment,
  even under kill -9).  Any error leaves the output path as it was: absent, or the
  previous output when overwriting.  ``recover_output(path)``, called by every run
  first, finishes or removes what a killed run left beside the output, saying so.
- ``text_records(path)``: the lines of a text file that carry data, with their
  1-based line numbers (``#`` comments and blank lines skipped), split on
  commas and/or whitespace (no quoting: a ``"`` is an error at its line); ``location(path, line)`` is the ``file:line``
  every ``RecordError`` from a reader carries.
- ``csv_table(path)``: a CSV file with a header as a frame of strings and the
  ``file:line`` of each row; a row with more or fewer fields than the header
  is an error at its line (pandas would quietly make an index of the extras).
- ``id_column(tokens, where)``: the vertex-id rule of every reader: ids are
  ints when every id of the input is an integer, else strings; an integer id
  beyond 64 bits is an error at its record (read as text it would silently
  make ``7`` and ``007`` two ids).
- ``check_parquet(path)`` and ``check_output_path(path, overwrite)``: what
  Spark would only find out with a Java stack trace (a directory without
  Parquet files, a text file in it, an output whose parent is a file) is
  checked on the driver first, as a typed error.

One module per problem parses that problem's files (``streamspec.pipeline.io.edges`` for
edge lists and query files).
"""
from __future__ import annotations

import csv
import ctypes
import errno
import json
import os
import re
import shutil
import sys
import uuid
from typing import Iterator

import numpy as np

from streamspec.spec.errors import MalformedRecord, StreamspecError
from streamspec.pipeline import fs
from streamspec.pipeline.fs import OBJECT_STORES

_FIELD_SEPARATOR = re.compile(r"[,\s]+")


class OutputExists(StreamspecError, FileExistsError):
    """The output path exists and ``--overwrite`` was not given."""


class InputError(StreamspecError, OSError):
    """An input file is missing, unreadable or of an unknown format."""


class OutputError(StreamspecError, OSError):
    """The output path cannot be written (its parent is a file, not writable...)."""


INT64 = (-2**63, 2**63 - 1)
_INTEGER = re.compile(r"[+-]?[0-9]+")
_INT64_DIGITS = 19          # a longer run of digits never fits in 64 bits


def preview(value, limit: int = 40) -> str:
    """``repr(value)``, cut to ``limit`` characters (a 5 MB id must not fill the terminal)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(str(value))} characters)"


def int64_or_none(token: str) -> int | None:
    """The integer a token spells if it fits in 64 bits, else None (never parses huge digit runs)."""
    if not _INTEGER.fullmatch(token) or len(token.lstrip("+-").lstrip("0")) > _INT64_DIGITS:
        return None
    value = int(token)
    return value if INT64[0] <= value <= INT64[1] else None


def check_window_room(times, width: int, where, what: str = "time") -> None:
    """Every time ``t`` of ``times`` (in input order) leaves room for its window: ``t +
    width`` (the end of a window holding ``t``, a 64-bit time in the output) fits in 64
    bits; else a ``MalformedRecord`` at ``where(i)`` of the first one that does not (it
    would end in an ``OverflowError`` inside a Spark task); with ``where`` None, its
    ``index`` is ``i`` (a stream's step names the row's file and line)."""
    times = np.asarray(times)
    if not len(times) or width <= 0:
        return
    limit = INT64[1] - int(width)
    bad = np.flatnonzero(times > limit) if limit >= INT64[0] else np.arange(len(times))
    if bad.size:
        t = int(times[bad[0]])
        err = MalformedRecord(f"{what} {t} leaves no room for the window: {t} + {width} does "
                              f"not fit in 64 bits (times must be at most {limit})",
                              index=int(bad[0]))
        raise err.at(where(int(bad[0]))) if where is not None else err


def location(path: str, line: int) -> str:
    return f"{path}:{line}"


def json_loads(text):
    """``json.loads``, but JSON nested deeper than the interpreter's recursion limit (100,000
    brackets on a line) is a ``MalformedRecord`` (a ``ValueError``, without a location: the
    caller's to add), not a ``RecursionError``."""
    try:
        return json.loads(text)
    except RecursionError:
        raise MalformedRecord("not JSON: nested too deep (more levels of arrays and objects "
                              "than the reader's recursion limit)") from None


def json_object(text: str, where: str) -> dict:
    """One JSON-lines record: a JSON object, or a ``MalformedRecord`` at ``where`` (not JSON,
    too deep, an integer of more than 4300 digits, or not an object)."""
    try:
        row = json_loads(text)
    except MalformedRecord as err:
        raise err.at(where) from None
    except ValueError as err:       # json.JSONDecodeError, or an integer of 4300+ digits
        why = str(err) if not hasattr(err, "colno") else \
            f"{err.msg.removesuffix(' at')} at column {err.colno}"     # not a dangling "at"
        raise MalformedRecord(f"not JSON: {why}").at(where) from None
    if not isinstance(row, dict):
        raise MalformedRecord(f"expected a JSON object, got {preview(row)}").at(where)
    return row


def open_binary(path: str):
    """``open(path, "rb")``, an ``InputError`` ("cannot read") when the file cannot be opened
    (permissions, a directory): what every reader says."""
    try:
        return fs.open_input(path)
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror or err}") from None


def check_nul(line: str, where: str) -> None:
    """A NUL character in a text line is an error at ``where``: no text input holds one, and
    read as text it would silently make an id a string."""
    if "\x00" in line:
        raise MalformedRecord("a NUL byte in the line (a binary file? binary inputs must be "
                              "Parquet)").at(where)


# A UTF-8 byte order mark at the start of a text input is skipped, as text editors do
# ("utf-8-sig"); anywhere else it is a character like any other.
TEXT_ENCODING = "utf-8-sig"


def _json_lines(path: str) -> Iterator[tuple[str, dict]]:
    try:
        f = fs.open_text(path, TEXT_ENCODING)
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror or err}") from None
    with f:
        for number, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            where = location(path, number)
            yield where, json_object(raw, where)


def not_utf8(path: str, err: UnicodeDecodeError) -> "InputError":
    """The ``InputError`` of a text input that is not UTF-8, at ``file:line`` of the first
    line that does not decode (the decoder's error knows only its offset in a buffer)."""
    try:
        with fs.open_input(path) as f:
            for number, raw in enumerate(f, 1):
                try:
                    raw.decode("utf-8-sig" if number == 1 else "utf-8")
                except UnicodeDecodeError as bad:
                    return InputError(f"{location(path, number)}: not a UTF-8 text file (byte "
                                      f"{raw[bad.start]:#04x} at column {bad.start + 1}: "
                                      f"{bad.reason}); binary inputs must be Parquet (.parquet)")
    except OSError:
        pass
    return InputError(f"{path}: not a UTF-8 text file ({err.reason}); "
                      "binary inputs must be Parquet (.parquet)")


def json_objects(path: str) -> Iterator[tuple[str, dict]]:
    """``(file:line, object)`` of each non-blank line of a JSON lines file."""
    try:
        yield from _json_lines(path)
    except UnicodeDecodeError as err:
        raise not_utf8(path, err) from None


def text_records(path: str) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of each data line of a text file (a NUL character or a
    double quote in a line is an error at that line)."""
    try:
        f = fs.open_text(path, TEXT_ENCODING)
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror or err}") from None
    with f:
        try:
            for number, raw in enumerate(f, 1):
                line = raw.strip()
                if not line or line.startswith("#"):
                    continue
                check_nul(line, location(path, number))
                if '"' in line:
                    # not quoted CSV: '"1"' would silently be the text id '"1"', and every
                    # other id text with it (the id_column rule)
                    raise MalformedRecord('a double quote in the line: edge and query fields '
                                          'are never quoted (they are separated by whitespace '
                                          'or commas)').at(location(path, number))
                yield number, _FIELD_SEPARATOR.split(line)
        except UnicodeDecodeError as err:
            raise not_utf8(path, err) from None


def _open_quote_line(lines: list[str]) -> int | None:
    """The index in ``lines`` (one CSV record's raw lines, split as ``open(newline="")``
    splits them) of the line where a quoted field opens that the record never closes, as
    the csv module reads it (``skipinitialspace``, not strict): None when every quote is
    closed.  Only called for the file's last record, the one an unterminated quote makes."""
    state, opened = "start", None
    for n, line in enumerate(lines):
        for ch in line:
            if state == "quoted":
                if ch == '"':
                    state = "quote"         # a closing quote, or the first of ""
            elif ch in "\r\n":
                state = "start"
            elif state == "quote":
                state = "quoted" if ch == '"' else "start" if ch == "," else "field"
            elif state == "start":
                if ch == '"':
                    state, opened = "quoted", n
                elif ch == ",":
                    pass
                elif ch != " ":
                    state = "field"
            elif ch == ",":                 # in an unquoted field, where a quote is text
                state = "start"
    return opened if state == "quoted" else None


def csv_records(lines, where) -> Iterator[tuple[int, list[str]]]:
    """``(line, fields)`` of each record of CSV text (``lines``: an iterable of its lines,
    as ``open(path, newline="")`` yields them), ``line`` the 1-based line where the record
    starts (a quoted field may hold newlines: the record then spans several lines, and an
    error in it is reported where it starts), blank lines included as empty records.  The
    csv module (``skipinitialspace``) reads it; every reader of CSV text reads it here.

    The csv module takes a quote that is never closed as a field running to the end of the
    file, swallowing the rest of it: that is a ``MalformedRecord`` at ``where(line)``, the
    line where the quote opened."""
    record: list[str] = []

    def feed():
        for number, line in enumerate(lines, 1):
            check_nul(line, where(number))
            record.append(line)
            yield line
    reader = csv.reader(feed(), skipinitialspace=True)
    held, last = None, []           # the record read last (and its lines): yielded once the
                                    # next one is read, or checked if it is the file's last
    while True:
        record.clear()
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as err:
            raise MalformedRecord(f"not CSV: {err}").at(where(reader.line_num)) from None
        if held is not None:
            yield held
        held, last = (reader.line_num - len(record) + 1, fields), record[:]
    if held is None:
        return
    if any('"' in line for line in last):
        opened = _open_quote_line(last)
        if opened is not None:
            line = held[0] + opened
            raise MalformedRecord("unterminated quote: the quoted field opened on this line is "
                                  "never closed (it would run to the end of the file)").at(where(line))
    yield held


def csv_table(path: str):
    """``(frame, wheres)``: the rows of a CSV file with a header, as strings, with the
    ``file:line`` of each; blank lines skipped, leading spaces of fields dropped."""
    import pandas as pd

    # fields as long as the file (a 5 MB id): the ids' own rules judge them, not csv's limit
    csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))
    try:
        f = fs.open_text(path, TEXT_ENCODING, newline="")
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror or err}") from None
    header, rows, wheres = None, [], []
    with f:
        number = 0
        try:
            for number, fields in csv_records(f, lambda n: location(path, n)):
                if not any(field.strip() for field in fields):
                    continue
                if header is None:
                    header = [name.strip() for name in fields]
                    continue
                where = location(path, number)
                if len(fields) != len(header):
                    raise MalformedRecord(f"expected {len(header)} fields ({','.join(header)}), "
                                          f"got {len(fields)}").at(where)
                rows.append(fields)
                wheres.append(where)
        except UnicodeDecodeError as err:
            raise not_utf8(path, err) from None
        except csv.Error as err:
            raise MalformedRecord(f"not CSV: {err}").at(location(path, number + 1)) from None
    if header is None:
        raise InputError(f"{path}: empty CSV file (a header line is needed)")
    return pd.DataFrame(rows, columns=header, dtype=object), wheres


def id_column(tokens: list[str], where=None) -> np.ndarray:
    """Ids as int64 when every token is an integer, else as an object array of str.

    Ints are compared by value (``007`` and ``7`` are one vertex); an id list
    with one non-integer token is read entirely as text.  When every token is
    an integer but one does not fit in 64 bits, that is a ``MalformedRecord``
    located by ``where(i)`` (the token's record), or by index when None.
    """
    if not tokens:
        return np.empty(0, dtype=np.int64)
    # numpy would build a fixed-width array as wide as the longest token (a
    # 5 MB id times every row): only short tokens go through it
    if max(map(len, tokens)) <= _INT64_DIGITS + 1:
        try:
            return np.array(tokens).astype(np.int64)
        except (ValueError, OverflowError):
            pass
    if all(_INTEGER.fullmatch(t) for t in tokens):
        values = [int64_or_none(t) for t in tokens]
        i = next((i for i, v in enumerate(values) if v is None), None)
        if i is None:       # every one fits: long spellings (zero-padded) numpy did not take
            return np.array(values, dtype=np.int64)
        err = MalformedRecord(f"id {preview(tokens[i])} is an integer beyond 64 bits "
                              "(integer ids must fit in 64 bits)", index=i)
        raise err.at(where(i)) if where is not None else err
    out = np.empty(len(tokens), dtype=object)
    out[:] = tokens
    return out


def is_parquet(path: str) -> bool:
    """A ``.parquet`` file or a directory (a Parquet dataset as Spark writes it)."""
    return path.endswith(".parquet") or fs.isdir(path)


def parquet_files(path: str) -> list[str]:
    """The data files of a Parquet input, each checked to be Parquet (its footer).

    A directory's files are found as Spark and pyarrow find them (names
    starting with ``_`` or ``.`` are metadata and skipped).  ``InputError``
    for a missing path, a directory without data files, or a file that is not
    Parquet (a text file in the directory, say), naming that file.
    """
    import pyarrow.parquet as pq

    # local paths, or URIs read through pyarrow.fs (s3://, hdfs://...: streamspec.pipeline.fs)
    local = path[5:] if path.startswith("file:") else path
    if not fs.exists(local):
        raise InputError(f"{path}: no such file or directory")
    if fs.isdir(local):
        files = fs.data_files(local)
        if not files:
            raise InputError(f"{path}: directory holds no Parquet files")
    else:
        files = [local]
    for f in files:
        try:
            pq.read_schema(fs.parquet_source(f))
        except (OSError, ValueError) as err:    # ArrowInvalid is a ValueError
            raise InputError(f"{f}: not a Parquet file ({str(err).splitlines()[0][:120]})") from None
    return files


# -- atomic output -------------------------------------------------------------------
def _filesystem(spark, path: str):
    """The Hadoop file system of ``path`` (local, HDFS, S3...) and its ``Path``."""
    jvm = spark._jvm
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    fs = hpath.getFileSystem(spark._jsc.hadoopConfiguration())
    return fs, hpath


def output_exists(spark, path: str) -> bool:
    fs, hpath = _filesystem(spark, path)
    return bool(fs.exists(hpath))


def check_output_path(path: str, overwrite: bool) -> None:
    """Before Spark starts: refuse an existing output (unless ``overwrite``) and a local
    output Spark could not create (an ancestor is a regular file, or not writable)."""
    if not path.strip():
        raise OutputError("the output path is empty")
    if "://" in path and not path.startswith("file:"):
        return                      # remote file systems: check_output asks Hadoop
    local = os.path.abspath(path[5:] if path.startswith("file:") else path)
    if os.path.lexists(local):
        if not overwrite:
            raise OutputExists(f"{path}: output exists (pass --overwrite to replace it)")
        if not os.path.isdir(local):
            raise OutputError(f"{path}: exists and is not a directory; refusing to replace a file "
                              "with a dataset")
    parent = os.path.dirname(local)
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise OutputError(f"{path}: cannot create the output: {parent} is a file, not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{path}: cannot create the output: {parent} is not writable")


def check_output(spark, path: str, overwrite: bool) -> None:
    """Fail early, before any work, when the output exists and may not be replaced."""
    if not overwrite and output_exists(spark, path):
        raise OutputExists(f"{path}: output exists (pass --overwrite to replace it)")


def write_parquet_atomic(df, path: str, overwrite: bool = False) -> None:
    """Write ``df`` as a Parquet dataset at ``path``, all or nothing.

    The dataset is written to ``.<name>.tmp-<tag>`` beside ``path`` and put into place
    only once complete (``replace_output``): on a local Linux file system by one atomic
    exchange, so that ``path`` holds the old or the new output, whole, at every moment,
    even under kill -9 (docs/pipeline.md, "Replacing an output").  A later run
    (``recover_output``) finishes or removes what a killed one left.
    """
    spark = df.sparkSession
    fs, target = _filesystem(spark, path)
    check_output(spark, path, overwrite)
    target = fs.makeQualified(target)
    parent, name = target.getParent(), target.getName()
    tag = uuid.uuid4().hex[:12]
    Path = spark._jvm.org.apache.hadoop.fs.Path
    tmp = Path(parent, f".{name}.tmp-{tag}")
    old = Path(parent, f".{name}.old-{tag}")
    if str(fs.getUri().getScheme()).lower() in OBJECT_STORES:   # no atomic rename
        committing = False
        try:
            df.write.parquet(tmp.toString())
            if fs.exists(target) and not overwrite:     # appeared while we were computing
                raise OutputExists(f"{path}: output exists (pass --overwrite to replace it)")
            names = _data_names(fs, tmp)
            _write_text(spark, fs, Path(tmp, COMMIT_LIST), "".join(n + "\n" for n in names))
            committing = True   # from here a failure leaves tmp for the next run to finish
            move_parts(spark, fs, tmp, target, names)
        except StreamspecError:
            raise
        except Exception as err:    # py4j: the store refused a call
            if not committing:
                raise
            from streamspec.pipeline.spark import task_error
            raise OutputError(f"{path}: the output is incomplete (no _SUCCESS): moving its "
                              f"parts into place failed ({task_error(err)}); the next run on "
                              f"this output finishes it from {tmp.getName()}") from err
        finally:
            if not committing and fs.exists(tmp):
                fs.delete(tmp, True)
        return
    if str(fs.getUri().getScheme()) == "file":
        local = str(target.toUri().getPath())
        ltmp, lold = (os.path.join(os.path.dirname(local), f".{name}.{k}-{tag}") for k in ("tmp", "old"))
        try:
            df.write.parquet(tmp.toString())
            replace_output(ltmp, local, overwrite, lold, path)
        finally:
            if os.path.lexists(ltmp):
                shutil.rmtree(ltmp, ignore_errors=True)
        return
    try:                # another file system: two renames, the gap healed by recover_output
        df.write.parquet(tmp.toString())
        moved_old = False
        if fs.exists(target):
            if not overwrite:  # appeared while we were computing
                raise OutputExists(f"{path}: output exists (pass --overwrite to replace it)")
            if not fs.rename(target, old):
                raise OutputError(f"{path}: cannot move the previous output aside")
            moved_old = True
        if not fs.rename(tmp, target):
            if moved_old:
                fs.rename(old, target)
            raise OutputError(f"{path}: cannot rename the finished output into place")
        if moved_old:
            fs.delete(old, True)
    finally:
        if fs.exists(tmp):
            fs.delete(tmp, True)


#: in a finished staging directory on an object store: the data files' relative names,
#: written before any of them moves, so that a run killed while moving them is finished
#: by the next one (``recover_output``)
COMMIT_LIST = "_streamspec_commit"


def _data_names(fs, directory) -> list[str]:
    """The data files under the Hadoop ``directory`` (names starting with ``_`` or ``.``,
    at any depth, skipped: ``_SUCCESS``, checksums), as relative names, sorted."""
    root = str(fs.makeQualified(directory).toUri().getPath()).rstrip("/") + "/"
    names, files = [], fs.listFiles(directory, True)
    while files.hasNext():
        rel = str(files.next().getPath().toUri().getPath())[len(root):]
        if not any(p.startswith(("_", ".")) for p in rel.split("/")):
            names.append(rel)
    return sorted(names)


def _write_text(spark, fs, hpath, text: str) -> None:
    out = fs.create(hpath, True)
    try:
        out.write(bytearray(text.encode("utf-8")))
    finally:
        out.close()


def _read_text(spark, fs, hpath) -> str:
    stream = fs.open(hpath)
    try:
        return str(spark._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
    finally:
        stream.close()


def move_parts(spark, fs, tmp, target, names) -> None:
    """Land the finished dataset ``tmp`` (its data files ``names``) at ``target`` on a file
    system without atomic rename (an object store), ``_SUCCESS`` last: ``target``'s
    ``_SUCCESS`` is deleted first (readers: not complete from here on), then every file of
    ``target`` not in ``names`` (the previous output), then each file of ``names`` still in
    ``tmp`` is moved into place (one rename: a copy and a delete on an object store), then
    ``_SUCCESS`` is written and ``tmp`` removed.  Every step can be repeated, so a run
    killed anywhere in it is finished by calling this again (``recover_output``)."""
    Path = spark._jvm.org.apache.hadoop.fs.Path
    marker = Path(target, "_SUCCESS")
    if fs.exists(target):
        if fs.exists(marker):
            fs.delete(marker, False)
        wanted = set(names)
        for rel in _all_names(fs, target):
            if rel not in wanted:
                fs.delete(Path(target, rel), False)
    for rel in names:
        src, dst = Path(tmp, rel), Path(target, rel)
        if fs.exists(src):
            if fs.exists(dst):          # a copy a killed run made but did not finish
                fs.delete(dst, False)
            fs.mkdirs(dst.getParent())
            if not fs.rename(src, dst):
                raise OutputError(f"{target.toString()}: cannot move {rel} into place")
        elif not fs.exists(dst):
            raise OutputError(f"{target.toString()}: {rel} is neither staged nor in place")
    _write_text(spark, fs, marker, "")
    fs.delete(tmp, True)


def _all_names(fs, directory) -> list[str]:
    root = str(fs.makeQualified(directory).toUri().getPath()).rstrip("/") + "/"
    names, files = [], fs.listFiles(directory, True)
    while files.hasNext():
        names.append(str(files.next().getPath().toUri().getPath())[len(root):])
    return names


_AT_FDCWD, _RENAME_EXCHANGE = -100, 2
#: errors meaning "this system or file system cannot exchange": fall back to two renames
_NO_EXCHANGE = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EPERM}


def rename_exchange(a: str, b: str) -> None:
    """Swap the directories ``a`` and ``b`` in one atomic step (Linux ``renameat2``
    with ``RENAME_EXCHANGE``: ext4, xfs, btrfs, tmpfs...); ``OSError`` with an errno in
    ``_NO_EXCHANGE`` where the system or the file system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        call = libc.renameat2           # glibc 2.28+
    except (OSError, AttributeError):
        raise OSError(errno.ENOSYS, "renameat2 is not available") from None
    call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if call(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), a, None, b)


def replace_output(tmp: str, target: str, overwrite: bool, old: str, shown: str | None = None) -> None:
    """Put the complete dataset ``tmp`` at the local path ``target``.

    ``target`` absent: one rename.  ``target`` present (``overwrite``): one atomic
    exchange of ``tmp`` and ``target``, then the previous output, now at ``tmp``, is
    renamed to ``old`` and deleted; ``target`` is never empty.  Where the exchange is not
    available: ``target`` -> ``old``, ``tmp`` -> ``target``, delete ``old``; a kill
    between the two renames leaves ``target`` absent, and ``recover_output`` (every run
    calls it first) moves the complete ``tmp`` into place.
    """
    shown = shown or target
    if not os.path.lexists(target):
        try:
            os.rename(tmp, target)
        except OSError as err:
            if err.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.EISDIR, errno.ENOTDIR):
                raise OutputExists(f"{shown}: output exists (pass --overwrite to replace it)") from None
            raise OutputError(f"{shown}: cannot rename the finished output into place: {err}") from None
        return
    if not overwrite:  # appeared while we were computing
        raise OutputExists(f"{shown}: output exists (pass --overwrite to replace it)")
    try:
        rename_exchange(tmp, target)
    except OSError as err:
        if err.errno not in _NO_EXCHANGE:
            raise OutputError(f"{shown}: cannot put the finished output into place: {err}") from None
    else:
        os.rename(tmp, old)
        shutil.rmtree(old, ignore_errors=True)
        return
    try:
        os.rename(target, old)
    except OSError as err:
        raise OutputError(f"{shown}: cannot move the previous output aside: {err}") from None
    try:
        os.rename(tmp, target)
    except OSError as err:
        os.rename(old, target)
        raise OutputError(f"{shown}: cannot rename the finished output into place: {err}") from None
    shutil.rmtree(old, ignore_errors=True)


_LEFTOVER = re.compile(r"\.(?P<name>.+)\.(?P<kind>tmp|old|staging|checkpoints)-(?P<tag>[0-9a-f]+)")
_WHAT = {"tmp": "an unfinished output", "old": "a replaced output",
         "staging": "staged input", "checkpoints": "Spark checkpoints"}


def checkpoint_dir_beside(output: str) -> str:
    """The default ``--checkpoint-dir`` of a run writing ``output`` (resolved: an absolute
    local path or a URI): ``.<name>.checkpoints-<tag>`` beside it, a new ``tag`` per run.
    The job removes it when it ends; ``recover_output`` removes one a killed run left."""
    head, _, name = output.rstrip("/").rpartition("/")
    return f"{head}/.{name}.checkpoints-{uuid.uuid4().hex[:12]}"


def recover_output(path: str, spark=None, err=None) -> list[str]:
    """Finish or undo what a killed run left beside the output ``path``; every run calls
    this before it checks the output.  Returns the one-line messages, also printed on
    ``err`` (stderr).

    - ``path`` absent but ``.<name>.old-<tag>`` present: a run was killed between the two
      renames of a replacement (where no atomic exchange exists): its complete
      ``.<name>.tmp-<tag>`` is moved into place, else the previous output is put back.
    - on an object store, a ``.<name>.tmp-<tag>`` holding ``COMMIT_LIST``: a run was
      killed while moving its finished output into place part by part (``move_parts``):
      the move is finished, ``_SUCCESS`` last.
    - then every ``.<name>.tmp-*``, ``.<name>.old-*``, ``.<name>.staging-*`` and
      ``.<name>.checkpoints-*`` (a run's default ``--checkpoint-dir``) left is removed.

    Local paths are handled on the driver before Spark starts; another file system
    through Hadoop when ``spark`` is given.  Two runs writing the same output at once
    are not supported (each would take the other's directories for leftovers).
    """
    err = err if err is not None else sys.stderr
    if "://" in path and spark is not None:     # a URI, through Hadoop (file:// too)
        ops = _HadoopOps(spark, path)
    elif "://" in path and not path.startswith("file:"):
        return []
    else:
        ops = _LocalOps(path[5:] if path.startswith("file:") else path)
    if ops.name is None:
        return []
    said = []

    def say(text):
        said.append(f"streamspec: {path}: {text}")
        print(said[-1], file=err)

    found = [(m.group("kind"), m.group("tag"), n) for n in ops.siblings()
             for m in [_LEFTOVER.fullmatch(n)] if m and m.group("name") == ops.name]
    if not ops.exists() and any(kind == "old" for kind, _, _ in found):
        tag, old = next((t, n) for k, t, n in sorted(found, key=lambda f: ops.mtime(f[2]), reverse=True)
                        if k == "old")
        tmp = f".{ops.name}.tmp-{tag}"
        if any(n == tmp for _, _, n in found):
            ops.rename_into_place(tmp)
            say(f"a run killed while replacing this output had finished the new one: moved {tmp} "
                "into place")
        else:
            ops.rename_into_place(old)
            say(f"a run killed while replacing this output left it aside: restored {old}")
    committed = sorted((ops.commit_time(n), n) for kind, _, n in found
                       if kind == "tmp" and ops.commit_time(n) is not None)
    for _, n in committed:       # an object store's part-by-part move, the newest last
        ops.finish(n)
        say(f"a run killed while moving its finished output into place part by part had "
            f"staged it whole: finished the move from {n}")
    for kind, _, n in found:
        if ops.sibling_exists(n):
            ops.remove(n)
            say(f"removed {n} ({_WHAT[kind]} left by a killed run)")
    return said


class _LocalOps:
    def __init__(self, path: str):
        local = os.path.abspath(path) if path.strip() else None
        self.name = os.path.basename(local) if local and os.path.basename(local) else None
        self.target = local
        self.parent = os.path.dirname(local) if local else None

    def siblings(self):
        try:
            return sorted(n for n in os.listdir(self.parent) if n.startswith("."))
        except OSError:
            return []

    def exists(self):
        return os.path.lexists(self.target)

    def sibling_exists(self, n):
        return os.path.lexists(os.path.join(self.parent, n))

    def mtime(self, n):
        return os.lstat(os.path.join(self.parent, n)).st_mtime

    def commit_time(self, n):       # a local output lands by rename, never part by part
        return None

    def rename_into_place(self, n):
        os.rename(os.path.join(self.parent, n), self.target)

    def remove(self, n):
        p = os.path.join(self.parent, n)
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p, ignore_errors=True)
        else:
            os.unlink(p)


class _HadoopOps:
    def __init__(self, spark, path: str):
        self.fs, target = _filesystem(spark, path)
        self.target = self.fs.makeQualified(target)
        self.parent = self.target.getParent()
        self.name = str(self.target.getName()) if self.parent is not None else None
        self.Path = spark._jvm.org.apache.hadoop.fs.Path
        self.spark = spark
        self.object_store = str(self.fs.getUri().getScheme()).lower() in OBJECT_STORES

    def siblings(self):
        try:
            return sorted(str(s.getPath().getName()) for s in self.fs.listStatus(self.parent)
                          if str(s.getPath().getName()).startswith("."))
        except Exception:           # py4j: the parent does not exist
            return []

    def exists(self):
        return bool(self.fs.exists(self.target))

    def sibling_exists(self, n):
        return bool(self.fs.exists(self.Path(self.parent, n)))

    def mtime(self, n):
        return self.fs.getFileStatus(self.Path(self.parent, n)).getModificationTime()

    def rename_into_place(self, n):
        self.fs.rename(self.Path(self.parent, n), self.target)

    def commit_time(self, n):
        """When the staging directory ``n`` was listed for its move (``COMMIT_LIST``), None
        when it was not (or this is not an object store)."""
        if not self.object_store:
            return None
        listed = self.Path(self.Path(self.parent, n), COMMIT_LIST)
        if not self.fs.exists(listed):
            return None
        return self.fs.getFileStatus(listed).getModificationTime()

    def finish(self, n):
        tmp = self.Path(self.parent, n)
        text = _read_text(self.spark, self.fs, self.Path(tmp, COMMIT_LIST))
        move_parts(self.spark, self.fs, tmp, self.target, [ln for ln in text.splitlines() if ln])

    def remove(self, n):
        self.fs.delete(self.Path(self.parent, n), True)


def read_parquet(spark, path: str):
    """A Parquet dataset as a Spark DataFrame (``InputError`` when missing).  A URI Spark
    has no connector for (``s3://`` here: no hadoop-aws) is read through ``pyarrow.fs`` on
    the driver and handed to Spark, said in one line on stderr."""
    if fs.is_remote(path):
        remote = fs.spark_cannot_read(spark, path)
        if remote is not None:
            print(f"streamspec: {path}: read on the driver through pyarrow ({remote})",
                  file=sys.stderr)
            parquet_files(path)             # typed errors: missing, not Parquet
            return spark.createDataFrame(fs.read_table(path))
    fs_, hpath = _filesystem(spark, path)
    if not fs_.exists(hpath):
        raise InputError(f"{path}: no such file or directory")
    return spark.read.parquet(path)


def write_stream_parquet(df, path: str, checkpoint: str, available_now: bool = False,
                         interval: float | None = None):
    """Start a streaming query appending ``df`` to the Parquet dataset ``path``.

    Spark's file sink commits each micro-batch in its metadata log, and the
    checkpoint keeps offsets and state: restarting with the same
    ``checkpoint`` neither loses nor repeats output.  ``available_now``
    processes what has arrived, then stops; otherwise a micro-batch starts
    every ``interval`` seconds (default: as soon as the last one ends).  Read the output with
    ``spark.read.parquet(path)`` (it honours the sink's log).
    """
    writer = (df.writeStream.format("parquet").outputMode("append")
              .option("path", path).option("checkpointLocation", checkpoint))
    if available_now:
        writer = writer.trigger(availableNow=True)
    elif interval:
        writer = writer.trigger(processingTime=f"{interval} seconds")
    return writer.start()
