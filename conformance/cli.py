"""``streamspec conform PROBLEM [--engine NAME ...] [--examples N] [--check NAME ...] [--replay FILE]``.

Runs the checks of ``streamspec.conformance.checks`` on each engine, exactly
what ``pytest --pyargs streamspec.conformance`` runs: the step-by-step
comparison with the oracle (with pickle round trips), bad records, and
watermarks, each with the same number of examples.  That number is
``--examples``, else ``STREAMSPEC_EXAMPLES``, else the profile's
(``--profile``, else ``STREAMSPEC_PROFILE``, else ``ci``: 1000, derandomized);
``--seed`` draws other examples.  On a failure it prints the shrunk example and
the one command that replays it (one reproducer file per distinct failure,
``STREAMSPEC_FAILURES`` or ``.streamspec-failures/``), stops at the engine's
first failing check (``--keep-going`` runs the others too) and exits 1.
``--replay FILE`` re-runs the check a saved reproducer names.  A check the
problem's suite says does not apply to an engine (``not_applicable``: simjoin's
oracle checks on an approximate engine such as ``static:batch=100``) is printed
as ``skip`` with the reason, not run.

The suite's own broken engines (``streamspec.conformance.broken``, names
``broken-...``) are accepted as ``--engine`` names; ``--mutants`` runs the
whole catalogue of the problem and prints how many examples each took to be
caught (exit 1 if one survives).

Bad arguments are typed errors (``streamspec.spec.errors``), which the
``streamspec`` command turns into a message and exit code 2: an unknown
problem or check (the message names the known ones), an unregistered engine
(it names the registered ones), ``--examples`` below 1, a missing ``--replay``
file, and hypothesis not installed (it says what to install).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path


def add_arguments(parser):
    parser.add_argument("problem", help="connectivity, simjoin, kws or topkjoin")
    parser.add_argument("--engine", action="append", default=[],
                        help="engine name (repeatable; default: every registered engine of the problem)")
    parser.add_argument("--examples", type=int, default=None,
                        help="hypothesis examples per engine and check (default: STREAMSPEC_EXAMPLES, "
                             "else the profile's: ci 1000)")
    parser.add_argument("--profile", default=None, choices=["dev", "ci", "spark", "deep"],
                        help="the suite's profile (default: STREAMSPEC_PROFILE, else ci)")
    parser.add_argument("--check", action="append", default=[],
                        help="run only this check (repeatable: step_by_step, bad_records, watermark; "
                             "default: all)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: derandomized)")
    parser.add_argument("--keep-going", action="store_true",
                        help="run every check of an engine even after one fails (default: stop)")
    parser.add_argument("--replay", default=None,
                        help="replay a saved reproducer instead of fuzzing (default: fuzz)")
    parser.add_argument("--mutants", action="store_true",
                        help="run the suite on its own catalogue of broken engines and report "
                             "the examples each took to be caught")


def _examples(args) -> int:
    import os

    from streamspec.conformance import profiles
    from streamspec.spec.errors import InvalidParameter
    if args.examples is not None:
        if args.examples < 1:
            raise InvalidParameter(f"--examples {args.examples}: expected a positive number of examples")
        return args.examples
    try:
        override = profiles.examples()
        name = args.profile or (profiles.active() if os.environ.get("STREAMSPEC_PROFILE") else "ci")
    except ValueError as err:
        raise InvalidParameter(str(err)) from None
    return override or profiles.PROFILES[name]["max_examples"]


def resolve(problem: str, name: str):
    """A registered engine, or one of the suite's broken engines (``broken-...``)."""
    from streamspec.spec.registry import Registry
    if name.partition(":")[0].startswith("broken-"):
        from streamspec.conformance import broken
        found = broken.find(problem, name) if hasattr(broken, "find") else None
        if found is not None:
            return found
    return Registry.get(problem, name)         # UnknownEngine names the registered ones


def main(args) -> int:
    from streamspec.spec.errors import StreamspecError
    from streamspec.spec.registry import Registry
    try:
        import hypothesis  # noqa: F401  (the runner fuzzes with it)
    except ImportError:
        raise StreamspecError("streamspec conform needs hypothesis: pip install 'hypothesis>=6.100' "
                              "(or reinstall streamspec, which depends on it)") from None
    from streamspec.conformance import checks, runner
    runner.suite(args.problem)    # an unknown problem is an InvalidParameter naming the known ones
    chosen = [checks.get(name).name for name in args.check] or None
    examples = _examples(args)
    if args.replay is not None and not Path(args.replay).is_file():
        from streamspec.spec.errors import InvalidParameter
        raise InvalidParameter(f"--replay {args.replay}: no such file")
    if args.mutants:
        from streamspec.conformance import mutation
        results = mutation.gate(args.problem, examples=examples, seed=args.seed)
        print(mutation.report(results))
        return 0 if all(r.killed for r in results) else 1
    if args.replay is not None:       # a file that is not a reproducer: exit 2 before any engine
        runner.read_reproducer(args.problem, args.replay)
    names = args.engine or [n for _, n in Registry.names(args.problem)]
    engines = [resolve(args.problem, name) for name in names]
    failed = 0
    for engine_cls in engines:
        label = runner.engine_label(engine_cls)
        if args.replay:
            started = time.perf_counter()
            report = runner.replay(engine_cls, args.replay)
            elapsed = time.perf_counter() - started
            if report:
                failed += 1
                print(f"FAIL {label} (replay of {args.replay}, {elapsed:.1f}s)\n{report}", file=sys.stderr)
            else:
                print(f"ok   {label} (replay of {args.replay}, {elapsed:.1f}s)")
            continue
        failed += _fuzz(runner, checks, engine_cls, label, examples, args, chosen)
    return 1 if failed else 0


def _fuzz(runner, checks, engine_cls, label, examples, args, chosen) -> int:
    """Every chosen check on one engine; 1 if it failed one."""
    failed = 0
    for check in (checks.CHECKS if chosen is None else [checks.get(c) for c in chosen]):
        reason = runner.not_applicable(engine_cls, check)
        if reason:          # an approximate engine and an oracle check: said, not failed
            print(f"skip {label} ({check.name}: {reason})", flush=True)
            continue
        started = time.perf_counter()
        failures, killed_at = runner.run_check(engine_cls, check, examples, args.seed)
        elapsed = time.perf_counter() - started
        what = f"{check.name}, {examples} examples, {elapsed:.1f}s"
        if not failures:
            print(f"ok   {label} ({what})", flush=True)
            continue
        print(f"FAIL {label} ({what}; first failure at example {killed_at}, "
              f"{len(failures)} distinct)", flush=True)
        for failure in failures:
            print(failure.text, file=sys.stderr, flush=True)
        failed = 1
        if not args.keep_going:
            break
    return failed
