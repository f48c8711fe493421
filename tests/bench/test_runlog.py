"""bench/runlog.py: runs appended to one CSV per experiment, old cells kept verbatim."""
import csv

from streamspec.bench.runlog import append_rows


def read(path):
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        return reader.fieldnames, list(reader)


def test_append_keeps_old_rows_and_adds_labelled_runs(tmp_path):
    path = tmp_path / "exp.csv"
    path.write_text("label,machine,commit,p99_ms\nfinal7,,7791a2a-dirty,0.062474\n")
    append_rows(path, [{"commit": "abc", "p99_ms": 0.05, "gc": 0}], ["commit", "p99_ms"], "run1")
    append_rows(path, [{"commit": "def", "p99_ms": 0.0400}], ["commit", "p99_ms"], "run2")
    fields, rows = read(path)
    assert fields == ["label", "machine", "commit", "p99_ms", "gc"]
    assert [r["label"] for r in rows] == ["final7", "run1", "run2"]
    assert rows[0] == {"label": "final7", "machine": "", "commit": "7791a2a-dirty",
                       "p99_ms": "0.062474", "gc": ""}
    assert rows[1]["gc"] == "0" and rows[2]["gc"] == ""
    assert rows[1]["machine"] and rows[1]["machine"] == rows[2]["machine"]
    assert rows[2]["p99_ms"] == "0.04"


def test_append_creates_the_file(tmp_path):
    path = tmp_path / "sub" / "exp.csv"
    append_rows(path, [{"a": 1}, {"a": 2}], ["a"], "first")
    fields, rows = read(path)
    assert fields == ["label", "machine", "a"]
    assert [(r["label"], r["a"]) for r in rows] == [("first", "1"), ("first", "2")]
