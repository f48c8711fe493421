"""Text item inputs of the topkjoin job parsed by Spark tasks, not the driver (issue 11).

A local CSV or JSON lines items file (``--input items.csv`` / ``.json`` /
``.jsonl``, as ``pipeline.io.topkjoin.read_items`` reads it) of at least
``SMALL`` bytes (1 MB; a smaller one is read on the driver, which costs less
than Spark's tasks) is planned here from its first lines only
(``plan_text_items``): the CSV header (which columns are ``id, x, ts[, key]``,
in any order) and the first ``HEAD_LINES`` (64) lines, parsed as the tasks
parse and checked by the spec on the driver, so a bad record there still fails
before Spark starts (the plan declines the file and ``read_items`` names it).
The file is cut into byte ranges at line starts
(``pipeline.io.lines.line_cuts``) and each Spark task parses its own range
(``parse_chunk``) exactly as the driver's reader would:

- CSV: the ``csv`` module with ``skipinitialspace``, rows of blank fields
  skipped, every row as many fields as the header, ``x`` by ``float()``,
  ``ts`` by ``int()`` within 64 bits (``pipeline.io.topkjoin._number``); a
  range of plain bytes (printable ASCII without spaces or quotes, ``\n`` or
  ``\r\n`` line ends) is split by newline and comma in C instead
  (``_plain_rows``), which is what the csv module reads there;
- JSON lines: UTF-8, universal newlines (a lone ``\\r`` ends a line there
  too, and a cut is only ever after ``\\n``), one object per non-blank line,
  ``id``/``key`` an int or a string, ``x`` an int or a float, ``ts`` an int
  within 64 bits, every row with ``key`` or none.

Ids (and keys) follow ``pipeline.io.id_column``'s int-or-string rule over the
whole input: each task applies ``id_column`` to its own tokens (JSON ints as
their decimal text) and reports a verdict (``int``, ``string``, ``overflow``);
every range ``int`` means the whole input's ids are ints with the same values,
every range ``string`` means they are the tokens (``combined_kind``).  Ranges
that disagree, and anything a task cannot take as the driver would (a quote
``"`` anywhere in a CSV range: a quoted field may hold a newline, so a cut
could fall inside it; a missing field, a value of another type, a row of the
wrong width, bytes that are not UTF-8, ...), send the whole input back to
``read_items``: on the driver, with its exact ``file:line`` error when the
input is bad.  The tasks never number lines: when the spec rejects an item in
a task, the job runs ``read_items`` again only to raise its located error
(``streamspec.pipeline.jobs.topkjoin.text_replay``), so a message is the same
on every path.  Which tasks parse which ranges (one task for an input without
``key``, parallel ranges then a shuffle by key for a keyed one) is the job's
business: ``streamspec.pipeline.jobs.topkjoin``.
"""
from __future__ import annotations

import csv
import io
import json
import os

import attrs
import numpy as np

from streamspec.pipeline import fs
from streamspec.pipeline.io import id_column, is_parquet, json_loads
from streamspec.pipeline.io.lines import lone_cr
from streamspec.spec.errors import MalformedRecord, RecordError

NEEDED = ("id", "x", "ts")
ROW_SHIFT = 40                   # seq = range number << 40 | record in the range (0-based)
HEAD_BLOCK = 1 << 16


class Unfit(Exception):
    """A range the task cannot take exactly as ``read_items`` would: the driver reads it."""


@attrs.frozen
class TextItems:
    """A local CSV or JSON lines items file the Spark tasks parse (``plan_text_items``).

    ``start`` is the first byte after the CSV header line (0 for JSON lines); ``columns``
    the header's position of ``id, x, ts[, key]`` (CSV); ``keyed`` whether the first
    record has a ``key`` (every record must agree)."""

    source: str
    size: int
    fmt: str                        # "csv" | "json"
    start: int
    keyed: bool
    width: int = 0                  # CSV: fields per row (the header's)
    columns: tuple = ()             # CSV: positions of id, x, ts[, key]

    def cuts(self, parts: int) -> list[int]:
        """Byte offsets of about ``parts`` ranges of the records, each at a line start."""
        from streamspec.pipeline.io.lines import line_cuts

        cuts = line_cuts(self.source, self.size, max(1, parts))
        return [self.start] + [c for c in cuts if c > self.start]


def _head(path: str, size: int, lines: int) -> bytes:
    """The file's bytes up to the end of its ``lines``-th line (or all of it)."""
    with fs.open_input(path) as f:
        head = f.read(HEAD_BLOCK)
        while head.count(b"\n") < lines and len(head) < size:
            head += f.read(HEAD_BLOCK)
    return head


