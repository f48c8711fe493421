"""The streamspec command line: continuous sliding-window queries, run with Spark.

- streamspec engines [PROBLEM]: problem, name, exactness, default mark,
  options (NAME:key=value; the engine's default value first) and description
  of every installed engine (entry-point group streamspec.engines).
- streamspec run PROBLEM ...: one job skeleton (streamspec.pipeline.job) driving
  the adapter streamspec.pipeline.jobs.PROBLEM; the flags the jobs share are
  defined once in streamspec.pipeline.flags.
- streamspec stream PROBLEM --source DIR --checkpoint DIR --output DIR
  [--trigger-once] ...: the same engines over files arriving in a directory,
  kept in Spark Structured Streaming's state (streamspec.pipeline.streaming).
- streamspec demo [--output DIR]: every problem's job on its bundled sample
  data (the README's main job); a job joins in by defining demo_argv(output_dir).
- streamspec conform PROBLEM --engine NAME --examples N: the conformance
  suite against the oracle, printing a replayable reproducer on failure.
- streamspec bench PROBLEM --engine NAME [--baseline NAME] [--json OUT]: a
  standard workload for the engine and its baselines in one process, rounds
  interleaved; medians, spreads, ratios; --floors FILE and --compare
  PREVIOUS.json --max-regression PCT exit 1 on a regression
  (streamspec.bench.cli).
- streamspec new-engine PROBLEM NAME DIR: a new installable package in DIR
  holding a minimal engine of PROBLEM named NAME that passes the conformance
  suite (streamspec.pipeline.new_engine; the contract: docs/engines/).

Any StreamspecError (bad input, bad parameter) exits with code 2 and a
message naming the record (file:line); nothing is half-written.  An engine
that breaks its hooks' contract (ContractViolation, an engine's bug) exits
with code 1.  This docstring is also the --help text, hence plain text
without markup.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from streamspec.pipeline.flags import add_checkpoint_dir, add_spark_options
from streamspec.pipeline.job import command
from streamspec.spec.errors import StreamspecError


def _jobs() -> dict[str, object]:
    import streamspec.pipeline.jobs as jobs
    return {m.name: importlib.import_module(f"streamspec.pipeline.jobs.{m.name}")
            for m in pkgutil.iter_modules(jobs.__path__) if not m.name.startswith("_")}


def _cmd_engines(args) -> int:
    """The engine table; the default engine of each job is marked."""
    from streamspec.pipeline.flags import default_engine
    from streamspec.spec.engine import describe
    from streamspec.spec.errors import InvalidParameter
    from streamspec.spec.registry import Registry
    jobs = _jobs()
    known = sorted({p for p, _ in Registry.names()} | set(jobs))
    if args.problem is not None and args.problem not in known:
        raise InvalidParameter(f"unknown problem {args.problem!r}; known problems: "
                               f"{', '.join(known)}")
    defaults = {name: default_engine(name, getattr(job, "PREFERRED_ENGINES", ()))
                for name, job in jobs.items()}
    classes = Registry.engines(args.problem)
    rows = [describe(cls) for cls in classes]
    options = [_options(cls) for cls in classes]
    width = max((len(r["problem"]) + len(r["name"]) for r in rows), default=10) + 2
    owidth = max(map(len, options), default=0)
    owidth = max(owidth, len("OPTIONS"))
    print(f"{'ENGINE':<{width}} {'KIND':<7} {'DEFAULT':<8} {'OPTIONS':<{owidth}} DESCRIPTION")
    for r, opts in zip(rows, options):
        label = f"{r['problem']}.{r['name']}"
        mark = "default" if defaults.get(r["problem"]) == r["name"] else ""
        print(f"{label:<{width}} {'exact' if r['exact'] else 'approx':<7} {mark:<8} "
              f"{opts:<{owidth}} {r['description']}")
    return 0


def _options(engine_cls) -> str:
    """The options an engine name may carry (``NAME:key=value,...``), each with its
    allowed values, the engine's default first: ``purge=lazy|eager,...``; ``-`` for none."""
    from streamspec.spec.registry import _text
    declared = getattr(engine_cls, "options", None) or {}
    parts = []
    for key, allowed in declared.items():
        default = getattr(engine_cls, key, None)
        values = sorted(allowed, key=lambda v: v != default or type(v) is not type(default))
        parts.append(f"{key}={'|'.join(_text(v) for v in values)}")
    return ",".join(parts) or "-"


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
        for key, value in args.conf:
            argv += ["--conf", f"{key}={value}"]
        if args.checkpoint_dir:
            argv += ["--checkpoint-dir", args.checkpoint_dir]
        print(f"== streamspec {' '.join(argv)}", flush=True)
        job_args = parser.parse_args(argv)
        status = max(status, int(job_args.func(job_args) or 0))
    return status


def _plain(doc: str | None) -> str:
    """A job docstring's first paragraph on one line, without reStructuredText markup."""
    first = " ".join((doc or "").strip().split("\n\n")[0].split())
    return first.replace("``", "")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="streamspec", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("engines", help="list installed engines, marking each problem's default")
    p.add_argument("problem", nargs="?", default=None,
                   help="only this problem's engines (default: every problem)")
    p.set_defaults(func=_cmd_engines)

    run = sub.add_parser("run", help="run an engine over a dataset with Spark")
    run_sub = run.add_subparsers(dest="problem", required=True)
    for name, module in sorted(_jobs().items()):
        summary = _plain(module.__doc__)
        jp = run_sub.add_parser(name, help=summary, description=summary)
        module.add_arguments(jp)
        jp.set_defaults(func=command(module))

    from streamspec.pipeline import streaming
    stream = sub.add_parser("stream", help="run an engine over files arriving in a directory "
                                           "(Spark Structured Streaming)")
    stream_sub = stream.add_subparsers(dest="problem", required=True)
    for name, module in sorted(_jobs().items()):
        if not hasattr(module, "add_stream_arguments"):
            continue
        text = f"{name} over new files in --source, engines kept in Spark's state"
        sp = stream_sub.add_parser(name, help=text, description=text)
        streaming.add_arguments(sp, module)
        sp.set_defaults(func=streaming.command(module))

    dp = sub.add_parser("demo", help="run every problem's job on its bundled sample data")
    dp.add_argument("--output", default="out", metavar="DIR",
                    help="parent directory of the outputs (default: out)")
    add_spark_options(dp)
    add_checkpoint_dir(dp, default="a hidden directory beside each output")
    dp.set_defaults(func=_cmd_demo)

    from streamspec.conformance import cli as conform_cli
    cp = sub.add_parser("conform", help="fuzz an engine against the oracle")
    conform_cli.add_arguments(cp)
    cp.set_defaults(func=conform_cli.main)

    from streamspec.bench import cli as bench_cli
    bp = sub.add_parser("bench", help="time an engine against its baselines on a standard "
                                      "workload; gate on ratios",
                        description=_plain(bench_cli.__doc__))
    bench_cli.add_arguments(bp)
    bp.set_defaults(func=bench_cli.main)

    from streamspec.pipeline import new_engine
    np_ = sub.add_parser("new-engine", help="write an installable package with a minimal engine "
                                            "of PROBLEM that passes the conformance suite")
    new_engine.add_arguments(np_)
    np_.set_defaults(func=new_engine.main)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except StreamspecError as err:
        print(f"streamspec: error: {err}", file=sys.stderr)
        return err.exit_code
    except BrokenPipeError:
        # the reader went away (`streamspec engines | head`): stop quietly, as Unix tools do
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
