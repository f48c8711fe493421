"""A keyed JSON lines set stream parsed by the Spark tasks equals the driver's read.

``pipeline.io.simjoin.stage_keyed_span`` stages what ``read_sets`` would read
(the same records, keys and kinds, in file order) or refuses; the job replays
one engine per key from the staged files (``jobs.simjoin.replay_keyed_lines``)
and sends anything refused or rejected to ``read_sets``, which names the line.
"""
from __future__ import annotations

import json
import random

import pyarrow.parquet as pq
import pytest

from streamspec.pipeline.cli import main
from streamspec.pipeline.io import simjoin as sets_io
from streamspec.pipeline.io.lines import line_cuts
from streamspec.spec.simjoin import Params


def keyed_rows(seed: int, n: int = 240, key=lambda i, rng: rng.choice("abc"), sides=False,
               str_tokens=False) -> list[dict]:
    """Ties, equal times, gaps longer than the window, per key; ids unique per key."""
    rng = random.Random(seed)
    t, rows = 0, []
    for i in range(n):
        t += rng.choice([0, 0, 1, 2, 9])
        toks = [rng.randint(0, 6) for _ in range(rng.randint(0, 4))]
        row = {"key": key(i, rng), "id": i, "ts": t,
               "tokens": [f"w{x}" for x in toks] if str_tokens else toks}
        if sides:
            row["side"] = rng.choice("RS")
        rows.append(row)
    return rows


def write_lines(path, rows, crlf=False, blank_every=0):
    end = "\r\n" if crlf else "\n"
    out = []
    for n, row in enumerate(rows):
        out.append(json.dumps(row) + end)
        if blank_every and n % blank_every == blank_every - 1:
            out.append(end)
    path.write_bytes("".join(out).encode())
    return str(path)


PARAMS = Params(k=3, w=10.0)


@pytest.mark.parametrize("parts", [1, 2, 5])
@pytest.mark.parametrize("crlf", [False, True])
def test_spans_stage_what_read_sets_reads(tmp_path, parts, crlf):
    path = write_lines(tmp_path / "s.jsonl", keyed_rows(1, str_tokens=parts == 2), crlf=crlf,
                       blank_every=13)
    plan = sets_io.plan_keyed_lines(path, PARAMS, min_bytes=0)
    assert plan is not None
    cuts = line_cuts(path, plan.size, parts)
    staged = []
    for n, (a, b) in enumerate(zip(cuts, cuts[1:])):
        ok, count, *_ = sets_io.stage_keyed_span(plan, a, b, str(tmp_path / f"{n}.parquet"), n)
        assert ok
        if count:
            staged += pq.read_table(tmp_path / f"{n}.parquet").to_pylist()
    frame = sets_io.read_sets(path, PARAMS).frame
    want = [(r["key"], r["id"], list(r["tokens"]), r["ts"]) for r in frame.to_dict("records")]
    assert [(r["key"], r["id"], r["tokens"], r["ts"]) for r in staged] == want
    assert [r["pos"] for r in staged] == sorted(r["pos"] for r in staged)


@pytest.mark.parametrize("why, rows", [
    ("a record without a key", [{"key": "a", "id": 1, "ts": 1, "tokens": [1]},
                                {"id": 2, "ts": 2, "tokens": [1]}]),
    ("ids of two kinds", [{"key": "a", "id": 1, "ts": 1, "tokens": [1]},
                          {"key": "a", "id": "x", "ts": 2, "tokens": [1]}]),
    ("a bool id", [{"key": "a", "id": True, "ts": 1, "tokens": [1]}]),
    ("a time as text", [{"key": "a", "id": 1, "ts": "5", "tokens": [1]}]),
    ("tokens of two kinds", [{"key": "a", "id": 1, "ts": 1, "tokens": [1, "x"]}]),
    ("keys of two kinds", [{"key": "a", "id": 1, "ts": 1, "tokens": [1]},
                           {"key": 2, "id": 2, "ts": 2, "tokens": [1]}]),
    ("a time beyond a double", [{"key": "a", "id": 1, "ts": 10 ** 400, "tokens": [1]}]),
])
def test_spans_refuse_what_read_sets_must_judge(tmp_path, why, rows):
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    plan = sets_io.LinesPlan(str(path), path.stat().st_size, "long")
    ok, *_ = sets_io.stage_keyed_span(plan, 0, plan.size, str(tmp_path / "out.parquet"), 0)
    assert not ok, why
    assert not (tmp_path / "out.parquet").exists()


