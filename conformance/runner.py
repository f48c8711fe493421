"""The differential runner shared by every problem and by both front ends.

A problem's conformance module (``conformance.<problem>``) provides a ``Case``
type, ``cases()`` and ``invalid_cases()`` (hypothesis strategies),
``check``, ``check_invalid``, ``check_watermark`` (each ``-> Mismatch | None``),
``dump(case) -> str``, ``load(text) -> Case`` and optionally ``adhoc(engine,
case)`` (the ad-hoc answers asked around pickle round trips).  This module
runs the checks of ``conformance.checks.CHECKS`` on an engine:

- ``run_check`` fuzzes one check with hypothesis and lets it shrink; a failure
  is written, after shrinking, as exactly one reproducer file per distinct
  failure (``FAILURES_DIR``), with the one command that replays it;
- ``run_all`` runs every check: what ``streamspec conform`` and the pytest
  suite (``conformance.testing``) both call;
- an engine that crashes or breaks the hook contract (``ContractViolation``)
  fails like a mismatch, with a reproducer; several distinct failures are
  reported each with its own, never as a bare exception group;
- ``replay`` re-runs the check a reproducer names on its example.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import os
import pickle
import time
import traceback
from pathlib import Path

import attrs
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed

from streamspec.spec.errors import InvalidParameter, StreamspecError

PROBLEMS = ("connectivity", "kws", "simjoin", "topkjoin")   # each has conformance.<problem>
FAILURES_DIR = Path(os.environ.get("STREAMSPEC_FAILURES", ".streamspec-failures"))
HEADER = "streamspec-reproducer"
SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


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
    """Raised inside hypothesis so it shrinks; carries the mismatch, the check and its example."""

    def __init__(self, mismatch: Mismatch, case, check_name: str = "step_by_step",
                 example=None, crash: str | None = None):
        self.mismatch, self.case, self.check = mismatch, case, check_name
        self.example = example if example is not None else (case, ())
        self.crash = crash          # the traceback of an engine crash, if it was one
        super().__init__(str(mismatch))


@attrs.frozen
class Failure:
    """One distinct failure of one check, shrunk, with its reproducer."""

    engine: str
    check: str
    mismatch: Mismatch
    path: Path | None          # the reproducer file (None when not written)
    command: str               # the command that replays it
    text: str                  # the whole report a person reads


@attrs.frozen
class Report:
    """What ``run_all`` found for one engine."""

    engine: str
    examples: int
    failures: list
    examples_to_kill: dict      # check name -> examples run up to the first failure, or None
    seconds: dict               # check name -> seconds

    @property
    def ok(self) -> bool:
        return not self.failures


def suite(problem: str):
    """The conformance module of a problem (``InvalidParameter`` for an unknown problem)."""
    if problem not in PROBLEMS:
        raise InvalidParameter(f"unknown problem {problem!r}: expected one of {', '.join(PROBLEMS)}")
    return importlib.import_module(f"streamspec.conformance.{problem}")


def not_applicable(engine_cls, check) -> str | None:
    """Why ``check`` does not apply to ``engine_cls``, from its problem's suite module
    (``not_applicable(engine_cls, check_name)``, where a problem has one: simjoin's
    oracle checks on an approximate engine); None when it applies."""
    hook = getattr(suite(engine_cls.problem), "not_applicable", None)
    return hook(engine_cls, check.name) if hook is not None else None


def engine_label(engine_cls) -> str:
    return f"{engine_cls.problem}.{engine_cls.name}"


def _checks(names=None):
    from streamspec.conformance import checks
    return checks.CHECKS if names is None else tuple(checks.get(n) for n in names)


def _check(name: str):
    from streamspec.conformance import checks
    return checks.get(name)


def _attempt(check, engine_cls, example) -> None:
    """Run ``check`` on ``example``; raise ``ConformanceFailure`` on any failure.  While
    ``run_check`` keeps its examples (``_KEEPING``), ``example`` is pickled first."""
    if _KEEPING["drawn"] is not None:
        try:
            _KEEPING["drawn"].append(pickle.dumps(example))
        except Exception:           # noqa: BLE001  (an example that does not pickle: no reuse)
            _KEEPING["drawn"] = None
    problem = suite(engine_cls.problem)
    try:
        mismatch = check.run(problem, engine_cls, example)
    except ConformanceFailure:
        raise
    except Exception as exc:    # a crash or a ContractViolation: a failure with a reproducer too
        kind = "broke the engine contract" if type(exc).__name__ == "ContractViolation" else "raised"
        raise ConformanceFailure(Mismatch("while running the check", f"the engine {kind}: "
                                          f"{type(exc).__name__}: {exc}"),
                                 check.case(example), check.name, example,
                                 crash="".join(traceback.format_exception(exc))) from exc
    if mismatch is not None:
        raise ConformanceFailure(mismatch, check.case(example), check.name, example)


def assert_conforms(engine_cls, case) -> None:
    """Raise ``ConformanceFailure`` when ``engine_cls`` disagrees with the oracle on ``case``
    (the step-by-step check, no pickle round trips)."""
    _attempt(_check("step_by_step"), engine_cls, (case, ()))


def dump_example(engine_cls, check, example) -> str:
    """A reproducer's text: a header line naming the check, then the case's JSON lines."""
    head = {HEADER: 1, "problem": engine_cls.problem, "engine": engine_cls.name,
            "check": check.name, **check.encode(example)}
    return json.dumps(head) + "\n" + suite(engine_cls.problem).dump(check.case(example))


def load_example(problem: str, text: str):
    """``(check, example)`` of a reproducer (a bare case file replays ``step_by_step``)."""
    first, _, rest = text.partition("\n")
    head = json.loads(first) if first.strip() else {}
    if HEADER not in head:
        return _check("step_by_step"), (suite(problem).load(text), ())
    check = _check(head["check"])
    return check, check.decode(head, suite(problem).load(rest))


def save_reproducer(engine_cls, case, check=None, example=None) -> tuple[Path, str]:
    """Write the example as a reproducer; return the file and the command that replays it."""
    check = check or _check("step_by_step")
    example = example if example is not None else (case, ())
    text = dump_example(engine_cls, check, example)
    digest = hashlib.sha1(text.encode()).hexdigest()[:10]
    FAILURES_DIR.mkdir(parents=True, exist_ok=True)
    path = FAILURES_DIR / f"{engine_cls.problem}-{engine_cls.name}-{check.name}-{digest}.jsonl"
    path.write_text(text)
    return path, replay_command(engine_cls, path)


def replay_command(engine_cls, path) -> str:
    return f"streamspec conform {engine_cls.problem} --engine {engine_cls.name} --replay {path}"


def _diagnose(engine_cls, check, example) -> str:
    """For a failure with pickle round trips: does it need them?"""
    if check.name not in ("step_by_step", "watermark"):
        return ""
    columnar = len(example) > 2 and example[2]
    notes = []
    if example[1]:
        try:
            _attempt(check, engine_cls, (example[0], (), columnar))
        except ConformanceFailure:
            notes.append("without the pickle round trips the engine fails too: not a pickling bug only")
        else:
            notes.append("without the pickle round trips the engine passes: its state does not "
                         "survive pickling")
    if columnar:
        try:
            _attempt(check, engine_cls, (example[0], example[1], False))
        except ConformanceFailure:
            notes.append("fed lists instead of columnar batches the engine fails too")
        else:
            notes.append("fed lists instead of columnar batches the engine passes: its columnar "
                         "path answers otherwise")
    return "".join("\n" + n for n in notes)


def _failure(engine_cls, failure: ConformanceFailure, write: bool) -> Failure:
    check = _check(failure.check)
    label = engine_label(engine_cls)
    text = dump_example(engine_cls, check, failure.example)
    if write:
        path, command = save_reproducer(engine_cls, failure.case, check, failure.example)
        where = f"reproducer ({path}):"
    else:
        path, command = None, "(reproducer not written)"
        where = "reproducer:"
    crash = f"\nthe engine's traceback:\n{failure.crash}" if failure.crash else ""
    report = (f"{label} fails {check.name} ({check.title})\n{failure.mismatch}"
              f"{_diagnose(engine_cls, check, failure.example)}{crash}\n"
              f"{where}\n{text}replay: {command}")
    return Failure(label, check.name, failure.mismatch, path, command, report)


def _flatten(exc: BaseException) -> list:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _flatten(inner)]
    return [exc]


def run_check(engine_cls, check, examples: int, seed: int | None = None, *,
              base: settings | None = None, write: bool = True):
    """Fuzz ``check`` on ``engine_cls``: ``(failures, examples run up to the first failure)``.

    ``base`` is a hypothesis settings object to start from (the pytest suite passes its
    profile's); derandomized unless ``seed`` is given or ``base`` says otherwise.

    A derandomized run draws the same examples for every engine that passes them all
    (nothing in a check steers hypothesis: no ``target``, ``event`` or ``assume``), so the
    examples of the first such run in this process are kept (``_PASSED``) and the next
    engine is checked on those very examples without drawing them again (drawing was about
    half of a check's time).  The first failure among them sends the engine to the real
    hypothesis run, which finds it at the same example, shrinks it and writes the
    reproducer as always."""
    problem = suite(engine_cls.problem)
    count = [0, None]

    # NB: hypothesis derives a derandomized run's seed from this function's source: any
    # edit to it changes every ci sequence (which example kills which mutant, and how long
    # its shrink takes); the examples are kept by ``_attempt`` instead
    def probe(example):
        count[0] += 1
        try:
            _attempt(check, engine_cls, example)
        except ConformanceFailure:
            if count[1] is None:
                count[1] = count[0]
            raise

    # hypothesis' explain phase only annotates the report hypothesis prints, which is quiet
    # here (the failure is reported as the reproducer file instead): it would re-run the
    # shrunk example dozens of times for nothing, the better part of a quick shrink
    phases = [p for p in (base.phases if base is not None else Phase) if p is not Phase.explain]
    chosen = dict(max_examples=examples, deadline=None, print_blob=False,
                  verbosity=Verbosity.quiet, suppress_health_check=SLOW, phases=phases)
    if base is None:
        chosen.update(database=None, derandomize=seed is None)
    chosen_settings = settings(base, **chosen) if base is not None else settings(**chosen)
    reuse = _reuse_key(engine_cls, check, chosen_settings) if seed is None else None
    if reuse in _PASSED and _passes_drawn(check, engine_cls, _PASSED[reuse]):
        return [], None
    fuzz = chosen_settings(given(check.examples(problem))(probe))
    if seed is not None:
        fuzz = hypothesis_seed(seed)(fuzz)
    _KEEPING["drawn"] = [] if reuse is not None else None
    try:
        fuzz()
    except BaseException as exc:   # noqa: BLE001  (sorted below; anything else re-raised)
        _KEEPING["drawn"] = None
        found, other = [], []
        for leaf in _flatten(exc):
            (found if isinstance(leaf, ConformanceFailure) else other).append(leaf)
        if other and not found:
            raise
        failures, seen = [], set()
        for leaf in found:
            key = dump_example(engine_cls, _check(leaf.check), leaf.example)
            if key not in seen:         # one file per distinct failure
                seen.add(key)
                failures.append(_failure(engine_cls, leaf, write))
        for leaf in other:              # e.g. hypothesis' Flaky: reported, not swallowed
            failures.append(Failure(engine_label(engine_cls), check.name,
                                    Mismatch("hypothesis", f"{type(leaf).__name__}: {leaf}"),
                                    None, "", f"{engine_label(engine_cls)} fails {check.name}: "
                                              f"{type(leaf).__name__}: {leaf}"))
        return failures, count[1]
    drawn, _KEEPING["drawn"] = _KEEPING["drawn"], None
    if reuse is not None and drawn is not None:
        _PASSED.setdefault(reuse, drawn)
    return [], None


# (problem, check, examples, phases) -> the pickled examples of a derandomized run that passed
_PASSED: dict[tuple, list[bytes]] = {}
# the examples ``run_check``'s fuzzing has given ``_attempt`` so far (None: not keeping them)
_KEEPING: dict[str, list | None] = {"drawn": None}


def _reuse_key(engine_cls, check, chosen: settings) -> tuple | None:
    """Where a run's examples may be reused: derandomized and with no example database
    (whose entries would be replayed first)."""
    if not chosen.derandomize or chosen.database is not None:
        return None
    return (engine_cls.problem, check.name, chosen.max_examples, tuple(chosen.phases))


def _passes_drawn(check, engine_cls, drawn: list[bytes]) -> bool:
    """Whether ``engine_cls`` passes ``check`` on every kept example (each unpickled afresh,
    so no engine sees another's objects)."""
    for blob in drawn:
        try:
            _attempt(check, engine_cls, pickle.loads(blob))
        except ConformanceFailure:
            return False
    return True


def run_all(engine_cls, examples: int, seed: int | None = None, checks=None,
            write: bool = True, base: settings | None = None) -> Report:
    """Every check (or those named in ``checks``) on ``engine_cls``, ``examples`` each."""
    failures, kill, seconds = [], {}, {}
    for check in _checks(checks):
        started = time.perf_counter()
        found, killed_at = run_check(engine_cls, check, examples, seed, base=base, write=write)
        seconds[check.name] = time.perf_counter() - started
        kill[check.name] = killed_at
        failures += found
    return Report(engine_label(engine_cls), examples, failures, kill, seconds)


def run(engine_cls, examples: int, seed: int | None = None, checks=None) -> str | None:
    """Every check on ``engine_cls``; the failure reports joined, or None."""
    report = run_all(engine_cls, examples, seed, checks)
    return "\n\n".join(f.text for f in report.failures) or None


def describe_failure(engine_cls, failure: ConformanceFailure) -> str:
    return _failure(engine_cls, failure, write=True).text


def read_reproducer(problem: str, path: str | Path):
    """``(check, example)`` of the reproducer file at ``path``; a file that is not one (not
    UTF-8, not JSON lines, a field missing or of the wrong type, another problem's) is an
    ``InvalidParameter`` naming the file and what is wrong, never a traceback."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise InvalidParameter(f"{path}: not a streamspec reproducer (not UTF-8 text at byte "
                               f"{err.start})") from None
    except OSError as err:
        raise InvalidParameter(f"{path}: cannot read ({err.strerror or err})") from None
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        try:
            if line.strip():
                json.loads(line)
        except (ValueError, RecursionError) as err:
            raise InvalidParameter(f"{path}:{number}: not a streamspec reproducer line "
                                   f"(JSON: {str(err)[:80]})") from None
    try:
        head = json.loads(lines[0]) if lines else None
        if isinstance(head, dict) and head.get("problem") not in (None, problem):
            raise ValueError(f"it is a {head.get('problem')} case, not a {problem} one")
        return load_example(problem, text)
    except InvalidParameter:
        raise
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError) as err:
        what = f"missing field {err}" if isinstance(err, KeyError) else str(err)[:120]
        raise InvalidParameter(f"{path}: not a streamspec {problem} reproducer ({what})") from None


def replay(engine_cls, path: str | Path) -> str | None:
    """Replay a saved reproducer (the check it names, on its example); a report or None."""
    check, example = read_reproducer(engine_cls.problem, path)
    try:
        _attempt(check, engine_cls, example)
    except ConformanceFailure as failure:
        return f"{engine_label(engine_cls)} fails {check.name}: {failure.mismatch}"
    return None


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
