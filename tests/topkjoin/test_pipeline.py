"""The topkjoin readers (no Spark) and the keyed Spark replay (marked ``spark``)."""
import json

import pandas as pd
import pytest

from streamspec.conformance.strategies.topkjoin import random_case
from streamspec.pipeline.io.topkjoin import ItemStream, read_items, read_remote
from streamspec.pipeline.jobs.topkjoin import quality_of_rows, run_stream
from streamspec.pipeline.jobs.topkjoin import replay_stream as replay
from streamspec.spec.errors import MalformedRecord, OutOfOrder
from streamspec.spec.registry import Registry
from streamspec.spec.topkjoin_remote import SqliteDataset, TimelineDataset


def test_csv_json_and_parquet_items(tmp_path):
    csv = tmp_path / "items.csv"
    csv.write_text("id,x,ts\n3,1,10\n4,2.5,10\n3,1,12\n")
    jl = tmp_path / "items.jsonl"
    jl.write_text("\n".join(json.dumps(r) for r in [{"id": 3, "x": 1, "ts": 10},
                                                     {"id": 4, "x": 2.5, "ts": 10},
                                                     {"id": 3, "x": 1, "ts": 12}]))
    pq = tmp_path / "items.parquet"
    pd.DataFrame({"id": [3, 4, 3], "x": [1.0, 2.5, 1.0], "ts": [10, 10, 12]}).to_parquet(pq)
    frames = [read_items(str(p)).frame for p in (csv, jl, pq)]
    for f in frames:
        assert f["id"].tolist() == [3, 4, 3] and f["t"].tolist() == [10, 10, 12]
        assert f["x"].tolist() == [1.0, 2.5, 1.0]


def test_item_errors_name_the_line(tmp_path):
    bad = tmp_path / "items.csv"
    bad.write_text("id,x,ts\n1,1,10\n1,1,9\n")
    with pytest.raises(OutOfOrder, match="items.csv:3"):
        read_items(str(bad))
    bad.write_text("id,x,ts\n1,1,10\n1,one,11\n")
    with pytest.raises(MalformedRecord, match="items.csv:3"):
        read_items(str(bad))
    bad.write_text("id,x,ts\n1,1,10.5\n")
    with pytest.raises(MalformedRecord, match="items.csv:2"):
        read_items(str(bad))


def test_keyed_streams_are_validated_per_key(tmp_path):
    f = tmp_path / "items.csv"
    f.write_text("key,id,x,ts\na,1,1,10\nb,1,1,5\na,2,1,11\n")   # b's time is its own stream
    stream = read_items(str(f))
    assert stream.keyed and stream.frame["key"].tolist() == ["a", "b", "a"]


def test_remote_from_csv_and_sqlite(tmp_path):
    csv = tmp_path / "remote.csv"
    csv.write_text("key,time,value\n1,5,2\n1,9,4\n2,1,7\n")
    db = tmp_path / "remote.db"
    SqliteDataset.write(str(db), [(1, 5, 2.0), (1, 9, 4.0), (2, 1, 7.0)])
    for remote in (read_remote(str(csv)), read_remote(str(db))):
        assert [remote.value(1, t) for t in (5, 6, 10)] == [0.0, 2.0, 4.0]
        assert remote.value(2, 2) == 7.0
        assert remote.value_range() == (0.0, 7.0)


def _keyed_stream(seeds):
    frames, params = [], None
    for key, seed in enumerate(seeds):
        case = random_case(seed, max_items=60)
        params = params or case.params
        frames.append(pd.DataFrame({"key": key, "id": [it.id for it in case.items],
                                    "x": [it.x for it in case.items],
                                    "t": [it.ts for it in case.items]}))
    frame = pd.concat(frames, ignore_index=True)
    frame.insert(1, "seq", range(len(frame)))
    return ItemStream(frame, "memory", True), params


def _rows(frame):
    def norm(v):
        return None if v is None or (isinstance(v, float) and v != v) else v
    return [(int(k), int(w), int(t), int(r), norm(i) if norm(i) is None else int(i), norm(s))
            for k, w, t, r, i, s in frame[["key", "window", "tau", "rank", "id", "score"]]
            .itertuples(index=False, name=None)]


@pytest.mark.spark
@pytest.mark.parametrize("engine", ["at-bsm", "wsj-rnd"])
def test_keyed_replay_equals_single_process(spark, engine):
    stream, params = _keyed_stream([3, 5, 8, 13])
    engine_cls = Registry.get("topkjoin", engine)
    got = replay(spark, stream, engine_cls, params, 2).toPandas()
    want = []
    for key, g in stream.frame.groupby("key"):
        rows = run_stream(engine_cls, params, g)
        rows.insert(0, "key", key)
        want.append(rows)
    want = pd.concat(want, ignore_index=True)
    order = ["key", "window", "rank"]
    got = got.sort_values(order).reset_index(drop=True)
    want = want.sort_values(order).reset_index(drop=True)
    assert _rows(got) == _rows(want)
    oracle = replay(spark, stream, Registry.get("topkjoin", "oracle"), params, 2).toPandas()
    q = quality_of_rows(got, oracle, params.k)
    assert q.evaluations == want.drop_duplicates(["key", "window"]).shape[0]


