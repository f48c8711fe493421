"""The flags every ``streamspec run PROBLEM`` job shares, defined once (issue 12).

One vocabulary across the four jobs: ``--input``, ``--window`` / ``--slide``
(the papers' names kept as aliases), ``--engine`` (default: the problem's
preferred registered engine), ``--lateness`` where the problem's spec has a
lateness policy, and the run options ``--output``, ``--overwrite``,
``--partitions``, ``--master``, ``--progress/--no-progress``.  Each job's
``add_arguments`` calls these helpers for the shared flags and adds only its
own; the job skeleton (``streamspec.pipeline.job``) reuses them.

Every help text states the default (or says the flag is required) and is
plain text: ``--help`` prints it as is, so no reStructuredText markup.
"""
from __future__ import annotations

import argparse
import re

INT64_MAX = 2**63 - 1
# the master URL forms Spark accepts (its SparkContext.createTaskScheduler)
MASTER_URL = re.compile(r"local(\[(\*|[0-9]+)(,\s*[0-9]+)?\])?|local-cluster\[.+\]|yarn"
                        r"|(spark|k8s|mesos)://.+")


def int64(text: str) -> int:
    """An argparse type: a decimal integer that fits in 64 bits (Spark's ``long``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not -INT64_MAX - 1 <= value <= INT64_MAX:
        raise argparse.ArgumentTypeError(f"{text} does not fit in a 64-bit integer")
    return value


def positive_int(text: str) -> int:
    """An argparse type: a 64-bit integer > 0 (``--partitions``)."""
    value = int64(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {value}")
    return value


def master_url(text: str) -> str:
    """An argparse type: a Spark master URL (``local[*]``, ``spark://HOST:PORT``, ``yarn``...);
    anything else would only fail inside the JVM, with a Java stack trace."""
    if not MASTER_URL.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a Spark master URL (local, local[N], local[*], spark://HOST:PORT, "
            "yarn, k8s://URL, mesos://URL)")
    return text


def default_engine(problem: str, preferred: tuple[str, ...]) -> str:
    """The first registered engine of ``preferred``, else the first registered one."""
    from streamspec.spec.registry import Registry
    names = [n for _, n in Registry.names(problem)]
    return next((n for n in preferred if n in names), names[0] if names else "oracle")


def add_input(parser, metavar: str, what: str, *, aliases: tuple[str, ...] = (),
              nargs=None) -> None:
    """``--input`` (required): ``what`` describes the accepted files."""
    parser.add_argument("--input", *aliases, dest="input", required=True, metavar=metavar,
                        nargs=nargs, help=f"{what} (required)")


def add_window(parser, *, kind=int, unit: str = "time units", aliases: tuple[str, ...] = (),
               slide_aliases: tuple[str, ...] | None = None, required: bool = True,
               target=None, note: str = "(required)") -> None:
    """``--window`` and, unless ``slide_aliases`` is None, ``--slide``.

    ``target`` is where ``--window`` goes (a mutually exclusive group for kws,
    whose other model has no window), ``note`` ends its help (how it is
    required, or its default); ``--slide`` always goes on ``parser``.
    """
    (target or parser).add_argument(
        "--window", *aliases, dest="window", type=kind, required=required, metavar="W",
        help=f"window length ({unit}, > 0) {note}")
    if slide_aliases is not None:
        parser.add_argument("--slide", *slide_aliases, dest="slide", type=kind, required=True,
                            metavar="S", help=f"slide between window starts ({unit}, > 0) "
                                              "(required)")


def add_engine(parser, problem: str, preferred: tuple[str, ...]) -> None:
    """``--engine`` with the problem's default engine, resolved from the registry now."""
    default = default_engine(problem, preferred)
    parser.add_argument("--engine", default=default, metavar="NAME",
                        help=f"engine name ('streamspec engines {problem}' lists them; "
                             f"default: {default})")


def add_lateness(parser, what: str) -> None:
    """``--lateness error|drop``, for problems whose spec has a lateness policy."""
    parser.add_argument("--lateness", choices=("error", "drop"), default="error",
                        help=f"out-of-order {what}: 'error' stops with the first one, 'drop' "
                             "removes and counts them (default: error)")


def add_run_options(parser, *, unit: str) -> None:
    """``--output``, ``--overwrite``, ``--partitions``, ``--master``, ``--progress``.

    ``unit`` says what ``--partitions`` spreads (window ranges, keys...).
    """
    parser.add_argument("--output", required=True, metavar="DIR",
                        help="output Parquet dataset, written atomically (required)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an existing output (default: refuse and exit 2)")
    parser.add_argument("--partitions", type=positive_int, default=None, metavar="P",
                        help=f"{unit} replayed in parallel (default: Spark's default parallelism)")
    parser.add_argument("--master", type=master_url, default=None, metavar="URL",
                        help="Spark master URL (default: $SPARK_MASTER, else local[*])")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="a progress line on stderr while Spark works "
                             "(default: only when stderr is a terminal)")
