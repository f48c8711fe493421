"""The mutation gate: the conformance suite tested with its catalogue of broken engines.

``gate(problem)`` runs every mutant of ``conformance.broken.<problem>`` through the
suite's checks (``conformance.checks.CHECKS``: ``step_by_step``, ``bad_records``,
``watermark``) with the ``ci`` profile's number of examples, derandomized, and
records for each whether it was killed, by which check, after how many examples
and in how many seconds.  ``report(results)`` renders the table::

    python -m streamspec.conformance.mutation [PROBLEM...] [--examples N] [--all-checks]

exits 1 when a mutant survives (a gap of the suite: some check or strategy misses
that mutation).

A mutant is killed by the first check that fails on it; the checks are tried in an
order that starts with the one its ``mutation`` class aims at (a watermark mutant
with ``watermark``, a bad-record one with ``bad_records``), so a killed mutant costs
a few examples; the order changes the cost, never whether it is killed.  With
``all_checks=True`` every check runs on every mutant (its examples-to-kill per check
are reported; a check that does not kill it runs all its examples).  The gate writes
no reproducer files.
"""
from __future__ import annotations

import argparse
import sys
import time

import attrs

from streamspec.conformance import broken, profiles

CHECK_NAMES = ("step_by_step", "bad_records", "watermark")
FIRST = {"watermark": "watermark", "bad-record": "bad_records"}


@attrs.frozen
class Result:
    problem: str
    name: str
    mutation: str
    killed: bool
    check: str | None            # the check that killed it
    examples: int | None         # examples that check ran up to and including the kill
    seconds: float
    per_check: dict              # check name -> examples to kill (None: survived all it ran)
    text: str = ""               # the failure's first line

    @property
    def label(self) -> str:
        return f"{self.problem}.{self.name}"


def ci_examples() -> int:
    """The ``ci`` profile's examples per check (``STREAMSPEC_EXAMPLES`` does not apply)."""
    return profiles.PROFILES["ci"]["max_examples"]


def check_order(mutant) -> list[str]:
    first = FIRST.get(getattr(mutant, "mutation", ""), "step_by_step")
    return [first] + [c for c in CHECK_NAMES if c != first]


def _run_all(mutant, examples: int, seed: int | None, check: str):
    """``(examples to kill or None, failure text)`` of one check on ``mutant``: the suite's
    own ``runner.run_all`` (derandomized unless ``seed``), with no reproducer written and
    no shrinking (only whether and when the check fails matters here)."""
    from hypothesis import Phase, settings

    from streamspec.conformance import runner
    base = settings(database=None, derandomize=seed is None,
                    phases=[Phase.explicit, Phase.reuse, Phase.generate])
    rep = runner.run_all(mutant, examples, seed=seed, checks=[check], write=False, base=base)
    text = next((str(f.mismatch) for f in rep.failures if f.check == check), "")
    return (rep.examples_to_kill.get(check) if rep.failures else None), text


def run_mutant(mutant, examples: int | None = None, seed: int | None = None,
               all_checks: bool = False) -> Result:
    """Run ``mutant`` through the checks until one kills it (every check with ``all_checks``)."""
    examples = examples or ci_examples()
    started = time.perf_counter()
    per_check, killer, text = {}, None, ""
    from streamspec.spec.registry import Registry
    Registry.register(mutant)          # a check may look the engine up by name
    try:
        for name in check_order(mutant):
            n, why = _run_all(mutant, examples, seed, name)
            per_check[name] = n
            if n is not None and killer is None:
                killer, text = name, why
                if not all_checks:
                    break
    finally:
        Registry.unregister(mutant)
    return Result(mutant.problem, mutant.name, mutant.mutation, killer is not None, killer,
                  per_check.get(killer), time.perf_counter() - started, per_check,
                  text.splitlines()[0] if text else "")


def gate(problem: str, examples: int | None = None, seed: int | None = None,
         all_checks: bool = False) -> list[Result]:
    """Every mutant of ``problem`` through the suite (see the module docstring)."""
    return [run_mutant(m, examples, seed, all_checks) for m in broken.catalogue(problem)]


def replay_kill(mutant, check: str, examples: int, failures_dir) -> list[tuple]:
    """Run ``check`` on ``mutant`` as the suite does (shrinking, reproducers written to
    ``failures_dir``); for each reproducer, ``(path, replay on the mutant, replay on the
    oracle)`` (``runner.replay``: a failure report, or None when it passes)."""
    from pathlib import Path

    from streamspec.conformance import runner
    from streamspec.spec.registry import Registry
    saved = runner.FAILURES_DIR
    runner.FAILURES_DIR = Path(failures_dir)
    try:
        rep = runner.run_all(mutant, examples, checks=[check], write=True)
    finally:
        runner.FAILURES_DIR = saved
    oracle = Registry.get(mutant.problem, "oracle")
    return [(f.path, runner.replay(mutant, f.path), runner.replay(oracle, f.path))
            for f in rep.failures]


def _survived(r: Result) -> str:
    return "SURVIVED (known gap)" if (r.problem, r.name) in broken.KNOWN_SURVIVORS else "SURVIVED"


def report(results: list[Result]) -> str:
    """The results as a table: one row per mutant, then the totals per problem."""
    head = ("mutant", "class", "killed by", "examples", "seconds")
    rows = [(r.label, r.mutation, r.check or _survived(r), "-" if r.examples is None else str(r.examples),
             f"{r.seconds:.2f}") for r in results]
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    out = [line(head), line(["-" * w for w in widths])] + [line(r) for r in rows]
    out.append("")
    for problem in dict.fromkeys(r.problem for r in results):
        mine = [r for r in results if r.problem == problem]
        killed = [r for r in mine if r.killed]
        most = max((r.examples for r in killed), default=0)
        out.append(f"{problem}: {len(killed)}/{len(mine)} killed, at most {most} examples to kill, "
                   f"{sum(r.seconds for r in mine):.1f} s")
    survivors = [r for r in results if not r.killed]
    if survivors:
        out.append("")
        out.append("SURVIVED (gaps of the suite):")
        for r in survivors:
            gap = broken.KNOWN_SURVIVORS.get((r.problem, r.name), "not yet diagnosed")
            out.append(f"  {r.label}: {gap}")
    if any(len(r.per_check) > 1 for r in results):
        out.append("")
        out.append("examples to kill per check (- : not killed by that check):")
        for r in results:
            cells = ", ".join(f"{c} {'-' if n is None else n}" for c, n in r.per_check.items())
            out.append(f"  {r.label}: {cells}")
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m streamspec.conformance.mutation",
                                     description="Run the mutation catalogue through the suite.")
    parser.add_argument("problems", nargs="*", default=list(broken.PROBLEMS),
                        help="problems (default: all)")
    parser.add_argument("--examples", type=int, default=None,
                        help=f"examples per check (default: the ci profile's, {ci_examples()})")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: derandomized)")
    parser.add_argument("--all-checks", action="store_true",
                        help="run every check on every mutant (default: stop at the first kill)")
    args = parser.parse_args(argv)
    results = []
    for problem in args.problems:
        results += gate(problem, args.examples, args.seed, args.all_checks)
    seed = "derandomized" if args.seed is None else f"seed {args.seed}"
    print(f"examples per check: {args.examples or ci_examples()} ({seed}, no shrinking); checks tried "
          f"in order, the one a mutation class aims at first, until one kills the mutant\n")
    print(report(results))
    return 0 if all(r.killed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
