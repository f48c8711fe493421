"""A large text edge list parsed by Spark tasks, not the driver (issue 11).

The connectivity job's path for an unkeyed local text input of at least
``MIN_BYTES`` (16 MB, about 800k edges; a smaller file costs less on the
driver than a Spark job, and its errors then come before Spark starts): SNAP
``u v t`` or CSV with a ``u, v, t`` header in any order, lateness ``error``,
``s <= r``.  It ends in the columnar range scan (``pipeline.range_scan``):

- ``plan`` (driver, before Spark): reads the file's head only, skipping the
  leading blank and ``#`` comment lines and a header line exactly as the
  validating reader (``pipeline.io.edges.parse_edge_text``) does, and takes
  the single separator (space, tab or comma) of the first data line.  A first
  data line that is not integers ``u, v, t`` (and one ``key`` token) with one
  separator, a remote path: no plan, and the validating reader reads the file.
- Keyed input (a ``key`` column in the header): the tasks stage ``seq, u, v,
  t, key`` (``seq`` numbers the edges in file order), typing the keys as the
  reader does (int64 when every key is a plain integer, else text; ranges
  that disagree go to the reader); the job replays one engine per key from the
  staged files (``jobs.connectivity.replay_staged_keys``), each key's task
  checking its edges are in time order in the file and not before the origin.
- ``stage`` (one Spark job): ``pipeline.io.lines.line_cuts`` cuts the data into
  byte ranges at line starts; each task parses its range with pyarrow's CSV
  reader (that one separator, no quoting, blank lines skipped, every field a
  64-bit integer, no empty field) and writes it as one Parquet file with row
  groups of ``GROUP_ROWS`` edges (footer statistics on) in a staging
  directory beside the output, named in file order.  The range scan then plans
  those files from their footers and replays them.
- Anything the tasks' parser refuses (a comment or blank-with-spaces line
  after the head, a second kind of separator, a non-integer or 64-bit-overflowing
  id or time, an empty field, a wrong field count) is the validating reader's
  to judge: the job reads the file again on the driver, which either names
  the bad line (``file:line``, exit 2) or takes it (e.g. string ids: then the
  whole file is text, as the ``id_column`` rule says).  So the staged path only
  ever accepts a file whose every data line is ``int SEP int SEP int`` with the
  head's separator, and then its edges are the validating reader's edges in the
  same order; an edge out of time order or before ``--origin`` is found by the
  range scan and also sent to the validating reader for its located error.

The tasks read the input and write the staging files themselves: on a cluster
both must be on a file system every executor sees (as for the range scan).
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import uuid

import attrs
import numpy as np

from streamspec.pipeline import fs
from streamspec.pipeline.io import is_parquet
from streamspec.pipeline.io.lines import line_cuts, read_span

COLUMNS = ("u", "v", "t")
GROUP_ROWS = 1 << 16       # edges per staged row group: what a range task over-reads at most
CHUNK_BYTES = 1 << 27      # at most ~128 MB of text per parsing task
HEAD_BYTES = 1 << 16
MIN_BYTES = 1 << 24        # smaller text inputs are read on the driver (``plan``)
_SEPARATORS = {b" ": " ", b"\t": "\t", b",": ","}
_INT = re.compile(rb"-?[0-9]+")
_TOKEN = re.compile(rb"[^\s,]+")


@attrs.frozen
class TextPlan:
    """Where the data lines start, their separator and the column order of a text input."""

    source: str
    size: int
    data_start: int            # the byte offset of the first data line
    separator: str
    columns: tuple             # u, v, t in the file's order
    lateness: str = "error"


def plan(path: str, lateness: str, r: int, s: int, min_bytes: int | None = None
         ) -> TextPlan | None:
    """A ``TextPlan`` when the staged path applies (module docstring), else None.

    A file under ``min_bytes`` (default ``MIN_BYTES``) is left to the driver's reader:
    reading it there costs less than a Spark job, and its errors come before Spark starts.
    """
    from streamspec.pipeline.io import _FIELD_SEPARATOR

    if lateness not in ("error", "drop") or s > r or is_parquet(path) or not fs.isfile(path):
        return None
    size = fs.getsize(path)
    if size < (MIN_BYTES if min_bytes is None else min_bytes):
        return None
    columns, offset = None, 0
    with fs.open_input(path) as f:
        while True:
            raw = f.readline(HEAD_BYTES)
            if not raw or (not raw.endswith(b"\n") and len(raw) == HEAD_BYTES):
                return None                     # empty, or a head line too long to judge
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                return None
            body = line[:-1] if line.endswith("\n") else line
            if "\r" in (body[:-1] if body.endswith("\r") else body):
                return None                     # a lone \r: universal newlines cut there
            text = line.strip()
            if not text or text.startswith("#"):
                offset += len(raw)
                continue
            if columns is None:
                names = [x.lower() for x in _FIELD_SEPARATOR.split(text)]
                if set(COLUMNS) <= set(names) and len(set(names)) == len(names) \
                        and set(names) <= set(COLUMNS) | {"key"}:
                    columns = tuple(names)
                    offset += len(raw)
                    continue
                columns = COLUMNS
            separator = _separator(raw.rstrip(b"\n").removesuffix(b"\r"), columns)
            if separator is None or lateness == "drop" and "key" in columns:
                return None         # keyed lateness drop: per key, on the driver
            return TextPlan(path, size, offset, separator, columns, lateness)


def _separator(line: bytes, columns: tuple) -> str | None:
    """The one separator of a first data line whose ids and time are integers (and whose
    key, if any, is one token), else None."""
    for byte, separator in _SEPARATORS.items():
        fields = line.split(byte)
        if len(fields) == len(columns) and all(
                _INT.fullmatch(f) if c != "key" else _TOKEN.fullmatch(f)
                for c, f in zip(columns, fields)):
            return separator
    return None


def stage_spans(spark, path: str, size: int, start: int, staging: str, partitions: int,
                stage_one) -> list | None:
    """Bytes ``[start, size)`` of a text file cut at line starts into at least
    ``partitions`` ranges (and one per ``CHUNK_BYTES``), each staged by one Spark task as
    ``stage_one(start, stop, out, part) -> (ok, ...)`` into ``staging/part-NNNNNN.parquet``;
    the reports ``(part, ok, ...)`` in file order, or None when there is no range, or a
    range is missing or refused (the validating reader then judges the file).  Shared by
    every staged text input (edges here, keyed set streams in ``jobs.simjoin``)."""
    cuts = line_cuts(path, size, max(partitions, -(-size // CHUNK_BYTES)))
    cuts = [start] + [c for c in cuts if c > start]
    spans = list(zip(cuts, cuts[1:]))
    if not spans:
        return None
    os.makedirs(staging)

    def run(numbers):
        for n in numbers:
            yield (n, *stage_one(*spans[n], os.path.join(staging, f"part-{n:06d}.parquet"), n))

    reports = sorted(spark.sparkContext.parallelize(range(len(spans)), len(spans))
                     .mapPartitions(run).collect())
    if [r[0] for r in reports] != list(range(len(spans))) or not all(r[1] for r in reports):
        return None
    return reports


def stage(spark, source: TextPlan, staging: str, partitions: int) -> Staged | None:
    """Parse the data lines into Parquet files in ``staging`` (module docstring); None
    when some task's parser refused its range (the validating reader then judges)."""
    reports = stage_spans(spark, source.source, source.size, source.data_start, staging,
                          partitions, functools.partial(stage_span, source))
    if reports is None:
        return None
    kinds = {r[2] for r in reports if r[3]}         # the key kinds of ranges with edges
    if len(kinds) > 1:
        return None     # int keys in one range, text in another: the reader types them all
    times = [(r[4], r[5]) for r in reports if r[3]]
    return Staged(staging, sum(r[3] for r in reports), kinds.pop() if kinds else None,
                  min(t[0] for t in times) if times else None,
                  max(t[1] for t in times) if times else None,
                  tuple(r[5] if r[3] else None for r in reports))


