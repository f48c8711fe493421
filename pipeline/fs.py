"""Input paths on any file system pyarrow reads: local paths, ``file:`` URIs, ``s3://``
and ``s3a://`` (the same bucket and key), ``gs://`` and ``hdfs://`` (issue 29).

streamspec's own readers open their inputs on the driver (checks, plans) and inside
Spark tasks.  A local path (what ``flags.local_path`` made of a plain path or a
``file:`` URI) goes to ``os`` and ``open`` exactly as before; a URI goes through
``pyarrow.fs`` (``FileSystem.from_uri``), so an input in a bucket is read where it
lies, by the driver and by every executor, and its errors are located the same way
(``s3://bucket/key:LINE``: the URI as the file name).

S3 settings come from one place for Spark and for pyarrow: the standard AWS variables
(``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_REGION``
or ``AWS_DEFAULT_REGION``, ``AWS_ENDPOINT_URL``), overridden by the Hadoop s3a settings
given with ``--conf`` (``spark.hadoop.fs.s3a.endpoint``, ``.access.key``, ``.secret.key``,
``.session.token``, ``.endpoint.region``).  ``configure`` takes them on the driver;
``propagate`` hands them to the tasks as Spark local properties (the keys Spark's default
``spark.redaction.regex`` hides), so executors need no variable of their own.

Outputs, checkpoints and a stream's ``--source`` on an object store go to Spark's own
Hadoop file systems, which need the store's connector (for ``s3a://``: hadoop-aws and the
AWS SDK bundle, ``--conf spark.jars=...``; the pyspark wheel has none).  Once Spark has
started, ``check_spark_connector`` probes it and refuses such a path, typed (exit 2),
when the connector is missing or cannot start, saying which.  An object store has no
atomic rename: ``pipeline.io.write_parquet_atomic`` lands an output there part by part,
``_SUCCESS`` last (docs/pipeline.md, "Object stores and other URI schemes").
"""
from __future__ import annotations

import io
import os
import re
from urllib.parse import urlsplit

from streamspec.pipeline.flags import scheme     # one URI-scheme rule for flags and readers

#: URI schemes of object stores (no atomic rename; Spark needs a connector for each)
OBJECT_STORES = ("s3", "s3a", "s3n", "gs", "gcs", "abfs", "abfss", "wasb", "wasbs", "oss")
#: URI schemes streamspec's readers open through pyarrow.fs (s3a and s3n read as s3)
READ_SCHEMES = ("s3", "s3a", "s3n", "gs", "gcs", "hdfs", "viewfs")

# --conf keys (Hadoop's s3a names) and the S3FileSystem option each one sets
_S3A = {"spark.hadoop.fs.s3a.endpoint": "endpoint",
        "spark.hadoop.fs.s3a.endpoint.region": "region",
        "spark.hadoop.fs.s3a.access.key": "access_key",
        "spark.hadoop.fs.s3a.secret.key": "secret_key",
        "spark.hadoop.fs.s3a.session.token": "session_token"}
_ENV = {"AWS_ENDPOINT_URL_S3": "endpoint", "AWS_ENDPOINT_URL": "endpoint",
        "AWS_REGION": "region", "AWS_DEFAULT_REGION": "region",
        "AWS_ACCESS_KEY_ID": "access_key", "AWS_SECRET_ACCESS_KEY": "secret_key",
        "AWS_SESSION_TOKEN": "session_token"}
# the Spark local properties that carry them to the tasks: names Spark's default
# spark.redaction.regex ((?i)secret|password|token|access[.]?key) hides in logs and the UI
_PROPERTY = {"endpoint": "streamspec.s3.endpoint", "region": "streamspec.s3.region",
             "access_key": "streamspec.s3.access.key", "secret_key": "streamspec.s3.secret.key",
             "session_token": "streamspec.s3.session.token"}

_settings: dict[str, str] = {}      # the driver's, set by configure
_cache: dict = {}


def is_remote(path: str) -> bool:
    """``path`` is a URI of another file system than the local one."""
    kind = scheme(path)
    return kind is not None and kind != "file"


def configure(conf=None, environ=None) -> dict[str, str]:
    """The driver's S3 settings: the AWS variables, then ``--conf`` s3a keys (``conf``: a
    dict or ``(key, value)`` pairs), which win.  Returns and keeps them."""
    environ = os.environ if environ is None else environ
    found: dict[str, str] = {}
    for var, option in reversed(list(_ENV.items())):    # the first listed wins
        if environ.get(var):
            found[option] = environ[var]
    pairs = conf.items() if isinstance(conf, dict) else (conf or ())
    for key, value in pairs:
        if key in _S3A and value:
            found[_S3A[key]] = value
    _settings.clear()
    _settings.update(found)
    _cache.clear()
    return dict(found)


def propagate(spark) -> None:
    """Hand the driver's S3 settings to every task this thread starts from now on."""
    sc = spark.sparkContext
    for option, prop in _PROPERTY.items():
        sc.setLocalProperty(prop, _settings.get(option))


