"""The text path of ``streamspec run topkjoin``: CSV and JSON lines items parsed by Spark
tasks over byte ranges (``pipeline.io.topkjoin_text``, ``pipeline.jobs.topkjoin.text_replay``)
against the driver's reader (``read_items``) and the engine run in this process: the same
rows, the same default stream range, and the reader's own ``file:line`` errors."""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from streamspec.conformance.topkjoin import keyed_streams, random_case
from streamspec.pipeline.cli import build_parser, main
from streamspec.pipeline.io.topkjoin import ItemStream, read_items
from streamspec.pipeline.io.topkjoin_text import (TextItems, combined_kind, parse_chunk,
                                                  plan_text_items, read_chunk)
from streamspec.pipeline.jobs import topkjoin as job
from tests.topkjoin.cliargs import argv, timeline
from streamspec.spec.errors import RecordError
from streamspec.spec.registry import Registry


@pytest.fixture(autouse=True)
def small_files_take_the_text_path(monkeypatch):
    """Test files of a few KB through the tasks (``SMALL`` keeps them on the driver), the
    driver checking their first 8 lines only (so a bad line at line 9 on is a task's)."""
    import streamspec.pipeline.io.topkjoin_text as text
    monkeypatch.setattr(text, "SMALL", 0)
    monkeypatch.setattr(text, "HEAD_LINES", 8)


def items_frame(seed: int, keyed: bool, strings: bool):
    """A random case's items (keyed: ``keyed_streams``, interleaved by time) as a frame
    ``key, id, x, ts``; ids (and keys) as text that is not an integer when ``strings``."""
    case = random_case(seed, max_items=90)
    while len(case.items) < 30:         # enough lines for several ranges and a bad one deep in
        seed += 1000
        case = random_case(seed, max_items=90)
    streams = keyed_streams(case) if keyed else {0: case.items}
    rows = [(k, it.id, it.x, it.ts, n) for k, items in streams.items() for n, it in enumerate(items)]
    rows.sort(key=lambda r: (r[3], r[0], r[4]))
    frame = pd.DataFrame([r[:4] for r in rows], columns=["key", "id", "x", "ts"])
    if strings:
        frame["id"] = [f"u{i}" for i in frame["id"]]
        frame["key"] = [f"k{k}" for k in frame["key"]]
    return (frame if keyed else frame.drop(columns="key")), case


def write_items(path, frame: pd.DataFrame, crlf: bool = False, blank_every: int = 0,
                order=None, blank: str = " , ,") -> str:
    """``frame`` as CSV (header in ``order``) or JSON lines, by the file name; every
    ``blank_every`` records a blank line (in CSV ``blank``: a row of blank fields, with
    spaces the csv module reads them, else the plain split), ``\\r\\n`` ends."""
    order = list(order or frame.columns)
    end = "\r\n" if crlf else "\n"
    jsonl = str(path).endswith((".json", ".jsonl"))
    lines = [] if jsonl else [",".join(order)]
    for n, row in enumerate(frame[order].itertuples(index=False)):
        if blank_every and n % blank_every == blank_every - 1:
            lines.append("  " if jsonl else blank)
        values = [v.item() if isinstance(v, np.generic) else v for v in row]
        if jsonl:
            lines.append(json.dumps(dict(zip(order, values))))
        else:
            lines.append(",".join(repr(v) if isinstance(v, float) else str(v) for v in values))
    with open(path, "w", newline="") as f:
        f.write(end.join(lines) + end)
    return str(path)


def plain(frame: pd.DataFrame) -> list[tuple]:
    cols = [c for c in ("key", "window", "tau", "rank", "id", "score") if c in frame]
    frame = frame[cols].astype(object).where(frame[cols].notna(), None)
    return sorted(map(tuple, frame.itertuples(index=False)), key=repr)


def chunks_of(plan: TextItems, parts: int) -> dict:
    """Every range's ``read_chunk``, concatenated in file order."""
    cuts = plan.cuts(parts)
    got = [read_chunk(plan, a, b) for a, b in zip(cuts, cuts[1:])]
    out = {"x": np.concatenate([g["x"] for g in got]), "t": np.concatenate([g["t"] for g in got]),
           "id": np.concatenate([g["id"] for g in got]),
           "id_kind": combined_kind(g["id_kind"] for g in got)}
    if plan.keyed:
        out["key"] = np.concatenate([g["key"] for g in got])
        out["key_kind"] = combined_kind(g["key_kind"] for g in got)
    return out


