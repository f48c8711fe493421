"""The one list of checks every engine must pass (``CHECKS``).

``streamspec conform`` and ``pytest --pyargs streamspec.conformance`` both run
exactly these, with the same example budget per check (the profile's, or
``--examples``):

- ``step_by_step``: the differential check against the oracle after every
  ``process`` call and at ``flush`` (``conformance.<problem>.check``), with the
  engines pickled at drawn points of the stream (``roundtrip``: several round
  trips per example, connectivity's ``hold_back`` both ways, ad-hoc queries
  before and after each trip) and, in a third of the examples, fed each chunk
  as the problem's columnar batch (what the Spark pipeline feeds);
- ``bad_records``: one bad record slipped into a valid stream gets the typed
  error the spec demands, and the engine goes on as if never offered it
  (``conformance.<problem>.check_invalid``);
- ``watermark``: truthful watermarks between the chunks emit exactly what is
  due, and the total equals ``flush`` alone (``conformance.<problem>.check_watermark``),
  with pickle round trips as in ``step_by_step``.

An example of a check is what hypothesis draws for it; ``encode``/``decode``
turn one into the header of a reproducer file (the case itself follows in the
problem's own JSON lines, ``conformance.<problem>.dump``), so ``--replay``
re-runs the same check on the same example.
"""
from __future__ import annotations

import base64
import pickle
from typing import Callable

import attrs
from hypothesis import strategies as st

from streamspec.conformance.roundtrip import PicklingDivergence, RoundTrips
from streamspec.spec import errors

MAX_TRIPS = 4          # pickle round trips drawn per example (at most)


@attrs.frozen
class Check:
    name: str
    title: str
    examples: Callable            # suite module -> hypothesis strategy of examples
    run: Callable                 # (suite, engine_cls, example) -> Mismatch | None
    case: Callable                # example -> the problem's Case (for the reproducer)
    encode: Callable              # example -> dict (the reproducer header's fields)
    decode: Callable              # (dict, Case) -> example


def trips():
    """Round trips ``(call, keep_original)``: shrink toward none, then toward the first call."""
    return st.lists(st.tuples(st.integers(0, 16), st.booleans()), max_size=MAX_TRIPS,
                    unique_by=lambda trip: trip[0])


def _with_trips(suite, engine_cls, case, trip_list, columnar: bool = False):
    calls = len(case.chunks) + 1            # the process calls and flush
    return RoundTrips(engine_cls, trip_list, getattr(suite, "adhoc", None), case, calls,
                      getattr(suite, "columnar", None) if columnar else None)


def _guarded(fn):
    """A check whose engines go through ``RoundTrips``: a divergence is a mismatch.
    Its example is ``(case, trips)`` or ``(case, trips, columnar)``."""
    def run(suite, engine_cls, example):
        case, trip_list = example[0], example[1]
        columnar = bool(example[2]) if len(example) > 2 else False
        try:
            return fn(suite, _with_trips(suite, engine_cls, case, trip_list, columnar), case)
        except PicklingDivergence as d:
            from streamspec.conformance.runner import Mismatch
            return Mismatch(d.step, d.message, d.expected, d.actual)
    return run


def _trip_example(strategy_of):
    """``(case, trips, columnar)``: a third of the examples feed the columnar batches."""
    return lambda suite: st.tuples(strategy_of(suite), trips(),
                                   st.sampled_from([False, False, True]))


def _encode_trips(example) -> dict:
    """The trips as the calls they land on (``call % calls``, as ``RoundTrips`` takes them),
    and whether the chunks went in as columnar batches."""
    case, trip_list = example[0], example[1]
    calls, seen, trips = len(case.chunks) + 1, set(), []
    for call, keep in trip_list:
        if call % calls not in seen:
            seen.add(call % calls)
            trips.append([call % calls, keep])
    return {"trips": trips, "columnar": bool(example[2]) if len(example) > 2 else False}


def _decode_trips(head: dict, case):
    return case, tuple(tuple(t) for t in head.get("trips", [])), bool(head.get("columnar", False))


def _encode_bad(example) -> dict:
    _, position, record, error = example
    return {"position": position, "record": repr(record), "error": error.__name__,
            "record_pickle": base64.b64encode(pickle.dumps(record)).decode()}


def _decode_bad(head: dict, case):
    record = pickle.loads(base64.b64decode(head["record_pickle"]))
    return case, head["position"], record, getattr(errors, head["error"])


CHECKS = (
    Check("step_by_step", "matches the oracle step by step (with pickle round trips)",
          _trip_example(lambda s: s.cases()),
          _guarded(lambda suite, engine, case: suite.check(engine, case)),
          lambda ex: ex[0], _encode_trips, _decode_trips),
    Check("bad_records", "rejects bad records with the typed error and no state change",
          lambda suite: suite.invalid_cases(),
          lambda suite, engine, ex: suite.check_invalid(engine, *ex),
          lambda ex: ex[0], _encode_bad, _decode_bad),
    Check("watermark", "watermarks then flush equal flush (with pickle round trips)",
          _trip_example(lambda s: s.cases()),
          _guarded(lambda suite, engine, case: suite.check_watermark(engine, case)),
          lambda ex: ex[0], _encode_trips, _decode_trips),
)
BY_NAME = {c.name: c for c in CHECKS}


def get(name: str) -> Check:
    """The check called ``name`` (``InvalidParameter`` naming the known ones otherwise)."""
    if name not in BY_NAME:
        raise errors.InvalidParameter(f"unknown check {name!r}: expected one of {', '.join(BY_NAME)}")
    return BY_NAME[name]
