"""Reading and writing: the only module family that touches files (STYLE.md).

This package holds what every problem shares:

- ``write_parquet_atomic(df, path, overwrite)``: the job's output is written
  to a temporary sibling directory and renamed into place only once complete
  (DESIGN.md, "Errors": nothing half-written).  Any error leaves the output
  path as it was: absent, or the previous output when overwriting.
- ``text_records(path)``: the lines of a text file that carry data, with their
  1-based line numbers (``#`` comments and blank lines skipped), split on
  commas and/or whitespace; ``location(path, line)`` is the ``file:line``
  every ``RecordError`` from a reader carries.
- ``id_column(tokens)``: the vertex-id rule of every reader: ids are ints when
  every id of the input parses as an int, else strings.

One module per problem parses that problem's files (``streamspec.pipeline.io.edges`` for
edge lists and query files).
"""
from __future__ import annotations

import json
import os
import re
import uuid
from typing import Iterator

import numpy as np

from streamspec.spec.errors import MalformedRecord, StreamspecError

_FIELD_SEPARATOR = re.compile(r"[,\s]+")


class OutputExists(StreamspecError, FileExistsError):
    """The output path exists and ``--overwrite`` was not given."""


class InputError(StreamspecError, OSError):
    """An input file is missing, unreadable or of an unknown format."""


def location(path: str, line: int) -> str:
    return f"{path}:{line}"


def json_objects(path: str) -> Iterator[tuple[str, dict]]:
    """``(file:line, object)`` of each non-blank line of a JSON lines file."""
    try:
        f = open(path, encoding="utf-8")
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror or err}") from None
    with f:
        for number, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            where = location(path, number)
            try:
                row = json.loads(raw)
            except json.JSONDecodeError as err:
                raise MalformedRecord(f"not JSON: {err.msg}").at(where) from None
            if not isinstance(row, dict):
                raise MalformedRecord("expected a JSON object").at(where)
            yield where, row


def text_records(path: str) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of each data line of a text file."""
    try:
        f = open(path, encoding="utf-8")
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror or err}") from None
    with f:
        try:
            for number, raw in enumerate(f, 1):
                line = raw.strip()
                if not line or line.startswith("#"):
                    continue
                yield number, _FIELD_SEPARATOR.split(line)
        except UnicodeDecodeError as err:
            raise InputError(f"{path}: not a UTF-8 text file ({err.reason}); "
                             "binary inputs must be Parquet (.parquet)") from None


def id_column(tokens: list[str]) -> np.ndarray:
    """Ids as int64 when every token parses as an int, else as an object array of str.

    Ints are compared by value (``007`` and ``7`` are one vertex); an id list
    with one non-integer token is read entirely as text.
    """
    if not tokens:
        return np.empty(0, dtype=np.int64)
    try:
        return np.array(tokens).astype(np.int64)
    except (ValueError, OverflowError):
        out = np.empty(len(tokens), dtype=object)
        out[:] = tokens
        return out


def is_parquet(path: str) -> bool:
    """A ``.parquet`` file or a directory (a Parquet dataset as Spark writes it)."""
    return path.endswith(".parquet") or os.path.isdir(path)


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


def check_output(spark, path: str, overwrite: bool) -> None:
    """Fail early, before any work, when the output exists and may not be replaced."""
    if not overwrite and output_exists(spark, path):
        raise OutputExists(f"{path}: output exists (pass --overwrite to replace it)")


def write_parquet_atomic(df, path: str, overwrite: bool = False) -> None:
    """Write ``df`` as a Parquet dataset at ``path``, all or nothing.

    The dataset is written to ``.<name>.tmp-<uuid>`` beside ``path`` and renamed
    into place.  When overwriting, the old output is moved aside first and
    deleted only after the new one is in place.
    """
    spark = df.sparkSession
    fs, target = _filesystem(spark, path)
    check_output(spark, path, overwrite)
    parent, name = target.getParent(), target.getName()
    tag = uuid.uuid4().hex[:12]
    Path = spark._jvm.org.apache.hadoop.fs.Path
    tmp = Path(parent, f".{name}.tmp-{tag}")
    old = Path(parent, f".{name}.old-{tag}")
    try:
        df.write.parquet(tmp.toString())
        moved_old = False
        if fs.exists(target):
            if not overwrite:  # appeared while we were computing
                raise OutputExists(f"{path}: output exists (pass --overwrite to replace it)")
            if not fs.rename(target, old):
                raise OSError(f"{path}: cannot move the previous output aside")
            moved_old = True
        if not fs.rename(tmp, target):
            if moved_old:
                fs.rename(old, target)
            raise OSError(f"{path}: cannot rename the finished output into place")
        if moved_old:
            fs.delete(old, True)
    finally:
        if fs.exists(tmp):
            fs.delete(tmp, True)


def read_parquet(spark, path: str):
    """A Parquet dataset as a Spark DataFrame (``InputError`` when missing)."""
    fs, hpath = _filesystem(spark, path)
    if not fs.exists(hpath):
        raise InputError(f"{path}: no such file or directory")
    return spark.read.parquet(path)


def write_stream_parquet(df, path: str, checkpoint: str, available_now: bool = False):
    """Start a streaming query appending ``df`` to the Parquet dataset ``path``.

    Spark's file sink commits each micro-batch in its metadata log, and the
    checkpoint keeps offsets and state: restarting with the same
    ``checkpoint`` neither loses nor repeats output.  ``available_now``
    processes what has arrived, then stops.  Read the output with
    ``spark.read.parquet(path)`` (it honours the sink's log).
    """
    writer = (df.writeStream.format("parquet").outputMode("append")
              .option("path", path).option("checkpointLocation", checkpoint))
    if available_now:
        writer = writer.trigger(availableNow=True)
    return writer.start()
