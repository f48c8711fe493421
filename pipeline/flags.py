"""The flags every ``streamspec run PROBLEM`` job shares, defined once (issue 12).

One vocabulary across the four jobs: ``--input``, ``--window`` / ``--slide``
(the papers' names kept as aliases), ``--engine`` (default: the problem's
preferred registered engine), ``--lateness`` where the problem's spec has a
lateness policy, and the run options ``--output``, ``--overwrite``,
``--partitions``, ``--master``, ``--conf``, ``--checkpoint-dir``,
``--progress/--no-progress``; path
flags are resolved on the driver by ``resolve_paths``.  Each job's
``add_arguments`` calls these helpers for the shared flags and adds only its
own; the job skeleton (``streamspec.pipeline.job``) reuses them.

Every help text states the default (or says the flag is required) and is
plain text: ``--help`` prints it as is, so no reStructuredText markup.
"""
from __future__ import annotations

import argparse
import os
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
    """``--output``, ``--overwrite``, ``--partitions``, ``--master``, ``--conf``,
    ``--checkpoint-dir``, ``--progress``.

    ``unit`` says what ``--partitions`` spreads (window ranges, keys...).
    """
    parser.add_argument("--output", required=True, metavar="DIR",
                        help="output Parquet dataset, written atomically (required)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an existing output (default: refuse and exit 2)")
    parser.add_argument("--partitions", type=positive_int, default=None, metavar="P",
                        help=f"{unit} replayed in parallel (default: Spark's default parallelism)")
    add_spark_options(parser)
    add_checkpoint_dir(parser)
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="a progress line on stderr while Spark works "
                             "(default: only when stderr is a terminal)")


def add_checkpoint_dir(parser, default: str = "a hidden directory beside the output, "
                                          ".NAME.checkpoints-TAG") -> None:
    """``--checkpoint-dir``: where a job on a cluster keeps its computed rows (reliable
    checkpoints, ``streamspec.pipeline.spark.materialise``); removed when the job ends."""
    parser.add_argument("--checkpoint-dir", default=None, metavar="DIR",
                        help="where a job on a cluster keeps its computed rows (Spark's reliable "
                             "checkpoints; on storage the driver and every executor share, a "
                             "local path or a URI such as hdfs://...); removed when the job "
                             "ends; unused in local mode (default: " + default + ")")


# -- paths: resolved once, on the driver, before any Spark task sees them (issue 29) ------
#: flags whose files streamspec's own readers open (on the driver or in Spark tasks)
READ_FLAGS = ("input", "queries", "remote", "schema", "schema_changes", "deletions")
#: flags Spark's own Hadoop file systems read or write (``--output``, ``--checkpoint-dir``;
#: the stream's ``--source`` and ``--checkpoint``): other URI schemes go to Spark unchanged
SPARK_FLAGS = ("output", "source", "checkpoint", "checkpoint_dir")
#: of the read flags, those whose readers open any ``pyarrow.fs`` URI as well
#: (``streamspec.pipeline.fs``: ``s3://``, ``s3a://``, ``gs://``, ``hdfs://``): all of
#: them (a SQLite ``--remote`` only as a local path: ``pipeline.io.topkjoin.read_remote``)
URI_READ_FLAGS = READ_FLAGS
#: of those, the ones Spark tasks open on the executors (``check_task_paths``)
TASK_READ_FLAGS = ("input", "remote", "deletions", "source")
TASK_WRITE_FLAGS = ("output", "checkpoint", "checkpoint_dir")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def scheme(value: str) -> str | None:
    """The URI scheme of a path flag's value (lower case), ``file`` for ``file:/...``,
    None for a plain path."""
    found = _SCHEME.match(value)
    if found:
        return found.group(1).lower()
    return "file" if value[:5].lower() == "file:" else None


def local_of(value: str) -> str | None:
    """The absolute local path a path names (a plain path, relative to the working
    directory, or a ``file:`` URI), None for another file system's URI (``hdfs://``...)."""
    from urllib.parse import unquote, urlsplit

    kind = scheme(value)
    if kind is None:
        return os.path.abspath(value)
    return os.path.abspath(unquote(urlsplit(value).path)) if kind == "file" else None


