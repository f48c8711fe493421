"""``streamspec stream``: micro-batches take the files by name, whatever their
modification times (``streamspec.pipeline.arrivals``).  Six files with equal
modification times and ``--files-per-batch``: Spark alone takes them in the order the
directory lists them, and a later-named file in an earlier micro-batch makes a spurious
"earlier than" rejection (issue 30)."""
from __future__ import annotations

import json
import os

import pytest

import streamspec.pipeline.jobs.connectivity as adapter
from streamspec.pipeline.arrivals import Arrivals
from streamspec.pipeline.cli import build_parser, main

from .streamcheck import batch_rows, canonical

pytestmark = pytest.mark.spark


def write(folder, name, rows, mtime):
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    os.utime(path, (mtime, mtime))


def test_equal_mtimes_and_files_per_batch_replay_in_name_order(spark, tmp_path):
    source, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    source.mkdir()
    # a path graph growing by one edge per time unit, one file per 5 edges; names in
    # arrival order, written in reverse order, all with the same modification time
    edges = [{"u": i, "v": i + 1, "t": i, "key": "a"} for i in range(30)]
    for f in reversed(range(6)):
        write(source, f"part-{f:04d}.json", edges[5 * f:5 * f + 5], 1_700_000_000)
    queries = tmp_path / "queries.txt"
    queries.write_text("0 5\n0 29\n")
    argv = ["stream", "connectivity", "--source", str(source), "--format", "json",
            "--checkpoint", str(ckpt), "--output", str(out), "--trigger-once",
            "--files-per-batch", "2", "--window", "8", "--slide", "4", "--queries", str(queries)]
    assert main(argv) == 0
    logged = [os.path.basename(e["path"]) for e in Arrivals(str(source), str(ckpt)).entries()]
    assert logged == [f"part-{f:04d}.json" for f in range(6)]
    got = spark.read.parquet(str(out)).toPandas()
    # exactly one engine fed the 30 edges in name order, in-process
    assert len(got) > 0
    assert canonical(got) == canonical(batch_rows(adapter, build_parser().parse_args(argv), edges))

    # more files arrive, again with one equal time, one of them named before the last
    # one taken: taken next, by name, after what was already taken; a restart goes on
    more = [{"u": i, "v": i + 1, "t": i, "key": "a"} for i in range(30, 40)]
    write(source, "part-0007.json", more[5:], 1_600_000_000)
    write(source, "part-0006.json", more[:5], 1_600_000_000)
    assert main(argv) == 0
    logged = [os.path.basename(e["path"]) for e in Arrivals(str(source), str(ckpt)).entries()]
    assert logged == [f"part-{f:04d}.json" for f in range(8)]
    again = spark.read.parquet(str(out)).toPandas()
    assert len(again) > len(got)
    assert canonical(again) == canonical(batch_rows(adapter, build_parser().parse_args(argv),
                                                    edges + more))


def test_arrival_log_compacts_like_spark_and_keeps_every_file(tmp_path):
    source = tmp_path / "in"
    source.mkdir()
    log = Arrivals(str(source), str(tmp_path / "ckpt"))
    for i in range(23):     # one log batch per file: batches 9 and 19 are compactions
        write(source, f"f-{i:03d}.json", [{"u": 1, "v": 2, "t": i}], 1_700_000_000)
        assert log.update() == 1
    assert log.update() == 0
    names = sorted(os.listdir(log.log))
    assert "9.compact" in names and "19.compact" in names and "22" in names
    entries = log.entries()
    assert [os.path.basename(e["path"]) for e in entries] == [f"f-{i:03d}.json" for i in range(23)]
    assert [e["modificationTime"] for e in entries] == list(range(1, 24))
    assert all(os.path.islink(os.path.join(log.dir, f"f-{i:03d}.json")) for i in range(23))
