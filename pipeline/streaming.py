"""Structured Streaming from the command line: ``streamspec stream PROBLEM``
(docs/pipeline.md, "Streaming"; issue 11).

``streamspec stream PROBLEM --source DIR --checkpoint DIR --output DIR
[--trigger-once] ...`` watches ``--source`` for new files (Parquet, JSON
lines or CSV with a header: ``--format``), one row per input record in the
problem's columns (``SOURCE_SCHEMA`` of its adapter,
``streamspec.pipeline.jobs.PROBLEM``) plus an optional ``key``: rows of one
key are one stream, keys are independent, a file without ``key`` is one
stream (key null).  It appends the outputs, ``key`` first, to the Parquet
dataset ``--output``.  ``--trigger-once`` processes every file present and
stops (Spark's ``availableNow``); otherwise a micro-batch runs every
``--interval`` seconds until the process is interrupted (Ctrl-C stops the
query cleanly: everything committed stays, the rest is redone on restart).

One generic step serves every problem (``key_step``):
``groupBy(key).applyInPandasWithState`` hands a key's new rows of a
micro-batch to that key's engine, which lives pickled in Spark's group state
(engine state is picklable by contract, ``streamspec.conformance.contracts``)
with the count of its outputs so far (event numbers go on across batches).  An
adapter may keep more than the engine in that state (its ``stream_feed``, an
``EngineFeed``: kws keeps how many of its ``--schema-changes`` a key applied).  A
query restarted from its checkpoint goes on exactly where it stopped, and
Spark's file sink (exactly-once, its own metadata log) neither loses nor
repeats output: ``tests/pipeline/streamcheck.py``, which every problem's stream
tests run, stops a query mid-stream, adds files and restarts it, and compares
the output with the batch run.

Order.  A micro-batch may hold several files; rows are replayed in the order
(file name, position in the file), so name files in arrival order (part-0001,
part-0002...): a stream cut into files and dropped in name order replays as
their concatenation.  Micro-batches take the files by name too, whatever their
modification times (``streamspec.pipeline.arrivals``: the driver logs them in name
order for Spark's file source).  A row
that the problem's spec rejects (a late edge under ``--lateness error``, an
id of the wrong type...) fails the query with the spec's message; what was
committed before stays committed.

A stream has no end: outputs come as records make them due (a window closes
when a record at or after its end arrives), never flushed.
"""
from __future__ import annotations

import argparse
import math
import os
import pickle
import sys

import pandas as pd

from streamspec.pipeline import flags
from streamspec.pipeline.spark import task_error
from streamspec.spec.errors import RecordError, StreamspecError

STATE_SCHEMA = "engine binary, outputs long"
ORDER = ("_file", "_block", "_row")     # arrival order inside a micro-batch (module docstring)
FORMATS = ("parquet", "json", "csv")


class StreamFailed(StreamspecError, RuntimeError):
    """The streaming query stopped on an error (a rejected record, a malformed file)."""


class StreamPathError(StreamspecError, OSError):
    """A ``--source``, ``--checkpoint`` or ``--output`` Spark could not use (missing, a
    file where a directory belongs, not writable): found before Spark starts."""