def local_path(value: str, flag: str, *, spark_schemes: bool = False,
               read_uris: bool = False) -> str:
    """A path flag's value as an absolute local path: a relative path is resolved against
    the driver's working directory (executors run elsewhere), a ``file:`` URI
    (``file:///abs``, ``file:/abs``, ``file://localhost/abs``) means its local path.

    Another scheme (``hdfs://``, ``s3a://``...) is returned unchanged when
    ``spark_schemes`` (Spark's Hadoop file systems read and write it), or when
    ``read_uris`` and streamspec's readers open it through ``pyarrow.fs``
    (``streamspec.pipeline.fs.READ_SCHEMES``: ``s3://``, ``s3a://``, ``gs://``,
    ``hdfs://``), else refused: ``PathError`` naming the flag, the scheme and what is
    supported.  An empty value is returned as is: the flag's own check reports it."""
    from urllib.parse import unquote, urlsplit

    from streamspec.spec.errors import PathError

    if not value.strip():
        return value
    kind = scheme(value)
    if kind is None:
        return os.path.abspath(value)
    if kind != "file":
        from streamspec.pipeline.fs import READ_SCHEMES
        if spark_schemes or (read_uris and kind in READ_SCHEMES):
            return value
        raise PathError(f"--{flag.replace('_', '-')} {value}: the {kind}:// scheme is not "
                        "supported here; streamspec reads local paths and file:// URIs (on a "
                        "cluster: a file system every worker mounts at the same path)")
    parts = urlsplit(value)
    if parts.netloc not in ("", "localhost"):
        raise PathError(f"--{flag.replace('_', '-')} {value}: a file:// URI names a local path "
                        f"(file:///path), not host {parts.netloc!r}")
    path = unquote(parts.path)
    if not path:
        raise PathError(f"--{flag.replace('_', '-')} {value}: the URI names no path")
    return os.path.abspath(path)


def _named(item: str, flag: str) -> str:
    """kws' ``REL=FILE``: the file resolved, the relation kept (a value without ``=`` is
    left for the job's own check)."""
    if "=" not in item:
        return item
    rel, path = item.split("=", 1)
    return f"{rel}={local_path(path, flag, read_uris=flag in URI_READ_FLAGS)}"


def resolve_paths(args) -> None:
    """Every path flag of ``args`` (``READ_FLAGS``, ``SPARK_FLAGS``) made absolute and
    local in place, once, on the driver (``local_path``), before any reader or Spark task
    sees it; ``PathError`` (exit 2) for a scheme that is not read.  An output, checkpoint
    or stream source on an object store is kept as its URI: once Spark has started,
    ``spark.check_task_paths`` refuses it if Spark has no connector for it.  The S3
    settings of the AWS variables and ``--conf spark.hadoop.fs.s3a.*`` are taken here too
    (``fs.configure``)."""
    from streamspec.pipeline import fs
    fs.configure(getattr(args, "conf", None))
    for flag in READ_FLAGS + SPARK_FLAGS:
        value = getattr(args, flag, None)
        if value is None:
            continue
        if isinstance(value, (list, tuple)):        # kws: --input REL=FILE ...
            setattr(args, flag, type(value)(_named(v, flag) for v in value))
        elif isinstance(value, str):
            setattr(args, flag, local_path(value, flag, spark_schemes=flag in SPARK_FLAGS,
                                           read_uris=flag in URI_READ_FLAGS))


def task_paths(args) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(flag, local path)`` of the inputs Spark tasks read and of the outputs they
    write, for ``streamspec.pipeline.spark.check_task_paths``; of the paths on other file
    systems, ``(flag, URI)`` of those on an object store that Spark itself opens
    (``SPARK_FLAGS``: its connector is checked), the others left to Spark."""
    from streamspec.pipeline.fs import OBJECT_STORES

    def local(flags_):
        found = []
        for flag in flags_:
            value = getattr(args, flag, None)
            values = value if isinstance(value, (list, tuple)) else [value]
            for v in values:
                if isinstance(v, str) and v.strip():
                    v = v.split("=", 1)[1] if isinstance(value, (list, tuple)) and "=" in v else v
                    if (scheme(v) is None and os.path.isabs(v)) or \
                            (flag in SPARK_FLAGS and scheme(v) in OBJECT_STORES):
                        found.append((f"--{flag.replace('_', '-')}", v))
        return found
    return local(TASK_READ_FLAGS), local(TASK_WRITE_FLAGS)


# -- Spark settings: --conf KEY=VALUE (issue 29) -----------------------------------------
_CONF_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-\[\]]*")


def spark_conf(text: str) -> tuple[str, str]:
    """An argparse type: ``--conf KEY=VALUE``, a Spark setting (``spark.executor.memory=4g``)."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not _CONF_KEY.fullmatch(key):
        raise argparse.ArgumentTypeError(
            f"expected KEY=VALUE (a Spark setting, e.g. spark.executor.memory=4g), got {text!r}")
    return key, value


def add_spark_options(parser) -> None:
    """``--master`` and ``--conf``, shared by ``streamspec run`` and ``streamspec stream``."""
    parser.add_argument("--master", type=master_url, default=None, metavar="URL",
                        help="Spark master URL (default: $SPARK_MASTER, else local[*])")
    parser.add_argument("--conf", type=spark_conf, action="append", default=[],
                        metavar="KEY=VALUE",
                        help="a Spark setting, repeatable (e.g. --conf spark.executor.memory=4g); "
                             "it wins over spark-defaults.conf and over streamspec's own "
                             "settings (default: none)")
