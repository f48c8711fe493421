"""The kws job's Spark-read path (``streamspec.pipeline.jobs.kws``: "What is read where",
issue 11): Spark tasks parse the tuple files (``streamspec.pipeline.io.kws_text``) into
typed columns, split them by time range (the ranges and halos of the exact
time-partitioned replay, paper Lemma 1) or by key, and replay them through the engine's
columnar batches; a chunk they cannot read as the driver would, or a record the spec
rejects, sends the job back to the driver's validating reader (``replay_files`` returns
None).  ``kws`` re-exports its public names.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from streamspec.pipeline.jobs._kws_columns import (INT64_MIN, OUTPUT_SCHEMA, _from_ipc, _ipc,
                                                   arrow_rows, inputs_of, run_inputs)
from streamspec.spec.kws import Params
from streamspec.pipeline.spark import materialise

if TYPE_CHECKING:
    from streamspec.pipeline.jobs.kws import Plan


# -- the Spark-read path: tasks parse the tuple files (pipeline.io.kws_text) --------------
REJECTED = "rejected"       # the kind of the marker row of a task whose rows the spec rejected
CHUNK_STATS = ("chunk int, ok boolean, rows long, lines long, keyed long, unkeyed long, "
               "t_min long, t_max long, explicit boolean, keys string, key_kinds string, "
               "data binary, reason string")


def replay_files(spark, plan: Plan, engine_cls, partitions: int, chunk_bytes: int | None = None):
    """The output rows of ``plan.files``, read by Spark tasks; None when a task found a
    chunk it cannot read as the driver would, or a record bad (the caller then runs the
    driver's validating reader, which names it).

    1. one task per chunk (``kws_text.chunks``: byte ranges at line starts, Parquet row
       groups; consecutive chunks share a task when there are more than twice
       ``partitions`` and than Spark's default parallelism) parses it into typed columns with each row's merge order
       (``kws_text.chunk_table``), kept once (``spark.materialise``); the driver reads
       only the chunks' checks: every chunk fit, keyed rows everywhere or nowhere, one
       kind of keys (ints when every key is an integer), the time span, line counts;
    2. each chunk is split by time range (one stream: the ranges and halos of
       ``replay_events``) or by key (``replay_keyed``); the task of a range or key
       puts its pieces in merge order (``kws_text.assemble``: time, input position,
       chunk, row; default tids ``REL:LINE``) and replays them through the engine's
       columnar batches (``inputs_of``), the spec validating them; a rejection is a
       marker row; with several ranges, tasks of the same pass look for a tid repeated
       across them (which no one range may see) and answer with the marker row too.
    """
    import time

    import pyarrow as pa
    from pyspark.sql import functions as F

    from streamspec.pipeline.io.kws_text import chunk_table, chunks, line_bases
    from streamspec.pipeline.job import materialised
    from streamspec.pipeline.jobs.kws import time_bounds    # (kws imports this module)

    began = [time.monotonic()]

    def phase(name):
        now = time.monotonic()
        plan.phases[name] = round(now - began[0], 3)
        began[0] = now

    files = plan.files
    cs = chunks(files, partitions, chunk_bytes)
    if not cs:
        plan.n_events = 0
        return spark.createDataFrame([], OUTPUT_SCHEMA)

    def parse(batches):
        import csv

        from streamspec.pipeline.io.kws_text import Unfit

        for batch in batches:
            for c in batch.column(0).to_pylist():
                chunk = cs[c]
                try:
                    table, st = chunk_table(files[chunk.file], chunk)
                    cells = {**st, "ok": True, "data": _ipc(table)}
                # unfit or bad data (a ValueError: JSON, UTF-8, a record the spec rejects):
                # the driver's reader judges it.  A file the task cannot open (OSError) or a
                # bug is not the data's: it fails the job (a PathError, exit 2, for a path)
                except (Unfit, ValueError, TypeError, ArithmeticError, LookupError,
                        csv.Error) as err:
                    cells = {"ok": False,
                             "reason": f"{files[chunk.file].path}: {_short(err)}"}
                yield pa.RecordBatch.from_pylist([{"chunk": c, **cells}],
                                                 _arrow_schema(CHUNK_STATS))

    # one task per chunk, unless there are many more chunks than the job can run at once
    # (a small --chunk-bytes): then each task parses a run of consecutive chunks, as a task
    # costs far more than a small chunk
    tasks = min(len(cs), max(2 * partitions, spark.sparkContext.defaultParallelism))
    numbers = spark.sparkContext.parallelize([(c,) for c in range(len(cs))], tasks)
    parsed = materialise(spark.createDataFrame(numbers, "chunk int").mapInArrow(parse, CHUNK_STATS))
    phase("parse")
    stats = sorted(parsed.drop("data").collect())
    phase("checks")
    if [s.chunk for s in stats] != list(range(len(cs))):
        return _on_driver("a chunk's task reported nothing")
    unfit = [s for s in stats if not s.ok]
    if unfit:
        return _on_driver(f"a task could not parse a chunk as the driver would ({unfit[0].reason})")
    keyed, unkeyed = sum(s.keyed for s in stats), sum(s.unkeyed for s in stats)
    if keyed and unkeyed:
        return _on_driver("some rows have a key and others none")
    bases = line_bases(files, cs, [s.lines for s in stats])
    plan.n_events = sum(s.rows for s in stats)
    data = parsed.select("chunk", "data")
    if keyed:
        kinds = set().union(*(s.key_kinds.split(",") for s in stats)) - {""}
        if "unfit" in kinds:
            return _on_driver("a key the tasks cannot type")
        ktype = "long" if kinds <= {"int"} else "string"
        keys = {int(k) if ktype == "long" else k for s in stats for k in json.loads(s.keys)}
        plan.n_keys = len(keys)
        rows = _replay_chunks_keyed(data, plan.params, engine_cls, bases, ktype,
                                    max(1, min(partitions, len(keys))))
    else:
        if not plan.n_events:
            return spark.createDataFrame([], OUTPUT_SCHEMA)
        w = plan.params.window
        t0 = min(s.t_min for s in stats if s.rows)
        t1 = max(s.t_max for s in stats if s.rows)
        tasks = [(None, None)] if w is None or partitions <= 1 else time_bounds(t0, t1, partitions)
        rels = [f.rel for f in files if f.rel is not None]
        check = len(tasks) > 1 and (any(s.explicit for s in stats) or len(set(rels)) < len(rels))
        rows = _replay_chunks(data, plan.params, engine_cls, bases, tasks, check)
    rows = materialise(rows)
    phase("replay")
    if rows.where(F.col("kind") == REJECTED).limit(1).count():
        return _on_driver("a task's engine rejected a record (or a tid repeats across ranges)")
    phase("rejections")
    return materialised(rows.where(F.col("kind") != REJECTED))


def _short(err) -> str:
    """An exception as one short line: its type and the first line of its message."""
    text = (str(err).strip().splitlines() or [""])[0]
    return f"{type(err).__name__}: {text}"[:200]


def _on_driver(reason: str):
    """Say (one line on stderr) that the driver's reader takes the input, and why; None."""
    from streamspec.pipeline.spark import on_driver
    on_driver("kws", reason)
    return None


def _arrow_schema(ddl: str):
    import pyarrow as pa

    kinds = {"int": pa.int32(), "long": pa.int64(), "boolean": pa.bool_(), "string": pa.string(),
             "binary": pa.binary()}
    return pa.schema([(name, kinds[kind]) for name, kind in
                      (c.split() for c in ddl.split(", "))])


def _rejected(key=None, key_arrow=None):
    """The marker row of a task whose rows the spec rejected."""
    import pyarrow as pa

    arrays = {"kind": pa.array([REJECTED]), "time": pa.array([0], pa.int64()),
              "end": pa.nulls(1, pa.int64()), "tids": pa.array([[]], pa.list_(pa.string())),
              "edges": pa.array([[]], pa.list_(pa.string()))}
    if key_arrow is not None:
        arrays = {"key": pa.array([key], key_arrow), **arrays}
    return pa.table(arrays)


def _replay_stream(engine_cls, params: Params, blobs, bases, lo, hi, key=None, key_arrow=None):
    """A range's or key's pieces of chunks in merge order through the engine (``lo``: the
    range's start, its halo from ``lo - w``); the output rows or the marker row."""
    from streamspec.pipeline.io.kws_text import assemble
    from streamspec.spec.errors import RecordError

    stream, attributes = assemble([_from_ipc([b]) for b in blobs], bases)
    try:
        if stream is None:
            outputs = run_inputs(engine_cls, params, [], lo, hi)
        else:
            halo = None if lo is None else lo - params.window
            outputs = run_inputs(engine_cls, params, inputs_of(stream, attributes, halo), lo, hi)
    except RecordError:
        return _rejected(key, key_arrow)
    return arrow_rows(outputs, key, key_arrow)


def _replay_chunks(data, params: Params, engine_cls, bases: dict, tasks: list,
                   check_tids: bool = False):
    """One stream: each chunk's rows split by time range (a range's halo included), one
    task per range.  With ``check_tids`` (several ranges, tids that could repeat across
    them, which no one range would see) the same pass also sends each chunk's insert
    tids to ``len(tasks)`` more tasks by a stable hash (CRC-32 of the text); a task that
    finds a repeat answers with the marker row, as a rejecting range does."""
    import zlib

    import pyarrow as pa
    import pyarrow.compute as pc

    w = params.window
    ranges = len(tasks)
    schema = _arrow_schema("part int, data binary")

    def piece(p, table):
        return pa.RecordBatch.from_pydict({"part": [p], "data": [_ipc(table)]}, schema)

    def split(batches):
        for batch in batches:
            for c, blob in zip(batch.column("chunk").to_pylist(), batch.column("data").to_pylist()):
                if ranges == 1:
                    yield pa.RecordBatch.from_pydict({"part": [0], "data": [blob]}, schema)
                    continue
                table = _from_ipc([blob])
                t = table["t"]
                for p, (lo, hi) in enumerate(tasks):
                    keep = pc.and_(pc.less(t, hi) if hi is not None else pc.is_valid(t),
                                   pc.greater_equal(t, max(lo - w, INT64_MIN)))
                    part = table.filter(keep)
                    if part.num_rows:
                        yield piece(p, part)
                if check_tids:
                    tid, rel, line = (table[x].to_pylist() for x in ("tid", "rel", "line"))
                    groups: dict = {}
                    for x, r, n in zip(tid, rel, line):
                        if r is None:
                            continue            # a deletion
                        x = x if x is not None else f"{r}:{bases.get(c, 0) + n}"
                        b = zlib.crc32(x.encode("utf-8", "surrogatepass")) % ranges
                        groups.setdefault(b, []).append(x)
                    for b, xs in groups.items():
                        yield piece(ranges + b, pa.table({"tid": pa.array(xs, pa.string())}))

    def per_task(part):
        p = part["part"][0].as_py()
        if p >= ranges:                 # a bucket of tids
            tids = _from_ipc(part["data"].to_pylist())["tid"]
            repeated = pc.count_distinct(tids).as_py() < len(tids)
            return _rejected() if repeated else arrow_rows([])
        lo, hi = tasks[p]
        return _replay_stream(engine_cls, params, part["data"].to_pylist(), bases, lo, hi)

    pieces = data.mapInArrow(split, "part int, data binary")
    n = ranges * (2 if check_tids and ranges > 1 else 1)
    return (pieces.repartition(n, "part").groupBy("part")
            .applyInArrow(per_task, OUTPUT_SCHEMA))


def _replay_chunks_keyed(data, params: Params, engine_cls, bases: dict, ktype: str, parts: int):
    """Keyed: each chunk's rows split by key, one engine per key (``replay_keyed``)."""
    import pyarrow as pa

    key_arrow = pa.int64() if ktype == "long" else pa.string()
    schema = pa.schema([("key", key_arrow), ("data", pa.binary())])

    def split(batches):
        for batch in batches:
            for blob in batch.column("data").to_pylist():
                table = _from_ipc([blob])
                groups: dict = {}
                for i, k in enumerate(table["key"].to_pylist()):
                    groups.setdefault(int(k) if ktype == "long" else k, []).append(i)
                for k, rows in groups.items():
                    part = table.take(pa.array(rows, pa.int64()))
                    yield pa.RecordBatch.from_pydict({"key": [k], "data": [_ipc(part)]}, schema)

    def per_key(part):
        key = part["key"][0].as_py()
        return _replay_stream(engine_cls, params, part["data"].to_pylist(), bases, None, None,
                              key, key_arrow)

    pieces = data.mapInArrow(split, f"key {ktype}, data binary")
    return (pieces.repartition(parts, "key").groupBy("key")
            .applyInArrow(per_key, f"key {ktype}, {OUTPUT_SCHEMA}"))
