"""``streamspec run connectivity`` end to end, in a subprocess."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from streamspec.pipeline.io.edges import load_text_edges, read_queries
from streamspec.reference.connectivity import OracleEngine
from streamspec.spec.connectivity import EdgeBatch, Params

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "pipeline" / "data"
EDGES, QUERIES = str(SAMPLE / "connectivity-edges.txt"), str(SAMPLE / "connectivity-queries.txt")


def streamspec(*argv, timeout=900):
    return subprocess.run([sys.executable, "-m", "streamspec.pipeline.cli", *argv], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def run_args(edges, output, *extra, window="500", queries=QUERIES):
    return ["run", "connectivity", "--input", edges, "--window", window, "--slide", "100",
            "--queries", queries, "--output", output, *extra]


@pytest.mark.spark
def test_sample_run_matches_the_oracle_and_refuses_to_overwrite(tmp_path):
    out = str(tmp_path / "connectivity")
    done = streamspec(*run_args(EDGES, out, "--engine", "rwc", "--partitions", "3"))
    assert done.returncode == 0, done.stderr
    # Spark's own start-up banners stay out of the user's terminal (pipeline.spark's log4j2)
    assert "Setting default log level" not in done.stderr and "INFO" not in done.stderr
    assert "connectivity: wrote 85 windows from 3000 edges (r=500, s=100, 9 queries, engine rwc) " \
        f"to {out} in " in done.stdout
    assert "Q6 (7, 7)" in done.stdout
    table = pq.read_table(out).sort_by("window").to_pylist()
    frame, _ = load_text_edges(EDGES)
    params = Params(500, 100, [tuple(int(x) for x in q) for q in read_queries(QUERIES)])
    engine = OracleEngine(params)
    batch = EdgeBatch(frame["u"].to_numpy(), frame["v"].to_numpy(), frame["t"].to_numpy())
    want = list(engine.process(batch)) + engine.flush()
    assert [(r["window"], r["start"], r["end"], tuple(r["answers"])) for r in table] == \
        [(w.index, w.start, w.end, w.answers) for w in want]
    assert sorted(os.listdir(tmp_path)) == ["connectivity"]
    again = streamspec(*run_args(EDGES, out))
    assert again.returncode == 2 and "output exists (pass --overwrite" in again.stderr


def bad_input(tmp_path, text):
    path = tmp_path / "edges.txt"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("text, line, words", [
    ("# header\n1 2 0\n1 2\n", 3, "expected 3 fields"),
    ("1 2 0\n\n2 3 five\n", 3, "64-bit integer"),
    ("1 2 5\n2 3 7\n3 4 6\n", 3, "edge time 6 is earlier than 7"),
])
def test_bad_input_exits_2_naming_the_line_and_writes_nothing(tmp_path, text, line, words):
    edges = bad_input(tmp_path, text)
    out = str(tmp_path / "out")
    done = streamspec(*run_args(edges, out))
    assert done.returncode == 2
    assert f"{edges}:{line}: " in done.stderr and words in done.stderr
    assert not os.path.exists(out) and "Traceback" not in done.stderr


@pytest.mark.parametrize("argv_change, words", [
    (("--window", "0"), "window size r must be > 0"),
    (("--window", "ten"), "argument --window/-r: expected an integer, got 'ten'"),
    (("--engine", "nope"), "no engine 'nope'"),
    (("--queries", "missing.txt"), "missing.txt: cannot read"),
    (("--partitions", "0"), "argument --partitions: must be > 0, got 0"),
])
def test_bad_arguments_exit_2(tmp_path, argv_change, words):
    argv = run_args(EDGES, str(tmp_path / "out"))
    if argv_change[0] in argv:
        argv[argv.index(argv_change[0]) + 1] = argv_change[1]
    else:
        argv += argv_change
    done = streamspec(*argv)
    assert done.returncode == 2 and words in done.stderr, done.stderr
    assert not os.path.exists(tmp_path / "out")