def _current() -> dict[str, str]:
    """The settings in force: a task's local properties inside Spark, else the driver's."""
    try:
        from pyspark import TaskContext
        ctx = TaskContext.get()
    except ImportError:
        ctx = None
    if ctx is None:
        return _settings
    found = {}
    for option, prop in _PROPERTY.items():
        value = ctx.getLocalProperty(prop)
        if value:
            found[option] = value
    return found


def _s3(settings: dict[str, str]):
    from pyarrow.fs import S3FileSystem

    options: dict = {}
    endpoint = settings.get("endpoint")
    if endpoint:
        if "://" not in endpoint:       # s3a's endpoint may be a bare host[:port] (https)
            endpoint = "https://" + endpoint
        parts = urlsplit(endpoint)
        options["endpoint_override"] = parts.netloc
        options["scheme"] = parts.scheme or "https"
    if settings.get("region"):
        options["region"] = settings["region"]
    if settings.get("access_key") and settings.get("secret_key"):
        options.update(access_key=settings["access_key"], secret_key=settings["secret_key"],
                       session_token=settings.get("session_token"))
    return S3FileSystem(**options)


def resolve(path: str):
    """``(pyarrow FileSystem, path on it)`` of an input: the local file system for a plain
    path, S3 (with ``configure``'s settings) for ``s3://``, ``s3a://`` and ``s3n://`` (the
    same bucket and key), what ``pyarrow.fs.FileSystem.from_uri`` makes of ``gs://`` and
    ``hdfs://``.  ``PathError`` for a scheme pyarrow does not read or a file system it
    cannot reach."""
    from pyarrow import fs as pafs

    from streamspec.spec.errors import PathError

    kind = scheme(path)
    if kind is None or kind == "file":
        return pafs.LocalFileSystem(), os.path.abspath(path)
    parts = urlsplit(path)
    if kind in ("s3", "s3a", "s3n"):
        settings = _current()
        key = tuple(sorted(settings.items()))
        if key not in _cache:
            _cache[key] = _s3(settings)
        return _cache[key], (parts.netloc + parts.path).rstrip("/")
    if kind not in READ_SCHEMES:
        raise PathError(f"{path}: the {kind}:// scheme is not readable here (streamspec reads "
                        "local paths, file://, s3:// and s3a://, gs:// and hdfs:// where "
                        "pyarrow reaches them)")
    uri = "gs" + path[len(kind):] if kind == "gcs" else path
    try:
        return pafs.FileSystem.from_uri(uri)
    except (OSError, ValueError) as err:
        raise PathError(f"{path}: cannot reach its file system: "
                        f"{str(err).splitlines()[0][:200]}") from None


def _info(path: str):
    from streamspec.spec.errors import PathError

    fs, inner = resolve(path)
    try:
        return fs.get_file_info(inner)
    except OSError as err:
        raise PathError(f"{path}: cannot read: {str(err).splitlines()[0][:200]}") from None


def exists(path: str) -> bool:
    """``os.path.exists``, on any file system."""
    if not is_remote(path):
        return os.path.exists(path)
    from pyarrow.fs import FileType
    return _info(path).type != FileType.NotFound


def isfile(path: str) -> bool:
    """``os.path.isfile``, on any file system."""
    if not is_remote(path):
        return os.path.isfile(path)
    from pyarrow.fs import FileType
    return _info(path).type == FileType.File


def isdir(path: str) -> bool:
    """``os.path.isdir``, on any file system (an S3 prefix with objects under it is one)."""
    if not is_remote(path):
        return os.path.isdir(path)
    from pyarrow.fs import FileType
    return _info(path).type == FileType.Directory


def getsize(path: str) -> int:
    """``os.path.getsize``, on any file system."""
    if not is_remote(path):
        return os.path.getsize(path)
    return int(_info(path).size or 0)


def data_files(path: str) -> list[str]:
    """The files under a directory ``path`` as Spark and pyarrow see a dataset's data
    (names starting with ``_`` or ``.`` skipped, at any depth), sorted, as paths of the
    same kind as ``path`` (URIs for a URI)."""
    if not is_remote(path):
        files = []
        for root, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
            files += [os.path.join(root, n) for n in sorted(names)
                      if not n.startswith(("_", "."))]
        return files
    from pyarrow.fs import FileSelector, FileType

    fs, inner = resolve(path)
    prefix = path.rstrip("/")
    found = []
    for info in fs.get_file_info(FileSelector(inner, recursive=True)):
        rel = info.path[len(inner):].lstrip("/")
        if info.type != FileType.File or any(p.startswith(("_", ".")) for p in rel.split("/")):
            continue
        found.append(prefix + "/" + rel)
    return sorted(found)


