"""The paper's real mention stream as the authors' Java saw it (``twitterMentionSlides.txt``).

Paper §6 (experimental setting: tweets mentioning 400 verified users,
omega 100 s, beta 60 s); the authors' Java: windows ``[o, c)``, per-slide
counters that always store 1 (``java_compat``), and every window's aggregate
fed again at each evaluation.

The file (``acquaTopProj/Debug/twitterMentionSlides.txt``, see the data
README) has two kinds of line pairs, in stream order:

- ``FROM to TO slide{user=count, ...}`` + ``time : {user=last_ms, ...}``:
  slide ``k`` in full (``FROM = t0 + k*beta``; ``TO`` is the time of the
  tweet that closed the slide, past its end), the Java's per-slide count
  and the user's last mention in the slide;
- ``FROM TO TO Window : [{...}, {...}],`` + ``time : [{...}, {...}],``:
  window ``k`` = slide ``k`` (the first map, equal to the slide line's) and
  the first ``r = omega mod beta`` ms of slide ``k + 1`` (``FROM = t0 +
  (k+1)*beta``).

So per window the Java's streaming value of a user is the sum of its counts
in the two pieces (``{1, 2}``: the ``--java-compat`` value) and its time the
last mention in either.  ``read_slides`` parses and cross-checks all of it
(typed errors naming ``file:line``); ``items`` turns it into an ``(ids, x,
ts)`` item stream whose window ``sum`` and last item are those values, the
same construction as ``java_compat.slide_presence`` (one item at the
early-piece last mention, one at the slide's last mention if later, x = 0
when the early piece already counted); ``read_totals`` reads
``TotalResultNumber-CH20-B7.txt`` (``tau,users``) for the per-window check.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from streamspec.bench.topkjoin.data import BETA, OMEGA, SHARED_DATA, T0
from streamspec.spec.errors import InvalidParameter, InvalidRecord, MalformedRecord

SLIDES = SHARED_DATA / "acquatop" / "twitterMentionSlides.txt"
TOTALS = SHARED_DATA / "acquatop" / "TotalResultNumber-CH20-B7.txt"

_SLIDE = re.compile(r"(\d+) to (\d+) slide\{(.*)\}")
_WINDOW = re.compile(r"(\d+) TO (\d+) Window : \[\{(.*)\}, \{(.*)\}\],?")
_TIME = re.compile(r"time : \{(.*)\}")
_WTIME = re.compile(r"time : \[\{(.*)\}, \{(.*)\}\],?")
_ENTRY = re.compile(r"(\d+)=(\d+)")


@dataclass(frozen=True)
class Piece:
    """A slide piece: ``{user: count}`` and ``{user: last mention ms}`` over the same users."""

    count: dict
    last: dict


@dataclass(frozen=True)
class RealStream:
    """Slides ``k = 0..`` (full) and, per window ``k``, the early piece of slide ``k + 1``."""

    t0: int
    omega: int
    beta: int
    slides: list          # Piece per slide (the last one may be the trailing partial slide)
    early: list           # Piece per window: the first omega mod beta ms of slide k + 1

    @property
    def windows(self) -> int:
        return len(self.early)

    def window(self, k: int) -> dict:
        """``{user: (Java's value, last mention ms)}`` of window ``k`` (module docstring)."""
        out = {}
        for piece in (self.slides[k], self.early[k]):
            for u, c in piece.count.items():
                v, t = out.get(u, (0, piece.last[u]))
                out[u] = (v + c, max(t, piece.last[u]))
        return out


def _map(text: str, where: str) -> dict:
    if not text:
        return {}
    out = {}
    for part in text.split(", "):
        m = _ENTRY.fullmatch(part)
        if not m:
            raise MalformedRecord(f"expected user=number, got {part[:40]!r}").at(where)
        if int(m[1]) in out:
            raise MalformedRecord(f"user {m[1]} appears twice in one piece").at(where)
        out[int(m[1])] = int(m[2])
    return out


def _piece(counts: str, times: str, where: str, twhere: str, lo: int, hi: int) -> Piece:
    count, last = _map(counts, where), _map(times, twhere)
    if set(count) != set(last):
        raise InvalidRecord("the time line's users differ from the count line's").at(twhere)
    if any(c < 1 for c in count.values()):
        raise InvalidRecord("a count below 1 (a listed user is mentioned)").at(where)
    bad = [u for u, t in last.items() if not lo <= t < hi]
    if bad:
        raise InvalidRecord(f"user {bad[0]}'s last mention {last[bad[0]]} is outside "
                            f"[{lo}, {hi})").at(twhere)
    return Piece(count, last)


def read_slides(path: str | Path = SLIDES, omega: int = OMEGA, beta: int = BETA) -> RealStream:
    """Parse and cross-check the slides file (module docstring); ``t0`` is the first slide's FROM."""
    if not beta < omega < 2 * beta:
        # the file's layout: a window is one full slide plus one early piece of the next
        raise InvalidParameter(f"the slides file needs beta < omega < 2 beta, got {omega}, {beta}")
    path = Path(path)
    with open(path, encoding="utf-8") as f:
        lines = [line.rstrip("\r\n") for line in f]   # CRLF files too
    while lines and not lines[-1].strip():
        lines.pop()                                # a trailing newline is no record
    r = omega - beta
    t0, slides, early, at = None, [], [], []      # at: the line number of each window line
    for no in range(1, len(lines) + 1, 2):
        where, twhere = f"{path}:{no}", f"{path}:{no + 1}"
        head = lines[no - 1]
        if no == len(lines):
            raise MalformedRecord("a slide or Window line without its time line").at(where)
        tail = lines[no]
        if m := _SLIDE.fullmatch(head):
            tm = _TIME.fullmatch(tail)
            if not tm:
                raise MalformedRecord("expected 'time : {user=ms, ...}'").at(twhere)
            start = int(m[1])
            t0 = start if t0 is None else t0
            if len(slides) != len(early):
                raise InvalidRecord(f"slide {len(slides)} before window {len(early)}'s line").at(where)
            if start != t0 + len(slides) * beta:
                raise InvalidRecord(f"slide {len(slides)} starts at {start}, expected "
                                    f"{t0 + len(slides) * beta}").at(where)
            slides.append(_piece(m[3], tm[1], where, twhere, start, start + beta))
        elif m := _WINDOW.fullmatch(head):
            tm = _WTIME.fullmatch(tail)
            if not tm:
                raise MalformedRecord("expected 'time : [{...}, {...}]'").at(twhere)
            k = len(early)
            if t0 is None or k != len(slides) - 1:
                raise InvalidRecord(f"window {k} before its slide line").at(where)
            start = int(m[1])
            if start != t0 + (k + 1) * beta:
                raise InvalidRecord(f"window {k}'s second piece starts at {start}, expected "
                                    f"{t0 + (k + 1) * beta}").at(where)
            first = _piece(m[3], tm[1], where, twhere, start - beta, start)
            if first != slides[k]:
                raise InvalidRecord(f"window {k}'s first piece differs from slide {k}").at(where)
            early.append(_piece(m[4], tm[2], where, twhere, start, start + r))
            at.append(no)
        else:
            raise MalformedRecord("expected 'FROM to TO slide{...}' or "
                                  "'FROM TO TO Window : [{...}, {...}]'").at(where)
    if t0 is None:
        raise MalformedRecord("no slide in the file").at(f"{path}:1")
    _check_early(slides, early, t0, beta, r, [f"{path}:{no + 1}" for no in at])
    return RealStream(t0, omega, beta, slides, early)


def _check_early(slides, early, t0, beta, r, where):
    """Each early piece is slide ``k + 1``'s first ``r`` ms: same users, consistent last times."""
    for k, piece in enumerate(early):
        if k + 1 >= len(slides):
            raise InvalidRecord(f"window {k} has no slide {k + 1} after it").at(where[k])
        nxt, cut = slides[k + 1], t0 + (k + 1) * beta + r
        for u, t in piece.last.items():
            # the slide's last mention is the early one unless a later one lies past the cut
            s = nxt.last.get(u)
            if s is None or s < t or (s < cut and s != t):
                raise InvalidRecord(f"user {u} of window {k}'s second piece has no consistent last "
                                    f"mention in slide {k + 1}").at(where[k])
        late_only = {u for u, t in nxt.last.items() if t < cut} - set(piece.last)
        if late_only:
            raise InvalidRecord(f"user {min(late_only)} was last mentioned in slide {k + 1}'s first "
                                f"{r} ms but is not in window {k}'s second piece").at(where[k])


def items(stream: RealStream) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(ids, x, ts)`` sorted by ts whose window ``sum`` / last item are ``stream.window(k)``.

    Per (user, slide k): the early piece (window ``k - 1``'s second piece) gives an item at its
    last early mention with x = its count; the slide gives an item at the slide's last mention
    if that is later, with x = the slide count minus the early count (0 under the Java's 1s), so
    window ``k - 1`` sees the early piece only and window ``k`` the whole slide.  Slide 0 has no
    early piece listed (no window before it needs one).
    """
    rows = []
    for k, slide in enumerate(stream.slides):
        first = stream.early[k - 1] if 0 < k <= len(stream.early) else Piece({}, {})
        for u, t in first.last.items():
            rows.append((t, u, first.count[u]))
        for u, t in slide.last.items():
            if u not in first.last:
                rows.append((t, u, slide.count[u]))
            elif t > first.last[u]:
                rows.append((t, u, slide.count[u] - first.count[u]))
    rows.sort()
    ts = np.array([r[0] for r in rows], np.int64)
    ids = np.array([r[1] for r in rows], np.int64)
    x = np.array([r[2] for r in rows], np.float64)
    return ids, x, ts


def read_totals(path: str | Path = TOTALS) -> list[tuple[int, int]]:
    """``[(tau, users in the window)]`` of ``TotalResultNumber-*.txt``."""
    path, out = Path(path), []
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            if not line.strip():
                continue
            parts = line.strip().split(",")
            if len(parts) != 2 or not all(p.isdigit() for p in parts):
                raise MalformedRecord(f"expected 'tau,count', got {line.strip()[:40]!r}").at(f"{path}:{no}")
            out.append((int(parts[0]), int(parts[1])))
    return out


def load(path: str | Path = SLIDES):
    """``(ids, x, ts)`` of the real stream: the stream side of the ``--java-compat`` setting."""
    return items(read_slides(path))


__all__ = ["Piece", "RealStream", "read_slides", "items", "read_totals", "load", "SLIDES", "TOTALS",
           "T0"]
