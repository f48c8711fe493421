"""Continuous top-k join of a stream with an evolving remote dataset: one Parquet row per
(evaluation, rank).

``streamspec run topkjoin --input ITEMS --remote TIMELINE --window W --slide B
--k K --n N --budget G --engine NAME --output DIR [--aggregate sum|latest]
[--weights WS,WV] [--stream-range LO,HI] [--remote-range LO,HI] [--origin T0]
[--oracle]`` (``streamspec.spec.topkjoin``; readers: ``streamspec.pipeline.io.topkjoin``;
shared flags: ``streamspec.pipeline.flags``).  The paper's names stay as
aliases: ``--stream`` for ``--input``, ``--omega``/``--beta`` for
``--window``/``--slide``.  The spec has no lateness policy (an item earlier
than one seen is always an error), so there is no ``--lateness``.

Output columns: ``window``, ``tau`` (evaluation time), ``rank`` (1..K), ``id``,
``score``; plus ``key`` first when the stream is keyed.  An evaluation with an
empty answer (empty window) is one row with ``rank`` 0 and null ``id`` and
``score``, so every evaluation is visible.

Defaults (documented choices): weights 0.7 (stream) and 0.3 (remote); the
stream range is the min and max of the per-window streaming scores over the
whole input (every key, every window), the remote range the min and max of
every timeline value and the default 0; a degenerate range ``lo == hi``
becomes ``(lo, lo + 1)``.  The origin defaults to each stream's first item.

Replay: one engine per key (a stream without a ``key`` column is one key);
equal to the single-process run, since keys are independent (topkjoin state is
path dependent, so one stream is never cut in time ranges, docs/pipeline.md).
``--oracle`` also replays the oracle and prints the cumulative and mean
nDCG@k and precision@k of the engine against it.  Two ways in:

- A local Parquet file or directory whose columns have the types the spec
  takes (``id`` int or string, ``x`` int or float, ``ts`` int, ``key`` int or
  string; ``plan_parquet_items``, footers only) is read by the executors:
  Spark tasks read the row groups with pyarrow (``mapInArrow``) and the
  columns go as numpy arrays into one ``ItemBatch`` per key, validated once,
  by the engine's spec check.  A keyed input is hash-partitioned by key, one
  shuffle per pass (``groupBy(key).applyInPandas``, the replay through
  ``pipeline.replay.keyed``); an unkeyed one is one task reading every row
  group in order, no shuffle.  The default stream range is a Spark pass
  before the replay (``parquet_stream_range``: each key's bounds from the
  engines' slot partials, the spec's check of its items first, then one
  aggregation); without ``key`` the one task computes it and replays at once.  A key's bad record travels to the driver as data and stops
  the job with the spec's typed error at ``file:row N`` (the first in input
  order) before anything is written.  String ids or keys follow the
  int-or-string rule over the whole input (a Spark pass over those columns).
  The tasks read the files themselves: on a cluster they must be on a file
  system the executors share.  On 1M unkeyed items
  (``python -m streamspec.bench.pipeline_topkjoin``,
  ``bench/results/pipeline/topkjoin.csv``, a shared 2-core machine) the job
  took 84-88 s with ``--partitions 1`` before this path and 26.6-37.8 s with
  it at load 4-5 (the engine alone: 0.1-0.4 s; the rest is Spark's start, ~10-18
  s, and its first Python job, ~10 s at that load).
- A local CSV or JSON lines file of 1 MB or more (``plan_text_items``: its
  header and first 64 lines parsed and checked on the driver, so a bad record
  there fails before Spark; a smaller file is read on the driver) is parsed
  by Spark tasks, not the driver (``text_replay``): one task per byte
  range (``--partitions`` ranges cut at line starts,
  ``pipeline.io.lines.line_cuts``) parses its lines into columns exactly as
  ``read_items`` would (``pipeline.io.topkjoin_text``) and reports the kind
  of its ids and keys; the parsed rows are kept (``spark.materialise``) and
  hash-partitioned by key (an input without ``key`` is one key), then take
  the Parquet path's per-key steps (``range_key``, ``run_key``,
  ``ranged_run_key``), the spec validating each key's items in its task.
  A range the tasks cannot take as the driver would (a CSV quote, a value
  of another type, ids that spell ints in one range and not in another...)
  sends the input to the driver's reader; a record the spec rejects in a
  task makes the job read the input again on the driver (``read_items``)
  just to raise its exact ``file:line`` error, so the messages are the
  driver's on every path.  An input without ``key`` is one task that
  parses every range itself and replays at once (``_whole_replay``: no
  shuffle, as the Parquet path's one task).  On 1M unkeyed items as CSV
  (``python -m streamspec.bench.pipeline_topkjoin --format csv``, with
  ``--driver`` for the driver's path; ``bench/results/pipeline/topkjoin.csv``)
  the job took 27.2 s with ``--partitions 1`` and 23.6 s with 2, against
  48.2 s and 54.9 s when the driver reads the file, at load 6-8 on the
  shared 2-core machine (a later pair at load 7-8: 43.1/43.4 s against
  64.9/59.8 s; at load 2-5: 14.8/21.2 s against 38.4/46.7 s).  1M items
  in 16 keys as CSV, ``--partitions 2``: 24.3 s, the driver's reader 32.5 s
  (load 2, rows equal).
- Any other input (a Parquet input of other column types, a remote text
  path, a text file the tasks decline) is read and validated on the driver
  (``read_items``: exact ``file:line``, the driver's own messages for values
  it parses or rejects) and shipped to Spark; its default stream range is
  computed there too, where the items already are.

``streamspec stream topkjoin --source DIR --checkpoint DIR --output DIR
--remote TIMELINE --window W --slide B --k K --stream-range LO,HI ...``
(``streamspec.pipeline.streaming``): files of items ``id, x, ts`` (plus an
optional ``key``; ``--id-type long|string``) arrive in ``--source``; each
key's engine lives pickled in Spark's group state between micro-batches and
appends the same rows as the batch job, ``key`` first.  Parameters come from
the flags only: the batch job's default stream range is a pass over the whole
input, which a stream does not have, so ``--stream-range`` is required (the
paper's experiments also fix both ranges once per dataset).  The remote timeline is read and checked on the driver as in the
batch job (its min/max is the default ``--remote-range``) and held by the
engines by reference (``streamspec.pipeline.io.topkjoin.TimelineFile``), so
the state of a key stays the engine's own: window partials, the Super-MTK+N
list and one replica cell per id seen.  An evaluation is emitted when the
first item at or after its window's end arrives (no flush: a stream has no
end), exactly as ``process`` emits it in the batch job.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import attrs
import numpy as np
import pandas as pd

from streamspec.pipeline import flags
from streamspec.pipeline.job import Summary, materialised
from streamspec.pipeline.spark import materialise
from streamspec.pipeline.summary import counted
from streamspec.spec.topkjoin import PROBLEM, ItemBatch, Params

PREFERRED_ENGINES = ("at-tsm", "oracle")
ROW_COLUMNS = ("window", "tau", "rank", "id", "score")
# the demo sample: 30 windows of the paper's setting (seeded mentions of the 400 users, DS-CH-20
# dataset 1 restricted to the mentioned users; ``python -m streamspec.bench.topkjoin.data`` rebuilds it)
DATA = Path(__file__).resolve().parent.parent / "data" / "topkjoin"
DEMO_ORIGIN = 1420574422643     # the first tweet of the authors' stream (streamspec.bench.topkjoin.data.T0)


def demo_argv(output_dir: str) -> list[str]:
    """``streamspec demo``: AT-TSM in the paper's default setting, scored against the oracle."""
    return ["--input", str(DATA / "mentions.csv"), "--remote", str(DATA / "followers-dfc.csv"),
            "--window", "100000", "--slide", "60000", "--k", "5", "--n", "10", "--budget", "7",
            "--engine", "at-tsm", "--origin", str(DEMO_ORIGIN), "--output", output_dir,
            "--overwrite", "--oracle"]


