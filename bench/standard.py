"""Interleaved, paired measurement of an engine against its baselines (``streamspec bench``).

- **Clock.** CPU time of the process (``time.process_time``): on a shared
  machine it is far less distorted than wall time (every engine is
  single-threaded); wall time is recorded beside it.
- **What is timed.** One call per run: the engine's ``process`` over the whole
  prepared input, then ``flush`` (``bench.workloads``).  The input is built
  once before any run; constructing the engine (and filling a window where
  the workload says so) is done before the clock starts.  Around the timed
  call the collector is frozen (``gc.collect(); gc.freeze()``, ``bench.heap``) so a
  full pass over the harness's own objects does not land in one run and not another.
- **Warm-up.** ``warmup`` untimed rounds of every subject first (numba
  compilation, first-call caches, the allocator's first growth).
- **Rounds.** ``repeats`` rounds; each runs every subject once, in the order
  engine, baselines... on even rounds and reversed on odd ones (ABBA: a load
  that drifts linearly through a pair of rounds hits both sides equally).
  Without a fixed ``repeats``, a time budget: rounds go on, in ABBA pairs,
  until the measured rounds have taken ``budget`` seconds of wall time, with
  at least ``MIN_ROUNDS`` and at most ``MAX_ROUNDS``.  Five rounds of about a
  second each were too few: on a virtual machine whose host is busy the
  per-round ratio moves by 5-10 %, so the median of five moved by as much
  between commands; the median of twenty-odd rounds moved by under 4 %
  (``bench/results/bench-cli/``).
- **Statistics.** Per subject the median of its runs and the *spread*
  ``(max - min) / median`` of the runs (with five runs the range, not an
  interquartile range).  The ratio to a baseline is
  ``time(baseline) / time(engine)`` (above 1: the engine is faster), taken
  **per round** (the two runs of a round are adjacent in time and share the
  machine's state) and summarised by the median of the per-round ratios, its
  spread the same ``(max - min) / median``.  Paired ratios cancel the slow
  drift of a loaded machine that separate medians keep.
"""
from __future__ import annotations

import gc
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import attrs

from streamspec.spec.errors import InvalidParameter
from streamspec.bench import heap

FORMAT = "streamspec-bench/1"


@attrs.frozen
class Run:
    round: int          # -1 for warm-up runs (not counted)
    subject: str
    cpu_s: float        # time.process_time: user + system
    wall_s: float
    outputs: int
    sys_s: float = 0.0  # of cpu_s, the system part (page faults of fresh allocations, mostly)
    process: int = 0    # which of the measuring processes ran it (``measure_in_processes``)


def timed(call) -> tuple[float, float, int, float]:
    """``(cpu seconds, wall seconds, outputs, system seconds)`` of one call, the collector
    frozen around it."""
    with heap.frozen():
        return _clocked(call)


def _clocked(call) -> tuple[float, float, int, float]:
    """``timed`` without the collector's handling (the caller freezes it once)."""
    sys0, wall0, cpu0 = os.times().system, time.perf_counter(), time.process_time()
    outputs = call()
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return cpu, wall, int(outputs), os.times().system - sys0


MIN_ROUNDS = 6       # three ABBA pairs
MAX_ROUNDS = 30
BUDGET_S = 60.0      # wall seconds of measuring when no fixed number of rounds is asked for
PROCESSES = 8        # measuring processes (``measure_in_processes``)
_now = time.perf_counter     # the budget's clock (a name of its own, so a test can stand in)


def measure(case, subjects: list[str], repeats: int | None, warmup: int, progress=None,
            budget: float = BUDGET_S, least: int = MIN_ROUNDS,
            most: int = MAX_ROUNDS, flip: bool = False) -> list[Run]:
    """Every run (warm-up included, round -1) of ``subjects`` over ``case``, interleaved:
    ``repeats`` rounds, or with ``repeats=None`` as many as ``budget`` wall seconds take
    (``least``..``most``; it stops after a whole ABBA pair when the next pair would overrun,
    after half a pair when even the next round would).  ``flip``: start with the reversed
    order (the odd processes of ``measure_in_processes``)."""
    runs = []
    started = None
    i = -warmup
    while True:
        if i >= 0 and started is None:
            started = _now()
        if repeats is not None:
            if i >= repeats:
                break
        elif i >= most or (i >= least and _next_exceeds(_now() - started, i, budget)):
            break
        order = subjects if i < 0 or (i + flip) % 2 == 0 else subjects[::-1]
        if getattr(case, "stepwise", None) is not None:
            done = _stepwise_round(case, order, max(i, -1))
        else:
            done = []
            for name in order:
                call = case.setup(name)
                cpu, wall, outputs, system = timed(call)
                del call
                done.append(Run(max(i, -1), name, cpu, wall, outputs, system))
        for run in done:
            runs.append(run)
            if progress is not None:
                progress(run)
        i += 1
    return runs