@attrs.frozen
class Staged:
    """What the staging tasks reported: the directory, the edges, the key kind (``int``,
    ``str``, or None unkeyed), the least and greatest time."""

    path: str
    edges: int
    key_kind: type | None
    first_t: int | None
    last_t: int | None
    part_last_t: tuple = ()     # each range's greatest time (None: no edge), in file order


def staged_plan(spark, source: TextPlan, staging: str, partitions: int, origin: int | None,
                r: int, s: int):
    """``stage`` the input, then the range scan's ``Plan`` of the staged files; None when
    the tasks refused it or the footers show it out of time order or before ``origin``."""
    from streamspec.pipeline import range_scan

    if "key" in source.columns:
        return None
    staged = stage(spark, source, staging, partitions)
    if staged is None:
        return None
    dropped = drop_late(spark, staged) if source.lateness == "drop" else 0
    scan = range_scan.plan(staging, "error", origin, r, s)
    return attrs.evolve(scan, dropped=dropped) if scan is not None and scan.rows else None


def drop_late(spark, staged: Staged) -> int:
    """Lateness ``drop`` over the staged files, as the validating reader applies it
    (``pipeline.io.edges.check_order``): an edge earlier than any edge before it in the
    file is removed.  Each range's file is filtered by its own task, given the greatest
    time of the ranges before it; returns the number of edges removed."""
    before, running = [], None
    for last in staged.part_last_t:
        before.append(running)
        if last is not None:
            running = last if running is None else max(running, last)

    def run(numbers):
        for n in numbers:
            yield filter_late(os.path.join(staged.path, f"part-{n:06d}.parquet"), before[n])

    return sum(spark.sparkContext.parallelize(range(len(before)), max(1, len(before)))
               .mapPartitions(run).collect())