def _first_line_end(data: bytes, skip_blank_csv: bool) -> int | None:
    """The offset just after the first line of ``data`` that is not blank (for CSV: not a row
    of blank fields), counting lines by ``\\n`` only; None when there is none in ``data``."""
    at = 0
    while True:
        n = data.find(b"\n", at)
        if n < 0:
            return None
        line = data[at:n + 1]
        text = line.decode("utf-8")
        if skip_blank_csv:
            rows = list(csv.reader(io.StringIO(text, newline=""), skipinitialspace=True))
            blank = all(not any(f.strip() for f in r) for r in rows)
        else:
            blank = not text.strip()
        if not blank:
            return n + 1
        at = n + 1


SMALL = 1 << 20     # bytes: a smaller file is read on the driver (``plan_text_items``)
HEAD_LINES = 64     # lines checked on the driver before Spark starts


def plan_text_items(path: str, origin: int | None = None, small: int | None = None
                    ) -> TextItems | None:
    """The plan of a local CSV or JSON lines items file of at least ``small`` bytes
    (default ``SMALL``: a smaller one costs less on the driver than Spark's tasks) whose
    header (CSV) and first ``HEAD_LINES`` lines the tasks take as the driver's reader would
    and the spec accepts; None otherwise (``read_items`` then reads the file on the driver
    and names its first bad line before Spark starts).  A bad line further on is found by
    the task that parses it, after Spark has started."""
    if is_parquet(path) or not fs.isfile(path):
        return None
    fmt = "json" if path.endswith((".json", ".jsonl")) else "csv"
    size = fs.getsize(path)
    if size < (SMALL if small is None else small):
        return None
    try:
        head = _head(path, size, HEAD_LINES)
        cut = 0
        for _ in range(HEAD_LINES):             # the first lines, each with its newline
            n = head.find(b"\n", cut)
            if n < 0:
                break
            cut = n + 1
        head = head[:cut]
        # lines there are not what ``\n`` cuts: a lone CR, a quote (maybe around a newline)
        if lone_cr(head) or (fmt == "csv" and b'"' in head):
            return None
        if fmt == "csv":
            end = _first_line_end(head, True)
            if end is None:
                return None
            header = [r for r in csv.reader(io.StringIO(head[:end].decode("utf-8"), newline=""),
                                            skipinitialspace=True) if any(f.strip() for f in r)][0]
            names = [n.strip() for n in header]
            if any(names.count(c) != 1 for c in NEEDED) or names.count("key") > 1:
                return None
            keyed = "key" in names
            plan = TextItems(path, size, fmt, end, keyed, len(names),
                             tuple(names.index(c) for c in NEEDED + (("key",) if keyed else ())))
        else:
            first_end = _first_line_end(head, False)
            if first_end is None:
                return None
            row = json_loads(head[:first_end].decode("utf-8"))
            if not isinstance(row, dict):
                return None
            plan = TextItems(path, size, fmt, 0, "key" in row)
        _check_head(parse_chunk(plan, head[plan.start:]), origin, plan.keyed)
    except (Unfit, ValueError, RecordError, csv.Error):   # JSON/UTF-8 errors are ValueErrors
        return None
    return plan


def _check_head(parsed: dict, origin: int | None, keyed: bool) -> None:
    """The spec's check of the first records, key by key (``read_items``' check, origin
    included); ``Unfit`` when there is none."""
    from streamspec.spec.errors import OutOfOrder
    from streamspec.spec.topkjoin import ItemBatch, id_type, validate

    ids, x, ts = parsed["id"], parsed["x"], parsed["t"]
    if not len(x):
        raise Unfit
    keys = parsed["key"] if keyed else np.zeros(len(x), np.int64)
    kind = id_type(ids[0])
    for key in dict.fromkeys(keys.tolist()):
        rows = np.flatnonzero(keys == key)
        validate(ItemBatch(ids[rows], x[rows], ts[rows]), kind, None)
        if origin is not None and ts[rows[0]] < origin:
            raise OutOfOrder("before the origin")


def _verdict(tokens: list[str]) -> tuple[str, np.ndarray]:
    """``id_column``'s verdict on a range's tokens: ``int`` (and the values) or ``string``
    (and the tokens); ``overflow`` raises ``Unfit`` too (the driver names the id)."""
    try:
        values = id_column(tokens)
    except MalformedRecord:
        raise Unfit from None
    except StopIteration:       # id_column on a zero-padded run of more than 20 digits
        raise Unfit from None
    return ("int" if values.dtype.kind == "i" else "string"), values


def _ints(tokens: list[str]) -> np.ndarray:
    """``ts`` as ``_number(v, integer=True)`` reads a CSV field: ``int()`` of at most 20
    characters, within 64 bits; anything else is ``Unfit``."""
    if tokens and max(map(len, tokens)) > 20:
        raise Unfit
    try:
        return np.fromiter((int(v) for v in tokens), dtype=np.int64, count=len(tokens))
    except (ValueError, OverflowError):
        raise Unfit from None


def _floats(tokens: list[str]) -> np.ndarray:
    try:
        return np.fromiter((float(v) for v in tokens), dtype=np.float64, count=len(tokens))
    except (ValueError, OverflowError):
        raise Unfit from None


