"""The simjoin job's task-read paths: Parquet row groups (``pipeline.io.simjoin.plan_scan``,
``pipeline.jobs.simjoin.replay_scan``) and JSON lines byte ranges (``plan_lines``,
``replay_lines``) read by the record-range tasks themselves, not the driver."""
from __future__ import annotations

import json
import random

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from streamspec.engines.simjoin.swoop import SwoopEngine
from streamspec.pipeline.io import simjoin as sets_io
from streamspec.pipeline.io.lines import line_cuts
from streamspec.pipeline.io.simjoin import (mentions_side, plan_lines, plan_scan,
                                            read_sets, records_batch)
from streamspec.pipeline.jobs.simjoin import lines_range, record_ranges, run_stream, scan_range
from streamspec.reference.simjoin import OracleEngine
from streamspec.spec.errors import InvalidRecord, OutOfOrder
from streamspec.spec.simjoin import Params, Record

COLUMNS = ["event", "ts", "rank", "id_new", "id_old", "score", "end_time"]


def set_rows(seed: int, n: int = 150, sides=False, str_ids=False, form="ints") -> list[dict]:
    """Ties, equal times, gaps longer than the window; tokens as ints, strs or ``text``."""
    rng = random.Random(seed)
    t, rows = 0, []
    for i in range(n):
        t += rng.choice([0, 0, 1, 2, 7])
        toks = [rng.randint(0, 6) for _ in range(rng.randint(0, 4))]
        row = {"id": f"r{i}" if str_ids else i, "ts": t}
        if form == "text":
            row["text"] = " ".join(f"Word{x}," for x in toks)
        else:
            row["tokens"] = [f"w{x}" for x in toks] if form == "strs" else toks
        if sides:
            row["side"] = rng.choice("RS")
        rows.append(row)
    return rows


def write(path, rows, group: int, schema=None):
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, row_group_size=group)
    return str(path)


def plain(values) -> list:
    return [None if v is None or v != v else v for v in values]


def ranges_locally(scan, params, parts) -> pd.DataFrame:
    """What ``replay_scan`` computes, without Spark: each range's task, events shifted."""
    out, offset = [], 0
    for p, (lo, hi) in enumerate(record_ranges(scan.rows, parts)):
        batch = scan_range(scan, SwoopEngine, params, p, lo, hi).to_pandas()
        marker = batch[batch["event"].isna()].iloc[0]
        assert marker["ok"] and marker["part"] == p
        rows = batch[batch["event"].notna()][COLUMNS].copy()
        assert len(rows) == marker["rows"]
        rows["event"] = rows["event"].astype("int64") + offset
        offset += int(marker["events"])
        out.append(rows)
    return pd.concat(out, ignore_index=True)


@pytest.mark.parametrize("seed", range(8))
def test_range_tasks_reading_row_groups_equal_the_single_run(tmp_path, seed):
    sides, str_ids = seed % 2 == 1, seed % 3 == 1
    form = ["ints", "strs", "text"][seed % 3]
    params = Params(k=1 + seed % 3, w=[3, 5, 2.5][seed % 3],
                    similarity=["jaccard", "hamming", "overlap", "cosine"][seed % 4],
                    join="rs" if sides else "self")
    rows = set_rows(seed, sides=sides, str_ids=str_ids, form=form)
    if seed % 4 == 0:                 # a directory of files, cut at a random point
        (tmp_path / "d").mkdir()
        cut = random.Random(seed).randrange(1, len(rows))
        write(tmp_path / "d" / "a.parquet", rows[:cut], 9)
        path = write(tmp_path / "d" / "b.parquet", rows[cut:], 9)[:-len("/b.parquet")]
    else:
        path = write(tmp_path / "s.parquet", rows, [5, 16, 40][seed % 3])
    scan = plan_scan(path, params)
    assert scan is not None and scan.rows == len(rows) and len(scan.groups) > 2
    want = run_stream(OracleEngine, params, read_sets(path, params).frame)
    assert len(want) > 20
    for parts in (1, 2, 3, 7):
        got = ranges_locally(scan, params, parts)
        assert len(got) == len(want), parts
        for c in COLUMNS:
            assert plain(got[c].tolist()) == plain(want[c].tolist()), (parts, c)