def output_schema(id_kind: str) -> str:
    return f"window long, tau long, rank int, id {id_kind}, score double"


def output_rows(evaluations) -> pd.DataFrame:
    cols = {c: [] for c in ROW_COLUMNS}
    for e in evaluations:
        answer = e.answer or ((None, None),)
        for rank, (key, score) in enumerate(answer, 1 if e.answer else 0):
            for c, v in zip(ROW_COLUMNS, (e.window, e.tau, rank, key, score)):
                cols[c].append(v)
    frame = pd.DataFrame({"window": pd.Series(cols["window"], dtype="int64"),
                          "tau": pd.Series(cols["tau"], dtype="int64"),
                          "rank": pd.Series(cols["rank"], dtype="int32"),
                          "id": pd.Series(cols["id"], dtype=object),
                          "score": pd.Series(cols["score"], dtype="float64")})
    return frame


def run_stream(engine_cls, params: Params, events: pd.DataFrame) -> pd.DataFrame:
    """One key's stream (in order) through one engine."""
    ids = events["id"].to_numpy()
    ids = ids.astype(np.int64) if ids.dtype.kind in "iu" or all(
        isinstance(v, (int, np.integer)) for v in ids) else ids.astype(object)
    engine = engine_cls(params)
    batch = ItemBatch(ids, events["x"].to_numpy(np.float64), events["t"].to_numpy(np.int64))
    return output_rows(list(engine.process(batch)) + engine.flush())


def _stream_task(engine_cls, params):
    def task(pdf: pd.DataFrame) -> pd.DataFrame:
        return run_stream(engine_cls, params, pdf)
    return task


def replay_stream(spark, stream, engine_cls, params: Params, partitions: int):
    """The output rows as a Spark DataFrame (one engine per key)."""
    from streamspec.pipeline.replay import keyed

    frame = stream.frame
    id_kind = "long" if frame["id"].dtype.kind in "iu" else "string"
    key_kind = "long" if frame["key"].dtype.kind in "iu" else "string"
    df = spark.createDataFrame(frame, f"key {key_kind}, seq long, id {id_kind}, x double, t long")
    rows = keyed(df.repartition(partitions, "key"), _stream_task(engine_cls, params),
                 output_schema(id_kind))
    return rows if stream.keyed else rows.drop("key")


def score_range(ids: np.ndarray, x: np.ndarray, t: np.ndarray, params_kw: dict):
    """Min and max per-window streaming score of one key's stream (in order, not empty), over
    every window the batch job evaluates (``started_by`` its last item); None if every window
    is empty.  The engines' own slot partials (``SlotAggregates``) compute them."""
    from streamspec.engines.topkjoin.window_aggregates import SlotAggregates
    from streamspec.spec.windows import SlidingWindows

    t0 = params_kw["t0"] if params_kw["t0"] is not None else int(t[0])
    aggs = SlotAggregates(t0, params_kw["omega"], params_kw["beta"], params_kw["aggregate"])
    aggs.ingest(pd.factorize(ids)[0].astype(np.int64), x, t)
    lo, hi = np.inf, -np.inf
    for i in range(SlidingWindows(params_kw["omega"], params_kw["beta"], t0).started_by(int(t[-1]))):
        vals = aggs.window(i)[1]
        if vals.size:
            lo, hi = min(lo, float(vals.min())), max(hi, float(vals.max()))
    return (lo, hi) if np.isfinite(lo) else None


def range_of(bounds) -> tuple[float, float]:
    """The stream range from per-key ``(lo, hi)`` bounds (module docstring's defaults)."""
    bounds = [b for b in bounds if b is not None]
    if not bounds:
        return 0.0, 1.0
    lo, hi = min(b[0] for b in bounds), max(b[1] for b in bounds)
    return (lo, hi) if hi > lo else (lo, lo + 1.0)


def default_stream_range(stream, params_kw: dict) -> tuple[float, float]:
    """Min and max per-window streaming score over every key (module docstring), of a stream
    held on the driver (``ItemStream``: text inputs, parsed there for their ``file:line``)."""
    return range_of(score_range(g["id"].to_numpy(), g["x"].to_numpy(np.float64),
                                g["t"].to_numpy(np.int64), params_kw)
                    for _, g in stream.frame.groupby("key", sort=False))


# -- the columnar path: Parquet items read by the executors (issue 11) ------------------------
ERRORS = "error_type string, error_message string, error_seq long"
ERROR_COLUMNS = ("error_type", "error_message", "error_seq")
# a null where the driver's reader wants a value: its message (``pipeline.io.topkjoin``).  Not
# ``x``: a null x reaches pandas as NaN either way and the spec's check names it ("item value
# nan is not finite"), as it does when the driver reads the same Parquet file
NULLS = (("key", "key must be an integer or a string"), ("id", "id must be an integer or a string"),
         ("t", "ts must be a 64-bit integer"))


