"""``streamspec conform PROBLEM --engine NAME --examples N [--replay FILE]``.

Fuzzes the engine against the oracle with hypothesis (derandomized unless
``--seed`` is given); on a mismatch prints the shrunk stream as JSON lines and
the one command that replays it, and exits 1.  ``--replay FILE`` re-runs a
saved case.
"""
from __future__ import annotations

import sys
import time


def add_arguments(parser):
    parser.add_argument("problem", help="connectivity, simjoin, kws or topkjoin")
    parser.add_argument("--engine", action="append", default=[],
                        help="engine name (repeatable; default: every registered engine of the problem)")
    parser.add_argument("--examples", type=int, default=1000, help="hypothesis examples per engine")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: derandomized)")
    parser.add_argument("--replay", default=None, help="replay a saved case (JSON lines)")


def main(args) -> int:
    from streamspec.conformance import runner
    from streamspec.spec.registry import Registry
    names = args.engine or [n for _, n in Registry.names(args.problem)]
    failed = 0
    for name in names:
        engine_cls = Registry.get(args.problem, name)
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