def test_what_the_footers_cannot_vouch_for_takes_the_validating_reader(tmp_path):
    params = Params(k=2, w=3)
    rows = set_rows(1)
    good = write(tmp_path / "good.parquet", rows, 30)
    assert plan_scan(good, params) is not None
    assert plan_scan(good, Params(k=2, w=3, lateness="drop")) is None
    keyed = write(tmp_path / "keyed.parquet", [{**r, "key": "a"} for r in rows], 30)
    both = write(tmp_path / "both.parquet", [{**r, "text": "x"} for r in rows], 30)
    late = write(tmp_path / "late.parquet", rows[60:] + rows[:60], 30)     # groups out of order
    unsigned = write(tmp_path / "unsigned.parquet", rows, 30, pa.schema(
        [("id", pa.uint64()), ("ts", pa.int64()), ("tokens", pa.list_(pa.int64()))]))
    jsonl = tmp_path / "sets.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for path in (keyed, both, late, unsigned, str(jsonl)):
        assert plan_scan(path, params) is None, path


@pytest.mark.parametrize("change, reason", [
    (lambda rows: rows.__setitem__(40, {**rows[40], "ts": rows[40]["ts"] - 3}), "late"),
    (lambda rows: rows.__setitem__(40, {**rows[40], "tokens": None}), "null tokens"),
    (lambda rows: rows.__setitem__(40, {**rows[40], "id": 35}), "duplicate id in the halo"),
])
def test_a_task_reports_rows_its_engine_cannot_take(tmp_path, change, reason):
    # record 40 opens the second of two ranges: that task holds record 39 as the last of its
    # halo, so the time of 40 is checked against 39's even across the cut
    rows = set_rows(2, n=80)
    rows[40]["ts"] = rows[39]["ts"] + 1
    change(rows)
    path = write(tmp_path / "bad.parquet", rows, 80)      # one group: the footers see nothing
    params = Params(k=2, w=50)
    scan = plan_scan(path, params)
    assert scan is not None
    flags = [scan_range(scan, SwoopEngine, params, p, lo, hi).to_pandas().iloc[-1]["ok"]
             for p, (lo, hi) in enumerate(record_ranges(scan.rows, 2))]
    assert flags == [True, False], reason


SEPARATORS = ("\n", "\r\n", "\n\n  \n", "\r")     # universal newlines, blank lines


def write_lines(path, rows, seed: int | None = 0) -> str:
    """JSON lines with mixed line ends and blank lines (read as ``json_objects`` reads them);
    one ``\\n``-ended line per record when ``seed`` is None."""
    text = "".join(json.dumps(r, ensure_ascii=seed is None or seed % 2 == 0)
                   + (SEPARATORS[(7 * n + seed) % 4] if seed is not None else "\n")
                   for n, r in enumerate(rows))
    path.write_text(text, encoding="utf-8", newline="")
    return str(path)


def lines_locally(plan, params, parts) -> pd.DataFrame:
    """What ``replay_lines`` computes, without Spark."""
    cuts = line_cuts(plan.source, plan.size, parts)
    out, offset = [], 0
    for p in range(len(cuts) - 1):
        batch = lines_range(plan, SwoopEngine, params, p, cuts[p], cuts[p + 1]).to_pandas()
        marker = batch[batch["event"].isna()].iloc[0]
        assert marker["ok"] and marker["part"] == p
        rows = batch[batch["event"].notna()][COLUMNS].copy()
        rows["event"] = rows["event"].astype("int64") + offset
        offset += int(marker["events"])
        out.append(rows)
    return pd.concat(out, ignore_index=True)


@pytest.mark.parametrize("seed", range(6))
def test_range_tasks_parsing_json_lines_equal_the_single_run(tmp_path, monkeypatch, seed):
    monkeypatch.setattr(sets_io, "HALO_BLOCK", 64)      # the halo is read back in many steps
    sides, str_ids = seed % 2 == 1, seed % 3 == 1
    params = Params(k=1 + seed % 3, w=[3, 5, 2.5][seed % 3], similarity="jaccard",
                    join="rs" if sides else "self")
    rows = set_rows(seed, sides=sides, str_ids=str_ids, form=["ints", "strs", "text"][seed % 3])
    path = write_lines(tmp_path / "sets.jsonl", rows, seed)
    plan = plan_lines(path, params)
    assert plan is not None and plan.id_type == ("string" if str_ids else "long")
    want = run_stream(OracleEngine, params, read_sets(path, params).frame)
    for parts in (1, 2, 3, 7):
        cuts = line_cuts(path, plan.size, parts)
        assert len(cuts) == parts + 1 and cuts[-1] == plan.size
        with open(path, "rb") as f:
            data = f.read()
        assert all(data[c - 1:c] == b"\n" for c in cuts[1:-1])
        got = lines_locally(plan, params, parts)
        for c in COLUMNS:
            assert plain(got[c].tolist()) == plain(want[c].tolist()), (parts, c)


