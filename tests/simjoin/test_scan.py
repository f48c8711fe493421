"""The simjoin job's columnar path: Parquet row groups read by the record-range tasks
themselves (``pipeline.io.simjoin.plan_scan``, ``pipeline.jobs.simjoin.replay_scan``)."""
from __future__ import annotations

import json
import random

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from streamspec.engines.simjoin.swoop import SwoopEngine
from streamspec.pipeline.io.simjoin import plan_scan, read_sets
from streamspec.pipeline.jobs.simjoin import record_ranges, run_stream, scan_range
from streamspec.reference.simjoin import OracleEngine
from streamspec.spec.errors import InvalidRecord, OutOfOrder
from streamspec.spec.simjoin import Params

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
def test_command_line_on_parquet_equals_the_json_lines_run(spark, tmp_path):
    from streamspec.pipeline.cli import main

    rows = set_rows(5, n=200, str_ids=True, form="strs")
    jsonl = tmp_path / "sets.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    parquet = write(tmp_path / "sets.parquet", rows, 23)
    outs = {}
    for name, path in (("json", str(jsonl)), ("parquet", parquet)):
        out = str(tmp_path / f"out-{name}")
        assert main(["run", "simjoin", "--input", path, "--k", "3", "--window", "5",
                     "--similarity", "dice", "--output", out, "--partitions", "3"]) == 0
        frame = pd.read_parquet(out).sort_values(["event", "rank"]).reset_index(drop=True)
        outs[name] = {c: plain(frame[c].tolist()) for c in COLUMNS}
    assert outs["parquet"] == outs["json"] and len(outs["json"]["event"]) > 50