def item_count(stream, columnar=None) -> int:
    if isinstance(columnar, TextSource):
        return columnar.count
    return stream.count if hasattr(stream, "count") else len(stream.frame)


def key_batch(pdf: pd.DataFrame) -> tuple[ItemBatch, np.ndarray]:
    """One key's rows (columns ``seq, id, x, t``, maybe ``key``; any order) as the engine's
    ``ItemBatch`` in input order, and each item's ``seq``.  Input order, not time order:
    a late item must meet the spec's check where it stands.  A null raises the driver
    reader's ``MalformedRecord`` with the row's index."""
    from streamspec.spec.errors import MalformedRecord

    seq = pdf["seq"].to_numpy(np.int64)
    if seq.size > 1 and (seq[1:] <= seq[:-1]).any():
        order = np.argsort(seq, kind="stable")
        pdf, seq = pdf.iloc[order], seq[order]
    for column, what in NULLS:
        if column in pdf:
            missing = np.flatnonzero(pdf[column].isna().to_numpy())
            if missing.size:
                raise MalformedRecord(f"{what}, got None", index=int(missing[0]))
    ids = pdf["id"].to_numpy()
    ids = ids.astype(np.int64) if ids.dtype.kind in "iu" else ids.astype(object)
    return ItemBatch(ids, pdf["x"].to_numpy(np.float64), pdf["t"].to_numpy(np.int64)), seq


def _failed(err, seq: np.ndarray, columns: list[str]) -> pd.DataFrame:
    """The one row that carries a key's ``RecordError`` to the driver (``_raise_first``)."""
    row = {c: [None] for c in columns}
    at = err.index if err.index is not None and err.index < seq.size else 0
    row.update(error_type=[type(err).__name__], error_message=[err.message],
               error_seq=[int(seq[at]) if seq.size else -1])
    return pd.DataFrame(row)


def run_key(engine_cls, params: Params, pdf: pd.DataFrame) -> pd.DataFrame:
    """One key's items through one engine: output rows, or the key's first bad record."""
    from streamspec.spec.errors import RecordError

    seq = pdf["seq"].to_numpy(np.int64)
    try:
        batch, seq = key_batch(pdf)
        engine = engine_cls(params)
        rows = output_rows(list(engine.process(batch)) + engine.flush())
    except RecordError as err:
        return _failed(err, np.sort(seq), list(ROW_COLUMNS))
    return rows.assign(error_type=None, error_message=None, error_seq=None)


def checked_bounds(batch: ItemBatch, params_kw: dict):
    """``score_range`` of one key's items after the spec's check of them (``validate``, the
    origin): the check the engine would make, made before any engine exists."""
    from streamspec.spec.errors import OutOfOrder
    from streamspec.spec.topkjoin import id_type, validate

    if not len(batch):
        return None
    validate(batch, id_type(batch.id[0]) or int, None)
    t0 = params_kw["t0"]
    if t0 is not None and batch.ts[0] < t0:
        raise OutOfOrder(f"item time {int(batch.ts[0])} is before the origin t0={t0}", index=0)
    return score_range(batch.id, batch.x, batch.ts, params_kw)


def range_key(params_kw: dict, pdf: pd.DataFrame) -> pd.DataFrame:
    """One key's ``(lo, hi)`` streaming-score bounds (``checked_bounds``), or the key's first
    bad record."""
    from streamspec.spec.errors import RecordError

    seq = pdf["seq"].to_numpy(np.int64)
    try:
        batch, seq = key_batch(pdf)
        bounds = checked_bounds(batch, params_kw)
    except RecordError as err:
        return _failed(err, np.sort(seq), ["lo", "hi"])
    lo, hi = bounds if bounds is not None else (None, None)
    return pd.DataFrame({"lo": [lo], "hi": [hi], "error_type": [None], "error_message": [None],
                         "error_seq": [None]})


def ranged_run_key(engine_cls, template: Params, params_kw: dict, pdf: pd.DataFrame):
    """The only key of an input without ``key``: its default stream range and its replay in
    one task (the range of one key is its own bounds), the range on every row (``lo``, ``hi``)
    for the driver to report; or the key's first bad record."""
    from streamspec.spec.errors import RecordError

    seq = pdf["seq"].to_numpy(np.int64)
    try:
        batch, seq = key_batch(pdf)
        srange = range_of([checked_bounds(batch, params_kw)])
        engine = engine_cls(attrs.evolve(template, stream_range=srange))
        rows = output_rows(list(engine.process(batch)) + engine.flush())
    except RecordError as err:
        return _failed(err, np.sort(seq), list(ROW_COLUMNS) + ["lo", "hi"])
    return rows.assign(lo=srange[0], hi=srange[1], error_type=None, error_message=None,
                       error_seq=None)


def _with_key(out: pd.DataFrame, pdf: pd.DataFrame) -> pd.DataFrame:
    """``out`` with the key of ``pdf`` first, when it has one (a plain ``groupBy`` step)."""
    if "key" in pdf:
        out.insert(0, "key", pdf["key"].iloc[0] if len(pdf) else None)
    return out


@attrs.define
class Columnar:
    """What the Spark passes over ``ParquetItems`` share: the kinds of ``id``/``key``, the
    string columns read as ints, and (keyed) the items hash-partitioned by key."""

    id_kind: str
    key_kind: str
    as_long: frozenset
    source: object = None       # keyed: DataFrame key, seq, id, x, t