def interval_seconds(text: str) -> float:
    """An argparse type: ``--interval``, a finite number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: the interval must be a finite number of "
                                         "seconds > 0")
    return value


def check_paths(args) -> None:
    """``StreamPathError`` for a ``--source`` that is not an existing readable directory
    (or glob), or a ``--checkpoint``/``--output`` that is a file, lies under a file or in
    a directory that is not writable, or that overlaps another of the three; before Spark
    starts, so nothing is created."""
    for flag, value in (("--source", args.source), ("--checkpoint", args.checkpoint),
                        ("--output", args.output)):
        if not value.strip():
            raise StreamPathError(f"{flag}: the path is empty")
    source = flags.local_of(args.source)
    if source is not None and not any(c in args.source for c in "*?[{"):
        if not os.path.exists(source):
            raise StreamPathError(f"--source {args.source}: no such directory (the stream watches "
                                  "an existing directory for new files)")
        if not os.path.isdir(source):
            raise StreamPathError(f"--source {args.source}: is a file, not a directory (the stream "
                                  "watches a directory for new files)")
        if not os.access(source, os.R_OK | os.X_OK):
            raise StreamPathError(f"--source {args.source}: directory is not readable")
    places = {"--source": source}
    for flag, value in (("--checkpoint", args.checkpoint), ("--output", args.output)):
        path = flags.local_of(value)
        if path is None:
            continue
        if os.path.exists(path) and not os.path.isdir(path):
            raise StreamPathError(f"{flag} {value}: is a file, not a directory")
        parent = os.path.dirname(path)
        while not os.path.exists(parent):
            parent = os.path.dirname(parent)
        if not os.path.isdir(parent):
            raise StreamPathError(f"{flag} {value}: cannot create it: {parent} is a file, not a "
                                  "directory")
        target = path if os.path.isdir(path) else parent
        if not os.access(target, os.W_OK | os.X_OK):
            raise StreamPathError(f"{flag} {value}: cannot write in {target}: not writable")
        for other, place in places.items():
            if place is not None and (path == place or path.startswith(place.rstrip(os.sep) + os.sep)
                                      or place.startswith(path.rstrip(os.sep) + os.sep)):
                raise StreamPathError(f"{flag} {value} and {other} overlap: each needs its own "
                                      "directory")
        places[flag] = path


def check_format(adapter, args) -> None:
    """``--format csv`` for a stream whose rows hold an array (simjoin's ``tokens``): an
    ``InvalidParameter`` before Spark starts (Spark's CSV reader has no arrays)."""
    from streamspec.pipeline.stream_check import schema_fields
    from streamspec.spec.errors import InvalidParameter

    if args.format != "csv":
        return
    for name, kind in schema_fields(source_schema(adapter, args)):
        if kind.startswith(("array", "map", "struct")):
            raise InvalidParameter(f"--format csv: a {adapter.PROBLEM} stream row has column "
                                   f"{name} of type {kind}, which CSV cannot hold; use --format "
                                   "json or parquet")


def arrival_check(adapter, args):
    """``check(path)`` over each arriving file before Spark reads it, or None: for ``--format
    csv`` the project's CSV reader (``stream_check.CsvFiles``: quoting as ``streamspec
    run`` reads it, an unterminated quote at the line it opened, the header, field counts,
    the types); for ``--format json`` the adapter's ``json_check(args)`` if it has one
    (simjoin ``--ts-type double``: integer times Spark's double would round)."""
    if args.format == "json" and hasattr(adapter, "json_check"):
        return adapter.json_check(args)
    if args.format != "csv":
        return None
    from streamspec.pipeline.stream_check import CsvFiles
    return CsvFiles(source_schema(adapter, args))


def source_schema(adapter, args) -> str:
    schema = adapter.source_schema(args) if hasattr(adapter, "source_schema") else adapter.SOURCE_SCHEMA
    return f"{schema}, key {args.key_type}"


class EngineFeed:
    """How a key's rows reach its state: by default the key's state is its engine and
    its rows reach it as the adapter's ``stream_events``.  An adapter may give its own
    feed (``stream_feed(args, engine_cls, params)``, built on the driver before Spark
    starts), e.g. one that also applies timed events of its own to every key before the
    rows of their time (``streamspec stream kws --schema-changes``)."""

    def __init__(self, adapter, engine_cls, params):
        self.adapter, self.engine_cls, self.params = adapter, engine_cls, params

    def start(self):
        """A new key's state (pickled into the group state)."""
        return self.engine_cls(self.params)

    def resume(self, state):
        """A key's unpickled state as this feed keeps it (a checkpoint may come from a
        run of another version or other flags); by default as it is."""
        return state

    def feed(self, engine, pdf: pd.DataFrame) -> list:
        """The outputs of a key's rows (arrival order); a ``RecordError`` leaves with
        ``index`` the row's position in ``pdf``."""
        # the adapter numbers the rows it refuses from 0, the spec from the engine's
        # first record (its ``_seen`` count): this batch's rows start there
        events = self.adapter.stream_events(pdf, self.params)
        return process_rows(engine, events, getattr(engine, "_seen", 0))


def process_rows(engine, events, first: int, at: int = 0) -> list:
    """``engine.process(events)`` as a list; the spec's errors renumbered from ``first``
    (the engine's record number of the first of ``events``) to ``at`` (that row's
    position in the key's micro-batch)."""
    try:
        return list(engine.process(events))
    except RecordError as err:
        if err.index is None or first == at:
            raise
        raise type(err)(err.message, index=err.index - first + at,
                        location=err.location) from None


def key_step(adapter, engine_cls, params, fmt: str = "parquet", feed=None,
             source: str | None = None, check=None):
    """The ``applyInPandasWithState`` function: one key, one micro-batch (``feed``: an
    ``EngineFeed``, by default the adapter's engine fed its rows; ``source``: the
    ``--source`` its files are in, to locate a rejected row at its line; ``check``: the
    ``arrival_check``, run here over the files whose rows it names with ``suspect_files``,
    for the files Spark read without the driver's arrival log: a ``--source`` on another
    file system, a glob, a checkpoint older than the log)."""
    feed = feed or EngineFeed(adapter, engine_cls, params)
    suspects = getattr(check, "suspect_files", None)

    def step(key, batches, state):
        if state.exists:
            blob, first = state.get
            engine = feed.resume(pickle.loads(blob))
        else:
            engine, first = feed.start(), 0
        frames = [pdf for pdf in batches if len(pdf)]
        outputs = []
        if frames:
            pdf = pd.concat(frames, ignore_index=True).sort_values(list(ORDER), kind="stable")
            pdf = pdf.reset_index(drop=True)
            if suspects is not None and source is not None:
                from streamspec.pipeline.stream_check import source_file
                for name in suspects(pdf):
                    path = source_file(source, name)
                    if path is not None:
                        check(path, shown=name)
            try:
                outputs = feed.feed(engine, pdf.drop(columns=[*ORDER, "key"]))
            except RecordError as err:
                if err.location is None and err.index is not None and 0 <= err.index < len(pdf):
                    raise err.at(_where(pdf.loc[err.index], fmt, source)) from None
                raise
        state.update((pickle.dumps(engine, protocol=pickle.HIGHEST_PROTOCOL), first + len(outputs)))
        if outputs:
            rows = adapter.stream_rows(outputs, first)
            rows.insert(0, "key", pd.Series([key[0]] * len(rows), dtype=object))
            yield rows
    return step


def _where(row, fmt: str, source: str | None = None) -> str:
    """Where a row is: ``file:line`` in a JSON-lines or CSV file (the line where the
    record starts: the file is read again to count its lines, as blank lines and quoted
    newlines make records and lines differ), ``file: row N`` in a Parquet file (rows from
    1); in a split of a large JSON-lines file (Spark numbers the rows of each split from
    0) the line is found by counting the newlines before the split's first byte; in a
    text file this task cannot open, ``file: record N`` (``file: row N of the split from
    byte B``)."""
    from streamspec.pipeline.stream_check import record_line, source_file

    name, n, block = row["_file"], int(row["_row"]), int(row["_block"])
    if fmt == "parquet":
        return f"{name}: row {n + 1}"
    path = source_file(source, name) if source is not None else None
    try:
        line = record_line(path, fmt, n, block) if path is not None else None
    except (OSError, ValueError):       # unreadable now, or not text: Spark read it
        line = None
    if line is not None:
        return f"{name}:{line}"
    if block:
        return f"{name}: row {n + 1} of the split from byte {block}"
    return f"{name}: record {n + 1}"


def outputs_stream(adapter, rows, engine_cls, params, key_type: str, output_schema: str,
                   fmt: str = "parquet", feed=None, source: str | None = None, check=None):
    """The streaming output rows (``key`` first) of a streaming DataFrame of input rows."""
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout

    located = rows.select("*", F.col("_metadata.file_name").alias("_file"),
                          F.col("_metadata.file_block_start").alias("_block"))
    # Spark numbers no rows in a stream (monotonically_increasing_id is refused there), but
    # one task reads one file split front to back: count the rows of each split as they pass
    from pyspark.sql.types import LongType, StructField, StructType
    schema = StructType([*located.schema.fields, StructField("_row", LongType())])
    ordered = located.mapInPandas(_number_rows, schema)
    return ordered.groupBy("key").applyInPandasWithState(
        key_step(adapter, engine_cls, params, fmt, feed, source, check),
        f"key {key_type}, {output_schema}", STATE_SCHEMA,
        "append", GroupStateTimeout.NoTimeout)


def _number_rows(batches):
    """``_row``: each row's position in its file split, in the order one task reads it."""
    seen: dict = {}
    for pdf in batches:
        split = pd.MultiIndex.from_frame(pdf[["_file", "_block"]])
        position = pdf.groupby(["_file", "_block"], sort=False).cumcount().to_numpy()
        before = pd.Series([seen.get(k, 0) for k in split], dtype="int64").to_numpy()
        yield pdf.assign(_row=position + before)
        for k, n in pdf.groupby(["_file", "_block"], sort=False).size().items():
            seen[k] = seen.get(k, 0) + int(n)


def read_source(spark, args, schema: str, path: str | None = None):
    """The streaming DataFrame of ``--source``'s rows, read from ``path`` (the arrival
    log, ``streamspec.pipeline.arrivals``) when given."""
    reader = spark.readStream.schema(schema).option("mode", "FAILFAST")
    if args.files_per_batch:
        reader = reader.option("maxFilesPerTrigger", args.files_per_batch)
    if args.format == "csv":
        # Spark maps CSV columns by position: with enforceSchema off it refuses a file whose
        # header does not name the schema's columns in order (stream_check says which)
        reader = reader.option("header", True).option("enforceSchema", False)
        # quoting as Python's csv module reads it (the checked rule): "" inside quotes is a
        # quote, a backslash is text, a quoted field may hold newlines
        reader = reader.option("escape", '"').option("multiLine", True)
    return getattr(reader, args.format)(path or args.source)


def add_arguments(parser: argparse.ArgumentParser, adapter) -> None:
    parser.add_argument("--source", required=True, metavar="DIR",
                        help="directory watched for new input files (required)")
    parser.add_argument("--format", choices=FORMATS, default="parquet",
                        help="format of the input files (default: parquet)")
    parser.add_argument("--key-type", choices=("string", "long"), default="string",
                        help="type of the optional key column (default: string)")
    parser.add_argument("--checkpoint", required=True, metavar="DIR",
                        help="Spark checkpoint directory: offsets and the engines' state; "
                             "restarting with it goes on where the last run stopped (required)")
    parser.add_argument("--output", required=True, metavar="DIR",
                        help="output Parquet dataset, appended to exactly once (required)")
    parser.add_argument("--trigger-once", action="store_true",
                        help="process the files present, then stop (default: run until "
                             "interrupted)")
    parser.add_argument("--interval", type=interval_seconds, default=10.0, metavar="SECONDS",
                        help="seconds between micro-batches without --trigger-once (default: 10)")
    parser.add_argument("--files-per-batch", type=flags.positive_int, default=None, metavar="N",
                        help="at most N new files per micro-batch (default: all new files)")
    flags.add_spark_options(parser)
    adapter.add_stream_arguments(parser)


SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"


def state_partitions(spark, conf: dict) -> None:
    """A new query's state partitions: the session's default parallelism (its cores), unless
    ``spark.sql.shuffle.partitions`` is set (``--conf``, spark-defaults, the session's
    builder).  Spark's default of 200 means 200 state stores and 200 Python tasks in every
    micro-batch however small it is (adaptive execution, which merges small partitions in
    a batch job, does not apply to a streaming query): a ``--trigger-once`` run of two
    small files took 20 s on a two-core standalone cluster.  A restarted query keeps the
    number it started with (Spark reads it from the checkpoint), so this is only the
    default of a new checkpoint."""
    if SHUFFLE_PARTITIONS in conf or spark.sparkContext.getConf().contains(SHUFFLE_PARTITIONS):
        return
    spark.conf.set(SHUFFLE_PARTITIONS, str(max(1, spark.sparkContext.defaultParallelism)))


def run(adapter, args, out=None) -> int:
    """Start the query; with ``--trigger-once`` wait for it, else run until interrupted."""
    from streamspec.pipeline.io import write_stream_parquet
    from streamspec.pipeline.job import engine_of
    from streamspec.pipeline.spark import check_task_paths, session

    out = out or sys.stdout
    engine_cls = engine_of(adapter, args)
    from streamspec.pipeline import fs      # the S3 settings (--conf s3a keys) of the input
    fs.configure(getattr(args, "conf", None))   # URIs stream_params reads (--remote, --schema)
    params = adapter.stream_params(args)     # bad parameters fail before Spark starts
    check_format(adapter, args)
    check_paths(args)                        # so do unusable paths: nothing created yet
    # relative paths and file: URIs made absolute on the driver, once checked (the checks'
    # messages name the paths as given)
    flags.resolve_paths(args)
    # so do the adapter's own inputs (kws: the schema-changes file): no checkpoint yet
    feed = adapter.stream_feed(args, engine_cls, params) if hasattr(adapter, "stream_feed") \
        else None
    conf = dict(getattr(args, "conf", None) or ())
    spark = session(args.master, app_name=f"streamspec stream {adapter.PROBLEM} {engine_cls.name}",
                    conf=conf)
    check_task_paths(spark, *flags.task_paths(args))    # on a cluster: the workers see them
    state_partitions(spark, conf)
    from streamspec.pipeline.arrivals import Arrivals, tidy_output
    tidy_output(args.output)     # what a killed run's uncommitted micro-batch left
    # files taken by name, whatever their modification times; CSV files checked by the
    # project's CSV reader first (Spark's would read an unterminated quote without a word),
    # and what an adapter checks in JSON files (arrival_check)
    check = arrival_check(adapter, args)
    arrivals = Arrivals.of(args, check)
    if arrivals is not None:
        arrivals.update()
    rows = read_source(spark, args, source_schema(adapter, args),
                       arrivals.dir if arrivals is not None else None)
    if hasattr(check, "for_tasks"):     # CSV files Spark reads directly: checked in the tasks
        check = check.for_tasks(arrivals is None)
    outputs = outputs_stream(adapter, rows, engine_cls, params, args.key_type,
                             adapter.stream_schema(args), args.format, feed, args.source, check)
    # a failing record stops the query; the JVM would log the Python traceback once per
    # task, stage and query: the reason is reported once, below, with its file and line
    spark.sparkContext.setLogLevel("FATAL")
    query = write_stream_parquet(outputs, args.output, args.checkpoint,
                                 available_now=args.trigger_once,
                                 interval=None if args.trigger_once else args.interval)
    following = arrivals.follow(min(args.interval, 5.0)) \
        if arrivals is not None and not args.trigger_once else None
    try:
        if following is None:
            query.awaitTermination()
        else:
            while not query.awaitTermination(1.0):
                if arrivals.error is not None:     # a file refused: the ones before it first
                    query.processAllAvailable()
                    query.stop()
                    break
    except KeyboardInterrupt:
        query.stop()
    except Exception as err:     # pyspark's StreamingQueryException and its relatives
        raise _failed(adapter, args, err) from err
    finally:
        if following is not None:
            following.set()
    if query.exception() is not None:
        raise _failed(adapter, args, query.exception())
    # a driver killed with -9 leaves its JVM running a moment: a task of its micro-batch may
    # write a part file after this run's start tidied; what the sink log does not list goes
    tidy_output(args.output)
    if arrivals is not None and arrivals.error is not None:
        raise StreamFailed(f"{adapter.PROBLEM} stream stopped: {arrivals.error} (the files "
                           "before it were streamed)")
    batches = [p for p in (query.recentProgress or []) if p.get("numInputRows")]
    rows_in = sum(int(p["numInputRows"]) for p in batches)
    print(f"{adapter.PROBLEM}: streamed {rows_in} input rows in {len(batches)} micro-batches "
          f"(engine {engine_cls.name}) to {args.output}; checkpoint {args.checkpoint}.", file=out)
    return 0


def _failed(adapter, args, err) -> StreamFailed:
    """The ``StreamFailed`` of a query stopped by ``err``: the spec's message with its file
    and line; where Spark's reader refused a file without saying where or why, the first
    bad record the project's readers find in it (``streamspec.pipeline.stream_check``).
    The failed micro-batch's part files are removed (``arrivals.tidy_output``)."""
    from streamspec.pipeline.arrivals import tidy_output
    from streamspec.pipeline.stream_check import locate

    reason = task_error(err)
    located = locate(str(err), args.format, source_schema(adapter, args))
    if located is not None:
        reason = str(located)
    tidy_output(args.output)
    return StreamFailed(f"{adapter.PROBLEM} stream stopped: {reason}")


def command(adapter):
    def main(args) -> int:
        return run(adapter, args)
    return main
