"""The one place that builds Spark sessions (docs/pipeline.md).

``session()`` runs locally on every core by default (``local[*]``); a cluster is
chosen with ``master=`` (the CLI's ``--master``) or the ``SPARK_MASTER``
environment variable; ``--conf KEY=VALUE`` settings and spark-defaults.conf are
honoured.  Executors run ``spark.pyspark.python``, else ``$PYSPARK_PYTHON``, else
the driver's own interpreter (``sys.executable``) so the engines, numba and the
installed entry points they import are the same on both sides; on a real cluster
that interpreter (with streamspec installed) must exist on every worker
(docs/pipeline.md, "Running on a cluster").

Logs are quiet: only errors from the JVM, no console progress bar (the
pipeline draws its own, ``streamspec.pipeline.progress``), no web UI unless asked.
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import tempfile
import warnings

from streamspec.spec.errors import StreamspecError

DEFAULT_MASTER = "local[*]"

# Spark's default log4j2 profile prints INFO/WARN banners on every start; this
# profile keeps the driver's stderr for our own messages and real errors.
_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
# the logger of the class that starts logging, at the root's level: Spark prints its
# "Setting default log level" banner when that logger's level differs from the root's
# (org.apache.spark.internal.Logging); PySpark's JVM starts in PythonGatewayServer
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
"""


_LOG4J2_VERSION = 3


class SparkUnavailable(StreamspecError, RuntimeError):
    """No session could be started: a bad master URL (say in ``$SPARK_MASTER``), no Java..."""


class TaskRejected(StreamspecError, ValueError):
    """A Spark task stopped on one of the spec's typed errors (a record the spec rejects);
    the message is the spec's, as the driver would have raised it."""


class ContractViolationInTask(StreamspecError):
    """An engine broke its hooks' contract inside a Spark task (``ContractViolation``
    there): an engine bug, exit code 1, with the violation's message."""

    exit_code = 1


_SPEC_ERROR = re.compile(r"^streamspec\.[\w.]+: (.*)$")
# an engine that broke its hooks' contract is a bug of the engine, not bad input: never a
# rejected record (exit 2) nor a reason to re-read the input on the driver
_CONTRACT_VIOLATION = re.compile(r"^streamspec\.[\w.]*ContractViolation: (.*)$")


def spec_error(err) -> str | None:
    """The spec's message (``streamspec...SomeError: message``) inside a Spark error raised
    by a task, or None when the task failed for another reason."""
    for line in str(err).splitlines():
        if _CONTRACT_VIOLATION.match(line.strip()):
            return None
        found = _SPEC_ERROR.match(line.strip())
        if found:
            return found.group(1)
    return None


def contract_violation(err) -> str | None:
    """The message of a ``ContractViolation`` an engine raised inside a Spark task, or None."""
    for line in str(err).splitlines():
        found = _CONTRACT_VIOLATION.match(line.strip())
        if found:
            return found.group(1)
    return None


#: ``STREAMSPEC_MATERIALISE=local|reliable`` forces one kind of checkpoint (measurements
#: and tests: ``bench/results/cluster/measure_checkpoint.py``); unset, ``reliable_checkpoints``
#: decides by the master
MATERIALISE_ENV = "STREAMSPEC_MATERIALISE"


def reliable_checkpoints(spark) -> bool:
    """Whether ``materialise`` writes reliable checkpoints (``DataFrame.checkpoint`` on the
    job's ``--checkpoint-dir``) rather than ``localCheckpoint``: on a cluster, where
    ``localCheckpoint``'s blocks live on the executors only and a lost executor (or one
    dynamic allocation removes) would fail the job; not in local mode, where the executors
    are the driver's own JVM and ``localCheckpoint`` is safe, needs no directory and is as
    fast or faster (bench/results/cluster/measure_checkpoint.log)."""
    forced = os.environ.get(MATERIALISE_ENV, "").strip().lower()
    if forced in ("local", "reliable"):
        return forced == "reliable"
    return not is_local(spark)


def materialise(df, eager: bool = True):
    """``df`` computed once and kept, the one place that chooses how (docs/pipeline.md,
    "Running on a cluster"): ``localCheckpoint`` in local mode, a reliable
    ``checkpoint`` on the directory ``checkpoint_dir`` set (``--checkpoint-dir``) on a
    cluster (``reliable_checkpoints``).  Spark computes the rows once either way."""
    if reliable_checkpoints(df.sparkSession):
        return df.checkpoint(eager=eager)
    return df.localCheckpoint(eager=eager)


