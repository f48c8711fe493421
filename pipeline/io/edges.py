"""Edge lists and query files (the stream of ``streamspec.spec.connectivity``).

Edge inputs, by file name:

- ``*.parquet`` or a directory: a Parquet dataset with columns ``u, v, t``
  and optionally ``key``; ``u``/``v`` integer or string, ``t`` integer.  Read
  through Spark; input order is (file name, row), errors are located at
  ``file:row N``.
- anything else: text, one edge per line, fields separated by whitespace
  and/or commas: SNAP style ``u v t`` with ``#`` comments and blank lines, or
  CSV whose first data line is a header naming ``u, v, t`` and optionally
  ``key`` (any order).  Parsed on the driver (``load_text_edges``) so every
  error names its exact ``file:line``; a large unkeyed file is first parsed by
  Spark tasks (``streamspec.pipeline.text_scan``), and this reader only runs
  when they refuse a line, to name it.

Vertex ids (and keys) are ints when every id of the input parses as an int,
else strings (``streamspec.pipeline.io.id_column``); an integer id beyond 64
bits is an error at its line.  A query file holds one pair ``a b`` per line
(same separators and comments); when a query vertex is not an int, the edges'
ids are read as text too.  A Parquet input is checked file by file before
Spark reads it (``streamspec.pipeline.io.parquet_files``).

Times must be non-decreasing in input order, per key when there is a key.
Lateness ``error``: the first decreasing time is an ``OutOfOrder`` at its
line.  ``drop``: edges earlier than one already seen (in their key) are
removed here and counted in ``EdgeStream.dropped``.  An edge before the
origin ``t0`` is an ``OutOfOrder`` error under either policy.

The readers hand back an ``EdgeStream``: a Spark DataFrame with columns
``seq`` (int64, input order), ``u``, ``v``, ``t`` and ``key`` when keyed.
"""
from __future__ import annotations

import attrs
import numpy as np
import pandas as pd

from streamspec.pipeline import fs
from streamspec.pipeline.io import (INT64, InputError, check_window_room, id_column,
                                    int64_or_none, is_parquet, location, parquet_files, preview,
                                    read_parquet, text_records)
from streamspec.spec.connectivity import EdgeBatch
from streamspec.spec.errors import InvalidParameter, MalformedRecord, OutOfOrder

COLUMNS = ("u", "v", "t")


@attrs.frozen
class EdgeStream:
    """A validated edge stream as a Spark DataFrame and what the driver knows of it."""

    df: object                  # Spark DataFrame: seq, u, v, t[, key]
    source: str
    keyed: bool
    vertex_type: type           # int or str
    edges: int                  # edges kept
    dropped: int                # late edges removed (lateness 'drop')
    first_t: int | None         # over all keys
    last_t: int | None


# -- text ------------------------------------------------------------------------------
def parse_edge_text(path: str) -> pd.DataFrame:
    """Parse a text edge list on the driver: columns ``line``, ``u``, ``v``, ``t`` [, ``key``]."""
    header = None
    lines, cols = [], None
    for number, fields in text_records(path):
        if cols is None:
            names = [f.lower() for f in fields]
            if set(COLUMNS) <= set(names) and set(names) <= set(COLUMNS) | {"key"} \
                    and len(set(names)) == len(names):
                header = names
                cols = {name: [] for name in names}
                continue
            header = list(COLUMNS)
            cols = {name: [] for name in header}
        if len(fields) != len(header):
            raise MalformedRecord(f"expected {len(header)} fields ({' '.join(header)}), "
                                  f"got {len(fields)}").at(location(path, number))
        lines.append(number)
        for name, value in zip(header, fields):
            cols[name].append(value)
    cols = cols or {name: [] for name in COLUMNS}
    frame = pd.DataFrame({"line": np.asarray(lines, dtype=np.int64)})
    frame["t"] = _times(cols.pop("t"), lines, path)
    n = len(lines)
    ids = id_column(cols["u"] + cols["v"], lambda i: location(path, lines[i % n]))
    frame["u"], frame["v"] = _series(ids[:n]), _series(ids[n:])
    if "key" in cols:
        frame["key"] = _series(id_column(cols["key"], lambda i: location(path, lines[i])))
    return frame


def _series(values: np.ndarray) -> pd.Series:
    # object dtype keeps Python str (pandas 3 would otherwise pick its string dtype)
    return pd.Series(values, dtype=values.dtype)


def _times(tokens: list[str], lines: list[int], path: str) -> np.ndarray:
    out = np.empty(len(tokens), dtype=np.int64)
    for n, (token, number) in enumerate(zip(tokens, lines)):
        value = int64_or_none(token)
        if value is None:
            raise MalformedRecord(f"edge time must be a 64-bit integer, got {preview(token)}"
                                  ).at(location(path, number))
        out[n] = value
    return out


