"""The columnar range-scan replay (``pipeline.range_scan``) equals the single-process run.

Streams from the conformance strategy (ties, gaps longer than the window,
self loops, bursts) are written as Parquet files and replayed in 1..7 ranges;
the windows must equal one engine fed the whole stream.  An input out of time
order must not be replayed: ``replay`` returns None and the job falls back to
the validating reader, whose located error the CLI prints.
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, strategies as st

from streamspec.conformance.profiles import spark_settings
from streamspec.conformance.strategies.connectivity import cases
from streamspec.pipeline import range_scan
from streamspec.spec.connectivity import Edge, Params
from streamspec.spec.registry import Registry

pytestmark = pytest.mark.spark
EXACT = [cls for cls in Registry.engines("connectivity") if cls.exact]


def write_edges(path, edges, text_ids=False, row_group_size=None):
    cast = str if text_ids else int
    table = pa.table({"u": [cast(e.u) for e in edges], "v": [cast(e.v) for e in edges],
                      "t": pa.array([e.t for e in edges], pa.int64())})
    pq.write_table(table, path, row_group_size=row_group_size)
    return str(path)


def single_process(engine_cls, params, edges):
    engine = engine_cls(params)
    out = list(engine.process(edges)) + list(engine.flush())
    return [(w.index, w.start, w.end, list(w.answers)) for w in out]


def rows(df):
    return sorted((r["window"], r["start"], r["end"], list(r["answers"]))
                  for r in df.select("window", "start", "end", "answers").collect())


@spark_settings()
@given(case=cases(lateness=("error",)), partitions=st.integers(1, 7), engine=st.sampled_from(EXACT),
       row_group=st.sampled_from([None, 3]))
def test_range_scan_equals_single_process(spark, tmp_path_factory, case, partitions, engine,
                                          row_group):
    edges = [Edge(*e) if not isinstance(e, Edge) else e for e in case.edges]
    if not edges or case.params.s > case.params.r:
        return      # no plan: the validating reader takes empty inputs and s > r
    kinds = {type(x) for e in edges for x in (e.u, e.v)}
    if len(kinds) > 1:
        return      # a Parquet column has one type: mixed ids are not a Parquet stream
    path = write_edges(tmp_path_factory.mktemp("rs") / "edges.parquet", edges,
                       text_ids=kinds == {str}, row_group_size=row_group)
    source = range_scan.plan(path, "error", case.params.t0, case.params.r, case.params.s)
    assert source is not None and source.rows == len(edges)
    kept = range_scan.replay(spark, source, engine, case.params, partitions)
    assert kept is not None
    assert rows(kept) == single_process(engine, case.params, edges)


def test_text_ids_and_ranges_inside_a_gap(spark, tmp_path):
    # windows 2..9 lie in a gap; with 5 ranges some ranges hold no edge at all
    params = Params(r=2, s=1, workload=[("1", "2"), ("3", "3")])
    edges = [Edge(1, 2, 0), Edge(3, 4, 1), Edge(2, 3, 11), Edge(9, 9, 12)]
    path = write_edges(tmp_path / "e.parquet", edges, text_ids=True)
    source = range_scan.plan(path, "error", None, 2, 1)
    assert source.vertex_type is str
    oracle = Registry.get("connectivity", "oracle")
    kept = range_scan.replay(spark, source, oracle, params, 5)
    text_edges = [Edge(str(e.u), str(e.v), e.t) for e in edges]
    assert kept is not None and rows(kept) == single_process(oracle, params, text_edges)


def test_int_edges_with_text_queries_read_ids_as_text(spark, tmp_path):
    params = Params(r=3, s=1, workload=[("1", "x")])
    edges = [Edge(1, 2, 0), Edge(2, 3, 1)]
    path = write_edges(tmp_path / "e.parquet", edges)
    source = range_scan.plan(path, "error", None, 3, 1)
    bic = Registry.get("connectivity", "bic")
    kept = range_scan.replay(spark, source, bic, params, 2, as_text=True)
    text_edges = [Edge(str(e.u), str(e.v), e.t) for e in edges]
    assert rows(kept) == single_process(bic, params, text_edges)


@pytest.mark.parametrize("times, partitions", [
    ([0, 1, 2, 3, 9, 4, 10, 11], 3),        # late row lands in an earlier range's core
    ([0, 5, 3, 6, 7, 8], 1),                 # late row inside the one range
    ([0, 1, 8, 9, 2, 10], 4),                # late row far back
])
def test_out_of_order_input_is_not_replayed(spark, tmp_path, times, partitions):
    edges = [Edge(i, i + 1, t) for i, t in enumerate(times)]
    path = write_edges(tmp_path / "e.parquet", edges)
    source = range_scan.plan(path, "error", None, 2, 1)
    assert source is not None
    kept = range_scan.replay(spark, source, Registry.get("connectivity", "bic"),
                             Params(r=2, s=1, workload=[(0, 1)]), partitions)
    assert kept is None


@pytest.mark.parametrize("why, kwargs", [
    ("lateness drop", dict(lateness="drop")),
    ("s > r", dict(r=1, s=2)),
    ("edge before the origin", dict(origin=5)),
])
def test_plan_leaves_other_inputs_to_the_validating_reader(tmp_path, why, kwargs):
    path = write_edges(tmp_path / "e.parquet", [Edge(1, 2, 3), Edge(2, 3, 4)])
    args = dict(lateness="error", origin=None, r=2, s=1) | kwargs
    assert range_scan.plan(path, args["lateness"], args["origin"], args["r"], args["s"]) is None, why


def test_plan_declines_keys_nulls_mixed_files_and_files_out_of_order(tmp_path):
    keyed = tmp_path / "k.parquet"
    pq.write_table(pa.table({"u": [1], "v": [2], "t": [3], "key": ["a"]}), keyed)
    nulls = tmp_path / "n.parquet"
    pq.write_table(pa.table({"u": [1, None], "v": [2, 3], "t": [3, 4]}), nulls)
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    write_edges(mixed / "part-0.parquet", [Edge(1, 2, 0)])
    write_edges(mixed / "part-1.parquet", [Edge(1, 2, 1)], text_ids=True)
    backwards = tmp_path / "backwards"
    backwards.mkdir()
    write_edges(backwards / "part-0.parquet", [Edge(1, 2, 5)])
    write_edges(backwards / "part-1.parquet", [Edge(1, 2, 4)])
    for path in (keyed, nulls, mixed, backwards):
        assert range_scan.plan(str(path), "error", None, 2, 1) is None, path


@spark_settings()
@given(case=cases(lateness=("error",)), partitions=st.integers(1, 5), cuts=st.lists(st.integers(0, 40), max_size=3))
def test_a_directory_of_files_in_name_order_equals_single_process(spark, tmp_path_factory, case,
                                                                 partitions, cuts):
    edges = [Edge(*e) if not isinstance(e, Edge) else e for e in case.edges]
    kinds = {type(x) for e in edges for x in (e.u, e.v)}
    if not edges or case.params.s > case.params.r or len(kinds) > 1:
        return
    folder = tmp_path_factory.mktemp("dir")
    bounds = sorted({0, len(edges), *[c for c in cuts if c < len(edges)]})
    for n, (lo, hi) in enumerate(zip(bounds, bounds[1:])):
        write_edges(folder / f"part-{n:05d}.parquet", edges[lo:hi], text_ids=kinds == {str})
    source = range_scan.plan(str(folder), "error", case.params.t0, case.params.r, case.params.s)
    assert source is not None and source.rows == len(edges)
    bic = Registry.get("connectivity", "bic")
    kept = range_scan.replay(spark, source, bic, case.params, partitions)
    assert kept is not None and rows(kept) == single_process(bic, case.params, edges)
