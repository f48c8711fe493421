"""Text inputs cut into byte ranges that Spark tasks parse themselves (issue 11).

A large text input (JSON lines, CSV, SNAP edge lists) is not read on the driver:
``line_cuts`` cuts the file into about ``parts`` byte ranges, each starting at
the start of a line, and each task reads its own range (``read_span``).  A
range's records are those whose lines start in it.  Line numbers for error
messages come from counting newlines (``count_lines``) before a range; the
readers of ``pipeline.io`` open text with universal newlines, so a path that
numbers lines by ``\\n`` must first make sure the bytes hold no lone ``\\r``
(``lone_cr``), or leave the file to the validating reader.
"""
from __future__ import annotations

from streamspec.pipeline.fs import open_input   # a local path or a URI (s3://...)


def line_cuts(path: str, size: int, parts: int) -> list[int]:
    """Byte offsets cutting the file into about ``parts`` chunks, each at the start of a
    line (just after a newline byte, which no UTF-8 character contains and which ends a
    line in Python's universal newlines too); first 0, last the size, no empty chunk."""
    cuts = [0]
    with open_input(path) as f:
        for p in range(1, parts):
            at = max(size * p // parts, cuts[-1])
            f.seek(at)
            while True:
                block = f.read(1 << 16)
                if not block:
                    at = size
                    break
                n = block.find(b"\n")
                if n >= 0:
                    at += n + 1
                    break
                at += len(block)
            if cuts[-1] < at < size:
                cuts.append(at)
    return cuts + [size]


def read_span(path: str, start: int, stop: int) -> bytes:
    """Bytes ``[start, stop)`` of the file."""
    with open_input(path) as f:
        f.seek(start)
        return f.read(stop - start)


def count_lines(data: bytes) -> int:
    """The lines that start in ``data`` (a span cut by ``line_cuts``): its newlines, plus
    one for a last line without a newline."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def lone_cr(data: bytes) -> bool:
    """Whether ``data`` holds a ``\\r`` that is not part of ``\\r\\n``: universal newlines
    would end a line there, so numbering lines by ``\\n`` would be wrong."""
    return data.count(b"\r") != data.count(b"\r\n")