def _next_exceeds(elapsed: float, rounds: int, budget: float) -> bool:
    """After ``rounds`` rounds in ``elapsed`` seconds: would the rest of the ABBA pair (one
    round after an odd count, two after an even one), at the pace so far, pass ``budget``?"""
    more = 2 if rounds % 2 == 0 else 1
    return elapsed + more * elapsed / rounds > budget


def _stepwise_round(case, order: list[str], label: int) -> list[Run]:
    """One round of a workload whose input comes in steps (``Case.stepwise``): every subject's
    engine built first (in ``order``), then step by step each subject's piece of the input
    timed in turn, ABBA within the round; a subject's run is the sum of its pieces.  The two
    engines of a pair are timed a few milliseconds apart, not a second apart, so a host whose
    speed changes over seconds (another tenant of a virtual machine's host, which no load
    average shows) slows both alike."""
    steps = {name: case.stepwise(name) for name in order}
    count = len(steps[order[0]])
    totals = {name: [0.0, 0.0, 0, 0.0] for name in order}   # cpu, wall, outputs, sys
    with heap.frozen():
        for k in range(count):
            for name in (order if k % 2 == 0 else order[::-1]):
                totals[name] = [a + b for a, b in zip(totals[name], _clocked(steps[name][k]))]
    return [Run(label, name, *totals[name]) for name in order]


