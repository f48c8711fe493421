"""Continuous top-k set similarity join over a set stream: one Parquet row per
(output event, rank).

``streamspec run simjoin --input SETS --k K --window W --similarity NAME
--engine NAME --output DIR [--partitions P] [--master URL]`` (shared flags:
``streamspec.pipeline.flags``) reads the sets
(``streamspec.pipeline.io.simjoin``: JSON lines or Parquet of ``id, ts, tokens | text
[, side, key]``), runs the engine and writes every change of the top-k list
(``streamspec.spec.simjoin``): columns ``event`` (ordinal of the output event, from 0;
per key when keyed), ``ts`` (index time), ``rank`` (1..k), ``id_new``,
``id_old``, ``score``, ``end_time``; an event whose list is empty is one row
with ``rank`` 0 and null pair columns; plus ``key`` when keyed.

Replay (exact, equal to the single-process run):

- keyed input: one engine per key (``groupBy(key).applyInPandas``);
- one stream: cut into ``P`` ranges of consecutive records; the task of
  range ``[lo, hi)`` first replays, without output, the halo of one window:
  the records still valid at the time of record ``lo - 1`` (a contiguous run,
  as times never decrease); its engine then holds exactly the valid records,
  in the same relative order (ties break by arrival order only), so its list
  after ``lo - 1`` and every change from ``lo`` on are the single run's.
  Event ordinals are local per range and shifted by the counts of the ranges
  before (collected on the driver).
- one unkeyed Parquet stream with lateness ``error``: the same record ranges,
  but no rows pass through the driver: its footers plan the ranges
  (``pipeline.io.simjoin.plan_scan``) and each range's task reads its own row
  groups, halo included, straight into a ``RecordBatch`` (``replay_scan``);
  the spec validates each row once, in its task, and an input a task rejects
  is read again by the validating reader for its located error.
- one unkeyed JSON lines stream with lateness ``error``: ranges of bytes cut
  at line starts, each parsed by its task, which reads its halo back from its
  first byte (``replay_lines``); the same checks and fallback.  Without the
  bytes ``"side"`` in the file the default join is the self join, decided
  without reading the records (a task that meets a side all the same hands
  the input to the validating reader).
- a keyed JSON lines file of 16 MB or more with lateness ``error`` (and the
  join given, or no ``"side"`` bytes in it): byte ranges cut at line starts,
  parsed by Spark tasks into staged Parquet files beside the output
  (``pipeline.io.simjoin.stage_keyed_span``), then one engine per key, which
  validates its records in file order (``replay_keyed_lines``); a refused or
  rejected input goes to the validating reader, which names the record.

``streamspec stream simjoin --source DIR --checkpoint DIR --output DIR --k K
--window W [--join rs] [--id-type|--token-type|--ts-type ...]``
(``streamspec.pipeline.streaming``): the same rows from files arriving in
``DIR`` (columns ``id, ts, tokens | text[, side, key]``), one engine per key
in Spark's group state, events numbered on across micro-batches.  The flags
fix what the batch job reads off the input (the join kind, the column
types).  Integer ids and tokens reach the engine as one ``RecordBatch`` per
micro-batch; SWOOP pickles without its spare capacity
(``SwoopEngine.__getstate__``), so the state is the window's size, not 13 MB.
"""
from __future__ import annotations

import argparse

import attrs
from pathlib import Path

import numpy as np
import pandas as pd

from streamspec.pipeline import flags, fs
from streamspec.pipeline.job import Summary, materialised
from streamspec.pipeline.spark import materialise
from streamspec.pipeline.summary import counted
from streamspec.spec.simjoin import PROBLEM, SIMILARITIES, Params, Record

PREFERRED_ENGINES = ("swoop", "base", "oracle")
# the demo sample: 3000 tweet-like sets, one per second, keyed by one of three cities; rebuilt by
# python -c "from streamspec.bench.simjoin.sample import main; main('pipeline/data/simjoin-sets.jsonl', n=3000)"
DEMO_INPUT = Path(__file__).resolve().parent.parent / "data" / "simjoin-sets.jsonl"
SUMMARY_KEYS = 5      # keys whose final best pair the summary shows


def output_schema(id_type: str) -> str:
    return (f"event long, ts double, rank int, id_new {id_type}, id_old {id_type}, "
            "score double, end_time double")


def records_of(pdf: pd.DataFrame) -> list[Record]:
    ids = pdf["id"].tolist()
    sides = pdf["side"].tolist() if "side" in pdf else [None] * len(pdf)
    return [Record(i, list(t), float(ts), s if isinstance(s, str) else None)
            for i, t, ts, s in zip(ids, pdf["tokens"].tolist(), pdf["ts"].tolist(), sides)]