@contextlib.contextmanager
def checkpoint_dir(spark, path: str | None):
    """The job's reliable checkpoints go under ``path`` (``--checkpoint-dir``, resolved on
    the driver: an absolute local path or a URI Spark's Hadoop file systems write), and
    are removed when the job ends, failed or not.  Spark writes them in a subdirectory of
    its own (``<path>/<uuid>``): that is removed, and ``path`` too when this run created
    it.  Nothing is created when ``materialise`` keeps rows with ``localCheckpoint``
    (local mode).  ``PathError`` (exit 2) when ``path`` cannot be created."""
    if path is None or not reliable_checkpoints(spark):
        yield None
        return
    created = _make_dir(spark, path)
    sc = spark.sparkContext
    try:
        sc.setCheckpointDir(path)
        own = sc.getCheckpointDir()
    except Exception as err:    # py4j: the file system refused the directory
        _remove_dir(spark, path if created else None)
        raise _path_error(path, task_error(err)) from err
    try:
        yield own
    finally:
        _remove_dir(spark, path if created else own)


def _path_error(path: str, reason: str):
    from streamspec.spec.errors import PathError
    return PathError(f"--checkpoint-dir {path}: cannot be created ({reason})")


def _make_dir(spark, path: str) -> bool:
    """Create the directory ``path``; whether it did not exist before."""
    from streamspec.pipeline.flags import local_of
    local = local_of(path)
    try:
        if local is not None:
            existed = os.path.isdir(local)
            os.makedirs(local, exist_ok=True)
            return not existed
        from streamspec.pipeline.io import _filesystem
        fs, hpath = _filesystem(spark, path)
        existed = bool(fs.exists(hpath))
        if not existed and not fs.mkdirs(hpath):
            raise OSError("the file system refused to create it")
        return not existed
    except OSError as err:
        raise _path_error(path, err.strerror or str(err)) from err
    except Exception as err:    # py4j: a Hadoop file system's refusal
        raise _path_error(path, task_error(err)) from err


def _remove_dir(spark, path: str | None) -> None:
    """Remove ``path`` and what it holds, quietly (a job's end must not fail on it)."""
    if not path:
        return
    from streamspec.pipeline.flags import local_of
    local = local_of(path)
    if local is not None:
        shutil.rmtree(local, ignore_errors=True)
        return
    try:
        from streamspec.pipeline.io import _filesystem
        fs, hpath = _filesystem(spark, path)
        fs.delete(hpath, True)
    except Exception as err:    # noqa: BLE001  (py4j: say it, never fail the job for it)
        print(f"streamspec: could not remove the checkpoints {path}: {task_error(err)}",
              file=sys.stderr, flush=True)


def checkpointed_unless_rejected(rows, problem: str | None = None):
    """``rows`` materialised (``materialise``), or None when a task stopped
    on one of the spec's typed errors: a path whose tasks validate records then hands the
    input to the validating reader, which names the record (said on stderr for
    ``problem``: ``on_driver``).  A file a task could not read is no such reason: a
    ``PathError``.  Other failures propagate."""
    from streamspec.spec.errors import PathError

    try:
        return materialise(rows)
    except Exception as err:    # py4j/pyspark wrap what a task raised
        message = spec_error(err)
        if message is None:
            raise
        if _UNREADABLE.search(str(err)):
            raise PathError(f"a Spark task could not open a path: {message}") from err
        if problem is not None:
            on_driver(problem, f"a task rejected a record ({message[:200]})")
        return None


# an input a task could not open (``pipeline.io.open_binary`` and friends)
_UNREADABLE = re.compile(r"streamspec\.[\w.]*InputError: .*cannot read", re.MULTILINE)


def task_error(err) -> str:
    """The most telling line of a Spark error: the spec's message, else the Python error's."""
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    python = [ln for ln in lines if re.match(r"^[A-Za-z_.]*(Error|Exception): ", ln)]
    return spec_error(err) or (python or lines or [type(err).__name__])[0]


def on_driver(problem: str, reason: str) -> None:
    """One line on stderr (where ``--progress`` draws too) when a job leaves its Spark
    tasks' reading path for the driver's validating reader, with the reason: never a
    silent fallback (a bad record is then named by the driver's reader)."""
    print(f"streamspec: {problem}: reading the input on the driver instead of in Spark "
          f"tasks: {reason}", file=sys.stderr, flush=True)


