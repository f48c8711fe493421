"""The engine protocol every problem shares (the contract pages: docs/engines/).

An engine is built from its problem's validated parameters, consumes that
problem's events in order and yields that problem's output events::

    engine = Registry.create("connectivity", "bic", params)
    for out in engine.process(events): ...
    for out in engine.flush(): ...          # end of stream

Each engine class declares ``problem``, ``name``, ``exact`` and
``description`` (one line).  Engine state must be picklable so Spark can keep
it in group state.  Engines validate nothing themselves: each problem's spec
module provides a base class whose ``process`` validates a batch completely
before any state changes, then hands it to the engine.
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, ClassVar, Iterable, Iterator, Protocol, runtime_checkable

BATCH = 4096


@runtime_checkable
class Engine(Protocol):
    problem: ClassVar[str]
    name: ClassVar[str]
    exact: ClassVar[bool]
    description: ClassVar[str]

    def process(self, events: Iterable[Any]) -> Iterator[Any]:
        """Consume events in order; yield the outputs they make due."""

    def flush(self) -> Iterator[Any]:
        """End of stream: yield the remaining outputs."""


def describe(engine_cls) -> dict:
    """The row ``streamspec engines`` prints for an engine class."""
    return {
        "problem": engine_cls.problem,
        "name": engine_cls.name,
        "exact": bool(engine_cls.exact),
        "description": engine_cls.description,
    }


def validation_units(events, columnar: tuple = (), size: int = BATCH) -> Iterator:
    """Split ``process`` input into the units validated atomically.

    A sized input (a list, a tuple, or one of the problem's ``columnar`` batch
    types) is one unit: a bad record anywhere leaves the engine unchanged.  A
    lazy iterable is consumed ``size`` records at a time, each unit atomic.
    """
    if isinstance(events, columnar) or (
            isinstance(events, Sequence) and not isinstance(events, (str, bytes))):
        yield events
        return
    it = iter(events)
    while True:
        chunk = list(itertools.islice(it, size))
        if not chunk:
            return
        yield chunk