def shares(total: int, processes: int) -> list[int]:
    """``total`` rounds dealt to ``processes`` as evenly as they go (earlier ones get more)."""
    return [total // processes + (p < total % processes) for p in range(processes)]


def measure_in_processes(problem: str, workload: str, scale: float, subjects: list[str],
                         repeats: int | None, warmup: int, processes: int, progress=None,
                         budget: float = BUDGET_S) -> list[Run]:
    """``measure`` split over up to ``processes`` fresh interpreters, run one after the other
    (``python -m streamspec.bench.worker``), each building the input, warming up and
    measuring its share of the rounds, the odd ones starting with the reversed order; the
    rounds are numbered on across processes.  With ``repeats``: exactly that many rounds,
    dealt out.  Without: each process gets ``budget / processes`` seconds of rounds (at least
    one), and no further process starts once ``budget`` seconds have passed and there are
    ``MIN_ROUNDS`` rounds: engines whose rounds take many seconds get fewer processes.

    Why: a process's memory layout (where its arrays and tables fall in the caches) is drawn
    afresh at each start and moved one engine against another by several percent on the
    project's machine, steadily within the process (per-process medians of 8-10 rounds
    1.05-1.21 in one command, ``bench/results/bench-cli/steps50b``); rounds from many
    processes average over layouts as rounds within one never can."""
    import json
    import subprocess
    import tempfile
    runs: list[Run] = []
    offset = 0
    per_repeats = shares(repeats, processes) if repeats is not None else [None] * processes
    least = max(1, math.ceil(MIN_ROUNDS / processes))
    most = max(least, MAX_ROUNDS // processes)
    started = _now()
    for p in range(processes):
        if per_repeats[p] == 0:
            continue
        if repeats is None and offset >= MIN_ROUNDS and _now() - started >= budget:
            break
        spec = {"problem": problem, "workload": workload, "scale": scale,
                "subjects": subjects, "repeats": per_repeats[p], "warmup": warmup,
                "budget": budget / processes, "least": least, "most": most, "flip": p % 2 == 1}
        with tempfile.TemporaryFile("w+") as err:      # a file: a chatty stderr cannot block it
            child = subprocess.Popen([sys.executable, "-m", "streamspec.bench.worker",
                                      json.dumps(spec)], stdout=subprocess.PIPE, stderr=err,
                                     text=True)
            rounds = 0
            for line in child.stdout:
                d = json.loads(line)
                if "error" in d:
                    child.wait()
                    raise InvalidParameter(
                        f"measuring process {p + 1} of {processes}: {d['error']} (an engine "
                        f"registered at run time, not by entry point, is not seen by a fresh "
                        f"process: --processes 1 measures in this one)")
                run = Run(d["round"] if d["round"] < 0 else d["round"] + offset, d["subject"],
                          d["cpu_s"], d["wall_s"], d["outputs"], d["sys_s"], p)
                rounds = max(rounds, d["round"] + 1)
                runs.append(run)
                if progress is not None:
                    progress(run)
            if child.wait() != 0:
                err.seek(0)
                raise RuntimeError(f"streamspec bench: measuring process {p + 1} of "
                                   f"{processes} failed (exit {child.returncode}):\n"
                                   f"{err.read().strip()[-4000:]}")
        offset += rounds
    return runs


def spread(values: list[float]) -> float:
    """``(max - min) / median``."""
    mid = statistics.median(values)
    return (max(values) - min(values)) / mid if mid else math.inf


def summarise(runs: list[Run], engine: str, baselines: list[str]) -> tuple[dict, dict]:
    """``(subjects, ratios)``: per subject median/spread/min/max of CPU seconds; per
    baseline the per-round ratios ``baseline / engine``, their median and spread."""
    counted = [r for r in runs if r.round >= 0]
    subjects = {}
    for name in [engine, *baselines]:
        cpu = [r.cpu_s for r in counted if r.subject == name]
        wall = [r.wall_s for r in counted if r.subject == name]
        subjects[name] = {"median_cpu_s": statistics.median(cpu), "spread": spread(cpu),
                          "min_cpu_s": min(cpu), "max_cpu_s": max(cpu),
                          "median_wall_s": statistics.median(wall),
                          "outputs": sorted({r.outputs for r in counted if r.subject == name})}
    by_round: dict[int, dict[str, float]] = {}
    for r in counted:
        by_round.setdefault(r.round, {})[r.subject] = r.cpu_s
    ratios = {}
    for base in baselines:
        per_round = [times[base] / times[engine] if times[engine] > 0 else math.inf
                     for _, times in sorted(by_round.items())]
        ratios[base] = {"median": statistics.median(per_round), "spread": spread(per_round),
                        "per_round": per_round,
                        "ratio_of_medians": subjects[base]["median_cpu_s"]
                        / subjects[engine]["median_cpu_s"]}
    return subjects, ratios


def exact(x: float, *others: float) -> str:
    """``x`` with as many significant digits as it takes to differ from each of ``others``
    (at least 4): a ratio of 0.0967 against a floor of 0.1 prints as 0.0967, never 0.1."""
    for digits in range(4, 18):
        text = f"{x:.{digits}g}"
        if all(x == o or text != f"{o:.{digits}g}" for o in others):
            return text
    return repr(x)


# ---- environment ----------------------------------------------------------------------------

def _git_commit() -> str | None:
    if os.environ.get("GITHUB_SHA"):
        return os.environ["GITHUB_SHA"]
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def environment() -> dict:
    from importlib.metadata import PackageNotFoundError, version
    try:
        ours = version("streamspec")
    except PackageNotFoundError:
        ours = None
    return {"machine": platform.machine(), "processor": platform.processor(),
            "system": platform.platform(), "cpus": os.cpu_count(),
            "python": platform.python_version(), "implementation": sys.implementation.name,
            "streamspec": ours, "git_commit": _git_commit(), "cwd": os.getcwd()}


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


# ---- gates ----------------------------------------------------------------------------------

def group(problem: str, workload: str) -> str:
    """The group name of a run in JSON and floors files: ``bench-<problem>-<workload>``."""
    return f"bench-{problem}-{workload}"


SHIPPED_FLOORS = Path(__file__).with_name("bench_floors.toml")


def load_floors(path: str) -> list[dict]:
    """Floors (TOML, the shape of ``bench/ratio_floors.toml``): ``[[floor]]`` tables with
    ``group``, ``subject``, ``baseline``, ``min_ratio`` and optional ``why``.  ``default``
    names the floors shipped with streamspec (``bench_floors.toml``: the papers' claims on
    the standard workloads)."""
    if path == "default":
        path = str(SHIPPED_FLOORS)
    try:
        with open(path, "rb") as handle:
            doc = tomllib.load(handle)
    except OSError as err:
        raise InvalidParameter(f"--floors {path}: {err.strerror or err}") from None
    except tomllib.TOMLDecodeError as err:
        raise InvalidParameter(f"--floors {path}: not TOML: {err}") from None
    floors = []
    for i, entry in enumerate(doc.get("floor", [])):
        missing = [k for k in ("group", "subject", "baseline", "min_ratio") if k not in entry]
        if missing:
            raise InvalidParameter(f"--floors {path}: floor {i} lacks {', '.join(missing)}")
        try:
            ratio = float(entry["min_ratio"])
        except (TypeError, ValueError):
            raise InvalidParameter(f"--floors {path}: floor {i}: min_ratio "
                                   f"{entry['min_ratio']!r} is not a number") from None
        if not ratio > 0:
            raise InvalidParameter(f"--floors {path}: floor {i}: min_ratio must be > 0")
        floors.append({"group": str(entry["group"]), "subject": str(entry["subject"]),
                       "baseline": str(entry["baseline"]), "min_ratio": ratio,
                       "why": str(entry.get("why", ""))})
    return floors


def applicable(floors: list[dict], grp: str, engine: str, baselines) -> list[dict]:
    """The floors of this run (its group, engine and baselines); a floors file none of whose
    floors applies is an error (a gate that checks nothing), raised before anything runs."""
    mine = [f for f in floors
            if f["group"] == grp and f["subject"] == engine and f["baseline"] in baselines]
    if floors and not mine:
        wanted = ", ".join(f"(group {grp}, subject {engine}, baseline {b})" for b in baselines)
        raise InvalidParameter(f"--floors: no floor applies to this run; expected one of {wanted}")
    return mine


def check_floors(floors: list[dict], grp: str, engine: str, ratios: dict) -> list[dict]:
    """The floors that apply to this run, each with its verdict (ratio >= min_ratio)."""
    verdicts = []
    for f in applicable(floors, grp, engine, list(ratios)):
        got = ratios[f["baseline"]]["median"]
        verdicts.append(dict(f, ratio=got, ok=got >= f["min_ratio"]))
    return verdicts


def load_previous(path: str) -> dict:
    import json
    try:
        with open(path) as handle:
            doc = json.load(handle)
    except OSError as err:
        raise InvalidParameter(f"--compare {path}: {err.strerror or err}") from None
    except json.JSONDecodeError as err:
        raise InvalidParameter(f"--compare {path}: not JSON: {err}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InvalidParameter(f"--compare {path}: not a `streamspec bench --json` file "
                               f"(format {FORMAT!r})")
    return doc


def comparable(previous: dict, current: dict, baselines) -> None:
    """Raise unless ``previous`` ran the same problem, workload and parameters as ``current``
    and has a ratio to every one of ``baselines`` (checked before anything runs)."""
    for key in ("problem", "workload", "workload_params"):
        if previous.get(key) != current[key]:
            raise InvalidParameter(f"--compare: the previous run's {key} "
                                   f"({previous.get(key)!r}) differs from this run's "
                                   f"({current[key]!r}); ratios are comparable only on the "
                                   f"same workload")
    for base in baselines:
        if base not in previous.get("ratios", {}):
            raise InvalidParameter(f"--compare: the previous run has no ratio to baseline "
                                   f"{base!r} (its baselines: "
                                   f"{', '.join(previous.get('ratios', {})) or 'none'})")


def compare(previous: dict, current: dict, max_regression: float) -> list[dict]:
    """The engine's ratio to each baseline now against ``previous``'s (same problem, workload
    and parameters): a ratio lower by more than ``max_regression`` percent is a regression."""
    comparable(previous, current, list(current["ratios"]))
    verdicts = []
    for base, now in current["ratios"].items():
        before = previous["ratios"][base]
        change = (now["median"] - before["median"]) / before["median"] * 100.0
        verdicts.append({"baseline": base, "previous_engine": previous.get("engine"),
                         "previous_ratio": before["median"], "ratio": now["median"],
                         "change_pct": change, "max_regression_pct": max_regression,
                         "ok": change >= -max_regression})
    return verdicts