# -- the tasks' parser against the driver's reader (no Spark) ------------------------------------
@pytest.mark.parametrize("name,blank", [("items.csv", " , ,"), ("items.csv", ",,"),
                                        ("items.csv", ""), ("items.jsonl", "")])
@pytest.mark.parametrize("keyed,strings", [(False, False), (True, False), (True, True)])
def test_ranges_parse_as_the_driver_reads(tmp_path, name, blank, keyed, strings):
    """Rows of blank fields with spaces go through the csv module, without them through
    the plain split (``_plain_rows``); both as the reader reads them."""
    frame, _ = items_frame(4, keyed, strings)
    order = ["ts", "x", "id"] + (["key"] if keyed else [])
    path = write_items(tmp_path / name, frame, crlf=True, blank_every=7, order=order,
                       blank=blank if keyed else blank + ",")   # any width: skipped
    want = read_items(path).frame
    plan = plan_text_items(path)
    assert isinstance(plan, TextItems) and plan.keyed == keyed
    for parts in range(1, 6):
        got = chunks_of(plan, parts)
        assert got["id_kind"] == ("string" if strings else "long")
        assert got["id"].tolist() == want["id"].tolist()
        assert got["x"].tolist() == want["x"].tolist() and got["t"].tolist() == want["t"].tolist()
        if keyed:
            assert got["key"].tolist() == want["key"].tolist()


def test_csv_values_as_the_driver_parses_them(tmp_path):
    """Spellings ``int()``/``float()`` take (spaces, signs, zero padding, exponents), and ids
    that spell ints in one range and not in another: the ranges' verdicts then differ."""
    path = tmp_path / "items.csv"
    path.write_text("x , id,ts\n 1e0,007,+5\n2.50,7 , 6\n\n-0,  -3,0007\n")
    want = read_items(str(path)).frame
    got = parse_chunk(plan_text_items(str(path)), path.read_bytes()[len(b"x , id,ts\n"):])
    assert got["id_kind"] == "int" and got["id"].tolist() == want["id"].tolist() == [7, 7, -3]
    assert got["x"].tolist() == want["x"].tolist() and got["t"].tolist() == [5, 6, 7]
    path.write_text("\n , ,\n\nid,x,ts\n\n1,2,3\n4,5,6\n")      # blank lines before the header
    plan = plan_text_items(str(path))
    assert plan.start == len("\n , ,\n\nid,x,ts\n") and plan.columns == (0, 1, 2)
    assert read_chunk(plan, plan.start, plan.size)["t"].tolist() == [3, 6]
    plain_text = "x,id,ts\r\n1e0,007,+5\r\n,,\r\n2.50,7,6\r\n\r\n-0,-3,0007\r\n1_0,3,1_1"
    path.write_bytes(plain_text.encode())
    want = read_items(str(path)).frame
    got = parse_chunk(plan_text_items(str(path)), plain_text.encode()[len(b"x,id,ts\r\n"):])
    assert got["id"].tolist() == want["id"].tolist() == [7, 7, -3, 3]
    assert got["x"].tolist() == want["x"].tolist() and got["t"].tolist() == want["t"].tolist()
    assert combined_kind(["int", "none", "int"]) == "long"
    assert combined_kind(["string", "string"]) == "string"
    assert combined_kind(["int", "string"]) is None      # the driver's reader decides


@pytest.mark.parametrize("text,why", [
    ('id,x,ts\n1,"1",2\n', "a quote: a quoted field may hold a newline"),
    ("id,x,ts\r1,1,2\r", "lone CR line ends in the head"),
    ("id,x\n1,1\n", "a column missing: the driver's reader names it"),
    ("id,x,ts,id\n1,1,2,3\n", "a needed column twice"),
    ("id,x,ts\n1,one,2\n", "a bad first record: the driver names it before Spark"),
    ("id,x,ts\n1,nan,2\n", "the spec rejects the first record"),
    ("id,x,ts\n1,1,2,3\n", "a row of the wrong width"),
    ("id,x,ts\n", "no record"),
    ("id,x,ts\n1,1,2", "the first record without its line end"),
])
def test_csv_inputs_the_driver_must_read_are_not_planned(tmp_path, text, why):
    path = tmp_path / "items.csv"
    path.write_bytes(text.encode())
    assert plan_text_items(str(path)) is None, why