def columnar_source(spark, items, partitions: int, origin: int | None = None) -> Columnar:
    """Decide the id kinds (a Spark pass over the string columns only, when there are any) and,
    for a keyed input, the source of both passes (the stream range and the replay): the row
    groups read with pyarrow in Spark tasks (``mapInArrow``), hash-partitioned by key.
    Integers beyond 64 bits in a string column: the driver's reader names the first one."""
    from streamspec.pipeline.io.topkjoin import read_groups, read_items, string_verdicts

    tasks = max(1, min(len(items.groups), partitions))
    as_long = set()
    if "string" in items.kinds.values():
        def verdicts(batches):
            import pyarrow as pa
            for b in batches:
                found = string_verdicts(items, b.column(0).to_pylist())
                yield pa.RecordBatch.from_pylist([{"column": c, "verdict": v} for c, v in found],
                                                 schema=pa.schema([("column", pa.string()),
                                                                   ("verdict", pa.string())]))
        found = spark.range(0, len(items.groups), 1, tasks).mapInArrow(
            verdicts, "column string, verdict string").distinct().collect()
        seen = {(r["column"], r["verdict"]) for r in found}
        for column in ("id", "key"):
            if (column, "overflow") in seen and (column, "string") not in seen:
                read_items(items.source, origin)
            if items.kinds.get(column) == "string" and (column, "string") not in seen:
                as_long.add(column)
    kind = {c: "long" if items.kinds.get(c) == "int" or c in as_long else "string"
            for c in ("id", "key")}
    columnar = Columnar(kind["id"], kind["key"], frozenset(as_long))
    if items.keyed:
        as_long = columnar.as_long

        def read(batches):
            for b in batches:
                table = read_groups(items, b.column(0).to_pylist(), as_long)
                if table is not None:
                    yield from _typed(table).to_batches()
        schema = f"key {columnar.key_kind}, seq long, id {columnar.id_kind}, x double, t long"
        # not kept (a checkpoint forgets the hash partitioning, so each pass would shuffle
        # the kept rows again): each pass reads the row groups again, which costs less
        columnar.source = (spark.range(0, len(items.groups), 1, tasks).mapInArrow(read, schema)
                           .repartition(partitions, "key"))
    return columnar


def _arrow_types() -> dict:
    import pyarrow as pa
    return {"long": pa.int64(), "int": pa.int32(), "double": pa.float64(), "string": pa.string()}


class _Arrow(dict):
    """The Arrow type of each DDL type name the output schemas use (imported on first use)."""

    def __missing__(self, name):
        self.update(_arrow_types())
        return self[name]


ARROW = _Arrow()


def _typed(table):
    """Ints as int64, strings as Arrow ``string`` (the types Spark's schema names)."""
    import pyarrow as pa
    fields = []
    for field in table.schema:
        t = field.type
        t = pa.int64() if pa.types.is_integer(t) else pa.string() if pa.types.is_large_string(t) else t
        fields.append(pa.field(field.name, t))
    return table.cast(pa.schema(fields))


def _per_key(spark, items, columnar: Columnar, step, schema: str, replay: bool = True):
    """``step(pdf) -> pdf`` over each key's items: ``groupBy(key).applyInPandas`` over the
    key-partitioned source (no further shuffle; the replay through
    ``pipeline.replay.keyed``, which puts each key's items in time order and the rows in
    window order), or for an input without ``key``, one task reading every row group
    itself, in order, with no shuffle at all."""
    from streamspec.pipeline.replay import keyed

    if items.keyed:
        if replay:
            return keyed(columnar.source, step, schema)
        key_type = columnar.source.schema["key"].dataType.simpleString()
        return columnar.source.groupBy("key").applyInPandas(step, f"key {key_type}, {schema}")
    import pyarrow as pa

    from streamspec.pipeline.io.topkjoin import read_groups
    as_long = columnar.as_long
    arrow = pa.schema([(name, ARROW[kind]) for name, kind in
                       (field.strip().split() for field in schema.split(","))])

    def whole(batches):
        for _ in batches:
            pass
        table = read_groups(items, range(len(items.groups)), as_long)
        pdf = (table.to_pandas() if table is not None else
               pd.DataFrame({"seq": pd.Series(dtype="int64"), "id": pd.Series(dtype="int64"),
                             "x": pd.Series(dtype="float64"), "t": pd.Series(dtype="int64")}))
        yield pa.RecordBatch.from_pandas(step(pdf), schema=arrow, preserve_index=False)
    return spark.range(0, 1, 1, 1).mapInArrow(whole, schema)


def _first_error(rows):
    """The aggregate column of the first bad record in input order among the keys' errors."""
    from pyspark.sql import functions as F
    return F.min(F.when(F.col("error_type").isNotNull(),
                        F.struct("error_seq", "error_type", "error_message"))).alias("error")


def _raise(error, items) -> None:
    """``error`` (``_first_error``'s row, or None) as the spec's typed error located at
    ``file:row N``; nothing has been written yet."""
    from streamspec.spec import errors

    if error is None:
        return
    seq, kind, message = error
    cls = getattr(errors, kind, None)
    cls = cls if isinstance(cls, type) and issubclass(cls, errors.RecordError) else \
        errors.InvalidRecord
    raise cls(message).at(items.where(int(seq)) if seq >= 0 else items.source)


def parquet_stream_range(spark, items, columnar: Columnar, params_kw: dict) -> tuple[float, float]:
    """The default stream range of ``ParquetItems`` computed by Spark: each key's bounds in
    its own task (``range_key``, which checks the key's items first), then one aggregation
    (the bounds and the first bad record, one Spark job)."""
    from pyspark.sql import functions as F

    bounds = _per_key(spark, items, columnar,
                      lambda pdf: _with_key(range_key(params_kw, pdf), pdf),
                      f"lo double, hi double, {ERRORS}", replay=False)
    lo, hi, error = bounds.agg(F.min("lo"), F.max("hi"), _first_error(bounds)).first()
    _raise(error, items)
    return range_of([(lo, hi)] if lo is not None else [])


def replay_parquet(spark, items, columnar: Columnar, engine_cls, params: Params):
    """The output rows of ``ParquetItems``, one engine per key (``run_key``); a key's bad
    record stops the job with the spec's located error before anything is written."""
    from pyspark.sql import functions as F

    schema = f"{output_schema(columnar.id_kind)}, {ERRORS}"
    # kept: the check below and the job's write and summary read these rows, never a replay
    rows = materialise(_per_key(spark, items, columnar,
                                lambda pdf: run_key(engine_cls, params, pdf), schema))
    _raise(rows.agg(_first_error(rows)).first()[0], items)
    return rows.where(F.col("error_type").isNull()).drop(*ERROR_COLUMNS)