def test_records_go_in_as_columns_only_when_the_columns_mean_the_same():
    good = [Record(1, [3, 4], 0), Record(2, [], 1.5), Record(3, [4], 2)]
    batch = records_batch(good, "self")
    assert batch is not None and batch.tok_ptr.tolist() == [0, 2, 2, 3]
    assert list(SwoopEngine(Params(k=2, w=5)).process(batch)) == \
        list(SwoopEngine(Params(k=2, w=5)).process(good))
    # what numpy would coerce or the columnar checks would judge otherwise than the spec
    for bad in (Record(True, [1], 3), Record(4, [True], 3), Record(4, [1.0], 3),
                Record(4.0, [1], 3), Record(2**64, [1], 3), Record(4, [2**64], 3),
                Record(4, [1], 1e300), Record(4, [1], float("nan")), Record("x", [1], 3),
                Record(4, ["a"], 3), Record(4, [1], 3, "R")):
        assert records_batch(good + [bad], "self") is None, bad
    sided = [Record(1, [3], 0, "R"), Record(2, [3], 1, "S")]
    assert records_batch(sided, "rs").side.tolist() == [0, 1]
    assert records_batch(sided + [Record(3, [3], 2, "T")], "rs") is None


def test_json_lines_the_tasks_do_not_take(tmp_path):
    params = Params(k=2, w=3)
    rows = set_rows(1, n=30)
    assert plan_lines(write_lines(tmp_path / "ok.jsonl", rows), params) is not None
    assert plan_lines(write_lines(tmp_path / "ok.jsonl", rows), Params(k=2, w=3, lateness="drop")) is None
    keyed = write_lines(tmp_path / "keyed.jsonl", [{**r, "key": "a"} for r in rows])
    big_id = write_lines(tmp_path / "big.jsonl", [{**rows[0], "id": 2**70}] + rows[1:])
    blank = tmp_path / "empty.jsonl"
    blank.write_text("")
    parquet = write(tmp_path / "sets.parquet", rows, 10)
    for path in (keyed, big_id, str(blank), parquet):
        assert plan_lines(path, params) is None, path
    assert not mentions_side(keyed) and not mentions_side(str(blank))
    assert mentions_side(write_lines(tmp_path / "rs.jsonl", set_rows(1, n=30, sides=True)))


def test_a_json_task_reports_what_the_reader_would_reject(tmp_path):
    params = Params(k=2, w=50)
    rows = set_rows(2, n=80)
    late = [dict(r) for r in rows]
    late[50]["ts"] = late[49]["ts"] - 1
    mixed = [dict(r) for r in rows]
    mixed[70]["id"] = "seventy"
    for bad in (late, mixed):          # both in the second of two byte ranges
        path = write_lines(tmp_path / "bad.jsonl", bad)
        plan = plan_lines(path, params)
        cuts = line_cuts(path, plan.size, 2)
        flags = [lines_range(plan, SwoopEngine, params, p, cuts[p], cuts[p + 1]).to_pandas()
                 .iloc[-1]["ok"] for p in range(2)]
        assert flags == [True, False]


@pytest.mark.spark
@pytest.mark.parametrize("bad, error, line", [
    ("late", OutOfOrder, 91), ("duplicate", InvalidRecord, 121), ("mixed", InvalidRecord, 101)])
def test_bad_json_lines_stop_the_job_with_the_readers_located_error(spark, tmp_path, monkeypatch,
                                                                    bad, error, line):
    from streamspec.pipeline.cli import main
    from streamspec.pipeline.jobs import simjoin as job

    replayed = []
    replay_lines = job.replay_lines
    monkeypatch.setattr(job, "replay_lines", lambda *a: replayed.append(replay_lines(*a)))
    rows = set_rows(4, n=150)
    if bad == "late":
        rows[90]["ts"] = rows[89]["ts"] - 1
    elif bad == "duplicate":
        rows[120]["id"] = 3            # far from its twin: no task holds both
    else:
        rows[100]["id"] = "hundred"    # the stream's first id is an int
    path = write_lines(tmp_path / "bad.jsonl", rows, seed=None)     # one line per record
    params = Params(k=2, w=4)
    with pytest.raises(error) as err:
        read_sets(path, params)
    assert err.value.location == f"{path}:{line}"
    code = main(["run", "simjoin", "--input", path, "--k", "2", "--window", "4",
                 "--output", str(tmp_path / "out"), "--partitions", "3"])
    assert code == 2 and not (tmp_path / "out").exists()
    assert replayed == [None]       # the tasks found it; the reader then located it


