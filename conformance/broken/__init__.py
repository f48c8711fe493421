"""Deliberately broken engines: the mutation catalogue the conformance suite must kill.

``conformance/broken/<problem>.py`` holds, in ``MUTANTS``, engines that are each a
working engine with one realistic mutation.  The suite tests itself with them
(``streamspec.conformance.mutation``): under the ``ci`` profile every check of
``streamspec.conformance.checks`` together must catch (kill) every mutant, and the
report lists the examples each needed.  A mutant that survives is a bug of the
suite (a check or a strategy misses something), never a reason to weaken it.

Every mutant is a module-level class (so its state pickles), named ``broken-...``,
with a class attribute ``mutation`` naming what it gets wrong:

- ``answer``: a wrong answer on ordinary input (scores, presence, end times, joins);
- ``window-start`` / ``window-end``: a window (or lifespan) boundary off by one, or
  never applied;
- ``r-not-multiple``: a window computed as if its size were a multiple of its slide;
- ``gap``: gaps longer than the window, empty windows or lists, several expiries at once;
- ``tie-order``: the order among equals (score ties, one instant's outputs, ``latest``
  at one timestamp, netting of one instant's changes);
- ``pickling-hold-back``: the pickled state drops what is held back for outputs not yet
  due (connectivity's ``hold_back=True`` tail, kws's open instant, top-k join's items of
  windows not yet evaluated);
- ``pickling-eager``: the pickled state drops the tail an engine built with
  ``hold_back=False`` applied on arrival;
- ``pickling-ad-hoc``: ad-hoc answers (connectivity's ``connected``) wrong after unpickling;
- ``pickling``: other engine state lost or corrupted by a round trip;
- ``lateness``: the ``lateness="drop"`` policy not applied;
- ``watermark``: watermarks (``advance_to``, simjoin's ``Advance``) mishandled;
- ``bad-record``: a bad record accepted or skipped instead of the typed error;
- ``contract-shape``: an engine hook returning the wrong type or shape;
- ``schema``: kws schema changes ignored;
- ``budget``: top-k join fetches beyond the per-evaluation budget;
- ``columnar``: wrong only on a columnar batch input (``ItemBatch``, ...);
- ``prewarm``: an eager engine's dry one-edge call (connectivity's fused trigger, which
  the driver runs dry after a batch) leaves behind state a later answer depends on.

They are not registered through entry points.  ``registered(problem)`` registers them
with ``streamspec.spec.registry.Registry`` while it lasts; ``find(problem, name)`` is
how ``streamspec conform`` and the pytest plugin find a ``broken-...`` engine named on
their command line.
"""
from __future__ import annotations

import importlib
from contextlib import contextmanager

PROBLEMS = ("connectivity", "simjoin", "kws", "topkjoin")
MUTATIONS = ("answer", "window-start", "window-end", "r-not-multiple", "gap", "tie-order",
             "pickling-hold-back", "pickling-eager", "pickling-ad-hoc", "pickling", "lateness",
             "watermark", "bad-record", "contract-shape", "schema", "budget", "columnar",
             "prewarm")

# Mutants the suite does not kill yet: gaps of the suite, each with what is missing.  The
# gate's tests mark them strict xfails (they fail once the gap is closed: remove the entry).
KNOWN_SURVIVORS: dict[tuple[str, str], str] = {}


def catalogue(problem: str) -> list[type]:
    """Every mutant of ``problem`` (``MUTANTS`` of ``conformance.broken.<problem>``)."""
    if problem not in PROBLEMS:
        from streamspec.spec.errors import InvalidParameter
        raise InvalidParameter(f"unknown problem {problem!r}: expected one of {', '.join(PROBLEMS)}")
    return list(importlib.import_module(f"{__name__}.{problem}").MUTANTS)


def find(problem: str, name: str) -> type | None:
    """The mutant of ``problem`` called ``name`` (``broken-...``), or None."""
    if problem not in PROBLEMS:
        return None
    return next((m for m in catalogue(problem) if m.name == name), None)


@contextmanager
def registered(problem: str | None = None):
    """Register the mutants of ``problem`` (all problems when None) with the engine
    ``Registry`` for the duration; yields the registered classes."""
    from streamspec.spec.registry import Registry
    mutants = [m for p in ([problem] if problem else PROBLEMS) for m in catalogue(p)]
    for m in mutants:
        Registry.register(m)
    try:
        yield mutants
    finally:
        for m in mutants:
            Registry.unregister(m)