def filter_late(path: str, before: int | None) -> int:
    """Remove the late edges of one staged file (``drop_late``); their number."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    t = table.column("t").to_numpy()
    if not len(t):
        return 0
    floor = np.maximum.accumulate(t)
    seen = np.concatenate([[np.iinfo(np.int64).min if before is None else before],
                           floor[:-1]])
    if before is not None:
        seen = np.maximum(seen, before)
    keep = t >= seen
    if keep.all():
        return 0
    import pyarrow as pa

    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.tmp")
    pq.write_table(table.filter(pa.array(keep)), tmp, row_group_size=GROUP_ROWS)
    os.replace(tmp, path)
    return int(len(t) - keep.sum())


def stage_span(source: TextPlan, start: int, stop: int, out: str, part: int = 0) -> tuple:
    """Bytes ``[start, stop)`` (whole data lines) as a Parquet file of ``u, v, t`` (keyed:
    ``seq, u, v, t, key``, ``seq`` numbering the edges in file order from ``part << 40``).
    Returns ``(ok, key kind, edges, least time, greatest time)``; not ok when pyarrow's
    strict parse refuses the bytes (nothing is written then)."""
    import io

    import pyarrow as pa
    import pyarrow.compute as pc_
    import pyarrow.csv as pc
    import pyarrow.parquet as pq

    refused = (False, None, 0, None, None)
    data = read_span(source.source, start, stop)
    if b"\x00" in data:        # a NUL in a key would make a text key: the reader names the line
        return refused
    types = {c: pa.string() if c == "key" else pa.int64() for c in source.columns}
    try:
        table = pc.read_csv(
            io.BytesIO(data),
            read_options=pc.ReadOptions(column_names=list(source.columns), use_threads=False,
                                        block_size=max(1 << 20, len(data) + 1)),
            parse_options=pc.ParseOptions(delimiter=source.separator, quote_char=False,
                                          double_quote=False, escape_char=False,
                                          newlines_in_values=False, ignore_empty_lines=True),
            convert_options=pc.ConvertOptions(column_types=types, null_values=[],
                                              strings_can_be_null=False,
                                              quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
        return refused
    if table.num_columns != len(source.columns) or any(table.column(c).null_count
                                                        for c in table.column_names):
        return refused
    columns, kind = list(COLUMNS), None
    if "key" in source.columns:
        keys, kind = _typed_keys(table.column("key"))
        if keys is None:
            return refused
        table = table.set_column(table.column_names.index("key"), "key", keys)
        table = table.append_column("seq", pa.array(
            (part << 40) + np.arange(table.num_rows, dtype=np.int64)))
        columns = ["seq", *COLUMNS, "key"]
    pq.write_table(table.select(columns), out, row_group_size=GROUP_ROWS)
    t = table.column("t")
    return (True, kind, table.num_rows,
            pc_.min(t).as_py() if table.num_rows else None,
            pc_.max(t).as_py() if table.num_rows else None)


def _typed_keys(keys):
    """Keys as the validating reader types them (``pipeline.io.id_column``): int64 when
    every key is a plain integer (``-?[0-9]+``, within 64 bits), else text; None when a
    key is an integer some other way (``+5``) or beyond 64 bits (the reader judges)."""
    import pyarrow as pa
    import pyarrow.compute as pc_

    if pc_.all(pc_.match_substring_regex(keys, r"^[+-]?[0-9]+$")).as_py() is False:
        return keys, str                # a key that is no integer: every key is text
    if pc_.all(pc_.match_substring_regex(keys, r"^-?[0-9]+$")).as_py() is False:
        return None, None               # "+5": left to the reader
    try:
        return pc_.cast(keys, pa.int64()), int
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None, None               # beyond 64 bits: the reader's located error


def staging_dir(output: str) -> str | None:
    """A fresh directory path beside the output (the executors write there), or None for
    an output on a remote file system."""
    if "://" in output:
        return None
    parent = os.path.dirname(os.path.abspath(output))
    return os.path.join(parent, f".{os.path.basename(os.path.abspath(output))}.staging-{uuid.uuid4().hex[:12]}")


def remove(staging: str | None) -> None:
    if staging:
        shutil.rmtree(staging, ignore_errors=True)
