"""The ``streamspec`` command line.

- ``streamspec engines``: problem, name, exactness and description of every
  installed engine (entry-point group ``streamspec.engines``).
- ``streamspec run <problem> ...``: the Spark job of ``pipeline.jobs.<problem>``.
- ``streamspec conform <problem> --engine NAME --examples N``: the conformance
  suite against the oracle, printing a replayable reproducer on failure.

Any ``StreamspecError`` (bad input, bad parameter) exits with code 2 and a
message naming the record (``file:line``); nothing is half-written.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from spec.errors import StreamspecError


def _jobs() -> dict[str, object]:
    import pipeline.jobs as jobs
    return {m.name: importlib.import_module(f"pipeline.jobs.{m.name}")
            for m in pkgutil.iter_modules(jobs.__path__) if not m.name.startswith("_")}


def _cmd_engines(args) -> int:
    from spec.engine import describe
    from spec.registry import Registry
    rows = [describe(cls) for cls in Registry.engines(args.problem)]
    width = max((len(r["problem"]) + len(r["name"]) for r in rows), default=10) + 2
    for r in rows:
        label = f"{r['problem']}.{r['name']}"
        print(f"{label:<{width}} {'exact' if r['exact'] else 'approx':<7} {r['description']}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="streamspec", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("engines", help="list installed engines")
    p.add_argument("problem", nargs="?", default=None)
    p.set_defaults(func=_cmd_engines)

    run = sub.add_parser("run", help="run an engine over a dataset with Spark")
    run_sub = run.add_subparsers(dest="problem", required=True)
    for name, module in sorted(_jobs().items()):
        jp = run_sub.add_parser(name, help=(module.__doc__ or "").strip().split("\n")[0])
        module.add_arguments(jp)
        jp.set_defaults(func=module.main)

    from conformance import cli as conform_cli
    cp = sub.add_parser("conform", help="fuzz an engine against the oracle")
    conform_cli.add_arguments(cp)
    cp.set_defaults(func=conform_cli.main)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except StreamspecError as err:
        print(f"streamspec: error: {err}", file=sys.stderr)
        return err.exit_code


if __name__ == "__main__":
    sys.exit(main())
