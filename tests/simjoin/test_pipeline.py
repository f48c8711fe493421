"""The simjoin job: readers, the exact range replay, keyed replay, the command line."""
import json
import random

import numpy as np
import pandas as pd
import pytest

from streamspec.engines.simjoin.swoop import SwoopEngine
from streamspec.pipeline.io.simjoin import read_sets, tokenize
from streamspec.pipeline.jobs.simjoin import halo_start, output_rows, run_range, run_stream
from streamspec.reference.simjoin import OracleEngine
from streamspec.spec.errors import InvalidRecord, MalformedRecord, OutOfOrder
from streamspec.spec.simjoin import Params


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def random_rows(seed, n=120, keys=None, sides=False):
    rng = random.Random(seed)
    t, rows = 0, []
    for i in range(n):
        t += rng.choice([0, 0, 1, 2, 7])
        row = {"id": i, "ts": t, "tokens": [rng.randint(0, 6) for _ in range(rng.randint(0, 4))]}
        if keys:
            row["key"] = rng.choice(keys)
        if sides:
            row["side"] = rng.choice("RS")
        rows.append(row)
    return rows


def local_ranges(engine_cls, params, frame, parts):
    """The job's range replay without Spark: halo per range, events renumbered by offsets."""
    n = len(frame)
    ts = frame["ts"].to_numpy(np.float64)
    bounds = [n * p // parts for p in range(parts + 1)]
    outs, offset = [], 0
    for p, (lo, hi) in enumerate(zip(bounds, bounds[1:])):
        piece = frame.iloc[halo_start(ts, params.wf, lo):hi].copy()
        piece["part"], piece["lo"] = p, lo
        rows = run_range(engine_cls, params, piece).drop(columns="part")
        rows["event"] += offset
        offset += rows["event"].max() + 1 - offset if len(rows) else 0
        outs.append(rows)
    return pd.concat(outs, ignore_index=True)


def test_tokenize_rule():
    assert sorted(set(tokenize("Ham, ham & eggs! Ünïcode_x 42"))) == ["42", "eggs", "ham", "ünïcode_x"]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("parts", [2, 3, 7])
def test_range_replay_equals_single_run(tmp_path, seed, parts):
    sides = seed % 2 == 1
    params = Params(k=1 + seed % 3, w=[3, 5, 2.5][seed % 3], similarity=["jaccard", "hamming", "overlap"][seed % 3],
                    join="rs" if sides else "self")
    stream = read_sets(write_jsonl(tmp_path / "s.jsonl", random_rows(seed, sides=sides)), params)
    whole = run_stream(SwoopEngine, params, stream.frame)
    assert whole.equals(run_stream(OracleEngine, params, stream.frame))
    cut = local_ranges(SwoopEngine, params, stream.frame, parts)
    pd.testing.assert_frame_equal(cut, whole)


def test_empty_list_is_one_rank_zero_row():
    from streamspec.spec.simjoin import TopK
    rows = output_rows([TopK(1.0, (("a", "b", 0.5, 3.0),)), TopK(3.0, ())])
    assert rows["rank"].tolist() == [1, 0]
    assert rows["id_new"].tolist() == ["a", None]
    assert rows["event"].tolist() == [0, 1]


@pytest.mark.parametrize("row, error, line", [
    ({"id": 2, "ts": 0, "tokens": [1]}, OutOfOrder, 2),
    ({"id": 1, "ts": 9, "tokens": [1]}, InvalidRecord, 2),
    ({"id": 3, "ts": 9}, MalformedRecord, 2),
    ({"id": 3, "ts": "x", "tokens": []}, MalformedRecord, 2),
    ({"id": "s", "ts": 9, "tokens": []}, InvalidRecord, 2),
])
def test_bad_input_names_file_and_line(tmp_path, row, error, line):
    path = write_jsonl(tmp_path / "bad.jsonl", [{"id": 1, "ts": 5, "tokens": [1, 2]}, row])
    with pytest.raises(error) as err:
        read_sets(path, Params(k=1, w=3))
    assert err.value.location == f"{path}:{line}"


def test_lateness_drop(tmp_path):
    path = write_jsonl(tmp_path / "late.jsonl", [{"id": 1, "ts": 5, "tokens": ["x"]},
                                                 {"id": 2, "ts": 4, "tokens": ["x"]},
                                                 {"id": 3, "ts": 6, "text": "x"}])
    stream = read_sets(path, Params(k=1, w=3, lateness="drop"))
    assert stream.dropped == 1 and stream.frame["id"].tolist() == [1, 3]


def ids_or_none(column) -> list:
    """An id column as Python ints, None where the list was empty (Spark gives NaN or None)."""
    return [None if x is None or x != x else int(x) for x in column.tolist()]


@pytest.mark.spark
def test_spark_replays_equal_single_run(spark, tmp_path):
    from streamspec.pipeline.jobs.simjoin import replay_stream as replay
    params = Params(k=2, w=4)
    one = read_sets(write_jsonl(tmp_path / "one.jsonl", random_rows(11, n=150)), params)
    got = replay(spark, one, SwoopEngine, params, 3, "long").toPandas()
    want = run_stream(OracleEngine, params, one.frame)
    got = got.sort_values(["event", "rank"]).reset_index(drop=True)
    assert got[["event", "rank", "ts", "score", "end_time"]].equals(
        want[["event", "rank", "ts", "score", "end_time"]])
    assert ids_or_none(got["id_new"]) == ids_or_none(want["id_new"])

    keyed = read_sets(write_jsonl(tmp_path / "keyed.jsonl", random_rows(12, n=150, keys=["aal", "cph"])),
                      params)
    got = replay(spark, keyed, SwoopEngine, params, 2, "long").toPandas()
    for key, frame in keyed.frame.groupby("key"):
        mine = got[got["key"] == key].sort_values(["event", "rank"]).reset_index(drop=True)
        want = run_stream(OracleEngine, params, frame)
        assert mine[["event", "rank", "score", "end_time"]].equals(want[["event", "rank", "score", "end_time"]])


@pytest.mark.spark
def test_command_line_writes_the_output_schema(spark, tmp_path):
    from streamspec.pipeline.cli import main
    path = write_jsonl(tmp_path / "in.jsonl", random_rows(3, n=60))
    out = str(tmp_path / "out")
    assert main(["run", "simjoin", "--input", path, "--k", "2", "--window", "3", "--similarity", "dice",
                 "--engine", "swoop", "--output", out, "--partitions", "2"]) == 0
    got = pd.read_parquet(out)
    assert list(got.columns) == ["event", "ts", "rank", "id_new", "id_old", "score", "end_time"]
    assert (got["rank"] == 0).any() and got["rank"].max() <= 2
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"id": 1, "ts": 2, "tokens": []}, {"id": 2, "ts": 1, "tokens": []}])
    assert main(["run", "simjoin", "--input", bad, "--k", "2", "--window", "3",
                 "--output", str(tmp_path / "never")]) == 2


def test_demo_argv_runs_the_bundled_sample_without_spark(tmp_path):
    # what ``streamspec demo`` runs, replayed in-process on one key: swoop equals the oracle
    from streamspec.pipeline.cli import build_parser
    from streamspec.pipeline.jobs import simjoin as job

    args = build_parser().parse_args(["run", "simjoin", *job.demo_argv(str(tmp_path / "out"))])
    params = Params(k=args.k, w=args.window, similarity=args.similarity)
    stream = read_sets(args.input, params)
    assert stream.keyed and stream.records == 3000 and job.DEMO_INPUT.stat().st_size < 400_000
    frame = stream.frame
    part = frame[frame["key"] == frame["key"].iloc[0]].iloc[:400]     # the oracle is slow
    want = run_stream(OracleEngine, params, part)
    assert len(want) > 100 and run_stream(SwoopEngine, params, part).equals(want)