def output_rows(topks, first_event: int = 0) -> pd.DataFrame:
    """``TopK`` outputs as rows of the output schema (rank 0 for an empty list)."""
    cols = {c: [] for c in ("event", "ts", "rank", "id_new", "id_old", "score", "end_time")}
    for n, topk in enumerate(topks, first_event):
        pairs = topk.pairs or ((None, None, None, None),)
        for rank, (a, b, score, end) in enumerate(pairs, 1 if topk.pairs else 0):
            for c, v in zip(cols, (n, topk.ts, rank, a, b, score, end)):
                cols[c].append(v)
    ids = {c: pd.Series(cols.pop(c), dtype=object) for c in ("id_new", "id_old")}
    frame = pd.DataFrame(cols)
    frame.insert(3, "id_new", ids["id_new"])
    frame.insert(4, "id_old", ids["id_old"])
    frame["event"] = frame["event"].astype("int64")
    frame["rank"] = frame["rank"].astype("int32")
    for c in ("ts", "score", "end_time"):
        frame[c] = frame[c].astype("float64")
    return frame


def run_stream(engine_cls, params: Params, events: pd.DataFrame) -> pd.DataFrame:
    """A whole stream (one key) through one engine, in ``pos`` order."""
    events = events.sort_values("pos", kind="stable")
    engine = engine_cls(params)
    return output_rows(list(engine.process(records_of(events))) + engine.flush())


def halo_start(ts: np.ndarray, w: float, lo: int) -> int:
    """First record still valid at the time of record ``lo - 1`` (``t < ts_j + w``)."""
    if lo == 0:
        return 0
    return int(np.searchsorted(ts + w, ts[lo - 1], side="right"))


def run_range(engine_cls, params: Params, events: pd.DataFrame) -> pd.DataFrame:
    """Records ``halo..hi-1`` replayed; the changes of records ``lo..hi-1``, events numbered locally."""
    events = events.sort_values("pos", kind="stable")
    lo = int(events["lo"].iloc[0])
    part = int(events["part"].iloc[0])
    records = records_of(events)
    first = int(np.searchsorted(events["pos"].to_numpy(), lo))
    engine = engine_cls(params)
    list(engine.process(records[:first]))                       # the halo: state only
    out = [t for _, t in engine.changes(records[first:])]
    rows = output_rows(out)
    rows.insert(0, "part", np.int32(part))
    return rows


def _task(engine_cls, params: Params):
    def per_range(pdf: pd.DataFrame) -> pd.DataFrame:
        return run_range(engine_cls, params, pdf)
    return per_range


