"""Typed errors shared by every problem.

Every error raised for bad input is a ``StreamspecError``.  Errors about one
record carry its position: ``index`` (0-based position in what was handed to
``process``) and, once the pipeline knows it, ``location`` (``file:line``).
The command line turns a ``StreamspecError`` into its ``exit_code``: 2 for
bad input or parameters, 1 for a ``ContractViolation`` (an engine's bug, not
the input's).
"""
from __future__ import annotations


class StreamspecError(Exception):
    """Base class of every error streamspec raises on purpose."""

    exit_code = 2


class InvalidParameter(StreamspecError, ValueError):
    """A parameter is out of range or of the wrong type (``r <= 0``, ...)."""


class UnknownEngine(StreamspecError, LookupError):
    """No engine of that name is registered for the problem."""


class PathError(StreamspecError, OSError):
    """A path flag streamspec cannot use: a URI scheme it does not read (only local
    paths and ``file:`` URIs are read by its own readers), or a file or directory the
    Spark executors cannot open or create (on a cluster: not on a file system every
    worker shares at the same path).  Names the flag and the path."""


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


class ContractViolation(StreamspecError):
    """An engine hook returned something its problem's base class cannot use.

    Raised by the spec base classes (``ConnectivityEngine``, ``KwsEngine``,
    ``SimJoinEngine``, ``TopkJoinEngine``) where they consume a hook's return
    value: a list where a numpy array is due, too few rows, a wrong dtype,
    elements of the wrong type, ``None``...  Fields: ``hook`` (the contract's
    name of the hook, e.g. ``"ConnectivityEngine._run"``), ``engine`` (which
    engine broke it, ``problem.name (Class)``), ``returned`` (a short
    description of what came back: type, shape, dtype, length) and ``wanted``
    (what the spec wants, in words).  Exit code 1: a bug of the engine, not of
    the input.  An exception raised inside a hook is never wrapped in this.
    """

    exit_code = 1

    def __init__(self, hook: str, returned: str, wanted: str, *, engine: str | None = None):
        self.hook = hook
        self.returned = returned
        self.wanted = wanted
        self.engine = engine
        super().__init__(self._render())

    def _render(self) -> str:
        who = f"engine {self.engine}: " if self.engine else ""
        return (f"{who}{self.hook} broke the engine contract: it returned {self.returned}; "
                f"the spec wants {self.wanted}")

    @classmethod
    def of(cls, engine, hook: str, value, wanted: str) -> "ContractViolation":
        """The error about ``engine`` (an engine instance or class) whose ``hook``
        returned ``value``."""
        return cls(hook, describe(value), wanted, engine=engine_label(engine))

    def __reduce__(self):  # keep the fields across pickling (Spark executors)
        return (_rebuild_violation, (type(self), self.hook, self.returned, self.wanted,
                                     self.engine))


def _rebuild_violation(cls, hook, returned, wanted, engine):
    return cls(hook, returned, wanted, engine=engine)


def engine_label(engine) -> str:
    """``problem.name (Class)`` of an engine instance or class (the class alone
    when it declares no name)."""
    cls = engine if isinstance(engine, type) else type(engine)
    problem, name = getattr(cls, "problem", None), getattr(cls, "name", None)
    if isinstance(problem, str) and isinstance(name, str):
        return f"{problem}.{name} ({cls.__name__})"
    return cls.__name__


def _short_repr(value, limit: int = 60) -> str:
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001  (a broken __repr__ must not hide the violation)
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + "..."


def describe(value) -> str:
    """A short description of a hook's return value: type, shape and dtype of an
    array, length and first element of a list or tuple, else a short repr."""
    if value is None:
        return "None"
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if isinstance(shape, tuple) and dtype is not None:
        return f"{type(value).__name__} of shape {shape}, dtype {dtype}"
    if isinstance(value, (list, tuple)):
        kind = type(value).__name__
        if not value:
            return f"an empty {kind}"
        return f"a {kind} of length {len(value)}, first element {_short_repr(value[0])}"
    return f"{type(value).__name__} {_short_repr(value)}"