@pytest.mark.parametrize("text,why", [
    ('[1, 2, 3]\n', "not an object"),
    ('{"id": 1, "x": 1}\n', "ts missing"),
    ('{"id": true, "x": 1, "ts": 2}\n', "a bool id"),
    ('{"id": 1, "x": 1, "ts": 2.0}\n', "a float time: the driver's frame reads every ts as float"),
    ('{"id": 1, "x": "1", "ts": 2}\n', "x as text: the driver parses it"),
    ('{"id": 1, "x": 1, "ts": 20}\n', "before --origin 30"),
    ('{"id": 1, "x": 1, "ts": 2\n', "not JSON"),
])
def test_json_inputs_the_driver_must_read_are_not_planned(tmp_path, text, why):
    path = tmp_path / "items.jsonl"
    path.write_text(text)
    assert plan_text_items(str(path), origin=30) is None, why


def test_small_files_and_bad_first_lines_are_read_on_the_driver(tmp_path):
    import streamspec.pipeline.io.topkjoin_text as text
    path = tmp_path / "items.csv"
    path.write_text("id,x,ts\n" + "".join(f"{i},1,{i}\n" for i in range(20)))
    assert plan_text_items(str(path), small=path.stat().st_size + 1) is None
    assert isinstance(plan_text_items(str(path)), TextItems)
    lines = path.read_text().split("\n")
    lines[text.HEAD_LINES - 1] = "7,1,0"            # late, within the lines checked first
    path.write_text("\n".join(lines))
    assert plan_text_items(str(path)) is None
    lines[text.HEAD_LINES - 1], lines[text.HEAD_LINES] = f"{text.HEAD_LINES},1,99", "7,1,0"
    path.write_text("\n".join(lines))
    assert isinstance(plan_text_items(str(path)), TextItems)     # the task's to find


def test_parquet_and_missing_inputs_are_not_text(tmp_path):
    assert plan_text_items(str(tmp_path / "none.csv")) is None
    assert plan_text_items(str(tmp_path / "items.parquet")) is None
    assert plan_text_items(str(tmp_path)) is None


# -- Spark: the rows of the text path ------------------------------------------------------------
def _driver_rows(spark, plan, engine_cls, partitions):
    stream = read_items(plan.args.input, plan.args.origin)
    params = job.build_params(plan.args, stream, plan.remote)
    return plain(job.replay_stream(spark, stream, engine_cls, params, partitions).toPandas()), params


def _engine_rows(engine_cls, params, stream: ItemStream) -> list[tuple]:
    parts = []
    for key, group in stream.frame.groupby("key", sort=False):
        rows = job.run_stream(engine_cls, params, group)
        if stream.keyed:
            rows.insert(0, "key", key)
        parts.append(rows)
    return plain(pd.concat(parts, ignore_index=True))