def columnar_replay(spark, plan: Plan, engine_cls, partitions: int):
    """``replay`` of ``ParquetItems``.  Without ``--stream-range`` a keyed input takes two
    passes (every key's bounds, then the replay with their min and max); an input without
    ``key`` is one key, so its one task computes the range and replays at once
    (``ranged_run_key``): one Spark pass over the data instead of two."""
    from pyspark.sql import functions as F

    if plan.columnar is None:
        plan.columnar = columnar_source(spark, plan.stream, partitions, plan.args.origin)
    items, columnar = plan.stream, plan.columnar
    if plan.params is None and not items.keyed:
        kw = query_kw(plan.args)
        template = build_params(plan.args, None, plan.remote, (0.0, 1.0))
        rows = materialise(_per_key(
            spark, items, columnar, lambda pdf: ranged_run_key(engine_cls, template, kw, pdf),
            f"{output_schema(columnar.id_kind)}, lo double, hi double, {ERRORS}"))
        lo, hi, error = rows.agg(F.first("lo", ignorenulls=True), F.first("hi", ignorenulls=True),
                                 _first_error(rows)).first()
        _raise(error, items)
        plan.params = attrs.evolve(template, stream_range=(lo, hi) if lo is not None else (0.0, 1.0))
        return materialised(rows.where(F.col("error_type").isNull())
                            .drop("lo", "hi", *ERROR_COLUMNS))
    if plan.params is None:
        srange = parquet_stream_range(spark, items, columnar, query_kw(plan.args))
        plan.params = build_params(plan.args, None, plan.remote, srange)
    return replay_parquet(spark, items, columnar, engine_cls, plan.params)


# -- the text path: CSV and JSON lines items parsed by the Spark tasks (issue 11) -------------
TEXT_SCHEMA = "seq long, key_l long, key_s string, id_l long, id_s string, x double, t long"


@attrs.define
class TextSource:
    """What the Spark passes over ``TextItems`` share: the parsed items (kept), the kinds of
    ``id``/``key`` over the whole input and the item count; ``source`` is None when the
    tasks found the input unfit (the driver's reader takes it)."""

    id_kind: str = "long"
    key_kind: str = "long"
    count: int = 0
    source: object = None       # DataFrame key, seq, id, x, t (hash-partitioned by key)
    reason: str = ""            # why not (``source`` None), said when the driver reads it


def _data_errors() -> tuple:
    import csv

    from streamspec.pipeline.io.topkjoin_text import Unfit
    return (Unfit, ValueError, TypeError, ArithmeticError, LookupError, csv.Error)


#: what a task parsing text may meet in the data (a RecordError is a ValueError)
_DATA_ERRORS = _data_errors()
_REJECTED = "a task's engine rejected an item"


def _short(err) -> str:
    """An exception as one short line: its type and the first line of its message."""
    text = (str(err).strip().splitlines() or [""])[0]
    return f"{type(err).__name__}: {text}"[:200]


def text_chunk(items, part: int, start: int, stop: int):
    """One range's records as an Arrow batch of ``TEXT_SCHEMA`` (the ints of a range whose
    verdict is ``int`` in ``*_l``, the tokens of a ``string`` one in ``*_s``), plus the
    range's report: a row with ``seq = -1 - part`` and the JSON report in ``id_s``."""
    import json

    import pyarrow as pa

    from streamspec.pipeline.io.topkjoin_text import ROW_SHIFT, Unfit, read_chunk

    try:
        cols = read_chunk(items, start, stop)
        n = len(cols["x"])
        if n >> ROW_SHIFT:
            raise Unfit
        report = {"ok": True, "rows": n, "id": cols["id_kind"],
                  "key": cols.get("key_kind", "none")}
    # Unfit, JSON and UTF-8 errors, a record the spec rejects: the reader decides.  A file
    # the task cannot open (OSError) or a bug fails the job (a PathError, exit 2, for a path)
    except _DATA_ERRORS as err:
        cols, n, report = None, 0, {"ok": False, "rows": 0, "id": "none", "key": "none",
                                    "reason": f"bytes {start}-{stop}: {_short(err)}"}
    empty_l, empty_s = pa.nulls(n, pa.int64()), pa.nulls(n, pa.string())

    def pair(name):
        if cols is None or name not in cols:
            return empty_l, empty_s
        kind = cols[f"{name}_kind"]
        if kind == "int":
            return pa.array(cols[name], pa.int64()), empty_s
        if kind == "string":
            return empty_l, pa.array(cols[name], pa.string())
        return empty_l, empty_s                 # "none": a range of blank lines only
    key_l, key_s = pair("key")
    id_l, id_s = pair("id")
    seq = np.arange(n, dtype=np.int64) | np.int64(part << ROW_SHIFT)
    data = pa.record_batch([pa.array(seq), key_l, key_s, id_l, id_s,
                            pa.array(cols["x"] if cols else [], pa.float64()),
                            pa.array(cols["t"] if cols else [], pa.int64())],
                           names=["seq", "key_l", "key_s", "id_l", "id_s", "x", "t"])
    mark = pa.record_batch([pa.array([-1 - part], pa.int64()), pa.nulls(1, pa.int64()),
                            pa.nulls(1, pa.string()), pa.nulls(1, pa.int64()),
                            pa.array([json.dumps(report)], pa.string()),
                            pa.nulls(1, pa.float64()), pa.nulls(1, pa.int64())],
                           names=data.schema.names)
    return data, mark


def text_source(spark, items, partitions: int) -> TextSource:
    """Parse ``TextItems`` in Spark tasks (one per byte range, ``mapInArrow``), keep the rows
    (``spark.materialise``), read the ranges' reports and decide the kinds of ``id``/``key``
    (``combined_kind``): a ``TextSource`` over the rows hash-partitioned by key (an input
    without ``key`` is the one key 0), or one without ``source`` when a range was unfit or
    the ranges' kinds differ."""
    import json

    from pyspark.sql import functions as F

    from streamspec.pipeline.io.topkjoin_text import combined_kind

    cuts = items.cuts(partitions)
    parts = len(cuts) - 1

    def parse(batches):
        for b in batches:
            for p in b.column(0).to_pylist():
                yield from text_chunk(items, p, cuts[p], cuts[p + 1])

    numbers = spark.sparkContext.parallelize([(p,) for p in range(parts)], max(1, parts))
    parsed = materialise(spark.createDataFrame(numbers, "part int").mapInArrow(parse, TEXT_SCHEMA))
    reports = [json.loads(r[0]) for r in parsed.where(F.col("seq") < 0).select("id_s").collect()]
    if len(reports) != parts:
        return TextSource(reason="a range's task reported nothing")
    unfit = [r for r in reports if not r["ok"]]
    if unfit:
        return TextSource(reason="a task could not parse a range as the driver would "
                                 f"({unfit[0].get('reason', 'unfit')})")
    id_kind = combined_kind(r["id"] for r in reports)
    key_kind = combined_kind(r["key"] for r in reports) if items.keyed else "long"
    count = sum(r["rows"] for r in reports)
    if id_kind is None or key_kind is None:
        return TextSource(reason="ids or keys of different kinds across the ranges")
    if not count:
        return TextSource(reason="no items")
    key = (F.col("key_l" if key_kind == "long" else "key_s") if items.keyed
           else F.lit(0).cast("long")).alias("key")
    ident = F.col("id_l" if id_kind == "long" else "id_s").alias("id")
    rows = parsed.where(F.col("seq") >= 0).select(key, "seq", ident, "x", "t")
    return TextSource(id_kind, key_kind, count,
                      rows.repartition(partitions if items.keyed else 1, "key"))


