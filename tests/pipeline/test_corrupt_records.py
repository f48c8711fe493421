"""A generator of corrupt records per input format (issue 30), for the readers of
``streamspec run`` (``streamspec.pipeline.io``) and of ``streamspec stream``'s located
rejections (``streamspec.pipeline.stream_check``), without Spark.

Each example writes a good file of a few records, corrupts one record (a line picked by
hypothesis) in a way drawn from the format's list of faults, and calls the reader: it must
raise a typed error (``StreamspecError``) naming ``file:line`` of the corrupted record, and
an uncorrupted file must read whole.  Parquet is binary: its faults are a column of the
wrong type (named by file and column) and a file that is not Parquet at all.
"""
from __future__ import annotations

import json

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamspec.pipeline.io import csv_table, json_objects
from streamspec.pipeline.io.edges import check_parquet_edges, load_text_edges
from streamspec.pipeline.stream_check import check_file
from streamspec.spec.errors import StreamspecError

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture],
                    max_examples=min(settings().max_examples, 60))
SCHEMA = "u long, v long, t long, key string"

# faults of one record: (name, text of the record from its good fields u, v, t)
SNAP_FAULTS = {
    "a word for the time": lambda u, v, t: f"{u} {v} soon",
    "a time beyond 64 bits": lambda u, v, t: f"{u} {v} {2**64 + t}",
    "a missing field": lambda u, v, t: f"{u} {v}",
    "a field too many": lambda u, v, t: f"{u} {v} {t} 9",
    "a NUL in an id": lambda u, v, t: f"{u}\x00 {v} {t}",
    "a float time": lambda u, v, t: f"{u} {v} {t}.5",
}
CSV_FAULTS = {
    "a missing field": lambda u, v, t: f"{u},{v}",
    "a field too many": lambda u, v, t: f"{u},{v},{t},9",
    "an unterminated quote": lambda u, v, t: f'{u},"{v},{t}',
    "a NUL": lambda u, v, t: f"{u},{v}\x00,{t}",
}
JSON_FAULTS = {
    "truncated JSON": lambda u, v, t: json.dumps({"u": u, "v": v, "t": t})[:-3],
    "an array": lambda u, v, t: json.dumps([u, v, t]),
    "a bare number": lambda u, v, t: str(t),
    "nested too deep": lambda u, v, t: "[" * 100_000 + "]" * 100_000,
}
# faults Spark's stream reader refuses, which ``stream_check`` names (JSON and CSV)
STREAM_JSON_FAULTS = {
    **JSON_FAULTS,
    "a string time": lambda u, v, t: json.dumps({"u": u, "v": v, "t": "soon"}),
    "a float time": lambda u, v, t: json.dumps({"u": u, "v": v, "t": t + 0.5}),
    "a time beyond 64 bits": lambda u, v, t: json.dumps({"u": u, "v": v, "t": 2**64 + t}),
    "1e30": lambda u, v, t: f'{{"u": {u}, "v": {v}, "t": 1e30}}',
    "an array id": lambda u, v, t: json.dumps({"u": [u], "v": v, "t": t}),
}
STREAM_CSV_FAULTS = {**CSV_FAULTS, "a word for the time": lambda u, v, t: f"{u},{v},soon"}
INVALID_UTF8 = b"\xff\xfe"


@st.composite
def corrupted(draw, faults: dict, header: str | None, render):
    """``(file bytes, 1-based line of the fault)``: a few good records (header first when
    given), one of them replaced by a fault, or by invalid UTF-8 inside the record."""
    n = draw(st.integers(1, 6), label="records")
    records = [render(i, i + 1, 10 * i) for i in range(n)]
    k = draw(st.integers(0, n - 1), label="corrupted record")
    fault = draw(st.sampled_from(sorted(faults) + ["invalid UTF-8"]), label="fault")
    lines = [line.encode() for line in ([header] if header else []) + records]
    line = k + (2 if header else 1)
    if fault == "invalid UTF-8":
        good = lines[line - 1]
        cut = draw(st.integers(1, len(good)), label="byte")
        lines[line - 1] = good[:cut] + INVALID_UTF8 + good[cut:]
    else:
        lines[line - 1] = faults[fault](k, k + 1, 10 * k).encode()
    return b"".join(x + b"\n" for x in lines), line, fault


