"""Contract checks every engine owes besides agreeing with the oracle (``streamspec.spec.engine``).

- ``check_pickling``: engine state is picklable (Spark keeps it in group state
  and checkpoints): an engine pickled mid-stream, and the copy unpickled from
  it, must both go on exactly as an engine that was never pickled.
- ``closed_after_flush``: ``flush`` ends the stream; ``process`` then raises.

The watermark checks are per problem (``conformance.<problem>.check_watermark``),
since each problem's spec has its own watermark (or none).
"""
from __future__ import annotations

import pickle

from streamspec.conformance.runner import Mismatch, suite
from streamspec.spec.errors import StreamspecError


def check_pickling(engine_cls, case, cut: int) -> Mismatch | None:
    """Feed the chunks of ``case`` before chunk ``cut`` (``cut`` is taken modulo the
    number of chunks + 1, so 0 pickles a fresh engine), round-trip the engine through
    ``pickle``, then feed the rest and flush three engines: the pickled original, its
    unpickled copy and one never pickled.  Their outputs must be identical, step by step."""
    events, chunks = suite(engine_cls.problem).stream(case), list(case.chunks)
    cut %= len(chunks) + 1
    untouched, original = engine_cls(case.params), engine_cls(case.params)
    pos = 0
    for size in chunks[:cut]:
        chunk = events[pos:pos + size]
        pos += size
        want, have = list(untouched.process(chunk)), list(original.process(chunk))
        if want != have:   # cannot differ yet: the engines are twins
            return Mismatch(f"before pickling, after event {pos - 1}", "twin engines differ", want, have)
    copy = pickle.loads(pickle.dumps(original))
    where = f"pickled after event {pos - 1}"
    for size in chunks[cut:] + [None]:
        chunk = None if size is None else events[pos:pos + size]
        pos += size or 0
        step = f"flush, {where}" if chunk is None else f"after event {pos - 1}, {where}"
        want = _feed(untouched, chunk)
        for who, engine in (("the unpickled copy", copy), ("the pickled original", original)):
            have = _feed(engine, chunk)
            if have != want:
                return Mismatch(step, f"{who} differs from an engine never pickled", want, have)
    return None


def _feed(engine, chunk) -> list:
    """The outputs of ``process(chunk)``, or of ``flush()`` when ``chunk`` is None."""
    return list(engine.flush()) if chunk is None else list(engine.process(chunk))


def closed_after_flush(engine) -> Mismatch | None:
    """``flush`` ends the stream: a later ``process`` must raise ``StreamspecError``."""
    try:
        list(engine.process([]))
    except StreamspecError:
        return None
    return Mismatch("after flush", "process() after flush must raise StreamspecError")