@pytest.mark.spark
def test_streamspec_run_topkjoin(spark, tmp_path, capsys):
    from streamspec.pipeline.cli import main
    items = tmp_path / "items.csv"
    items.write_text("id,x,ts\n1,1,0\n2,1,1\n3,1,2\n1,1,5\n2,1,7\n3,1,12\n1,1,13\n")
    remote = tmp_path / "remote.db"
    SqliteDataset.write(str(remote), [(1, 0, 1.0), (2, 0, 2.0), (3, 0, 0.0), (3, 6, 9.0), (1, 9, 0.0)])
    out = tmp_path / "out"
    # the paper's names (--stream, --omega, --beta) are aliases of --input, --window, --slide
    code = main(["run", "topkjoin", "--stream", str(items), "--remote", str(remote),
                 "--omega", "6", "--beta", "4", "--k", "2", "--n", "1", "--budget", "1",
                 "--engine", "at-bsm", "--output", str(out), "--oracle"])
    assert code == 0
    rows = pd.read_parquet(out).sort_values(["window", "rank"])
    assert list(rows.columns) == ["window", "tau", "rank", "id", "score"]
    assert rows["window"].drop_duplicates().tolist() == [0, 1, 2, 3]
    printed = capsys.readouterr().out
    assert "4 evaluations" in printed and "cumulative nDCG@k" in printed
    # --oracle: the oracle itself scores perfectly
    assert main(["run", "topkjoin", "--input", str(items), "--remote", str(remote),
                 "--window", "6", "--slide", "4", "--k", "2", "--engine", "oracle",
                 "--output", str(out), "--overwrite", "--oracle"]) == 0
    assert "cumulative nDCG@k 4.000 (mean 1.0000), cumulative precision@k 4.000" in \
        capsys.readouterr().out


@pytest.mark.parametrize("engine", ["wst", "at-tsm", "wsj-wbm"])
def test_quality_of_rows_equals_the_spec_metrics(engine):
    from streamspec.conformance.topkjoin import quality_of
    from streamspec.spec.topkjoin_quality import Quality
    stream, params = _keyed_stream([21])
    cls, oracle = Registry.get("topkjoin", engine), Registry.get("topkjoin", "oracle")
    got = run_stream(cls, params, stream.frame)
    want = run_stream(oracle, params, stream.frame)
    case = random_case(21, max_items=60)
    q = quality_of(cls, case)
    assert quality_of_rows(got, want, params.k) == Quality(q.evaluations, pytest.approx(q.ndcg),
                                                           pytest.approx(q.precision))


def test_demo_argv_runs_the_bundled_sample_without_spark(tmp_path):
    # what ``streamspec demo`` runs, replayed in-process: AT-TSM over the bundled sample
    from streamspec.pipeline.cli import build_parser
    from streamspec.pipeline.jobs import topkjoin as job

    args = build_parser().parse_args(["run", "topkjoin", *job.demo_argv(str(tmp_path / "out"))])
    stream, remote = read_items(args.input, args.origin), read_remote(args.remote)
    assert len(stream.frame) > 500 and (job.DATA / "followers-dfc.csv").stat().st_size < 300_000
    params = job.build_params(args, stream, remote)
    rows = run_stream(Registry.get("topkjoin", args.engine), params, stream.frame)
    oracle = run_stream(Registry.get("topkjoin", "oracle"), params, stream.frame)
    assert rows["window"].nunique() == oracle["window"].nunique() == 31
    q = quality_of_rows(rows, oracle, params.k)
    assert q.evaluations == 31 and 0 < q.precision <= q.evaluations


def test_last_answer_line():
    from streamspec.pipeline.jobs.topkjoin import last_answer
    rows = pd.DataFrame({"window": [0, 1, 1], "tau": [10, 20, 20], "rank": [1, 2, 1],
                         "id": [7, 9, 8], "score": [0.5, 0.25, 0.75]})
    assert last_answer(rows) == "  top-2 at the last evaluation (tau=20): 8 (0.750), 9 (0.250)"
    empty = pd.DataFrame({"window": [3], "tau": [40], "rank": [0], "id": [None], "score": [None]})
    assert last_answer(empty) == "  top-0 at the last evaluation (tau=40): empty window"
