"""The ``streamspec`` command line.

- ``streamspec engines``: problem, name, exactness and description of every
  installed engine (entry-point group ``streamspec.engines``).
- ``streamspec run <problem> ...``: the Spark job of ``streamspec.pipeline.jobs.<problem>``.
- ``streamspec demo [--output DIR]``: every problem's job on its bundled sample
  data (the README's main job); a job joins in by defining ``demo_argv(output_dir)``.
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

from streamspec.spec.errors import StreamspecError


def _jobs() -> dict[str, object]:
    import streamspec.pipeline.jobs as jobs
    return {m.name: importlib.import_module(f"streamspec.pipeline.jobs.{m.name}")
            for m in pkgutil.iter_modules(jobs.__path__) if not m.name.startswith("_")}


def _cmd_engines(args) -> int:
    from streamspec.spec.engine import describe
    from streamspec.spec.registry import Registry
    rows = [describe(cls) for cls in Registry.engines(args.problem)]
    width = max((len(r["problem"]) + len(r["name"]) for r in rows), default=10) + 2
    for r in rows:
        label = f"{r['problem']}.{r['name']}"
        print(f"{label:<{width}} {'exact' if r['exact'] else 'approx':<7} {r['description']}")
    return 0


def _cmd_demo(args) -> int:
    from pathlib import Path
    parser = build_parser()
    status = 0
    for name, module in sorted(_jobs().items()):
        if not hasattr(module, "demo_argv"):
            continue
        argv = ["run", name, *module.demo_argv(str(Path(args.output) / name))]
        if args.master:
            argv += ["--master", args.master]
        print(f"== streamspec {' '.join(argv)}", flush=True)
        job_args = parser.parse_args(argv)
        status = max(status, int(job_args.func(job_args) or 0))
    return status


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

    dp = sub.add_parser("demo", help="run every problem's job on its bundled sample data")
    dp.add_argument("--output", default="out", help="parent directory of the outputs (default: out)")
    dp.add_argument("--master", default=None, help="Spark master URL (default: local[*])")
    dp.set_defaults(func=_cmd_demo)

    from streamspec.conformance import cli as conform_cli
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
