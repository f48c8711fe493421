"""Typed errors shared by every problem (DESIGN.md, "Errors").

Every error raised for bad input is a ``StreamspecError``.  Errors about one
record carry its position: ``index`` (0-based position in what was handed to
``process``) and, once the pipeline knows it, ``location`` (``file:line``).
The command line turns any ``StreamspecError`` into exit code 2.
"""
from __future__ import annotations


class StreamspecError(Exception):
    """Base class of every error streamspec raises on purpose."""

    exit_code = 2


class InvalidParameter(StreamspecError, ValueError):
    """A parameter is out of range or of the wrong type (``r <= 0``, ...)."""


class UnknownEngine(StreamspecError, LookupError):
    """No engine of that name is registered for the problem."""


class NoWindowYet(StreamspecError, RuntimeError):
    """An ad-hoc query was asked before any window was evaluated."""


class AdHocUnavailable(StreamspecError, RuntimeError):
    """Ad-hoc queries were asked of an engine driven with ``hold_back=False``."""


class RecordError(StreamspecError, ValueError):
    """A single input record is bad.  Names the record it is about."""

    def __init__(self, message: str, *, index: int | None = None,
                 location: str | None = None):
        self.message = message
        self.index = index
        self.location = location
        super().__init__(self._render())

    def _render(self) -> str:
        where = self.location or (f"record {self.index}" if self.index is not None else None)
        return f"{where}: {self.message}" if where else self.message

    def at(self, location: str) -> "RecordError":
        """The same error, located at ``file:line`` (used by the readers)."""
        self.location = location
        self.args = (self._render(),)
        return self

    def __reduce__(self):  # keep the fields across pickling (Spark executors)
        return (_rebuild, (type(self), self.message, self.index, self.location))


def _rebuild(cls, message, index, location):
    return cls(message, index=index, location=location)


class MalformedRecord(RecordError):
    """A record that cannot be parsed (wrong field count, not a number...)."""


class OutOfOrder(RecordError):
    """A record whose time is earlier than the time already seen (lateness policy ``error``)."""


class InvalidRecord(RecordError):
    """A well-formed record whose value breaks the spec (wrong vertex type, ...)."""