def check_order(frame: pd.DataFrame, lateness: str, origin: int | None,
                where) -> tuple[pd.DataFrame, int]:
    """Apply the lateness policy and the origin check in input order.

    ``where(i)`` locates row ``i`` (``file:line``).  Returns the kept rows and
    the number of dropped ones.
    """
    if len(frame) == 0:
        return frame, 0
    t = frame["t"]
    groups = t.groupby(frame["key"], sort=False) if "key" in frame else None
    if lateness == "error":
        prev = groups.shift() if groups is not None else t.shift()
        bad = np.flatnonzero((t < prev).to_numpy())
        if bad.size:
            i = int(bad[0])
            raise OutOfOrder(f"edge time {int(t.iloc[i])} is earlier than {int(prev.iloc[i])} "
                             "already seen" + (f" for key {frame['key'].iloc[i]!r}"
                                               if groups is not None else "")).at(where(i))
        dropped = 0
    elif lateness == "drop":
        running = groups.cummax() if groups is not None else t.cummax()
        before = running.groupby(frame["key"], sort=False).shift() if groups is not None \
            else running.shift()
        late = (t < before).to_numpy()
        dropped = int(late.sum())
        if dropped:
            frame = frame[~late]
    else:
        raise InvalidParameter(f"lateness must be 'error' or 'drop', got {lateness!r}")
    if origin is not None:
        early = np.flatnonzero((frame["t"] < origin).to_numpy())
        if early.size:
            i = int(early[0])
            raise OutOfOrder(f"edge time {int(frame['t'].iloc[i])} is before the origin "
                             f"t0={origin}").at(where(frame.index[i]))
    return frame, dropped


def load_text_edges(path: str, lateness: str = "error", origin: int | None = None,
                    window: int | None = None) -> tuple[pd.DataFrame, int]:
    """Parse and check a text edge list on the driver (no Spark needed).

    Returns the kept edges (columns ``seq, u, v, t`` [, ``key``]) and the
    number of late edges dropped.  With ``window`` (r), an edge whose ``t + r`` does not
    fit in 64 bits is an error at its line (``pipeline.io.check_window_room``).
    """
    frame = parse_edge_text(path)
    lines = frame["line"].to_numpy()
    if window is not None:
        check_window_room(frame["t"].to_numpy(), window, lambda i: location(path, int(lines[i])),
                          "edge time")
    frame, dropped = check_order(frame, lateness, origin,
                                 lambda i: location(path, int(lines[i])))
    frame = frame.drop(columns="line").reset_index(drop=True)
    frame.insert(0, "seq", np.arange(len(frame), dtype=np.int64))
    if not (frame["u"].dtype.kind in "iu" and frame["v"].dtype.kind in "iu"):
        frame["u"] = frame["u"].astype(object).map(str)
        frame["v"] = frame["v"].astype(object).map(str)
    return frame, dropped


def edges_frame(edges, keys=None) -> pd.DataFrame:
    """In-memory edges (``Edge`` or ``(u, v, t)``, in order) as a checked frame.

    ``keys`` (one per edge) makes a keyed stream.  For tests, fuzzing and
    callers that already hold a stream in memory.
    """
    batch = EdgeBatch.of(edges)
    frame = pd.DataFrame({"seq": np.arange(len(batch), dtype=np.int64)})
    frame["u"], frame["v"], frame["t"] = _series(batch.u), _series(batch.v), batch.t
    if keys is not None:
        frame["key"] = _series(id_column([str(k) for k in keys]))
    return frame


def frame_stream(spark, path: str, frame: pd.DataFrame, dropped: int = 0) -> EdgeStream:
    """A checked frame (``load_text_edges``, ``edges_frame``) as a Spark ``EdgeStream``."""
    vertex_type = int if frame["u"].dtype.kind in "iu" else str
    keyed = "key" in frame
    key_sql = ("long" if frame["key"].dtype.kind in "iu" else "string") if keyed else None
    id_sql = "long" if vertex_type is int else "string"
    schema = f"seq long, u {id_sql}, v {id_sql}, t long" + (f", key {key_sql}" if keyed else "")
    df = spark.createDataFrame(frame[["seq", "u", "v", "t"] + (["key"] if keyed else [])],
                               schema=schema)
    t = frame["t"]
    return EdgeStream(df, path, keyed, vertex_type, len(frame), dropped,
                      int(t.min()) if len(t) else None, int(t.max()) if len(t) else None)


