"""The differential runner shared by every problem.

A problem's conformance module (``conformance.<problem>``) provides a ``Case``
type, ``cases()`` (the hypothesis strategy), ``random_case(seed)``,
``check(engine_cls, case) -> Mismatch | None`` (step by step against the
oracle), ``dump(case) -> str`` and ``load(text) -> Case``.  This module runs
them: ``run(problem, engine_cls, examples)`` fuzzes with hypothesis, lets it
shrink a failure, writes the shrunk case as JSON lines and returns the one
command that replays it.
"""
from __future__ import annotations

import hashlib
import importlib
import os
from pathlib import Path

import attrs
from hypothesis import given, settings

from streamspec.spec.errors import InvalidParameter, StreamspecError

PROBLEMS = ("connectivity", "kws", "simjoin", "topkjoin")   # each has conformance.<problem>
FAILURES_DIR = Path(os.environ.get("STREAMSPEC_FAILURES", ".streamspec-failures"))


@attrs.frozen
class Mismatch:
    """The first place where an engine and the oracle disagree."""

    step: str          # where in the stream: "after edge 7 (t=12)", "flush", ...
    message: str
    expected: object = None
    actual: object = None

    def __str__(self) -> str:
        text = f"{self.step}: {self.message}"
        if self.expected is not None or self.actual is not None:
            text += f"\n  expected: {self.expected!r}\n  actual:   {self.actual!r}"
        return text


class ConformanceFailure(AssertionError):
    """Raised inside hypothesis so it shrinks; carries the mismatch and the case."""

    def __init__(self, mismatch: Mismatch, case):
        self.mismatch, self.case = mismatch, case
        super().__init__(str(mismatch))


def suite(problem: str):
    """The conformance module of a problem (``InvalidParameter`` for an unknown problem)."""
    if problem not in PROBLEMS:
        raise InvalidParameter(f"unknown problem {problem!r}: expected one of {', '.join(PROBLEMS)}")
    return importlib.import_module(f"streamspec.conformance.{problem}")


def engine_label(engine_cls) -> str:
    return f"{engine_cls.problem}.{engine_cls.name}"


def assert_conforms(engine_cls, case) -> None:
    """Raise ``ConformanceFailure`` when ``engine_cls`` disagrees with the oracle on ``case``."""
    mismatch = suite(engine_cls.problem).check(engine_cls, case)
    if mismatch is not None:
        raise ConformanceFailure(mismatch, case)


def save_reproducer(engine_cls, case) -> tuple[Path, str]:
    """Write ``case`` as JSON lines; return the file and the command that replays it."""
    text = suite(engine_cls.problem).dump(case)
    digest = hashlib.sha1(text.encode()).hexdigest()[:10]
    FAILURES_DIR.mkdir(parents=True, exist_ok=True)
    path = FAILURES_DIR / f"{engine_cls.problem}-{engine_cls.name}-{digest}.jsonl"
    path.write_text(text)
    command = f"streamspec conform {engine_cls.problem} --engine {engine_cls.name} --replay {path}"
    return path, command


def describe_failure(engine_cls, failure: ConformanceFailure) -> str:
    path, command = save_reproducer(engine_cls, failure.case)
    return (f"{engine_label(engine_cls)} disagrees with the oracle\n{failure.mismatch}\n"
            f"shrunk stream ({path}):\n{path.read_text()}replay: {command}")


def run(engine_cls, examples: int, seed: int | None = None) -> str | None:
    """Fuzz ``engine_cls`` with ``examples`` hypothesis examples; a failure report or None."""
    cases = suite(engine_cls.problem).cases()
    caught: list[ConformanceFailure] = []

    @settings(max_examples=examples, deadline=None, database=None, derandomize=seed is None,
              print_blob=False)
    @given(cases)
    def fuzz(case):
        try:
            assert_conforms(engine_cls, case)
        except ConformanceFailure as failure:
            caught.append(failure)
            raise

    if seed is not None:
        fuzz = __import__("hypothesis").seed(seed)(fuzz)
    try:
        fuzz()
    except ConformanceFailure:
        return describe_failure(engine_cls, caught[-1])
    return None


def replay(engine_cls, path: str | Path) -> str | None:
    """Replay a saved case; a failure report or None."""
    case = suite(engine_cls.problem).load(Path(path).read_text())
    mismatch = suite(engine_cls.problem).check(engine_cls, case)
    return None if mismatch is None else f"{engine_label(engine_cls)}: {mismatch}"


def check_rejection(engine_cls, params, before: list, after: list, bad, error: type,
                    position: int, *, check_index: bool = False, show=None,
                    noun: str = "record") -> Mismatch | None:
    """Offer ``bad`` between ``before`` and ``after``: the error must be ``error`` (naming
    record ``position`` when ``check_index``), and the engine must then go on exactly as
    an engine that was never offered it.  ``show`` renders outputs in a mismatch."""
    show = show or (lambda out: out)
    clean, dirty = engine_cls(params), engine_cls(params)
    want, have = list(clean.process(before)), list(dirty.process(before))
    try:
        list(dirty.process([bad]))
    except error as err:
        if check_index and getattr(err, "index", None) != position:
            return Mismatch(f"{noun} {position}", "the error names the wrong record", position,
                            getattr(err, "index", None))
    except StreamspecError as other:
        return Mismatch(f"{noun} {position}", f"raised {type(other).__name__}, expected {error.__name__}",
                        error.__name__, repr(other))
    else:
        return Mismatch(f"{noun} {position}", f"bad {noun} {bad!r} was accepted", error.__name__, None)
    want += list(clean.process(after)) + list(clean.flush())
    have += list(dirty.process(after)) + list(dirty.flush())
    if want != have:
        return Mismatch(f"after the rejected {noun}", "the rejection changed the engine's state",
                        [show(x) for x in want], [show(x) for x in have])
    return None