def _text_rejected(spark, plan: Plan, engine_cls, partitions: int, reason: str):
    """A range the tasks could not take, or an item the spec rejected in a task: the
    driver's reader reads the input, which raises its exact ``file:line`` error; should it
    find nothing wrong, the input is replayed from the driver like any other.  Said on
    stderr with ``reason`` (``spark.on_driver``)."""
    from streamspec.pipeline.io.topkjoin import read_items
    from streamspec.pipeline.spark import on_driver

    on_driver(PROBLEM, reason)

    stream = read_items(plan.stream.source, plan.args.origin, window=plan.args.window)
    plan.stream, plan.columnar = stream, None
    plan.params = build_params(plan.args, stream, plan.remote)
    return replay_stream(spark, stream, engine_cls, plan.params, partitions)


WHOLE_SCHEMA = ("window long, tau long, rank int, id_l long, id_s string, score double, "
                f"lo double, hi double, {ERRORS}, report string")


def whole_text(items, parts: int, engine_cls, template: Params, params_kw: dict | None):
    """The one task of an input without ``key``: every byte range parsed in order
    (``read_chunk``, the ranges of the keyed path), the ids' kind decided over them all
    (``combined_kind``), then ``ranged_run_key`` (``params_kw`` given: the default stream
    range too) or ``run_key``: ``(rows, report)``, the rows with the id in ``id_l`` or
    ``id_s`` by that kind (None when a range is unfit), the report JSON ``ok``, ``kind``,
    ``rows``."""
    import json

    from streamspec.pipeline.io.topkjoin_text import ROW_SHIFT, Unfit, combined_kind, read_chunk

    cuts = items.cuts(parts)
    try:
        got = [read_chunk(items, a, b) for a, b in zip(cuts, cuts[1:])]
        kind = combined_kind(g["id_kind"] for g in got)
        if kind is None or any(len(g["x"]) >> ROW_SHIFT for g in got):
            raise Unfit
    except _DATA_ERRORS as err:     # Unfit, JSON and UTF-8 errors: the reader decides
        return None, json.dumps({"ok": False, "reason": _short(err)})
    seq = np.concatenate([np.arange(len(g["x"]), dtype=np.int64) | np.int64(p << ROW_SHIFT)
                          for p, g in enumerate(got)])
    ids = np.concatenate([g["id"] for g in got]) if kind == "long" else \
        np.concatenate([np.asarray(g["id"], dtype=object) for g in got])
    pdf = pd.DataFrame({"seq": seq, "id": ids, "x": np.concatenate([g["x"] for g in got]),
                        "t": np.concatenate([g["t"] for g in got])})
    rows = (ranged_run_key(engine_cls, template, params_kw, pdf) if params_kw is not None
            else run_key(engine_cls, template, pdf))
    column = "id_l" if kind == "long" else "id_s"
    return rows.rename(columns={"id": column}), json.dumps({"ok": True, "kind": kind,
                                                            "rows": len(pdf)})


def _whole_replay(spark, plan: Plan, engine_cls, partitions: int):
    """``text_replay`` of an input without ``key``: one Spark task parses the whole file and
    replays it (``whole_text``), as the Parquet path's one task reads every row group: the
    replay is one engine anyway, so the items never cross a shuffle."""
    import json

    import pyarrow as pa
    from pyspark.sql import functions as F

    items = plan.stream
    if plan.params is None:
        kw, template = query_kw(plan.args), build_params(plan.args, None, plan.remote, (0.0, 1.0))
    else:
        kw, template = None, plan.params
    names = [f.strip().split()[0] for f in WHOLE_SCHEMA.split(",")]
    arrow = pa.schema([(n, ARROW[f.strip().split()[1]]) for n, f in zip(names, WHOLE_SCHEMA.split(","))])

    def whole(batches):
        for _ in batches:
            pass
        out, report = whole_text(items, partitions, engine_cls, template, kw)
        if out is not None:
            yield from pa.Table.from_pandas(out.reindex(columns=names), schema=arrow,
                                            preserve_index=False).to_batches()
        yield pa.RecordBatch.from_arrays([pa.nulls(1, f.type) for f in arrow][:-1]
                                         + [pa.array([report], pa.string())], schema=arrow)
    rows = materialise(spark.range(0, 1, 1, 1).mapInArrow(whole, WHOLE_SCHEMA))
    report, lo, hi, error = rows.agg(F.first("report", ignorenulls=True),
                                     F.first("lo", ignorenulls=True),
                                     F.first("hi", ignorenulls=True), _first_error(rows)).first()
    report = json.loads(report) if report else {"ok": False, "reason": "the task reported nothing"}
    if not report["ok"]:
        return _text_rejected(spark, plan, engine_cls, partitions, "the task could not parse "
                              f"the input as the driver would ({report.get('reason', 'unfit')})")
    if error is not None:
        return _text_rejected(spark, plan, engine_cls, partitions, _REJECTED)
    plan.columnar = TextSource(report["kind"], "long", report["rows"])
    if plan.params is None:
        plan.params = attrs.evolve(template, stream_range=(lo, hi) if lo is not None else (0.0, 1.0))
    column = "id_l" if report["kind"] == "long" else "id_s"
    return materialised(rows.where(F.col("report").isNull() & F.col("error_type").isNull())
                        .select("window", "tau", "rank", F.col(column).alias("id"), "score"))