def expect_at(read, path, line: int) -> None:
    with pytest.raises(StreamspecError) as caught:
        read(str(path))
    message = str(caught.value)
    assert f"{path.name}:{line}:" in message or f"{path}:{line}:" in message, message
    assert "Traceback" not in message


def snap(u, v, t):
    return f"{u} {v} {t}"


def csv_row(u, v, t):
    return f"{u},{v},{t}"


def json_row(u, v, t):
    return json.dumps({"u": u, "v": v, "t": t})


def read_json_lines(path):
    return list(json_objects(path))


def check_stream_json(path):
    return check_file(path, "json", SCHEMA)


def check_stream_csv(path):
    # a stream's CSV header must be its schema's columns in order: the records' u,v,t
    return check_file(path, "csv", SCHEMA.removesuffix(", key string"))


# (file name, header, record, its faults, reader): every text reader under test
READERS = [
    ("edges.txt", None, snap, SNAP_FAULTS, load_text_edges),
    ("rows.csv", "u,v,t", csv_row, CSV_FAULTS, csv_table),
    ("rows.json", None, json_row, JSON_FAULTS, read_json_lines),
    ("part-0001.json", None, json_row, STREAM_JSON_FAULTS, check_stream_json),
    ("part-0001.csv", "u,v,t", csv_row, STREAM_CSV_FAULTS, check_stream_csv),
]
READER_IDS = [f"{name}-{read.__name__}" for name, *_, read in READERS]


@pytest.mark.parametrize("name,header,render,faults,read", READERS, ids=READER_IDS)
@SETTINGS
@given(data=st.data())
def test_a_corrupt_record_is_named_at_its_line(tmp_path, data, name, header, render, faults,
                                               read):
    content, line, _ = data.draw(corrupted(faults, header, render))
    path = tmp_path / name
    path.write_bytes(content)
    expect_at(read, path, line)


@pytest.mark.parametrize("name,header,render,faults,read", READERS, ids=READER_IDS)
def test_the_uncorrupted_files_read_whole(tmp_path, name, header, render, faults, read):
    path = tmp_path / "good.txt"
    path.write_text("".join(f"{x}\n" for x in ([header] if header else [])
                            + [render(i, i + 1, 10 * i) for i in range(5)]))
    got = read(str(path))
    if isinstance(got, tuple):      # load_text_edges, csv_table: a frame first
        assert len(got[0]) == 5
    elif isinstance(got, list):
        assert len(got) == 5


@SETTINGS
@given(column=st.sampled_from(["u", "v", "t"]),
       kind=st.sampled_from(["words", "floats", "bools"]))
def test_a_parquet_column_of_the_wrong_type_is_named(tmp_path, column, kind):
    frame = pd.DataFrame({"u": [1, 2], "v": [2, 3], "t": [1, 2]})
    frame[column] = {"words": ["a", "b"], "floats": [1.5, 2.5], "bools": [True, False]}[kind]
    path = tmp_path / "edges.parquet"
    frame.to_parquet(path)
    if column == "t" or kind != "words":     # ids may be strings in `streamspec run`
        with pytest.raises(StreamspecError, match=rf"edges.parquet.*\b{column}\b"):
            check_parquet_edges(str(path))
    with pytest.raises(StreamspecError, match=rf"edges.parquet: column {column}"):
        check_file(str(path), "parquet", SCHEMA)     # the stream's schema: longs


def test_a_file_that_is_not_parquet_is_named(tmp_path):
    path = tmp_path / "part-0001.parquet"
    path.write_bytes(b"u,v,t\n1,2,3\n")
    with pytest.raises(StreamspecError, match="part-0001.parquet: not a Parquet file"):
        check_file(str(path), "parquet", SCHEMA)