@pytest.mark.spark
@pytest.mark.parametrize("name,keyed,strings,partitions,engine", [
    ("items.csv", False, False, 1, "at-tsm"),
    ("items.csv", True, False, 2, "at-bsm"),
    ("items.csv", True, True, 3, "wsj-rnd"),
    ("items.csv", False, True, 5, "oracle"),
    ("items.jsonl", False, False, 2, "topkn"),
    ("items.jsonl", True, False, 4, "at-tsm"),
    ("items.jsonl", True, True, 1, "oracle"),
    ("items.json", False, True, 3, "at-asm"),
])
def test_text_replay_equals_the_driver_and_the_engine(spark, tmp_path, name, keyed, strings,
                                                      partitions, engine):
    """Blank lines, CRLF ends, the header's columns in another order: the tasks' rows and
    default stream range equal the driver path's, and the engine's run in this process."""
    frame, case = items_frame(partitions * 7 + keyed, keyed, strings)
    remote = timeline(tmp_path, case)
    order = (["key"] if keyed else []) + ["x", "ts", "id"]
    path = write_items(tmp_path / name, frame, crlf=partitions % 2 == 1, blank_every=5,
                       order=order)
    engine_cls = Registry.get("topkjoin", engine)
    plan = job.prepare(build_parser().parse_args(argv(path, remote, case)))
    assert isinstance(plan.stream, TextItems) and plan.params is None
    got = plain(job.replay(spark, plan, engine_cls, partitions).toPandas())
    assert isinstance(plan.stream, TextItems), "the tasks took the file (no fallback)"
    want, params = _driver_rows(spark, plan, engine_cls, partitions)
    assert plan.params.stream_range == params.stream_range
    assert job.item_count(plan.stream, plan.columnar) == len(frame)
    assert got == want and len(got) >= 1
    assert got == _engine_rows(engine_cls, params, read_items(path, plan.args.origin))
    if keyed:       # the replay pass with the range given (the second replay of --oracle)
        assert plain(job.replay(spark, plan, engine_cls, partitions).toPandas()) == want


@pytest.mark.spark
def test_stream_range_given_and_lone_cr_in_the_body(spark, tmp_path):
    frame, case = items_frame(11, True, False)
    remote = timeline(tmp_path, case)
    path = write_items(tmp_path / "items.jsonl", frame)
    text = open(path, "rb").read()
    cut = len(text) // 2
    cut = text.index(b"\n", cut)
    open(path, "wb").write(text[:cut] + b"\r" + text[cut + 1:])     # one lone CR, far in
    engine_cls = Registry.get("topkjoin", "at-tsm")
    for extra in ((), ("--stream-range", "0,7")):
        plan = job.prepare(build_parser().parse_args(argv(path, remote, case, *extra)))
        assert isinstance(plan.stream, TextItems)
        got = plain(job.replay(spark, plan, engine_cls, 3).toPandas())
        assert isinstance(plan.stream, TextItems)
        assert got == _driver_rows(spark, plan, engine_cls, 3)[0]


@pytest.mark.spark
@pytest.mark.parametrize("keyed", [True, False])
def test_a_range_of_blank_lines_only(spark, tmp_path, keyed):
    """A file ending in a long run of blank lines: the last ranges hold no record."""
    frame, case = items_frame(12, keyed, True)
    remote = timeline(tmp_path, case)
    path = write_items(tmp_path / "items.csv", frame)
    with open(path, "a") as f:
        f.write("\n" * (3 * len(frame) * 8))
    engine_cls = Registry.get("topkjoin", "at-tsm")
    plan = job.prepare(build_parser().parse_args(argv(path, remote, case)))
    cuts = plan.stream.cuts(4)
    assert [read_chunk(plan.stream, a, b)["id_kind"] for a, b in zip(cuts, cuts[1:])][-1] == "none"
    got = plain(job.replay(spark, plan, engine_cls, 4).toPandas())
    assert isinstance(plan.stream, TextItems)
    assert got == _driver_rows(spark, plan, engine_cls, 4)[0]


@pytest.mark.spark
@pytest.mark.parametrize("what,keyed", [("quote", False), ("mixed ids", False),
                                        ("mixed ids", True), ("json ts text", True)])
def test_inputs_the_tasks_decline_go_to_the_driver(spark, tmp_path, what, keyed):
    """A quote deep in a CSV file, ids that spell ints in the first ranges but not in the
    last, a JSON ``ts`` as text (the driver parses it): the driver's reader takes the input,
    with the same rows as its own path."""
    frame, case = items_frame(6, keyed, False)
    remote = timeline(tmp_path, case)
    name = "items.jsonl" if what == "json ts text" else "items.csv"
    frame = frame.astype({"id": object, "ts": object})
    n = len(frame) - 2
    if what == "quote":
        frame.loc[n, "id"] = f'"{frame.loc[n, "id"]}"'     # a quoted id: the same id
    elif what == "mixed ids":
        frame.loc[n, "id"] = "u1"
    else:
        frame.loc[n, "ts"] = str(frame.loc[n, "ts"])
    path = write_items(tmp_path / name, frame)
    engine_cls = Registry.get("topkjoin", "at-tsm")
    plan = job.prepare(build_parser().parse_args(argv(path, remote, case)))
    assert isinstance(plan.stream, TextItems)
    got = plain(job.replay(spark, plan, engine_cls, 3).toPandas())
    assert isinstance(plan.stream, ItemStream)           # read again on the driver
    assert got == _driver_rows(spark, plan, engine_cls, 3)[0]


