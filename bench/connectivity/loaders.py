"""Real edge lists as streams, the way the BIC paper replays them.

BIC TR Section 7.1: the datasets are SNAP-style
edge lists; SO and LK have real timestamps, the others are given synthetic
ones at a fixed rate (100 edges per second, one timestamp per second); the
authors' loader drops self-loops and repeated undirected edges.

File format (``.gz`` / ``.bz2`` / ``.xz`` are read transparently):

- one edge per line, ``u v`` or ``u v t``, fields separated by whitespace,
  integer vertex ids and times;
- lines starting with ``comment`` (default ``#``; Konect files use ``%``) and
  blank lines are skipped; a comment may also end a line;
- every edge line has the same number of fields (2: synthetic times, 3: real
  times).  Anything else is a ``MalformedRecord`` located at ``file:line``.

The fast path is pandas' C parser; when it objects (or leaves holes), a plain
line-by-line pass finds the first bad line and names it.
"""
from __future__ import annotations

import bz2
import gzip
import lzma
from pathlib import Path

import numpy as np
import pandas as pd

from streamspec.spec.errors import MalformedRecord

from streamspec.bench.connectivity.generators import Stream, timestamps

PAPER_EDGES_PER_TIMESTAMP = 100   # "100 edges per second", TR Section 7.1


def load_edge_list(path, *, edges_per_timestamp: int = PAPER_EDGES_PER_TIMESTAMP,
                   time_step: int = 1, t0: int = 0, comment: str = "#",
                   drop_self_loops: bool = True, drop_duplicates: bool = True,
                   sort: bool = True, limit: int | None = None) -> Stream:
    """Read a SNAP edge list as a ``Stream``.

    - No time column: edge ``i`` (after dropping) gets
      ``t0 + (i // edges_per_timestamp) * time_step`` (the paper: 100 edges per
      timestamp, ``time_step=1000`` for its milliseconds).
    - A time column: kept; ``sort`` orders edges by time (stable, so ties keep
      file order), as the engines require non-decreasing times.
    - ``drop_self_loops`` / ``drop_duplicates``: the paper's loader drops
      self-loops and every repeat of an undirected pair (the first is kept).
    - ``limit``: read only the first ``limit`` edge lines (quick runs).
    """
    path = Path(path)
    u, v, t = _parse(path, comment, limit)
    keep = np.ones(len(u), dtype=bool)
    if drop_self_loops:
        keep &= u != v
    if drop_duplicates and len(u):
        lo, hi = np.minimum(u, v), np.maximum(u, v)
        key_lo, key_hi = lo - lo.min(), hi - lo.min()
        span = int(key_hi.max()) + 1
        _, first = np.unique(key_lo * span + key_hi, return_index=True)
        once = np.zeros(len(u), dtype=bool)
        once[first] = True
        keep &= once
    u, v = u[keep], v[keep]
    if t is None:
        t = timestamps(len(u), edges_per_timestamp, 0) * time_step + t0
        times = f"synthetic times: {edges_per_timestamp} edges per timestamp, step {time_step}"
    else:
        t = t[keep]
        if sort and len(t) and np.any(t[1:] < t[:-1]):
            order = np.argsort(t, kind="stable")
            u, v, t = u[order], v[order], t[order]
        times = "times from the file"
    desc = (f"{path.name}: {len(u)} edges ({times}; self-loops "
            f"{'dropped' if drop_self_loops else 'kept'}, duplicates "
            f"{'dropped' if drop_duplicates else 'kept'})")
    return Stream(u, v, t, desc)


def _open(path: Path):
    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(path.suffix, open)
    return opener(path, "rt")


def _parse(path: Path, comment: str, limit: int | None):
    try:
        frame = pd.read_csv(path, sep=r"\s+", comment=comment, header=None, nrows=limit,
                            engine="c", skip_blank_lines=True)
    except pd.errors.EmptyDataError:
        return np.empty(0, np.int64), np.empty(0, np.int64), None
    except (pd.errors.ParserError, ValueError, UnicodeDecodeError):
        return _parse_lines(path, comment, limit)
    if frame.shape[1] not in (2, 3) or any(frame[c].dtype.kind not in "iu" for c in frame):
        return _parse_lines(path, comment, limit)   # holes, floats, words: find the line
    u = frame[0].to_numpy(np.int64)
    v = frame[1].to_numpy(np.int64)
    t = frame[2].to_numpy(np.int64) if frame.shape[1] == 3 else None
    return u, v, t


def _parse_lines(path: Path, comment: str, limit: int | None):
    """The slow, exact parser: the first bad line raises ``MalformedRecord`` at ``file:line``."""
    rows: list[list[int]] = []
    width = None
    with _open(path) as handle:
        for lineno, line in enumerate(handle, 1):
            text = line.split(comment, 1)[0].strip()
            if not text:
                continue
            if limit is not None and len(rows) >= limit:
                break
            fields = text.split()
            where = f"{path}:{lineno}"
            if len(fields) not in (2, 3):
                raise MalformedRecord(f"expected 'u v' or 'u v t', got {len(fields)} fields: "
                                      f"{text!r}", index=len(rows)).at(where)
            if width is None:
                width = len(fields)
            elif len(fields) != width:
                raise MalformedRecord(f"expected {width} fields like the first edge line, got "
                                      f"{len(fields)}: {text!r}", index=len(rows)).at(where)
            try:
                rows.append([int(x) for x in fields])
            except ValueError:
                raise MalformedRecord(f"fields must be integers: {text!r}",
                                      index=len(rows)).at(where) from None
    if not rows:
        return np.empty(0, np.int64), np.empty(0, np.int64), None
    arr = np.asarray(rows, dtype=np.int64)
    return arr[:, 0].copy(), arr[:, 1].copy(), (arr[:, 2].copy() if width == 3 else None)