def text_replay(spark, plan: Plan, engine_cls, partitions: int):
    """``replay`` of ``TextItems`` (``pipeline.io.topkjoin_text``).  An input without
    ``key`` is one task (``_whole_replay``).  A keyed one: the tasks parse the file
    (``text_source``), then each key's items go through the same per-key steps as the
    Parquet path (``range_key``, then ``run_key``).  Any rejection reruns ``read_items``
    for the driver's own located error (``_text_rejected``)."""
    from pyspark.sql import functions as F

    from streamspec.pipeline.replay import keyed

    if not plan.stream.keyed:
        return _whole_replay(spark, plan, engine_cls, partitions)
    if plan.columnar is None:
        plan.columnar = text_source(spark, plan.stream, partitions)
    text = plan.columnar
    if text.source is None:
        return _text_rejected(spark, plan, engine_cls, partitions, text.reason)
    out = output_schema(text.id_kind)
    if plan.params is None:
        kw = query_kw(plan.args)
        bounds = text.source.groupBy("key").applyInPandas(
            lambda pdf: _with_key(range_key(kw, pdf), pdf),
            f"key {text.key_kind}, lo double, hi double, {ERRORS}")
        lo, hi, error = bounds.agg(F.min("lo"), F.max("hi"), _first_error(bounds)).first()
        if error is not None:
            return _text_rejected(spark, plan, engine_cls, partitions, _REJECTED)
        plan.params = build_params(plan.args, None, plan.remote,
                                   range_of([(lo, hi)] if lo is not None else []))
    params = plan.params
    rows = materialise(keyed(text.source, lambda pdf: run_key(engine_cls, params, pdf),
                             f"{out}, {ERRORS}"))
    if rows.agg(_first_error(rows)).first()[0] is not None:
        return _text_rejected(spark, plan, engine_cls, partitions, _REJECTED)
    return materialised(rows.where(F.col("error_type").isNull()).drop(*ERROR_COLUMNS))


def _pair(text: str) -> tuple[float, float]:
    try:
        a, b = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected two numbers A,B, got {text!r}") from None
    return a, b


def _add_query_arguments(parser: argparse.ArgumentParser, stream_range_help: str,
                         stream_range_required: bool = False) -> None:
    """The flags that fix ``Params``, shared by ``streamspec run`` and ``streamspec stream``."""
    parser.add_argument("--remote", required=True, metavar="TIMELINE",
                        help="remote timeline: CSV/Parquet with key,time,value, or a SQLite "
                             "file (.db/.sqlite) with table timeline(key, time, value) (required)")
    flags.add_window(parser, kind=flags.int64, aliases=("--omega",), slide_aliases=("--beta",))
    parser.add_argument("--k", type=flags.int64, required=True, metavar="K",
                        help="answers per evaluation (required)")
    parser.add_argument("--n", type=flags.int64, default=0, metavar="N",
                        help="extra list slots of Topk+N (default: 0)")
    parser.add_argument("--budget", type=flags.int64, default=0, metavar="G",
                        help="remote fetches per evaluation, gamma (default: 0)")
    flags.add_engine(parser, PROBLEM, PREFERRED_ENGINES)
    parser.add_argument("--aggregate", choices=("sum", "latest"), default="sum",
                        help="streaming score of an id in a window: the sum of its x or its "
                             "latest x (default: sum)")
    parser.add_argument("--weights", type=_pair, default=(0.7, 0.3), metavar="WS,WV",
                        help="weights of the stream and remote scores (default: 0.7,0.3)")
    parser.add_argument("--stream-range", type=_pair, default=None, metavar="LO,HI",
                        required=stream_range_required, help=stream_range_help)
    parser.add_argument("--remote-range", type=_pair, default=None, metavar="LO,HI",
                        help="normalisation range of remote values (default: their min and max, "
                             "with 0)")
    parser.add_argument("--origin", type=flags.int64, default=None, metavar="T0",
                        help="window origin t0 (default: each stream's first item)")
    parser.add_argument("--seed", type=flags.int64, default=0,
                        help="seed of WSJ-RND (default: 0)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    flags.add_input(parser, "ITEMS", "items: CSV (header id,x,ts[,key]), JSON lines or Parquet",
                    aliases=("--stream",))
    _add_query_arguments(parser, "normalisation range of stream scores (default: their min and "
                                 "max over the input)")
    parser.add_argument("--oracle", action="store_true",
                        help="also run the oracle and print nDCG@k and precision@k (default: off)")
    flags.add_run_options(parser, unit="key partitions")


def remote_range_of(args, remote) -> tuple[float, float]:
    """``--remote-range``, else the min and max of the timeline's values and its default."""
    if args.remote_range is not None:
        return args.remote_range
    lo, hi = remote.value_range()
    return (lo, hi) if hi > lo else (lo, lo + 1.0)


def build_params(args, stream, remote, stream_range=None) -> Params:
    kw = query_kw(args)
    srange = args.stream_range or stream_range or default_stream_range(stream, kw)
    rrange = remote_range_of(args, remote)
    return Params(k=args.k, n=args.n, budget=args.budget, weights=args.weights,
                  stream_range=srange, remote_range=rrange, remote=remote, seed=args.seed, **kw)


def query_kw(args) -> dict:
    return dict(omega=args.window, beta=args.slide, aggregate=args.aggregate, t0=args.origin)


@attrs.define
class Plan:
    """What ``prepare`` found.  ``stream`` is an ``ItemStream`` (read on the driver), a
    ``ParquetItems`` or a ``TextItems`` (read by the executors); for the latter two
    ``params`` is only complete once ``replay`` has computed the default stream range
    (``remote`` holds the dataset until then) and ``columnar`` keeps what the Spark passes
    share (``Columnar``, ``TextSource``)."""

    args: argparse.Namespace
    stream: object
    params: Params | None
    remote: object = None
    columnar: object = None


def prepare(args) -> Plan:
    """The windows first (the stream range needs them), then the inputs, all before Spark: a
    local Parquet input is planned from its footers (``plan_parquet_items``), a local CSV or
    JSON lines file of 1 MB or more from its header and first lines (``plan_text_items``),
    any other is read and validated here (``read_items``)."""
    from streamspec.pipeline.io.topkjoin import plan_parquet_items, read_items, read_remote
    from streamspec.pipeline.io.topkjoin_text import plan_text_items

    Params(omega=args.window, beta=args.slide, k=args.k, n=args.n, budget=args.budget,
           aggregate=args.aggregate, weights=args.weights, t0=args.origin)
    if args.stream_range is not None:
        Params(omega=args.window, beta=args.slide, k=args.k, stream_range=args.stream_range)
    items = plan_parquet_items(args.input)
    if items is None:
        items = plan_text_items(args.input, args.origin)
    remote = read_remote(args.remote)
    if items is None:
        stream = read_items(args.input, args.origin, window=args.window)
        return Plan(args, stream, build_params(args, stream, remote))
    params = build_params(args, None, remote) if args.stream_range is not None else None
    return Plan(args, items, params, remote)