def read_text_edges(spark, path: str, lateness: str = "error",
                    origin: int | None = None) -> EdgeStream:
    return frame_stream(spark, path, *load_text_edges(path, lateness, origin))


# -- Parquet -------------------------------------------------------------------------------
def check_parquet_edges(path: str) -> list[str]:
    """``parquet_files(path)``, each file's schema checked on the driver before Spark starts
    (the footers only): columns ``u, v, t`` present, ``t`` an integer type, ``u``, ``v``
    (and ``key``) integer or string; else a typed error naming the file and the column, as
    ``read_parquet_edges`` would with Spark.  Returns the files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def family(arrow_type) -> str:
        if pa.types.is_dictionary(arrow_type):
            arrow_type = arrow_type.value_type
        if pa.types.is_integer(arrow_type) and arrow_type != pa.uint64():   # Spark: decimal
            return "integer"
        if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
            return "string"
        return "other"

    files = parquet_files(path)
    for name in files:
        schema = pq.read_schema(fs.parquet_source(name))
        missing = [c for c in COLUMNS if c not in schema.names]
        if missing:
            raise InputError(f"{name}: Parquet edges need columns u, v, t[, key]; "
                             f"missing {missing}")
        t = schema.field("t").type
        if family(t) != "integer":
            raise MalformedRecord(f"column t must be an integer type, got {t}").at(name)
        for c in ("u", "v", "key"):
            if c in schema.names and family(schema.field(c).type) == "other":
                raise MalformedRecord(f"column {c} must be integer or string, "
                                      f"got {schema.field(c).type}").at(name)
    return files


def read_parquet_edges(spark, path: str, lateness: str = "error",
                       origin: int | None = None, window: int | None = None) -> EdgeStream:
    """A Parquet edge dataset, validated with Spark (errors at ``file:row N``); with
    ``window`` (r), the first edge whose ``t + r`` does not fit in 64 bits is an error at
    its row (``pipeline.io.check_window_room``)."""
    from pyspark.sql import Window, functions as F, types as T

    parquet_files(path)         # a typed error, not Spark's stack trace, for a bad file
    raw = read_parquet(spark, path)
    fields = {f.name: f.dataType for f in raw.schema.fields}
    missing = [c for c in COLUMNS if c not in fields]
    if missing:
        raise InputError(f"{path}: Parquet edges need columns u, v, t[, key]; missing {missing}")
    integral = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
    if not isinstance(fields["t"], integral):
        raise MalformedRecord(f"column t must be an integer type, "
                              f"got {fields['t'].simpleString()}").at(path)
    for c in ("u", "v"):
        if not isinstance(fields[c], integral + (T.StringType,)):
            raise MalformedRecord(f"column {c} must be integer or string, "
                                  f"got {fields[c].simpleString()}").at(path)
    if "key" in fields and not isinstance(fields["key"], integral + (T.StringType,)):
        raise MalformedRecord(f"column key must be integer or string, "
                              f"got {fields['key'].simpleString()}").at(path)
    vertex_type = int if all(isinstance(fields[c], integral) for c in ("u", "v")) else str
    id_sql = T.LongType() if vertex_type is int else T.StringType()
    keyed = "key" in fields
    df = raw.select(F.col("_metadata.file_path").alias("_file"),
                    F.col("_metadata.row_index").alias("_row"),
                    F.col("u").cast(id_sql).alias("u"), F.col("v").cast(id_sql).alias("v"),
                    F.col("t").cast("long").alias("t"), *([F.col("key")] if keyed else []))
    files = sorted(r[0] for r in df.select("_file").distinct().collect())
    index = spark.createDataFrame([(f, i) for i, f in enumerate(files)], "_file string, _fi long")
    df = df.join(F.broadcast(index), "_file").withColumn(
        "seq", F.shiftleft(F.col("_fi"), 40) + F.col("_row"))

    def where(row) -> str:
        name = row["_file"][5:] if row["_file"].startswith("file:") else row["_file"]
        return f"{name}:row {row['_row'] + 1}"

    nulls = F.col("u").isNull() | F.col("v").isNull() | F.col("t").isNull() \
        | (F.col("key").isNull() if keyed else F.lit(False))
    bad = df.filter(nulls).orderBy("seq").limit(1).collect()
    if bad:
        raise MalformedRecord("missing value (null)").at(where(bad[0]))
    order = (Window.partitionBy("key") if keyed else Window.partitionBy()).orderBy("seq")
    if lateness == "error":
        checked = df.withColumn("_prev", F.lag("t").over(order))
        bad = checked.filter(F.col("t") < F.col("_prev")).orderBy("seq").limit(1).collect()
        if bad:
            raise OutOfOrder(f"edge time {bad[0]['t']} is earlier than {bad[0]['_prev']} "
                             "already seen").at(where(bad[0]))
        dropped = 0
    elif lateness == "drop":
        before = F.max("t").over(order.rowsBetween(Window.unboundedPreceding, -1))
        marked = df.withColumn("_late", F.coalesce(F.col("t") < before, F.lit(False)))
        dropped = marked.filter("_late").count()
        df = marked.filter(~F.col("_late")).drop("_late")
    else:
        raise InvalidParameter(f"lateness must be 'error' or 'drop', got {lateness!r}")
    if origin is not None:
        bad = df.filter(F.col("t") < origin).orderBy("seq").limit(1).collect()
        if bad:
            raise OutOfOrder(f"edge time {bad[0]['t']} is before the origin t0={origin}"
                             ).at(where(bad[0]))
    stats = df.agg(F.count("*"), F.min("t"), F.max("t")).collect()[0]
    if window is not None and stats[2] is not None and stats[2] > INT64[1] - window:
        bad = df.filter(F.col("t") > INT64[1] - window).orderBy("seq").limit(1).collect()
        check_window_room([bad[0]["t"]], window, lambda i: where(bad[0]), "edge time")
    out = df.select("seq", "u", "v", "t", *(["key"] if keyed else []))
    return EdgeStream(out, path, keyed, vertex_type, int(stats[0]), int(dropped),
                      stats[1], stats[2])


def read_edges(spark, path: str, lateness: str = "error", origin: int | None = None) -> EdgeStream:
    """An edge stream from a text or Parquet file (see the module docstring)."""
    reader = read_parquet_edges if is_parquet(path) else read_text_edges
    return reader(spark, path, lateness, origin)


# -- queries --------------------------------------------------------------------------
def read_query_file(path: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The query pairs ``a b`` of a query file, as text tokens in file order, and the
    ``file:line`` of each pair."""
    pairs, wheres = [], []
    for number, fields in text_records(path):
        if len(fields) != 2:
            raise MalformedRecord(f"expected a query pair 'a b', got {len(fields)} fields"
                                  ).at(location(path, number))
        pairs.append((fields[0], fields[1]))
        wheres.append(location(path, number))
    return pairs, wheres