def test_plan_keyed_lines_declines_small_unkeyed_and_drop(tmp_path):
    path = write_lines(tmp_path / "s.jsonl", keyed_rows(2, n=20))
    assert sets_io.plan_keyed_lines(path, PARAMS) is None                      # small
    assert sets_io.plan_keyed_lines(path, PARAMS, min_bytes=0) is not None
    assert sets_io.plan_keyed_lines(path, Params(k=3, w=10.0, lateness="drop"), min_bytes=0) is None
    unkeyed = write_lines(tmp_path / "u.jsonl", [{"id": 1, "ts": 1, "tokens": [1]}])
    assert sets_io.plan_keyed_lines(unkeyed, PARAMS, min_bytes=0) is None


# -- through Spark ---------------------------------------------------------------------------
def run(path, out, *extra):
    return main(["run", "simjoin", "--input", path, "--k", "3", "--window", "10",
                 "--output", str(out), "--no-progress", *extra])


def output(directory):
    return sorted(tuple(r.values()) for r in pq.read_table(directory).to_pylist())


@pytest.mark.spark
@pytest.mark.parametrize("partitions", ["1", "3"])
@pytest.mark.parametrize("case", ["text keys", "int keys", "rs join", "text tokens"])
def test_cli_staged_keyed_output_equals_the_driver_read(spark, tmp_path, monkeypatch, partitions,
                                                        case):
    rows = keyed_rows(3, key=(lambda i, rng: rng.randint(0, 3)) if case == "int keys"
                      else (lambda i, rng: rng.choice("abc")),
                      sides=case == "rs join", str_tokens=case == "text tokens")
    path = write_lines(tmp_path / "s.jsonl", rows, blank_every=17)
    extra = ["--partitions", partitions] + (["--join", "rs"] if case == "rs join" else [])
    monkeypatch.setattr(sets_io, "KEYED_MIN_BYTES", 1 << 40)
    assert run(path, tmp_path / "driver", *extra) == 0
    monkeypatch.setattr(sets_io, "KEYED_MIN_BYTES", 0)
    from streamspec.pipeline.jobs import simjoin as job
    calls = []
    real = job.replay_keyed_lines
    monkeypatch.setattr(job, "replay_keyed_lines", lambda *a: calls.append(1) or real(*a))
    assert run(path, tmp_path / "staged", *extra) == 0
    assert calls, "the staged path did not run"
    assert output(tmp_path / "staged") == output(tmp_path / "driver")
    assert not [p for p in tmp_path.iterdir() if ".staging-" in p.name]


@pytest.mark.spark
@pytest.mark.parametrize("why, edit, message", [
    ("a key's record out of order deep", lambda rows: rows[200].update(ts=0, key="a"),
     "s.jsonl:201: "),
    ("a record without a key deep", lambda rows: rows[150].pop("key"),
     "s.jsonl:151: some records have a key and this one has none"),
    ("an id twice in a key", lambda rows: rows[180].update(id=179, key=rows[179]["key"],
                                                           ts=rows[179]["ts"]),
     "s.jsonl:181: "),
])
def test_cli_bad_record_deep_in_a_staged_file_is_located(spark, tmp_path, monkeypatch, capsys,
                                                         why, edit, message):
    rows = keyed_rows(4)
    edit(rows)
    path = write_lines(tmp_path / "s.jsonl", rows)
    monkeypatch.setattr(sets_io, "KEYED_MIN_BYTES", 0)
    assert run(path, tmp_path / "out", "--partitions", "2") == 2, why
    assert message in capsys.readouterr().err, why
    assert not (tmp_path / "out").exists()
    assert not [p for p in tmp_path.iterdir() if ".staging-" in p.name]
