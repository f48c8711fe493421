"""``streamspec conform PROBLEM --engine NAME --examples N [--replay FILE]``.

Fuzzes the engine against the oracle with hypothesis (derandomized unless
``--seed`` is given); on a mismatch prints the shrunk stream as JSON lines and
the one command that replays it, and exits 1.  ``--replay FILE`` re-runs a
saved case.

Bad arguments are typed errors (``streamspec.spec.errors``), which the
``streamspec`` command turns into a message and exit code 2: an unknown
problem (the message names the known ones), an unregistered engine (it names
the registered ones), ``--examples`` below 1, a missing ``--replay`` file, and
hypothesis not installed (it says what to install).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path


def add_arguments(parser):
    parser.add_argument("problem", help="connectivity, simjoin, kws or topkjoin")
    parser.add_argument("--engine", action="append", default=[],
                        help="engine name (repeatable; default: every registered engine of the problem)")
    parser.add_argument("--examples", type=int, default=1000,
                        help="hypothesis examples per engine (default: 1000)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: derandomized)")
    parser.add_argument("--replay", default=None,
                        help="replay a saved case (JSON lines) instead of fuzzing (default: fuzz)")


def main(args) -> int:
    from streamspec.spec.errors import InvalidParameter, StreamspecError
    from streamspec.spec.registry import Registry
    try:
        import hypothesis  # noqa: F401  (the runner fuzzes with it)
    except ImportError:
        raise StreamspecError("streamspec conform needs hypothesis: pip install 'hypothesis>=6.100' "
                              "(or reinstall streamspec, which depends on it)") from None
    from streamspec.conformance import runner
    runner.suite(args.problem)    # an unknown problem is an InvalidParameter naming the known ones
    if args.examples < 1:
        raise InvalidParameter(f"--examples {args.examples}: expected a positive number of examples")
    if args.replay is not None and not Path(args.replay).is_file():
        raise InvalidParameter(f"--replay {args.replay}: no such file")
    names = args.engine or [n for _, n in Registry.names(args.problem)]
    engines = [Registry.get(args.problem, name) for name in names]   # UnknownEngine names them
    failed = 0
    for engine_cls in engines:
        label = runner.engine_label(engine_cls)
        started = time.perf_counter()
        if args.replay:
            report = runner.replay(engine_cls, args.replay)
            what = f"replay of {args.replay}"
        else:
            report = runner.run(engine_cls, args.examples, seed=args.seed)
            what = f"{args.examples} examples"
        elapsed = time.perf_counter() - started
        if report:
            failed += 1
            print(f"FAIL {label} ({what}, {elapsed:.1f}s)\n{report}", file=sys.stderr)
        else:
            print(f"ok   {label} ({what}, {elapsed:.1f}s)")
    return 1 if failed else 0