def read_queries(path: str) -> list[tuple[str, str]]:
    """The query pairs ``a b`` of a query file, as text tokens in file order."""
    return read_query_file(path)[0]


def typed_workload(pairs: list[tuple[str, str]], vertex_type: type,
                   wheres: list[str] | None = None) -> tuple[tuple, type]:
    """The typed workload and the vertex type both sides then share.

    Query ids are ints when the edges' ids are ints and every query id parses
    as an int; otherwise everything is text.  With int edges, an integer query
    id beyond 64 bits is an error at its line (``wheres``: the ``file:line``
    of each pair).
    """
    tokens = [x for pair in pairs for x in pair]
    where = (lambda i: wheres[i // 2]) if wheres is not None else None
    flat = id_column(tokens, where) if vertex_type is int else None
    values, kind = (flat.tolist(), int) if flat is not None and flat.dtype.kind in "iu" \
        else (tokens, str)
    return tuple(zip(values[0::2], values[1::2])), kind


def workload(pairs: list[tuple[str, str]], stream: EdgeStream,
             wheres: list[str] | None = None) -> tuple[tuple, EdgeStream]:
    """The typed workload (``typed_workload``) and the stream with ids of the same
    type (int edges are cast to text when a query id is not an int)."""
    pairs, kind = typed_workload(pairs, stream.vertex_type, wheres)
    if kind is str and stream.vertex_type is int:
        df = stream.df.withColumn("u", stream.df["u"].cast("string")) \
            .withColumn("v", stream.df["v"].cast("string"))
        stream = attrs.evolve(stream, df=df, vertex_type=str)
    return pairs, stream


# -- streams -----------------------------------------------------------------------------
def read_edge_stream(spark, directory: str, vertex_type: type = int, key_type: type = str,
                     files_per_batch: int = 1):
    """A streaming DataFrame of the CSV files (header ``u,v,t,key``) arriving in ``directory``.

    Files are taken in modification-time order (Spark's file source; give
    files of one key increasing times), ``files_per_batch`` per micro-batch; a
    malformed row fails the query (``FAILFAST``): streams cannot be rewound
    to report a line, so validate files before dropping them in.
    """
    id_sql = "long" if vertex_type is int else "string"
    key_sql = "long" if key_type is int else "string"
    return (spark.readStream.schema(f"u {id_sql}, v {id_sql}, t long, key {key_sql}")
            .option("header", True).option("mode", "FAILFAST")
            .option("maxFilesPerTrigger", files_per_batch).csv(directory))
