"""Driver-side readers (no Spark): formats, the id rule, located errors, lateness."""
from __future__ import annotations

import numpy as np
import pytest

from streamspec.pipeline.io import OutputExists, id_column, text_records
from streamspec.pipeline.io.edges import load_text_edges, parse_edge_text, read_queries
from streamspec.spec.errors import MalformedRecord, OutOfOrder, StreamspecError


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_snap_text_with_comments_and_blank_lines(tmp_path):
    path = write(tmp_path, "g.txt", "# FromNodeId ToNodeId Time\n\n1 2 10\n  2\t3   10\n#x\n3 1 12\n")
    frame, dropped = load_text_edges(path)
    assert dropped == 0
    assert frame["u"].tolist() == [1, 2, 3] and frame["v"].tolist() == [2, 3, 1]
    assert frame["t"].tolist() == [10, 10, 12] and frame["seq"].tolist() == [0, 1, 2]
    assert frame["u"].dtype == np.int64


def test_csv_header_any_order_with_key(tmp_path):
    path = write(tmp_path, "g.csv", "t,key,u,v\n5,a,x,y\n6,b,y,z\n")
    frame = parse_edge_text(path)
    assert frame["u"].tolist() == ["x", "y"] and frame["key"].tolist() == ["a", "b"]
    assert frame["t"].tolist() == [5, 6] and frame["line"].tolist() == [2, 3]


def test_ids_are_strings_when_one_is_not_an_int(tmp_path):
    path = write(tmp_path, "g.txt", "1 2 0\n2 b 1\n")
    frame, _ = load_text_edges(path)
    assert frame["u"].tolist() == ["1", "2"] and frame["v"].tolist() == ["2", "b"]


def test_id_column_rule():
    assert id_column(["1", "-2", "007"]).tolist() == [1, -2, 7]
    assert id_column(["1", "a"]).tolist() == ["1", "a"]
    assert id_column(["99999999999999999999", "a"]).dtype == object    # text ids: any digits
    assert id_column([]).dtype == np.int64
    # integer ids beyond 64 bits are errors at their record, not silently text (7 vs 007)
    with pytest.raises(MalformedRecord, match=r"f:3: id '99999999999999999999' is an integer beyond 64"):
        id_column(["1", "99999999999999999999"], lambda i: f"f:{i + 2}")
    with pytest.raises(MalformedRecord, match=r"\(5000000 characters\)"):
        id_column(["1", "7" * 5_000_000])
    # a zero-padded spelling longer than any 64-bit number still is one (was a StopIteration)
    assert id_column(["0" * 24 + "7", "1"]).tolist() == [7, 1]


@pytest.mark.parametrize("text, line, words", [
    ("1 2 0\n1 2\n", 2, "expected 3 fields"),
    ("# c\n1 2 0\n\n1 2 x\n", 4, "64-bit integer"),
    ("1 2 0\n1 2 3 4\n", 2, "expected 3 fields"),
    ("u,v,t\n1,2,0\n1,,3\n", 3, "expected 3 fields"),
    ("1 2 1.5\n", 1, "64-bit integer"),
    ("1 2 99999999999999999999\n", 1, "64-bit integer"),
])
def test_malformed_lines_are_located(tmp_path, text, line, words):
    path = write(tmp_path, "bad.txt", text)
    with pytest.raises(MalformedRecord) as err:
        load_text_edges(path)
    assert err.value.location == f"{path}:{line}"
    assert str(err.value).startswith(f"{path}:{line}: ") and words in str(err.value)


def test_decreasing_time_is_located(tmp_path):
    path = write(tmp_path, "g.txt", "# h\n1 2 5\n2 3 7\n\n3 4 6\n")
    with pytest.raises(OutOfOrder) as err:
        load_text_edges(path)
    assert err.value.location == f"{path}:5" and "6 is earlier than 7" in str(err.value)


def test_keyed_order_is_per_key(tmp_path):
    path = write(tmp_path, "g.csv", "u,v,t,key\n1,2,5,a\n1,2,1,b\n1,2,6,a\n1,2,0,b\n")
    with pytest.raises(OutOfOrder) as err:
        load_text_edges(path)
    assert err.value.location == f"{path}:5" and "'b'" in str(err.value)


def test_drop_counts_late_edges_per_key(tmp_path):
    path = write(tmp_path, "g.csv", "u,v,t,key\n1,2,5,a\n1,2,1,b\n1,2,3,a\n1,2,2,b\n1,2,4,a\n1,2,9,a\n")
    frame, dropped = load_text_edges(path, lateness="drop")
    assert dropped == 2
    assert list(zip(frame["key"], frame["t"])) == [("a", 5), ("b", 1), ("b", 2), ("a", 9)]
    assert frame["seq"].tolist() == [0, 1, 2, 3]


def test_drop_keeps_edges_equal_to_the_running_max(tmp_path):
    path = write(tmp_path, "g.txt", "1 2 5\n1 2 3\n1 2 5\n1 2 4\n1 2 6\n")
    frame, dropped = load_text_edges(path, lateness="drop")
    assert dropped == 2 and frame["t"].tolist() == [5, 5, 6]


def test_edge_before_origin_is_an_error(tmp_path):
    path = write(tmp_path, "g.txt", "1 2 5\n1 2 6\n")
    with pytest.raises(OutOfOrder) as err:
        load_text_edges(path, origin=6)
    assert err.value.location == f"{path}:1" and "origin" in str(err.value)
    frame, _ = load_text_edges(path, origin=5)
    assert len(frame) == 2


def test_empty_and_comment_only_files(tmp_path):
    frame, dropped = load_text_edges(write(tmp_path, "e.txt", "# nothing\n\n"))
    assert len(frame) == 0 and dropped == 0


def test_queries_file(tmp_path):
    assert read_queries(write(tmp_path, "q.txt", "# q\n1 2\n\na,b\n")) == [("1", "2"), ("a", "b")]
    path = write(tmp_path, "bad.txt", "1 2\n3\n")
    with pytest.raises(MalformedRecord) as err:
        read_queries(path)
    assert err.value.location == f"{path}:2"


def test_missing_and_binary_inputs_are_streamspec_errors(tmp_path):
    with pytest.raises(StreamspecError, match="cannot read"):
        list(text_records(str(tmp_path / "nope.txt")))
    path = tmp_path / "bin.dat"
    path.write_bytes(b"\xff\xfe\x00\x01")
    with pytest.raises(StreamspecError, match="UTF-8"):
        list(text_records(str(path)))


def test_output_exists_is_a_streamspec_error():
    assert issubclass(OutputExists, StreamspecError)