def _reader_error(path: str, origin=None) -> str:
    with pytest.raises(RecordError) as err:
        read_items(path, origin)
    return str(err.value)


@pytest.mark.spark
@pytest.mark.parametrize("name,keyed,where,bad,extra", [
    ("items.csv", False, -3, {"ts": 0}, ()),                   # late
    ("items.csv", True, -5, {"x": "one"}, ()),                 # not a number
    ("items.csv", False, -4, {"x": "inf"}, ("--stream-range", "0,5")),   # the spec rejects it
    ("items.csv", True, -2, {"id": "99999999999999999999999"}, ()),     # beyond 64 bits
    ("items.csv", False, -6, {"extra": True}, ()),             # a row of the wrong width
    ("items.jsonl", True, -3, {"ts": 0}, ()),                  # late, in one key
    ("items.jsonl", False, -4, {"json": "{not json"}, ()),
    ("items.jsonl", False, -2, {"x": float("nan")}, ()),
])
def test_bad_lines_deep_in_the_file_exit_2_at_the_readers_line(spark, tmp_path, capsys, name,
                                                               keyed, where, bad, extra):
    frame, case = items_frame(9, keyed, False)
    remote = timeline(tmp_path, case)
    frame = frame.astype(object)
    row = len(frame) + where
    path = write_items(tmp_path / name, frame)
    lines = open(path).read().split("\n")
    line = row + (1 if name.endswith(".csv") else 0)      # the header
    if "json" in bad:
        lines[line] = bad["json"]
    elif "extra" in bad:
        lines[line] += ",1"
    else:
        for column, value in bad.items():
            frame.loc[row, column] = value
        values = {k: (v.item() if isinstance(v, np.generic) else v)
                  for k, v in frame.iloc[row].items()}
        lines[line] = (",".join(str(v) for v in values.values()) if name.endswith(".csv")
                       else json.dumps(values))
    open(path, "w").write("\n".join(lines))
    message = _reader_error(path, case.params.t0)
    assert f"{path}:{line + 1}:" in message
    assert isinstance(plan_text_items(path, case.params.t0), TextItems)   # the first line is fine
    out = tmp_path / "out"
    args = argv(path, remote, case, *extra)
    args[args.index("--output") + 1] = str(out)
    assert main(args + ["--partitions", "3"]) == 2
    assert message in capsys.readouterr().err and not out.exists()


@pytest.mark.spark
@pytest.mark.parametrize("keyed", [True, False])
def test_streamspec_run_with_oracle_through_the_text_path(spark, tmp_path, capsys, keyed):
    """The CLI end to end (``--oracle`` replays the plan a second time, with the range the
    first replay found): the output and the summary equal those of the driver's path."""
    import streamspec.pipeline.io.topkjoin_text as text
    frame, case = items_frame(15, keyed, False)
    remote = timeline(tmp_path, case)
    path = write_items(tmp_path / "items.jsonl", frame)
    outputs, printed = [], []
    for small in (0, 1 << 40):                  # the text path, then the driver's reader
        text.SMALL = small
        out = tmp_path / f"out-{small}"
        args = argv(path, remote, case, "--oracle", "--engine", "at-bsm", "--partitions", "3")
        args[args.index("--output") + 1] = str(out)
        assert main(args) == 0
        outputs.append(plain(pd.read_parquet(out)))
        printed.append([re.sub(r" to \S+ in [0-9.]+ s\.$", "", line)   # output path, time
                        for line in capsys.readouterr().out.splitlines()])
    assert outputs[0] == outputs[1] and printed[0] == printed[1] and len(printed[0]) == 3
    assert f"from {len(frame)} items" in printed[0][0]
