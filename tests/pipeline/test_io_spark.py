"""Spark side of streamspec.pipeline.io: the atomic writer and the Parquet edge reader."""
from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from streamspec.pipeline.io import OutputExists, write_parquet_atomic
from streamspec.pipeline.io.edges import read_edges, read_parquet_edges, workload
from streamspec.spec.errors import MalformedRecord, OutOfOrder

pytestmark = pytest.mark.spark


def siblings(path):
    return sorted(os.listdir(os.path.dirname(path)))


def test_atomic_write_refuse_and_overwrite(spark, tmp_path):
    out = str(tmp_path / "out")
    write_parquet_atomic(spark.range(5), out)
    assert sorted(r.id for r in spark.read.parquet(out).collect()) == [0, 1, 2, 3, 4]
    with pytest.raises(OutputExists, match="--overwrite"):
        write_parquet_atomic(spark.range(2), out)
    assert spark.read.parquet(out).count() == 5
    write_parquet_atomic(spark.range(2), out, overwrite=True)
    assert spark.read.parquet(out).count() == 2
    assert siblings(out) == ["out"]


def test_failed_write_leaves_nothing(spark, tmp_path):
    from pyspark.sql import functions as F
    boom = spark.range(3).select(F.when(F.col("id") == 2, F.raise_error(F.lit("boom")))
                                 .otherwise(F.col("id")).alias("x"))
    out = str(tmp_path / "out")
    with pytest.raises(Exception, match="boom"):
        write_parquet_atomic(boom, out)
    assert not os.path.exists(out) and siblings(out) == []
    # overwriting with a failing job keeps the previous output
    write_parquet_atomic(spark.range(1), out)
    with pytest.raises(Exception, match="boom"):
        write_parquet_atomic(boom, out, overwrite=True)
    assert spark.read.parquet(out).count() == 1 and siblings(out) == ["out"]


def parquet_dataset(tmp_path, parts):
    folder = tmp_path / "edges"
    folder.mkdir(parents=True)
    for i, cols in enumerate(parts):
        pq.write_table(pa.table(cols), str(folder / f"part-{i}.parquet"))
    return str(folder)


def test_parquet_edges_in_file_then_row_order(spark, tmp_path):
    path = parquet_dataset(tmp_path, [{"u": [1, 2], "v": [2, 3], "t": [0, 4]},
                                      {"u": [3, 1], "v": [4, 4], "t": [4, 9]}])
    stream = read_edges(spark, path)
    assert (stream.edges, stream.first_t, stream.last_t, stream.keyed) == (4, 0, 9, False)
    got = [(r.u, r.v, r.t) for r in stream.df.orderBy("seq").collect()]
    assert got == [(1, 2, 0), (2, 3, 4), (3, 4, 4), (1, 4, 9)]


def test_parquet_out_of_order_is_located(spark, tmp_path):
    path = parquet_dataset(tmp_path, [{"u": [1, 2], "v": [2, 3], "t": [0, 4]},
                                      {"u": [3, 1, 1], "v": [4, 4, 5], "t": [4, 3, 1]}])
    with pytest.raises(OutOfOrder) as err:
        read_parquet_edges(spark, path)
    assert err.value.location == f"{path}/part-1.parquet:row 2"
    stream = read_parquet_edges(spark, path, lateness="drop")
    assert stream.dropped == 2 and stream.edges == 3


def test_parquet_keyed_strings_and_nulls(spark, tmp_path):
    path = parquet_dataset(tmp_path, [{"u": ["a", "b"], "v": ["b", "c"], "t": [5, 1],
                                       "key": ["k1", "k2"]}])
    stream = read_parquet_edges(spark, path)
    assert stream.keyed and stream.vertex_type is str
    with pytest.raises(OutOfOrder, match="before the origin"):
        read_parquet_edges(spark, path, origin=2)
    bad = parquet_dataset(tmp_path / "nulls", [{"u": [1, None], "v": [2, 3], "t": [0, 1]}])
    with pytest.raises(MalformedRecord, match="row 2: missing value"):
        read_parquet_edges(spark, bad)


def test_parquet_time_must_be_integer(spark, tmp_path):
    path = parquet_dataset(tmp_path, [{"u": [1], "v": [2], "t": [0.5]}])
    with pytest.raises(MalformedRecord, match="column t must be an integer"):
        read_parquet_edges(spark, path)


def test_text_query_ids_turn_int_edges_into_text(spark, tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("1 2 0\n2 3 1\n")
    stream = read_edges(spark, str(path))
    wl, same = workload([("1", "3")], stream)
    assert wl == ((1, 3),) and same.vertex_type is int
    wl, text = workload([("1", "x")], stream)
    assert wl == (("1", "x"),) and text.vertex_type is str
    assert [(r.u, r.v) for r in text.df.orderBy("seq").collect()] == [("1", "2"), ("2", "3")]
