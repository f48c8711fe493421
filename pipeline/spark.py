"""The one place that builds Spark sessions (docs/pipeline.md).

``session()`` runs locally on every core by default (``local[*]``); a cluster is
chosen with ``master=`` (the CLI's ``--master``) or the ``SPARK_MASTER``
environment variable.  Executors run the driver's own interpreter
(``sys.executable``) so the engines, numba and the installed entry points they
import are the same on both sides; on a real cluster that interpreter path (with
streamspec installed) must exist on every worker.

Logs are quiet: only errors from the JVM, no console progress bar (the
pipeline draws its own, ``streamspec.pipeline.progress``), no web UI unless asked.
"""
from __future__ import annotations

import os
import re
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


def checkpointed_unless_rejected(rows):
    """``rows`` materialised (``localCheckpoint(eager=True)``), or None when a task stopped
    on one of the spec's typed errors: a path whose tasks validate records then hands the
    input to the validating reader, which names the record.  Other failures propagate."""
    try:
        return rows.localCheckpoint(eager=True)
    except Exception as err:    # py4j/pyspark wrap what a task raised
        if spec_error(err) is None:
            raise
        return None


def task_error(err) -> str:
    """The most telling line of a Spark error: the spec's message, else the Python error's."""
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    python = [ln for ln in lines if re.match(r"^[A-Za-z_.]*(Error|Exception): ", ln)]
    return spec_error(err) or (python or lines or [type(err).__name__])[0]


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


def session(master: str | None = None, app_name: str = "streamspec",
            conf: dict[str, str] | None = None):
    """A ``SparkSession``: ``master`` or ``$SPARK_MASTER`` or ``local[*]``.

    ``conf`` adds Spark settings (the test fixture uses it for
    ``spark.sql.shuffle.partitions`` and friends).  An existing session is
    reused by Spark itself (``getOrCreate``); its static settings then stay.
    """
    from pyspark.sql import SparkSession

    _quiet_python_warnings()
    # the executors' Python must be the driver's: same packages, same numba
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    if not master and os.environ.get("SPARK_MASTER"):
        from streamspec.pipeline.flags import MASTER_URL    # --master's check, for the variable
        if not MASTER_URL.fullmatch(os.environ["SPARK_MASTER"]):
            raise SparkUnavailable(f"$SPARK_MASTER={os.environ['SPARK_MASTER']!r} is not a Spark "
                                   "master URL (local, local[N], local[*], spark://HOST:PORT, yarn, "
                                   "k8s://URL, mesos://URL)")
    master = master or os.environ.get("SPARK_MASTER") or DEFAULT_MASTER
    log_opt = f"-Dlog4j2.configurationFile=file:{_log4j2_file()}"
    settings = {
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.driver.extraJavaOptions": log_opt,
        "spark.executor.extraJavaOptions": log_opt,
        # executors inherit the driver's warning filter for the pandas notice
        "spark.executorEnv.PYTHONWARNINGS": "ignore::FutureWarning",
    }
    settings.update(conf or {})
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as err:    # py4j and pyspark raise many types; each means "no session"
        first = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise SparkUnavailable(f"Spark could not start with master {master!r}: {first}") from err
    spark.sparkContext.setLogLevel("ERROR")
    return spark
