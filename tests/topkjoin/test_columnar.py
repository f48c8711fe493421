"""The columnar path of ``streamspec run topkjoin``: Parquet items read by the executors
(``pipeline.io.topkjoin.plan_parquet_items``/``read_groups``, ``pipeline.jobs.topkjoin``'s
``columnar_replay``), against the driver's reader on the same items, and its located errors."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from streamspec.conformance.topkjoin import keyed_streams, random_case
from streamspec.pipeline.cli import build_parser, main
from streamspec.pipeline.io.topkjoin import (FILE_SHIFT, ItemStream, ParquetItems,
                                             plan_parquet_items, read_groups)
from streamspec.pipeline.jobs import topkjoin as job
from tests.topkjoin.cliargs import argv, timeline
from streamspec.spec.registry import Registry


def write_parquet(path, frame: pd.DataFrame, row_group: int, files: int = 1, types=None) -> str:
    """``frame`` as one file, or as a directory of ``files`` files cut at even row counts."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if types:
        table = table.cast(pa.schema([(f.name, types.get(f.name, f.type)) for f in table.schema]))
    if files == 1:
        pq.write_table(table, path, row_group_size=row_group)
        return str(path)
    path.mkdir()
    cuts = [len(frame) * i // files for i in range(files + 1)]
    for i, (a, b) in enumerate(zip(cuts, cuts[1:])):
        pq.write_table(table.slice(a, b - a), path / f"part-{i:03d}.parquet", row_group_size=row_group)
    return str(path)


def case_frame(seed: int, keyed: bool) -> tuple[pd.DataFrame, object]:
    """A random case's keyed streams (``conformance.topkjoin.keyed_streams``: the case, its
    items dealt over keys, the case moved later) interleaved by time, or the case alone."""
    case = random_case(seed, max_items=120)
    streams = keyed_streams(case) if keyed else {0: case.items}
    rows = [(k, it.id, it.x, it.ts, n) for k, items in streams.items() for n, it in enumerate(items)]
    rows.sort(key=lambda r: (r[3], r[0], r[4]))       # interleaved, each key's order kept
    frame = pd.DataFrame([r[:4] for r in rows], columns=["key", "id", "x", "ts"])
    return (frame if keyed else frame.drop(columns="key")), case


def rows_of(df) -> list[tuple]:
    frame = df.toPandas()
    cols = [c for c in ("key", "window", "tau", "rank", "id", "score") if c in frame]
    frame = frame[cols].astype(object).where(frame[cols].notna(), None)
    return sorted(map(tuple, frame.itertuples(index=False)), key=repr)


def test_the_plan_reads_only_footers_and_numbers_rows_by_file(tmp_path):
    frame = pd.DataFrame({"id": [3, 4, 5, 6, 7], "x": [1, 2, 3, 4, 5], "ts": [1, 2, 3, 4, 5]})
    path = write_parquet(tmp_path / "items", frame, row_group=2, files=2,
                         types={"id": pa.int32(), "x": pa.int16()})
    items = plan_parquet_items(path)
    assert isinstance(items, ParquetItems) and not items.keyed and items.count == 5
    assert items.kinds == {"id": "int", "x": "int", "ts": "int"}
    assert [(f, first, n) for f, _, first, n in items.groups] == [(0, 0, 2), (1, 0, 2), (1, 2, 1)]
    table = read_groups(items, range(3))
    assert table.column("x").type == pa.float64() and table.column("t").to_pylist() == [1, 2, 3, 4, 5]
    seq = table.column("seq").to_pylist()
    assert [items.where(s) for s in seq] == [f"{items.files[0]}:row 1", f"{items.files[0]}:row 2",
                                             f"{items.files[1]}:row 1", f"{items.files[1]}:row 2",
                                             f"{items.files[1]}:row 3"]
    assert seq[2] == 1 << FILE_SHIFT


@pytest.mark.parametrize("columns,why", [
    ({"id": [1], "x": [1.0], "ts": [1.5]}, "ts double: the driver's reader rejects it"),
    ({"id": [1], "x": ["1.5"], "ts": [1]}, "x text: the driver's reader parses it"),
    ({"id": [1.0], "x": [1.0], "ts": [1]}, "id double"),
    ({"id": [1], "x": [True], "ts": [1]}, "x bool"),
    ({"id": [1], "ts": [1]}, "x missing: the driver's reader names it"),
])
def test_inputs_the_driver_must_read_are_not_planned(tmp_path, columns, why):
    path = tmp_path / "items.parquet"
    pd.DataFrame(columns).to_parquet(path)
    assert plan_parquet_items(str(path)) is None, why
    assert plan_parquet_items(str(tmp_path / "items.csv")) is None


@pytest.mark.spark
@pytest.mark.parametrize("seed,keyed,row_group,files,partitions,engine", [
    (3, True, 7, 1, 2, "at-bsm"),
    (8, True, 25, 3, 3, "oracle"),
    (5, False, 9, 2, 1, "wsj-rnd"),
    (14, False, 1000, 1, 2, "topkn"),
])
def test_parquet_replay_equals_the_driver_readers(spark, tmp_path, seed, keyed, row_group, files,
                                                  partitions, engine):
    """Same items as Parquet (small row groups, several files) and as CSV: the same default
    stream range and the same rows, through ``prepare``/``replay`` as the job runs them."""
    frame, case = case_frame(seed, keyed)
    remote = timeline(tmp_path, case)
    frame.to_csv(tmp_path / "items.csv", index=False)
    parquet = write_parquet(tmp_path / "items.parquet", frame, row_group, files)
    engine_cls = Registry.get("topkjoin", engine)
    by_driver = job.prepare(build_parser().parse_args(argv(str(tmp_path / "items.csv"), remote, case)))
    by_spark = job.prepare(build_parser().parse_args(argv(parquet, remote, case)))
    assert isinstance(by_driver.stream, ItemStream) and by_spark.params is None
    want = rows_of(job.replay(spark, by_driver, engine_cls, partitions))
    got = rows_of(job.replay(spark, by_spark, engine_cls, partitions))
    assert by_spark.params.stream_range == by_driver.params.stream_range
    assert got == want and len(got) >= 1


@pytest.mark.spark
def test_string_ids_and_keys_follow_the_int_or_string_rule(spark, tmp_path):
    remote = tmp_path / "timeline.csv"
    remote.write_text("key,time,value\n7,0,3\n12,0,1\n")
    spelled = pd.DataFrame({"key": ["1", "01", "2"], "id": ["007", "7", "12"], "x": [1.0, 2.0, 1.0],
                            "ts": [0, 1, 2]})
    texts = spelled.assign(id=["u7", "7", "12"])
    runs = {}
    for name, frame in (("spelled", spelled), ("texts", texts)):
        path = write_parquet(tmp_path / f"{name}.parquet", frame, row_group=2)
        plan = job.prepare(build_parser().parse_args(
            ["run", "topkjoin", "--input", path, "--remote", str(remote), "--window", "10",
             "--slide", "10", "--k", "2", "--output", "unused"]))
        runs[name] = job.replay(spark, plan, Registry.get("topkjoin", "oracle"), 2).toPandas()
    # "1" and "01" are one key, "007" and "7" one id: ints, as the driver's reader reads them
    assert sorted(runs["spelled"][["key", "id"]].itertuples(index=False, name=None)) == \
        [(1, 7), (2, 12)]
    assert runs["spelled"]["id"].map(type).eq(int).all()
    # one id that is not an integer: every id is text (keys still all spell ints)
    assert sorted(runs["texts"][["key", "id"]].itertuples(index=False, name=None)) == \
        [(1, "7"), (1, "u7"), (2, "12")]


def _bad(tmp_path, name: str, frame: pd.DataFrame, *extra, files: int = 1, row_group: int = 2):
    path = write_parquet(tmp_path / name, frame, row_group=row_group, files=files)
    remote = tmp_path / "timeline.csv"
    remote.write_text("key,time,value\n1,0,3\n")
    out = tmp_path / f"out-{name}"
    code = main(["run", "topkjoin", "--input", path, "--remote", str(remote), "--window", "10",
                 "--slide", "5", "--k", "2", "--output", str(out), *extra])
    return code, out


@pytest.mark.spark
def test_bad_records_stop_the_job_at_file_and_row(spark, tmp_path, capsys):
    late = pd.DataFrame({"key": ["a", "b", "a", "b", "b", "a"], "id": [1, 2, 3, 4, 5, 6],
                         "x": [1.0] * 6, "ts": [5, 6, 7, 8, 3, 9]})
    code, out = _bad(tmp_path, "late", late, files=2)
    assert code == 2 and not out.exists()
    assert "late/part-001.parquet:row 2: item time 3 is earlier than 8" in capsys.readouterr().err
    # with --stream-range the range pass is skipped: the engine's own check names it
    code, out = _bad(tmp_path, "late2", late, "--stream-range", "0,5", files=2)
    assert code == 2 and not out.exists()
    assert "late2/part-001.parquet:row 2: item time 3 is earlier than 8" in capsys.readouterr().err
    holes = pd.DataFrame({"id": [1, 2, 3, 4], "x": [1.0, None, 1.0, float("nan")], "ts": [1, 2, 3, 4]})
    code, out = _bad(tmp_path, "holes.parquet", holes)
    assert code == 2 and not out.exists()
    # a null x is NaN to pandas, as when the driver's reader reads this file: the spec names it
    assert "holes.parquet:row 2: item value nan is not finite" in capsys.readouterr().err
    no_time = pd.DataFrame({"id": [1, 2], "x": [1.0, 1.0], "ts": pd.array([1, None], "Int64")})
    code, out = _bad(tmp_path, "no_time.parquet", no_time)
    assert code == 2 and "no_time.parquet:row 2: ts must be a 64-bit integer, got None" in \
        capsys.readouterr().err
    inf = pd.DataFrame({"id": [1, 2], "x": [1.0, np.inf], "ts": [1, 2]})
    code, out = _bad(tmp_path, "inf.parquet", inf, "--stream-range", "0,5")
    assert code == 2 and "inf.parquet:row 2: item value inf is not finite" in capsys.readouterr().err
    early = pd.DataFrame({"id": [1, 2], "x": [1.0, 1.0], "ts": [30, 31]})
    code, out = _bad(tmp_path, "early.parquet", early, "--origin", "31")
    assert code == 2 and "early.parquet:row 1: item time 30 is before the origin t0=31" in \
        capsys.readouterr().err
    big = pd.DataFrame({"id": ["5", "99999999999999999999999"], "x": [1.0, 1.0], "ts": [1, 2]})
    code, out = _bad(tmp_path, "big.parquet", big)
    assert code == 2 and "big.parquet:row 2: id '99999999999999999999999' is an integer beyond 64" \
        in capsys.readouterr().err
