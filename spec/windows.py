"""Sliding-window arithmetic shared by every windowed problem.

Window ``n`` (``n >= 0``) is the half-open interval ``[t0 + n*s, t0 + n*s + r)``
(``streamspec.spec.connectivity``; BIC TR Section 3 uses the same windows, with
the paper's closed interval ``tb <= t <= tb + r`` corrected to half-open: its
own example, size 5 over times 2..6, holds five timestamps, not six).  A window is *due* once a record
with time ``>= its end`` arrives (the continuous model: it is evaluated before
that record is applied), and at end of stream every window whose start is
``<=`` the last record's time is due too.

``g = gcd(r, s)`` slots make chunks exact when ``r`` is not a multiple of ``s``
(BIC TR Section 4 considers chunks of ``r/s`` slides only, exact when ``s``
divides ``r``; chunks of ``r/g`` slots of length ``g`` fit every window).
"""
from __future__ import annotations

import math

import attrs

from streamspec.spec.errors import InvalidParameter


def _positive_int(name):
    def check(instance, attribute, value):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidParameter(f"{name} must be an integer, got {value!r}")
        if value <= 0:
            raise InvalidParameter(f"{name} must be > 0, got {value}")
    return check


@attrs.frozen
class SlidingWindows:
    """Windows of size ``r`` sliding by ``s``, anchored at ``t0``."""

    r: int = attrs.field(validator=_positive_int("window size r"))
    s: int = attrs.field(validator=_positive_int("slide s"))
    t0: int = 0

    @property
    def g(self) -> int:
        """Slot length: ``gcd(r, s)``."""
        return math.gcd(self.r, self.s)

    @property
    def slots_per_window(self) -> int:
        """``K = r / g``: the chunk length in slots."""
        return self.r // self.g

    @property
    def slots_per_slide(self) -> int:
        """``m = s / g``: windows start at slots ``n*m``."""
        return self.s // self.g

    def start(self, n: int) -> int:
        return self.t0 + n * self.s

    def end(self, n: int) -> int:
        """Exclusive end of window ``n``."""
        return self.t0 + n * self.s + self.r

    def due_before(self, t: int) -> int:
        """Number of windows due once a record at time ``t`` arrives: ``#{n >= 0 : end(n) <= t}``."""
        if t < self.t0 + self.r:
            return 0
        return (t - self.t0 - self.r) // self.s + 1

    def started_by(self, t: int) -> int:
        """Number of windows with ``start(n) <= t`` (those evaluated at end of stream)."""
        if t < self.t0:
            return 0
        return (t - self.t0) // self.s + 1

    def containing(self, t: int) -> range:
        """Indices of the windows that contain time ``t``."""
        hi = self.started_by(t)
        lo = self.due_before(t)
        return range(lo, max(lo, hi))