# bytes the csv module reads as plain field text: printable ASCII but the space (which
# ``skipinitialspace`` drops) and the quote; ``str.strip`` strips none of them
_PLAIN = bytes(range(0x21, 0x7f)).replace(b'"', b"") + b"\n"


def _plain_rows(plan: TextItems, data: bytes) -> list[list[str]] | None:
    """The fields of ``data`` split by ``\n`` and ``,`` when that is what the csv module
    reads (only ``_PLAIN`` bytes, ``\r`` only in ``\r\n``), as columns; None when not."""
    from operator import methodcaller

    text = data.replace(b"\r\n", b"\n")
    if text.translate(None, _PLAIN):
        return None
    lines = text.decode("ascii").split("\n")
    if lines[-1] == "":
        lines.pop()
    lines = [line for line in lines if line.strip(",")]       # rows of blank fields skipped
    if not lines:
        return [[] for _ in range(plan.width)]
    if set(map(methodcaller("count", ","), lines)) != {plan.width - 1}:
        raise Unfit                     # a row of another width: the reader names it
    flat = ",".join(lines).split(",")
    return [flat[i::plan.width] for i in range(plan.width)]


def _csv_columns(plan: TextItems, data: bytes) -> dict:
    cols = _plain_rows(plan, data)
    if cols is None:
        csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))     # as ``csv_table``
        text = data.decode("utf-8")
        rows = [r for r in csv.reader(io.StringIO(text, newline=""), skipinitialspace=True)
                if any(f.strip() for f in r)]
        if any(len(r) != plan.width for r in rows):
            raise Unfit
        cols = list(zip(*rows)) if rows else [()] * plan.width
    pick = [list(cols[i]) for i in plan.columns]
    out = {"id_tokens": pick[0], "x": _floats(pick[1]), "t": _ints(pick[2])}
    if plan.keyed:
        out["key_tokens"] = pick[3]
    return out


INT64 = (-2**63, 2**63 - 1)


def _json_id(v) -> str:
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise Unfit
    if isinstance(v, int):
        if not INT64[0] <= v <= INT64[1]:
            raise Unfit
        return str(v)
    return v


def _json_columns(plan: TextItems, data: bytes) -> dict:
    ids, xs, ts, keys = [], [], [], []
    for raw in io.StringIO(data.decode("utf-8"), newline=None):
        if not raw.strip():
            continue
        row = json_loads(raw)
        if not isinstance(row, dict) or ("key" in row) != plan.keyed:
            raise Unfit
        try:
            i, x, t = row["id"], row["x"], row["ts"]
        except KeyError:
            raise Unfit from None
        ids.append(_json_id(i))
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise Unfit
        try:
            xs.append(float(x))
        except OverflowError:           # an int beyond the floats: the reader names it
            raise Unfit from None
        if isinstance(t, bool) or not isinstance(t, int) or not INT64[0] <= t <= INT64[1]:
            raise Unfit
        ts.append(t)
        if plan.keyed:
            keys.append(_json_id(row["key"]))
    out = {"id_tokens": ids, "x": np.array(xs, dtype=np.float64),
           "t": np.array(ts, dtype=np.int64)}
    if plan.keyed:
        out["key_tokens"] = keys
    return out


def parse_chunk(plan: TextItems, data: bytes) -> dict:
    """The records of ``data`` (whole lines of the file, cut by ``TextItems.cuts``) as
    columns: ``id``/``key`` with their verdicts (``id_kind``, ``key_kind``: ``int`` with
    int64 values, ``string`` with the tokens), ``x`` float64, ``t`` int64.  ``Unfit`` (or
    a ``ValueError``: JSON, UTF-8) when the driver's reader must take the input."""
    if b"\x00" in data:         # the driver's reader names the line
        raise Unfit
    if plan.fmt == "csv":
        if b'"' in data:
            raise Unfit
        try:
            cols = _csv_columns(plan, data)
        except csv.Error:
            raise Unfit from None
    else:
        cols = _json_columns(plan, data)
    out = {"x": cols["x"], "t": cols["t"]}
    out["id_kind"], out["id"] = _verdict(cols["id_tokens"]) if cols["id_tokens"] else \
        ("none", np.empty(0, np.int64))
    if plan.keyed:
        out["key_kind"], out["key"] = _verdict(cols["key_tokens"]) if cols["key_tokens"] else \
            ("none", np.empty(0, np.int64))
    return out


def read_chunk(plan: TextItems, start: int, stop: int) -> dict:
    """``parse_chunk`` of bytes ``[start, stop)`` of the file."""
    from streamspec.pipeline.io.lines import read_span
    return parse_chunk(plan, read_span(plan.source, start, stop))


def combined_kind(kinds) -> str | None:
    """The whole input's kind from its ranges' verdicts (module docstring): ``long`` when
    every range (with records) is ``int``, ``string`` when every one is ``string``; None
    (the driver's reader decides) when they differ."""
    found = set(kinds) - {"none"}
    if found <= {"int"}:
        return "long"
    if found == {"string"}:
        return "string"
    return None
