"""Pickle round trips inside the checks: engine state must survive pickling.

Spark keeps an engine in group state and checkpoints it, so an engine pickled
at any point between two calls must go on exactly as one never pickled.  The
checks do not test this on the side: every check drives its engines through
``RoundTrips(engine_cls, trips)``, a stand-in for the engine class whose
engines are pickled at drawn points of the stream:

- a *trip* ``(call, keep_original)`` pickles the engine before its ``call``-th
  ``process`` or ``flush`` call (a chunk boundary; counted from 0, taken modulo
  the number of chunks + 1 so every drawn value lands somewhere); the engine then
  goes on as the unpickled copy, or, with ``keep_original``, as the pickled
  original (a ``__getstate__`` that changes the engine it pickles is a bug
  too);
- after each trip a never-pickled twin built alongside is fed the same calls,
  and every call must return exactly what the twin returns, so approximate
  engines (whose answers the oracle does not fix) are held to it as well;
- the engine's ad-hoc answers (connectivity's ``connected``; what a problem's
  ``adhoc(engine, case)`` returns) right after a trip must equal those asked
  right before it;
- the random generators the engine holds (``random_states``: ``random.Random``,
  numpy's ``Generator`` and ``RandomState``, two attribute levels deep) must be
  where the twin's are: a reseeded generator changes an approximate engine's
  answers only rarely, but always its future choices.

With ``columnar``, each chunk the check hands to ``process`` is given to the engine
in the problem's columnar batch form (``EdgeBatch``, ``RecordBatch``,
``TupleBatch``, ``ItemBatch``: what the Spark pipeline feeds) when it has one,
and to the twin as the list: the two input paths must answer alike.

Connectivity's checks build every engine twice, with ``hold_back=True`` and
``hold_back=False``; both go through here, so both settings are pickled.  A
difference raises ``PicklingDivergence``, which the checks report as a mismatch
naming the trip.
"""
from __future__ import annotations

import pickle
import random

import numpy as np



class PicklingDivergence(AssertionError):
    """An engine after a pickle round trip answered otherwise than one never pickled."""

    def __init__(self, step: str, message: str, expected=None, actual=None):
        self.step, self.message, self.expected, self.actual = step, message, expected, actual
        super().__init__(f"{step}: {message}")


class RoundTrips:
    """``engine_cls`` whose engines are pickled at ``trips`` (and, with ``columnar``, fed
    each chunk in the problem's columnar batch form); class attributes pass through."""

    def __init__(self, engine_cls, trips=(), adhoc=None, case=None, calls: int | None = None,
                 columnar=None):
        self.engine_cls, self.trips, self.adhoc, self.case = engine_cls, tuple(trips), adhoc, case
        self.calls = calls          # calls the check will make (for the modulo), if known
        self.columnar = columnar    # (chunk, case) -> the problem's batch, or None (kept a list)

    def __getattr__(self, attr):
        return getattr(self.engine_cls, attr)

    def __call__(self, *args, **kwargs):
        engine = self.engine_cls(*args, **kwargs)
        if not self.trips and self.columnar is None:
            return engine
        twin = self.engine_cls(*args, **kwargs)
        label = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        return _Tripping(engine, twin, self, label)


class _Tripping:
    """One engine (and its never-pickled twin) of a ``RoundTrips`` class."""

    def __init__(self, engine, twin, owner: RoundTrips, label: str):
        self._engine, self._twin, self._owner, self._label = engine, twin, owner, label
        self._n = 0
        n = owner.calls
        self._at = {}
        for call, keep in owner.trips:
            self._at.setdefault(call % n if n else call, keep)

    def __getattr__(self, attr):
        return getattr(self._engine, attr)

    def _call(self, name: str, *args):
        if name == "advance_to":        # trips land at chunk boundaries: process and flush
            index, where = None, f"advance_to({args[0]}) after call {self._n - 1}"
        else:
            index = self._n
            self._n += 1
            where = f"call {index} ({name})"
        if index in self._at:
            self._round_trip(index, self._at[index])
            where += f", pickled before it ({'the pickled original' if self._at[index] else 'the unpickled copy'}" \
                     f"{', ' + self._label if self._label else ''})"
        given = args
        if name == "process" and self._owner.columnar is not None:
            batch = self._owner.columnar(args[0], self._owner.case)
            if batch is not None:       # the columnar path must answer as the list path
                given = (batch,)
                where += f", as a {type(batch).__name__}"
        twin_error = None
        try:
            want = _drain(getattr(self._twin, name)(*args))
        except Exception as err:        # the twin's error is the spec's: the engine owes it too
            twin_error = err
        if twin_error is not None:      # (outside the handler: the engine's error stands alone)
            try:
                have = _drain(getattr(self._engine, name)(*given))
            except type(twin_error):
                raise
            raise PicklingDivergence(where, f"the reference twin (never pickled, fed lists) raised "
                                            f"{type(twin_error).__name__}, this engine did not",
                                     repr(twin_error), have)
        have = _drain(getattr(self._engine, name)(*given))
        if have != want:
            raise PicklingDivergence(where, "differs from the same engine never pickled and fed lists",
                                     want, have)
        return have

    def _round_trip(self, index: int, keep_original: bool) -> None:
        before = self._ask()
        copy = pickle.loads(pickle.dumps(self._engine))
        if not keep_original:
            self._engine = copy
        who = "the pickled original" if keep_original else "the unpickled copy"
        for path, state in random_states(self._twin).items():
            if random_states(self._engine).get(path) != state:
                raise PicklingDivergence(f"the pickle before call {index}",
                                         f"{who}'s random generator {path} is not where the "
                                         "never-pickled twin's is (a reseeded or fresh generator "
                                         "draws other choices from here on)")
        after = self._ask()
        if before != after:
            who = "the pickled original" if keep_original else "the unpickled copy"
            raise PicklingDivergence(f"ad-hoc queries around the pickle before call {index}",
                                     f"{who} answers otherwise than the engine just before pickling",
                                     before, after)

    def _ask(self):
        adhoc = self._owner.adhoc
        if adhoc is None:
            return None
        try:
            return adhoc(self._engine, self._owner.case)
        except Exception as err:            # the error type is the answer (NoWindowYet, ...)
            return type(err).__name__

    def process(self, events):
        return iter(self._call("process", events))

    def advance_to(self, t):
        return self._call("advance_to", t)

    def flush(self):
        return self._call("flush")


def random_states(engine, depth: int = 2) -> dict:
    """The states of the random generators an engine holds, by attribute path (its own
    attributes and theirs, ``depth`` levels): ``random.Random``, numpy's ``Generator``
    and ``RandomState``.  Outputs that depend on them go on alike only if they do."""
    found = {}

    def walk(obj, path, level):
        if isinstance(obj, random.Random):
            found[path] = obj.getstate()
        elif isinstance(obj, np.random.Generator):
            found[path] = repr(obj.bit_generator.state)
        elif isinstance(obj, np.random.RandomState):
            found[path] = repr(obj.get_state(legacy=False))
        elif level < depth and hasattr(obj, "__dict__") and not isinstance(obj, type):
            for name, value in list(vars(obj).items()):
                walk(value, f"{path}.{name}", level + 1)

    walk(engine, "engine", 0)
    return found


def _drain(out) -> list:
    return list(out) if out is not None else []