def open_input(path: str):
    """A seekable binary file object of ``path`` (``open(path, "rb")`` for a local path):
    lines by iteration, ``seek``/``tell``/``read`` as a file's; ``OSError`` when it
    cannot be opened, as ``open`` raises."""
    if not is_remote(path):
        return open(path, "rb")
    fs, inner = resolve(path)
    try:
        return io.BufferedReader(fs.open_input_file(inner), buffer_size=1 << 20)
    except OSError as err:      # named by the URI, not by pyarrow's bucket/key
        text = str(err).splitlines()[0] if str(err) else type(err).__name__
        if isinstance(err, FileNotFoundError) or "does not exist" in text or "not found" in text:
            raise FileNotFoundError(2, "No such file or directory", path) from None
        raise OSError(f"{path}: {text[:200]}") from None


def open_text(path: str, encoding: str, newline=None):
    """``open(path, encoding=..., newline=...)``, on any file system."""
    if not is_remote(path):
        return open(path, encoding=encoding, newline=newline)
    return io.TextIOWrapper(open_input(path), encoding=encoding, newline=newline)


def parquet_source(path: str):
    """What ``pyarrow.parquet`` opens for ``path``: the path itself when local, an open
    file of it otherwise."""
    if not is_remote(path):
        return path
    filesystem, inner = resolve(path)
    return filesystem.open_input_file(inner)


def read_table(path: str, **options):
    """``pyarrow.parquet.read_table`` of a file or dataset directory, on any file system."""
    import pyarrow.parquet as pq

    if not is_remote(path):
        return pq.read_table(path, **options)
    filesystem, inner = resolve(path)
    return pq.read_table(inner, filesystem=filesystem, **options)


#: hadoop-aws older than the Hadoop client jars (3.3.x against the wheel's 3.5): the
#: settings it cannot parse or load in Hadoop 3.5's defaults, given as it reads them
#: (plain numbers mean the same to 3.4+; the v1 SDK's credential provider classes)
OLD_S3A_CONF = {"spark.hadoop.fs.s3a.threads.keepalivetime": "60",
                "spark.hadoop.fs.s3a.connection.establish.timeout": "30000",
                "spark.hadoop.fs.s3a.connection.timeout": "200000",
                "spark.hadoop.fs.s3a.multipart.purge.age": "86400",
                "spark.hadoop.fs.s3a.aws.credentials.provider":
                    "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"}


def spark_cannot_read(spark, path: str) -> str | None:
    """Why Spark's Hadoop file systems cannot open ``path``: no connector for its scheme,
    or one that fails to start (a hadoop-aws older than the Hadoop client: the
    ``--conf`` settings it needs, ``OLD_S3A_CONF``); None when they can."""
    kind = scheme(path)
    try:
        hpath = spark._jvm.org.apache.hadoop.fs.Path(path)
        hpath.getFileSystem(spark._jsc.hadoopConfiguration())
    except Exception as err:    # noqa: BLE001  (py4j: UnsupportedFileSystemException, ClassNotFound)
        text = f"{type(err).__name__}: {err}"     # pyspark's converted errors: the message only
        lines = [ln.strip() for ln in str(err).splitlines()
                 if ln.strip() and not ln.strip().startswith(("at ", "An error occurred"))]
        first = (lines or [type(err).__name__])[0].lstrip(": ")
        if "NumberFormatException" in text or "software.amazon.awssdk" in text:
            first = first if "Exception" in first else f"{type(err).__name__}: {first}"
            settings = " ".join(f"--conf {k}={v}" for k, v in OLD_S3A_CONF.items())
            return (f"Spark's {kind}:// connector failed to start ({first[:160]}): a hadoop-aws "
                    f"older than the pyspark wheel's Hadoop reads Hadoop's newer defaults; give "
                    f"{settings}")
        found = re.search(r"(UnsupportedFileSystemException|ClassNotFoundException)[^\n]*",
                          f"{type(err).__name__}: {first}")
        if found:
            how = ("give the location as s3a:// (the same bucket and key) with the s3a "
                   "connector's jars, --conf spark.jars=... (hadoop-aws and the AWS SDK bundle)"
                   if kind in ("s3", "s3n") else
                   "add it with --conf spark.jars=... (for s3a://: hadoop-aws and the AWS SDK "
                   "bundle)")
            return f"Spark has no {kind}:// connector here: {found.group(0)[:160]}; {how}"
        return f"Spark's {kind}:// connector failed to start: {first[:200]}"
    return None


def check_spark_connector(spark, path: str, flag: str) -> None:
    """Once Spark has started: a location Spark's own file systems write or read (an
    output, a checkpoint, a stream's ``--source``) on an object store is refused, typed
    (``PathError``, exit 2), when Spark has no working connector for its scheme."""
    from streamspec.spec.errors import PathError

    if scheme(path) not in OBJECT_STORES:
        return
    reason = spark_cannot_read(spark, path)
    if reason is not None:
        raise PathError(f"{flag} {path}: {reason}; or write to a local path or to a file "
                        "system every worker shares (hdfs://, an NFS mount) and copy the "
                        "output to the bucket")