def _log4j2_file() -> str:
    path = os.path.join(tempfile.gettempdir(), f"streamspec-log4j2-{os.getuid()}-{_LOG4J2_VERSION}.properties")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(_LOG4J2)
        os.replace(tmp, path)  # atomic: concurrent sessions never read half a file
    return path


def _quiet_python_warnings() -> None:
    # pyspark 4 warns on every pandas UDF call that pandas 3 is "not fully
    # supported"; the pipeline's tests cover what we use.
    warnings.filterwarnings("ignore", message=".*does not yet fully support pandas.*")


def spark_defaults() -> dict[str, str]:
    """The settings of ``spark-defaults.conf`` (``$SPARK_CONF_DIR``, else the ``conf``
    directory of ``$SPARK_HOME`` or of the installed pyspark), which Spark loads itself:
    streamspec's own settings (``session``) never override them."""
    home = os.environ.get("SPARK_HOME")
    if not home:
        try:
            import pyspark
            home = os.path.dirname(pyspark.__file__)
        except ImportError:
            return {}
    path = os.path.join(os.environ.get("SPARK_CONF_DIR") or os.path.join(home, "conf"),
                        "spark-defaults.conf")
    found = {}
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line or line.startswith(("#", "!")):
                    continue
                # java.util.Properties: the key ends at the first blank, '=' or ':'
                key, _, value = (re.split(r"(\s*[=:]\s*|\s+)", line, maxsplit=1) + ["", ""])[:3]
                found[key] = value.strip()
    except OSError:
        return {}
    return found


def executor_python(conf: dict[str, str] | None = None,
                    defaults: dict[str, str] | None = None) -> str:
    """The executors' interpreter: ``spark.pyspark.python`` (``--conf``, else
    spark-defaults), else ``$PYSPARK_PYTHON``, else the driver's own ``sys.executable``
    (the same engines, numba and entry points on both sides in local mode)."""
    conf = conf or {}
    defaults = spark_defaults() if defaults is None else defaults
    return (conf.get("spark.pyspark.python") or defaults.get("spark.pyspark.python")
            or os.environ.get("PYSPARK_PYTHON") or sys.executable)


# The JVMs JIT-compile with the quick compiler only (C1).  A streamspec JVM schedules Python
# tasks and moves Arrow batches; the engines run in Python workers.  C2, the optimising
# compiler, spent more CPU compiling Spark's own code than its faster code saved: a small
# ``streamspec run connectivity`` 18 -> 11 CPU-s in the driver's JVM, the 2M-edge Parquet job
# 24 -> 16 CPU-s and no slower (``bench/results/pipeline/jit.log``).  A setting of
# ``spark.driver.extraJavaOptions`` / ``spark.executor.extraJavaOptions`` (``--conf``,
# spark-defaults) replaces it.
QUICK_JIT = "-XX:TieredStopAtLevel=1"


def session(master: str | None = None, app_name: str = "streamspec",
            conf: dict[str, str] | None = None):
    """A ``SparkSession``: ``master`` or ``$SPARK_MASTER`` or ``local[*]``.

    ``conf`` adds Spark settings (the CLI's ``--conf``; the test fixture's
    ``spark.sql.shuffle.partitions`` and friends): they win over everything.
    streamspec's own settings (quiet logs, no UI, Arrow, the executors' Python:
    ``executor_python``) apply only where neither ``conf`` nor spark-defaults sets
    the key.  The quiet log4j2 profile is a file in the driver's temp directory, so it
    goes to the driver's JVM only (in local mode the executors run there too).  An
    existing session is reused by Spark itself (``getOrCreate``); its static settings
    then stay.
    """
    from pyspark.sql import SparkSession

    _quiet_python_warnings()
    conf = dict(conf or {})
    defaults = spark_defaults()      # read once: for the executors' python and below
    python = executor_python(conf, defaults)
    os.environ.setdefault("PYSPARK_PYTHON", python)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if not master and os.environ.get("SPARK_MASTER"):
        from streamspec.pipeline.flags import MASTER_URL    # --master's check, for the variable
        if not MASTER_URL.fullmatch(os.environ["SPARK_MASTER"]):
            raise SparkUnavailable(f"$SPARK_MASTER={os.environ['SPARK_MASTER']!r} is not a Spark "
                                   "master URL (local, local[N], local[*], spark://HOST:PORT, yarn, "
                                   "k8s://URL, mesos://URL)")
    master = master or os.environ.get("SPARK_MASTER") or DEFAULT_MASTER
    ours = {
        "spark.pyspark.python": python,
        "spark.pyspark.driver.python": sys.executable,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # a driver-local file: the driver's JVM only, never the executors'
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{_log4j2_file()} "
                                         f"{QUICK_JIT}",
        "spark.executor.extraJavaOptions": QUICK_JIT,
        # executors inherit the driver's warning filter for the pandas notice
        "spark.executorEnv.PYTHONWARNINGS": "ignore::FutureWarning",
    }
    settings = {k: v for k, v in ours.items() if k not in defaults}
    settings.update(conf)
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as err:    # py4j and pyspark raise many types; each means "no session"
        first = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise SparkUnavailable(f"Spark could not start with master {master!r}: {first}") from err
    spark.sparkContext.setLogLevel("ERROR")
    from streamspec.pipeline.fs import propagate
    propagate(spark)        # the S3 settings of the inputs' URIs, to the tasks
    return spark