def replay(spark, plan: Plan, engine_cls, partitions: int):
    from streamspec.pipeline.io.topkjoin import ItemStream
    from streamspec.pipeline.io.topkjoin_text import TextItems

    if isinstance(plan.stream, ItemStream):
        return replay_stream(spark, plan.stream, engine_cls, plan.params, partitions)
    if isinstance(plan.stream, TextItems):
        return text_replay(spark, plan, engine_cls, partitions)
    return columnar_replay(spark, plan, engine_cls, partitions)


def summarize(plan: Plan, rows) -> Summary:
    """Counts, the last answer and, with ``--oracle``, the quality against the oracle."""
    from streamspec.spec.registry import Registry

    params = plan.params
    result = rows.toPandas()
    n_eval = len(result.drop_duplicates([c for c in ("key", "window") if c in result]))
    keys = f" for {counted(result['key'].nunique(), 'key')}" if "key" in result else ""
    details = [last_answer(result)]
    if plan.args.oracle:
        spark = rows.sparkSession
        partitions = plan.args.partitions or spark.sparkContext.defaultParallelism
        oracle = replay(spark, plan, Registry.get(PROBLEM, "oracle"), partitions).toPandas()
        details.append(f"topkjoin quality of {plan.args.engine} against the oracle: "
                       f"{quality_of_rows(result, oracle, params.k)}")
    return Summary(f"{counted(n_eval, 'evaluation')} ({counted(len(result), 'row')}){keys}",
                   counted(item_count(plan.stream, plan.columnar), "item"),
                   f"omega={params.omega}, beta={params.beta}, K={params.k}, N={params.n}, "
                   f"budget={params.budget}, {params.aggregate}, stream range "
                   f"{params.stream_range}, remote range {params.remote_range}",
                   tuple(details))


def last_answer(result: pd.DataFrame) -> str:
    """One line: the answer of the last evaluation (of the first key when the stream is keyed)."""
    if "key" in result and len(result):
        result = result[result["key"] == result["key"].iloc[0]]
    if not len(result):
        return "  no evaluation"
    last = result[(result["window"] == result["window"].max()) & (result["rank"] > 0)]
    tau = int(result.loc[result["window"].idxmax(), "tau"])
    answer = ", ".join(f"{i} ({s:.3f})" for i, s in zip(last.sort_values("rank")["id"],
                                                       last.sort_values("rank")["score"]))
    return f"  top-{len(last)} at the last evaluation (tau={tau}): {answer or 'empty window'}"


def quality_of_rows(result: pd.DataFrame, oracle: pd.DataFrame, k: int):
    """Cumulative and mean nDCG@k and precision@k from output rows (any keys)."""
    from streamspec.spec.topkjoin_quality import Quality, ndcg_at_k, precision_at_k

    group = [c for c in ("key", "window") if c in oracle]

    def answers(frame):
        frame = frame[frame["rank"] > 0].sort_values(group + ["rank"])
        return {tuple(f[group].iloc[0]): list(f["id"]) for _, f in frame.groupby(group, sort=False)}

    got, want = answers(result), answers(oracle)
    evaluations = list(oracle.drop_duplicates(group)[group].itertuples(index=False, name=None))
    emitted = set(result.drop_duplicates(group)[group].itertuples(index=False, name=None))
    nd = pr = 0.0
    for g in evaluations:
        if g not in emitted:
            continue  # a missing evaluation scores 0
        a, o = got.get(g, []), want.get(g, [])
        nd += ndcg_at_k(a, o, k)
        pr += precision_at_k(a, o, k)
    return Quality(len(evaluations), nd, pr)


# -- streamspec stream topkjoin (streamspec.pipeline.streaming) --------------------------------
def add_stream_arguments(parser: argparse.ArgumentParser) -> None:
    """The batch job's query flags, with ``--stream-range`` required (module docstring)."""
    _add_query_arguments(parser, "normalisation range of stream scores (required: a stream "
                                 "has no end to take their min and max from)",
                         stream_range_required=True)
    parser.add_argument("--id-type", choices=("long", "string"), default="long",
                        help="type of the item ids in the files (default: long)")


def source_schema(args) -> str:
    """One item: ``id, x, ts``, as in the batch job's files (``streaming`` adds ``key``)."""
    return f"id {args.id_type}, x double, ts long"


def stream_params(args) -> Params:
    """``Params`` from the flags and the remote timeline, read and checked on the driver
    (``read_remote_by_reference``: the engines in group state hold it by reference)."""
    from streamspec.pipeline.io.topkjoin import read_remote_by_reference

    Params(omega=args.window, beta=args.slide, k=args.k, n=args.n, budget=args.budget,
           aggregate=args.aggregate, weights=args.weights, stream_range=args.stream_range,
           t0=args.origin)     # bad flags fail before the timeline is read
    remote = read_remote_by_reference(args.remote)
    return Params(omega=args.window, beta=args.slide, k=args.k, n=args.n, budget=args.budget,
                  aggregate=args.aggregate, weights=args.weights, stream_range=args.stream_range,
                  remote_range=remote_range_of(args, remote), t0=args.origin, remote=remote,
                  seed=args.seed)


def stream_events(pdf: pd.DataFrame, params: Params) -> ItemBatch:
    """A key's rows of a micro-batch as an ``ItemBatch``; the engine's spec check does the
    rest (types, finite x, time order), each error carrying the row's position."""
    from streamspec.pipeline.io import check_window_room
    from streamspec.spec.errors import MalformedRecord

    for column in ("id", "x", "ts"):
        missing = np.flatnonzero(pdf[column].isna().to_numpy())
        if missing.size:
            # ``index`` is the row's position here: the streaming step names its file and line
            raise MalformedRecord(f"item {column} is missing (null or absent)",
                                  index=int(missing[0]))
    check_window_room(pdf["ts"].to_numpy(), params.omega, None, "item time")
    ids = pdf["id"].to_numpy()
    ids = ids.astype(np.int64) if ids.dtype.kind in "iu" else ids.astype(object)
    return ItemBatch(ids, pdf["x"].to_numpy(np.float64), pdf["ts"].to_numpy(np.int64))


def stream_rows(outputs, first: int) -> pd.DataFrame:
    """The rows of the batch job (``window`` already numbers evaluations on across batches)."""
    return output_rows(outputs)


def stream_schema(args) -> str:
    return output_schema(args.id_type)