def replay_stream(spark, stream, engine_cls, params: Params, partitions: int, id_type: str):
    """The output rows as a Spark DataFrame (keyed or range-partitioned), before numbering."""
    from pyspark.sql import functions as F

    frame = stream.frame
    token_type = "string" if frame["tokens"].map(lambda t: any(isinstance(x, str) for x in t)).any() \
        else "long"
    cols = f"pos long, id {id_type}, tokens array<{token_type}>, ts double, side string"
    schema = output_schema(id_type)
    if stream.keyed:
        key_type = "string" if frame["key"].map(lambda k: isinstance(k, str)).any() else "long"
        df = spark.createDataFrame(frame[["pos", "id", "tokens", "ts", "side", "key"]],
                                   f"{cols}, key {key_type}")
        return replay_keys(df, engine_cls, params, partitions, id_type)
    n = len(frame)
    if n == 0:
        return spark.createDataFrame([], schema)
    parts = max(1, min(partitions, n))
    bounds = [n * p // parts for p in range(parts + 1)]
    ts = frame["ts"].to_numpy(np.float64)
    pieces = []
    for p, (lo, hi) in enumerate(zip(bounds, bounds[1:])):
        piece = frame.iloc[halo_start(ts, params.wf, lo):hi][["pos", "id", "tokens", "ts", "side"]].copy()
        piece["part"], piece["lo"] = p, lo
        pieces.append(piece)
    tasks = spark.createDataFrame(pd.concat(pieces, ignore_index=True), f"{cols}, part int, lo long")
    local = (tasks.repartition(parts, "part").groupBy("part")
             .applyInPandas(_task(engine_cls, params), f"part int, {schema}")
             .persist())
    counts = dict(local.groupBy("part").agg((F.max("event") + 1).alias("n")).collect())
    offsets, total = [], 0
    for p in range(parts):
        offsets.append((p, total))
        total += int(counts.get(p, 0))
    shift = spark.createDataFrame(offsets, "part int, offset long")
    return (local.join(F.broadcast(shift), "part")
            .withColumn("event", F.col("event") + F.col("offset"))
            .select(*[c.split()[0] for c in schema.split(", ")])
            .sortWithinPartitions("event", "rank"))


def replay_keys(df, engine_cls, params: Params, partitions: int, id_type: str):
    """One engine per key over records ``pos, id, tokens, ts, side, key`` (``pos`` orders a
    key's records), through the generic keyed replay (``pipeline.replay.keyed``)."""
    import functools

    from streamspec.pipeline import replay as spread

    return spread.keyed(df.repartition(partitions, "key"),
                        functools.partial(run_stream, engine_cls, params), output_schema(id_type),
                        order=("pos",), rows_by=("event", "rank"))


# -- a keyed JSON lines file parsed by the Spark tasks ---------------------------------------
def replay_keyed_lines(spark, plan: Plan, engine_cls, partitions: int):
    """One engine per key over a keyed JSON lines file the tasks parsed
    (``pipeline.io.simjoin.stage_keyed_span``: byte ranges cut at line starts, staged as
    Parquet beside the output), each key's engine validating its records in file order;
    the rows materialised, or None when a task refused its bytes, the ranges disagree on
    a kind (ids, tokens, keys: one each, as ``read_sets`` requires), a side turned up in a
    self join chosen by default, or an engine rejected a record (``read_sets`` then names
    it).  The staged files are removed once the rows are checkpointed."""
    import functools

    from streamspec.pipeline import text_scan
    from streamspec.pipeline.io.simjoin import stage_keyed_span
    from streamspec.pipeline.spark import checkpointed_unless_rejected

    lines, params = plan.keyed_lines, plan.params
    staging = text_scan.staging_dir(plan.output)
    if staging is None:
        return None
    try:
        reports = text_scan.stage_spans(spark, lines.source, lines.size, 0, staging, partitions,
                                        functools.partial(stage_keyed_span, lines))
        if reports is None:
            return None
        full = [r for r in reports if r[2]]
        kinds = [{r[k] for r in full} - ({None} if k == 4 else set()) for k in (3, 4, 5)]
        if not full or any(len(k) != 1 for k in (kinds[0], kinds[2])) or len(kinds[1]) > 1 \
                or ("str" in kinds[1] and any(r[4] is None for r in full)) \
                or kinds[0] != {"str" if lines.id_type == "string" else "int"}:
            return None
        if not plan.join_given and params.join == "self" and any(r[6] for r in full):
            return None         # read_sets would have chosen the two-stream join
        plan.staged_records = sum(r[2] for r in full)
        rows = replay_keys(spark.read.parquet(staging), engine_cls, params, partitions,
                           plan.id_type)
        kept = checkpointed_unless_rejected(rows, PROBLEM)   # rejected: read_sets locates the record
        return materialised(kept) if kept is not None else None
    finally:
        text_scan.remove(staging)


# -- the columnar paths: record ranges whose tasks read their own part of the input --------
CHECKS = ("part int, ok boolean, events long, rows long, records long, id_kinds string, "
          "token_kinds string, sides boolean")


def record_ranges(n: int, partitions: int) -> list[tuple[int, int]]:
    """``partitions`` contiguous, nearly equal, non-empty record ranges covering ``0..n-1``."""
    parts = max(1, min(int(partitions), n))
    bounds = [n * p // parts for p in range(parts + 1)]
    return [(lo, hi) for lo, hi in zip(bounds, bounds[1:]) if hi > lo]


def replay_scan(spark, scan, engine_cls, params: Params, partitions: int):
    """The output rows of a ``ScanPlan`` (``pipeline.io.simjoin.plan_scan``) and their
    ``(events, rows, records)`` counts, or None when the tasks found the input bad.

    One Spark task per record range reads its own row groups with pyarrow
    (``group_span``: the halo's groups come from the footers' time spans), cuts
    the halo and its range as ``run_range`` does, and feeds the engine one
    ``RecordBatch`` of each (``table_batch``), so the spec validates every row
    once, in a task (``_replay_tasks`` runs the tasks and reads their checks).
    Ids are unique within each task's rows by the spec; across ranges, when
    two ranges' id spans meet, by one Spark aggregation over the ``id`` column.
    """
    ranges = record_ranges(scan.rows, partitions)

    def task(p: int):
        return scan_range(scan, engine_cls, params, p, *ranges[p])

    done = _replay_tasks(spark, len(ranges), task, scan.id_type)
    if done is None:
        return None
    kept, checks = done
    if _spans_meet(checks) and _duplicate_ids(spark, scan):
        return None
    return _renumbered(spark, kept, checks, scan.id_type)


def replay_lines(spark, lines, engine_cls, params: Params, partitions: int, join_given: bool):
    """``replay_scan`` for a JSON lines file (``pipeline.io.simjoin.plan_lines``): the tasks
    parse their own byte ranges (``line_cuts``; a range's records are those whose line
    starts in it) and read their halo back from their first byte (``halo_records``).

    On top of each task's spec check: every task saw ids of the first record's kind and
    one kind of tokens (``read_sets`` rejects a stream mixing kinds), no task saw a side
    in a self join chosen by default (``read_sets`` would have chosen the two-stream
    join), and no id repeats across ranges (``_duplicate_line_ids``, when the ranges'
    id spans meet).
    """
    from streamspec.pipeline.io.lines import line_cuts

    cuts = line_cuts(lines.source, lines.size, partitions)

    def task(p: int):
        return lines_range(lines, engine_cls, params, p, cuts[p], cuts[p + 1])

    done = _replay_tasks(spark, len(cuts) - 1, task, lines.id_type)
    if done is None:
        return None
    kept, checks = done
    kinds = set().union(*(c.id_kinds.split(",") for c in checks)) - {""}
    tokens = set().union(*(c.token_kinds.split(",") for c in checks)) - {""}
    if kinds - {"str" if lines.id_type == "string" else "int"} or len(tokens) > 1:
        return None
    if not join_given and params.join == "self" and any(c.sides for c in checks):
        return None
    if _spans_meet(checks) and _duplicate_line_ids(spark, lines, cuts):
        return None
    return _renumbered(spark, kept, checks, lines.id_type)


def _duplicate_line_ids(spark, lines, cuts) -> bool:
    """Whether an id occurs twice in a JSON lines file: the tasks parse their byte ranges
    again for the ids alone, one aggregation finds a repeat (only run when the ranges'
    id spans meet: ids in order need no second pass)."""
    import pyarrow as pa

    from streamspec.pipeline.io.simjoin import chunk_records

    kind = pa.string() if lines.id_type == "string" else pa.int64()

    def ids(batches):
        for batch in batches:
            for p in batch.column(0).to_pylist():
                found = [r.id for r, _ in chunk_records(lines, cuts[p], cuts[p + 1])]
                yield pa.RecordBatch.from_pydict({"id": pa.array(found, kind)})

    parts = len(cuts) - 1
    numbers = spark.sparkContext.parallelize([(p,) for p in range(parts)], parts)
    found = spark.createDataFrame(numbers, "part int").mapInArrow(ids, f"id {lines.id_type}")
    return bool(found.groupBy("id").count().where("count > 1").limit(1).collect())


def _replay_tasks(spark, n_tasks: int, task, id_type: str):
    """Run ``task(p) -> Arrow record batch`` (``_topk_batch``) for ``p`` in ``0..n_tasks-1``,
    one Spark task each (``mapInArrow`` over the task numbers); keep the rows
    (``spark.materialise``) and read the tasks' marker rows (``event`` null): ``(kept,
    checks)``, or None when a task found its rows unfit or rejected by the spec."""
    from pyspark.sql import functions as F

    schema = output_schema(id_type)
    if n_tasks == 0:
        return spark.createDataFrame([], f"{schema}, {CHECKS}, id_lo {id_type}, id_hi {id_type}"), []

    def run(batches):
        for batch in batches:
            for p in batch.column(0).to_pylist():
                yield task(p)

    numbers = spark.sparkContext.parallelize([(p,) for p in range(n_tasks)], n_tasks)
    kept = materialise(spark.createDataFrame(numbers, "part int")
                       .mapInArrow(run, f"{schema}, {CHECKS}, id_lo {id_type}, id_hi {id_type}"))
    checks = sorted(kept.where(F.col("event").isNull()).drop(*schema_names(schema)).collect())
    if [c.part for c in checks] != list(range(n_tasks)) or not all(c.ok for c in checks):
        return None
    return kept, checks


def schema_names(schema: str) -> list[str]:
    return [c.split()[0] for c in schema.split(", ")]


def _spans_meet(checks) -> bool:
    """Whether two ranges' id spans meet (ids could then repeat across ranges)."""
    spans = sorted((c.id_lo, c.id_hi) for c in checks if c.records)
    return any(b[0] <= a[1] for a, b in zip(spans, spans[1:]))


def _renumbered(spark, kept, checks, id_type: str):
    """The tasks' rows with events numbered on across ranges, and ``(events, rows,
    records)``."""
    from pyspark.sql import functions as F

    offsets, total = [], 0
    for c in checks:
        offsets.append((c.part, total))
        total += c.events
    counts = (total, sum(c.rows for c in checks), sum(c.records for c in checks))
    schema = output_schema(id_type)
    if not checks:
        return kept.select(*schema_names(schema)), counts
    shift = spark.createDataFrame(offsets, "part int, offset long")
    rows = (kept.where(F.col("event").isNotNull()).join(F.broadcast(shift), "part")
            .withColumn("event", F.col("event") + F.col("offset"))
            .select(*schema_names(schema))
            .sortWithinPartitions("event", "rank"))
    return rows, counts


def _duplicate_ids(spark, scan) -> bool:
    """Whether an id occurs twice in the input (one aggregation over the id column)."""
    if any(fs.is_remote(f) for f in scan.files):    # no s3 connector in Spark: pyarrow
        import pyarrow as pa
        import pyarrow.compute as pc
        column = pa.chunked_array([fs.read_table(f, columns=["id"]).column("id")
                                   for f in scan.files])
        return len(pc.unique(column)) < len(column)
    ids = spark.read.parquet(*scan.files).select("id")
    return bool(ids.groupBy("id").count().where("count > 1").limit(1).collect())


def scan_range(scan, engine_cls, params: Params, part: int, lo: int, hi: int):
    """Records ``lo..hi-1`` of a ``ScanPlan`` replayed after their halo: the outputs and the
    marker row of ``_replay_tasks`` as one Arrow record batch (``ok`` false: the rows were
    unfit or the spec rejected one; no outputs then)."""
    import pyarrow.compute as pc

    from streamspec.pipeline.io.simjoin import Unfit, group_span, read_groups, split_batch, table_batch
    from streamspec.spec.errors import RecordError

    first, last = group_span(scan, lo, hi, params.wf)
    table = read_groups(scan, first, last)
    base = scan.starts[first]
    a, b, c = 0, lo - base, hi - base
    if b > 0:
        ts = table.column("ts").to_numpy().astype(np.float64)
        # the halo as run_range cuts it, never after record lo - 1: every pair of consecutive
        # records then lies in some task's rows, even when the times are out of order
        a = min(halo_start(ts, params.wf, b), b - 1)
    ids = table.column("id").slice(b, c - b).combine_chunks()
    try:
        # halo and range as one batch: one dictionary for string ids and tokens
        batch, back = table_batch(table, a, c, params.join)
        halo, mine = split_batch(batch, b - a)
        engine = engine_cls(params)
        list(engine.process(halo))                            # the halo: state only
        topks = list(engine.process(mine))
        ok = True
    except (Unfit, RecordError):
        topks, back, ok = [], None, False
    span = pc.min_max(ids) if len(ids) else None
    kind = "str" if scan.str_ids else "int"
    return _topk_batch(topks, back, part, scan.id_type, ok=ok, records=c - b,
                       id_lo=span["min"].as_py() if span else None,
                       id_hi=span["max"].as_py() if span else None,
                       id_kinds=kind, token_kinds="", sides=scan.sides)


def lines_range(lines, engine_cls, params: Params, part: int, start: int, stop: int):
    """The records whose lines start in bytes ``[start, stop)`` of a JSON lines file,
    replayed after their halo (``halo_records``): ``scan_range``'s batch, plus the kinds
    of ids and tokens the task saw and whether a record named a side.  Integer ids and
    tokens go in as one ``RecordBatch`` (``records_batch``: the spec checks the columns
    vectorised), anything else as the records themselves."""
    from streamspec.pipeline.io.simjoin import (Unfit, chunk_records, halo_records, records_batch,
                                                split_batch)

    topks, ok, mine, batch = [], False, [], None
    try:
        parsed = chunk_records(lines, start, stop)
        mine = [r for r, _ in parsed]
        if all(key is None for _, key in parsed):         # a key: the keyed (driver) path
            halo = halo_records(lines, start, params.wf) if start > 0 else []
            batch = records_batch(halo + mine, params.join)
            first, rest = split_batch(batch, len(halo)) if batch is not None else (halo, mine)
            engine = engine_cls(params)
            list(engine.process(first))                   # the halo: state only
            topks = list(engine.process(rest))
            ok = True
    except (Unfit, ValueError):       # RecordError, JSON and UTF-8 errors are ValueErrors
        pass
    kind = {int: "int", str: "str"}
    ids = [r.id for r in mine]
    id_kinds = {kind.get(type(i), "other") for i in ids}
    token_kinds = ({"int"} if batch.tok.size else set()) if batch is not None else \
        {kind.get(type(x), "other") for r in mine for x in r.tokens}
    uniform = id_kinds <= {"str" if lines.id_type == "string" else "int"}
    ok = ok and uniform
    return _topk_batch(topks if ok else [], None, part, lines.id_type, ok=ok, records=len(mine),
                       id_lo=min(ids) if ok and ids else None, id_hi=max(ids) if ok and ids else None,
                       id_kinds=",".join(sorted(id_kinds)), token_kinds=",".join(sorted(token_kinds)),
                       sides=any(r.side is not None for r in mine))


def _topk_batch(topks, back, part: int, id_type: str, **check):
    """``TopK`` outputs as an Arrow record batch of the output schema, then the marker row
    (``event`` null) with the task's ``check`` (the ``CHECKS`` columns and the span of
    its ids); ``back`` maps the engine's ids to the input's (None: they are the ids)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    cols = {c: [] for c in ("event", "ts", "rank", "id_new", "id_old", "score", "end_time")}
    for n, topk in enumerate(topks):
        for rank, (i, j, score, end) in enumerate(topk.pairs or ((None,) * 4,),
                                                  1 if topk.pairs else 0):
            for c, v in zip(cols, (n, topk.ts, rank, i, j, score, end)):
                cols[c].append(v)
    rows = len(cols["event"])
    id_arrow = pa.string() if id_type == "string" else pa.int64()

    def ids_of(values):
        if back is None:
            return pa.array(values + [None], id_arrow)
        return pc.take(back, pa.array(values + [None], pa.int64()))

    def marker(value, kind):
        return pa.array([None] * rows + [value], kind)

    kinds = {"ok": pa.bool_(), "events": pa.int64(), "rows": pa.int64(), "records": pa.int64(),
             "id_kinds": pa.string(), "token_kinds": pa.string(), "sides": pa.bool_(),
             "id_lo": id_arrow, "id_hi": id_arrow}
    check.update(events=len(topks), rows=rows)
    return pa.RecordBatch.from_pydict({
        "event": pa.array(cols["event"] + [None], pa.int64()),
        "ts": pa.array(cols["ts"] + [None], pa.float64()),
        "rank": pa.array(cols["rank"] + [None], pa.int32()),
        "id_new": ids_of(cols["id_new"]), "id_old": ids_of(cols["id_old"]),
        "score": pa.array(cols["score"] + [None], pa.float64()),
        "end_time": pa.array(cols["end_time"] + [None], pa.float64()),
        "part": pa.array([part] * (rows + 1), pa.int32()),
        **{name: marker(check[name], kind) for name, kind in kinds.items()},
    })


# -- the command line ---------------------------------------------------------------------
def _number(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    flags.add_input(parser, "SETS", 'JSON lines {"id", "ts", "tokens": [...] or "text"[, "side", '
                                    '"key"]} or Parquet (.parquet file or directory) with those columns')
    parser.add_argument("--k", type=flags.int64, required=True, metavar="K",
                        help="result pairs k (required)")
    flags.add_window(parser, kind=_number, unit="time units of ts, a number", aliases=("-w",))
    parser.add_argument("--similarity", choices=SIMILARITIES, default="jaccard",
                        help="similarity function (default: jaccard)")
    parser.add_argument("--join", choices=("self", "rs"), default=None,
                        help="self join, or R-S two-stream join (default: rs when records have a side)")
    flags.add_engine(parser, PROBLEM, PREFERRED_ENGINES)
    flags.add_lateness(parser, "records")
    flags.add_run_options(parser, unit="record ranges (or key partitions)")


def demo_argv(output_dir: str) -> list[str]:
    """``streamspec demo``: the 5 most similar tweet pairs of the last 5 minutes, per city, by SWOOP."""
    return ["--input", str(DEMO_INPUT), "--k", "5", "--window", "300", "--similarity", "jaccard",
            "--engine", "swoop", "--output", output_dir, "--overwrite"]


@attrs.define
class Plan:
    """The sets read and checked on the driver (``stream``), or an input the range tasks
    read themselves: a Parquet file planned from its footers (``scan``) or a JSON lines
    file (``lines``); ``stream`` is then filled in only if the tasks find the input bad
    (``replay``)."""

    params: Params
    source: str
    id_type: str            # Spark type of the ids
    join_given: bool        # --join given (else it was derived from the input)
    stream: object = None   # a SetStream
    scan: object = None     # a ScanPlan
    lines: object = None    # a LinesPlan
    totals: tuple | None = None     # (events, rows, records), when the tasks counted them
    keyed_lines: object = None      # a keyed JSON lines file the tasks parse (a LinesPlan)
    staged_records: int = 0         # the records the tasks of keyed_lines staged
    output: str = ""                # the job's output (keyed_lines stages beside it)

    @property
    def keyed(self) -> bool:
        return self.stream.keyed if self.stream is not None else self.keyed_lines is not None

    @property
    def records(self) -> int:
        if self.stream is not None:
            return self.stream.records
        return self.totals[2] if self.totals is not None else self.staged_records

    @property
    def dropped(self) -> int:
        return self.stream.dropped if self.stream is not None else 0


def prepare(args) -> Plan:
    import os

    from streamspec.pipeline.io import InputError, is_parquet
    from streamspec.pipeline.io.simjoin import (mentions_side, plan_keyed_lines, plan_lines,
                                                plan_scan)

    if not is_parquet(args.input) and not fs.exists(args.input):
        raise InputError(f"{args.input}: no such file")
    given = args.join is not None
    parquet = is_parquet(args.input)
    # without the bytes "side" no record names a side and the default join is the self
    # join, without reading the file; a side written with escapes is seen by the tasks
    # (replay_lines) or, on the driver's path, by sides_present below
    guess = not given and not parquet and fs.isfile(args.input) \
        and not mentions_side(args.input)
    params = _params(args, args.join or ("self" if guess else _default_join(args.input)))
    if parquet:
        scan = plan_scan(args.input, params)
        if scan is not None:
            return Plan(params, args.input, scan.id_type, given, scan=scan)
    else:
        lines = plan_lines(args.input, params)
        if lines is not None:
            return Plan(params, args.input, lines.id_type, given, lines=lines)
        keyed = plan_keyed_lines(args.input, params) if given or guess else None
        if keyed is not None:
            return Plan(params, args.input, keyed.id_type, given, keyed_lines=keyed,
                        output=args.output)
        if guess:
            params = _params(args, _default_join(args.input))
    return _read(args.input, params, given)


def _params(args, join: str) -> Params:
    return Params(k=args.k, w=args.window, similarity=args.similarity, join=join,
                  lateness=args.lateness)


def _default_join(source: str) -> str:
    from streamspec.pipeline.io.simjoin import sides_present
    return "rs" if sides_present(source) else "self"


def _read(source: str, params: Params, join_given: bool) -> Plan:
    from streamspec.pipeline.io.simjoin import read_sets

    stream = read_sets(source, params)
    ids = stream.frame["id"]
    return Plan(params, source, "string" if ids.map(lambda v: isinstance(v, str)).any() else "long",
                join_given, stream=stream)


def replay(spark, plan: Plan, engine_cls, partitions: int):
    if plan.keyed_lines is not None:
        rows = replay_keyed_lines(spark, plan, engine_cls, partitions)
        if rows is not None:
            return rows
        # refused or rejected: the validating reader names the record (or takes the input)
        checked = _read(plan.source, plan.params if plan.join_given else
                        attrs.evolve(plan.params, join=_default_join(plan.source)),
                        plan.join_given)
        plan.params, plan.stream, plan.keyed_lines, plan.id_type = (
            checked.params, checked.stream, None, checked.id_type)
    if plan.scan is not None or plan.lines is not None:
        replayed = (replay_scan(spark, plan.scan, engine_cls, plan.params, partitions)
                    if plan.scan is not None else
                    replay_lines(spark, plan.lines, engine_cls, plan.params, partitions,
                                 plan.join_given))
        if replayed is not None:
            rows, plan.totals = replayed
            return rows
        # the tasks found the input bad: the validating reader names the record (should it
        # find nothing wrong, the input is replayed from the driver like any other)
        params = plan.params if plan.join_given or plan.lines is None else \
            attrs.evolve(plan.params, join=_default_join(plan.source))     # a guessed join
        checked = _read(plan.source, params, plan.join_given)
        plan.params, plan.stream, plan.scan, plan.lines, plan.id_type = (
            checked.params, checked.stream, None, None, checked.id_type)
    return replay_stream(spark, plan.stream, engine_cls, plan.params, partitions, plan.id_type)


def summarize(plan: Plan, rows) -> Summary:
    """The counts and the best pair of the last list (per key when keyed), from ``rows``."""
    from pyspark.sql import functions as F

    params = plan.params
    keys = ["key"] if plan.keyed else []
    if plan.totals is not None:         # one stream, counted by the replay: one filter job
        n_events, n_rows, _ = plan.totals
        n_lists = 1 if n_events else 0
        firsts = rows.where((F.col("event") == n_events - 1) & (F.col("rank") <= 1))
    else:
        n_rows = rows.count()
        n_events = rows.select(*keys, "event").distinct().count()
        last = rows.groupBy(*keys).agg(F.max("event").alias("event"))
        n_lists = last.count()
        firsts = rows.join(last, [*keys, "event"]).filter("rank <= 1")
    per_key = f" for {counted(n_lists, 'key')}" if keys else ""
    dropped = f" ({counted(plan.dropped, 'late record')} dropped)" if plan.dropped else ""
    firsts = firsts.select(*keys, "id_new", "id_old", "score")
    best = (firsts.orderBy("key") if keys else firsts).limit(SUMMARY_KEYS).collect()
    details = ()
    if best:
        details = ("  most similar pair at the end of the stream: " + "; ".join(
            (f"{r['key']}: " if keys else "")
            + (f"{r['id_new']} ~ {r['id_old']} {params.similarity} {r['score']:.3f}"
               if r["id_new"] is not None else "none") for r in best)
            + (f"; ... ({n_lists - len(best)} more keys)" if n_lists > len(best) else ""),)
    return Summary(f"{counted(n_events, 'top-k change')} ({counted(n_rows, 'row')}){per_key}",
                   f"{counted(plan.records, 'record')}{dropped}",
                   f"k={params.k}, w={params.w}, {params.similarity}, {params.join}-join",
                   details)


# -- streamspec stream simjoin (pipeline/streaming.py) -------------------------------------
def add_stream_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags that fix ``Params`` and the source's column types without reading the stream
    (the batch job derives ``--join`` and the id type from the input; a stream has no end)."""
    parser.add_argument("--k", type=flags.int64, required=True, metavar="K",
                        help="result pairs k (required)")
    flags.add_window(parser, kind=_number, unit="time units of ts, a number", aliases=("-w",))
    parser.add_argument("--similarity", choices=SIMILARITIES, default="jaccard",
                        help="similarity function (default: jaccard)")
    parser.add_argument("--join", choices=("self", "rs"), default="self",
                        help="self join, or R-S two-stream join of records with a side "
                             "(default: self)")
    parser.add_argument("--id-type", choices=("long", "string"), default="long",
                        help="type of the record ids in the files (default: long)")
    parser.add_argument("--token-type", choices=("long", "string"), default="string",
                        help="type of the tokens array in the files; long takes the engines' "
                             "columnar path; a text column always gives string tokens "
                             "(default: string)")
    parser.add_argument("--ts-type", choices=("double", "long"), default="double",
                        help="type of ts in the files: Parquet must match it exactly, JSON "
                             "reads integers as double too (default: double)")
    flags.add_engine(parser, PROBLEM, PREFERRED_ENGINES)
    flags.add_lateness(parser, "records")


def source_schema(args) -> str:
    """One record: ``id, ts, tokens | text[, side]`` (``streamspec.pipeline.streaming`` adds
    ``key``); missing columns read as nulls."""
    return (f"id {args.id_type}, ts {args.ts_type}, tokens array<{args.token_type}>, "
            "text string, side string")


def json_check(args):
    """With ``--ts-type double``: ``check(path)`` of each arriving JSON file, refusing an
    integer ``ts`` beyond 2**53 at its line (Spark's double would round ±(2**53 + 1) to the
    exact ±2**53, which ``streamspec run`` rejects; ``streamspec.pipeline.streaming``,
    ``arrival_check``; in the tasks too, for files Spark reads directly:
    ``stream_check.ExactJsonNumbers``); None with ``--ts-type long`` (Spark refuses what a
    long cannot hold)."""
    if args.ts_type != "double":
        return None
    from streamspec.pipeline.stream_check import ExactJsonNumbers
    return ExactJsonNumbers("ts")


def stream_params(args) -> Params:
    return Params(k=args.k, w=args.window, similarity=args.similarity, join=args.join,
                  lateness=args.lateness)


def stream_events(pdf: pd.DataFrame, params: Params):
    """A key's rows of a micro-batch, in arrival order, as the engine's input.

    Integer ids and tokens without ``text`` (and sides that are all ``R``/``S``
    in the two-stream join, all null in the self join) go in as one
    ``RecordBatch``, the engines' columnar path; anything else as ``Record``
    objects (``text`` tokenised by the batch job's rule), so that a bad row
    (a null id, no tokens, a stray side) meets the spec's own check and its
    typed error, which names the record's position in the key's stream.
    """
    batch = record_batch(pdf, params)
    return batch if batch is not None else stream_records(pdf)


def record_batch(pdf: pd.DataFrame, params: Params):
    """``pdf`` as a ``RecordBatch`` when the columnar path applies (``stream_events``), else None."""
    from streamspec.spec.simjoin import SIDES, RecordBatch

    n = len(pdf)
    if "tokens" not in pdf or pdf["id"].dtype.kind not in "iu" or pdf["ts"].dtype.kind not in "iuf":
        return None
    if "text" in pdf and pdf["text"].notna().any():
        return None
    tokens = pdf["tokens"].tolist()
    if any(t is None or (isinstance(t, float) and t != t) for t in tokens):
        return None
    arrays = [np.asarray(t) for t in tokens]
    if any(a.dtype.kind not in "iu" and a.size for a in arrays):
        return None
    sides = pdf["side"].tolist() if "side" in pdf else [None] * n
    if params.join == "rs":
        if not all(s in SIDES for s in sides):
            return None
        side = np.fromiter((SIDES[s] for s in sides), np.int8, n)
    else:
        if any(isinstance(s, str) for s in sides):
            return None
        side = None
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum([a.size for a in arrays], out=ptr[1:])
    tok = np.concatenate(arrays).astype(np.int64) if n else np.empty(0, np.int64)
    return RecordBatch(pdf["id"].to_numpy(np.int64), pdf["ts"].to_numpy(), ptr, tok, side)


def stream_records(pdf: pd.DataFrame) -> list[Record]:
    """``pdf`` as ``Record`` objects, unchecked (the engine's spec boundary checks them)."""
    from streamspec.pipeline.io.simjoin import tokenize

    def plain(v):
        if v is None or (isinstance(v, float) and v != v):
            return None
        return v.item() if isinstance(v, np.generic) else v

    n = len(pdf)
    column = {c: pdf[c].tolist() if c in pdf else [None] * n for c in ("id", "ts", "tokens", "text",
                                                                       "side")}
    if "id" in pdf and pdf["id"].dtype.kind == "f":
        # a long column with a null arrives as float64: the null is an error that fails the
        # whole batch (validation is all or nothing), so the ints back are only for the
        # error to name the null record rather than the first one
        column["id"] = [int(v) if v == v and v.is_integer() else v for v in column["id"]]
    records = []
    for i, ts, tokens, text, side in zip(*column.values()):
        tokens = plain(tokens) if not hasattr(tokens, "tolist") else tokens.tolist()
        if tokens is None and isinstance(text, str):
            tokens = tokenize(text)
        records.append(Record(plain(i), tokens, ts if ts is not None else float("nan"),
                              plain(side)))
    return records


def stream_rows(outputs, first: int) -> pd.DataFrame:
    """The ``TopK`` outputs as rows of the output schema, events numbered from ``first``."""
    return output_rows(outputs, first)


def stream_schema(args) -> str:
    return output_schema(args.id_type)