def is_local(spark) -> bool:
    """The session runs its executors inside the driver's JVM (``local``, ``local[N]``)."""
    return spark.sparkContext.master.startswith("local")


def check_task_paths(spark, reads, writes) -> None:
    """On a cluster, before any work: every executor can read each ``(flag, path)`` of
    ``reads`` and create each of ``writes`` (its nearest existing ancestor is a writable
    directory).  One small Spark job whose tasks report what they cannot do as rows, so
    a path the workers do not share is one ``PathError`` (exit 2) naming the flag, the
    path and the host, not four task retries and a JVM stack trace.  Nothing to check in
    local mode (the executors are the driver).  A URI among them (an output, checkpoint
    or stream source on an object store: ``flags.task_paths``) is checked on the driver,
    in local mode too: Spark must have a working connector for its scheme
    (``fs.check_spark_connector``, exit 2 naming what is missing)."""
    from streamspec.pipeline.flags import scheme
    from streamspec.pipeline.fs import check_spark_connector
    from streamspec.spec.errors import PathError

    for flag, path in [*reads, *writes]:
        if scheme(path) is not None:
            check_spark_connector(spark, path, flag)
    reads = [(f, p) for f, p in reads if scheme(p) is None]
    writes = [(f, p) for f, p in writes if scheme(p) is None]
    if is_local(spark) or not (reads or writes):
        return

    def probe(_):
        import os
        import socket
        host = socket.gethostname()
        for flag, path in reads:
            if not os.path.exists(path):
                yield (host, flag, path, "no such file or directory")
            elif not os.access(path, os.R_OK | (os.X_OK if os.path.isdir(path) else 0)):
                yield (host, flag, path, "not readable")
        for flag, path in writes:
            parent = path
            while not os.path.exists(parent):
                parent = os.path.dirname(parent)
            if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
                yield (host, flag, path, f"cannot be created ({parent} is not a writable "
                                         "directory)")

    sc = spark.sparkContext
    try:
        executors = int(sc._jsc.sc().getExecutorMemoryStatus().size()) - 1
    except Exception:   # noqa: BLE001  (py4j: an older or stubbed context; the count is a hint)
        executors = 0
    tasks = max(2, executors, sc.defaultParallelism)
    # collected as they are and deduplicated here: ``distinct()`` would add a shuffle stage
    # (a second round of tasks) to every cluster job (bench/results/cluster/cluster-cost.md)
    problems = set(sc.parallelize(range(tasks), tasks).mapPartitions(probe).collect())
    if problems:
        host, flag, path, reason = sorted(problems)[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise PathError(f"{flag} {path}: {reason} on the Spark executors (host {host}){more}; "
                        "on a cluster the inputs, the output's directory and the checkpoint "
                        "must be on a file system every worker mounts at the same path")


# a Python error a task raised while opening a path (pyarrow, open, sqlite3)
_PATH_FAILURE = re.compile(r"^(FileNotFoundError|PermissionError|IsADirectoryError"
                           r"|NotADirectoryError): |^sqlite3\.OperationalError: unable to open")


def path_failure(err) -> str | None:
    """The message of a task that could not open a path (``FileNotFoundError``,
    pyarrow's "Failed to open local file", sqlite3's "unable to open database file"),
    or None: the job turns it into a ``PathError`` (exit 2)."""
    for line in str(err).splitlines():
        found = _PATH_FAILURE.match(line.strip())
        if found:
            return line.strip()
    return None