@pytest.mark.spark
def test_a_side_written_with_escapes_still_makes_the_default_join_rs(spark, tmp_path):
    from streamspec.pipeline.cli import main

    rows = set_rows(6, n=60, sides=True)
    path = tmp_path / "escaped.jsonl"
    path.write_text("".join(json.dumps(r).replace('"side"', '"\\u0073ide"') + "\n" for r in rows))
    assert not mentions_side(str(path)) and read_sets(str(path), Params(k=2, w=4, join="rs"))
    out = str(tmp_path / "out")
    assert main(["run", "simjoin", "--input", str(path), "--k", "2", "--window", "4",
                 "--output", out, "--partitions", "2"]) == 0
    want = run_stream(OracleEngine, Params(k=2, w=4, join="rs"),
                      read_sets(str(path), Params(k=2, w=4, join="rs")).frame)
    got = pd.read_parquet(out).sort_values(["event", "rank"]).reset_index(drop=True)
    assert plain(got["id_new"].tolist()) == plain(want["id_new"].tolist()) and len(want) > 5


@pytest.mark.spark
@pytest.mark.parametrize("bad, error, row", [
    ("late", OutOfOrder, 61), ("duplicate", InvalidRecord, 121), ("side", InvalidRecord, 31)])
def test_bad_parquet_stops_the_job_with_the_readers_located_error(spark, tmp_path, monkeypatch,
                                                                  bad, error, row):
    from streamspec.pipeline.cli import main
    from streamspec.pipeline.jobs import simjoin as job

    scanned = []
    replay_scan = job.replay_scan
    monkeypatch.setattr(job, "replay_scan", lambda *a: scanned.append(replay_scan(*a)))

    rows = set_rows(4, n=150)
    if bad == "late":
        rows[60]["ts"] = rows[59]["ts"] - 1
    elif bad == "duplicate":
        rows[120]["id"] = 3            # far from its twin: no task holds both
    else:
        rows[30]["side"] = "R"
    schema = pa.schema([("id", pa.int64()), ("ts", pa.int64()), ("tokens", pa.list_(pa.int64()))]
                       + ([("side", pa.string())] if bad == "side" else []))
    path = write(tmp_path / "bad.parquet", rows, 150, schema)
    params = Params(k=2, w=4)
    assert plan_scan(path, params) is not None
    with pytest.raises(error) as err:
        read_sets(path, params)
    assert err.value.location == f"{path}:row {row}"
    code = main(["run", "simjoin", "--input", path, "--k", "2", "--window", "4",
                 "--join", "self", "--output", str(tmp_path / "out"), "--partitions", "3"])
    assert code == 2 and not (tmp_path / "out").exists()
    assert scanned == [None]        # the tasks found it; the reader then located it


@pytest.mark.spark
def test_command_line_on_json_lines_and_parquet_equals_the_oracle(spark, tmp_path, monkeypatch):
    from streamspec.pipeline.cli import main
    from streamspec.pipeline.jobs import simjoin as job

    taken = []        # string ids "r0".."r199": the ranges' id spans meet, ids are checked

    def spy(name, replay):
        def replayed(*args):
            result = replay(*args)
            taken.append((name, result is not None))
            return result
        monkeypatch.setattr(job, name, replayed)

    for name in ("replay_scan", "replay_lines"):
        spy(name, getattr(job, name))

    rows = set_rows(5, n=200, str_ids=True, form="strs")
    jsonl = write_lines(tmp_path / "sets.jsonl", rows, seed=5)
    parquet = write(tmp_path / "sets.parquet", rows, 23)
    params = Params(k=3, w=5, similarity="dice")
    want = run_stream(OracleEngine, params, read_sets(jsonl, params).frame)
    want = {c: plain(want[c].tolist()) for c in COLUMNS}
    for name, path in (("json", jsonl), ("parquet", parquet)):
        out = str(tmp_path / f"out-{name}")
        assert main(["run", "simjoin", "--input", path, "--k", "3", "--window", "5",
                     "--similarity", "dice", "--output", out, "--partitions", "3"]) == 0
        frame = pd.read_parquet(out).sort_values(["event", "rank"]).reset_index(drop=True)
        assert {c: plain(frame[c].tolist()) for c in COLUMNS} == want, name
    assert len(want["event"]) > 50 and taken == [("replay_lines", True), ("replay_scan", True)]
