"""``streamspec stream connectivity``: engines in group state, restart from the checkpoint
exactly once (the shared check: ``tests/pipeline/streamcheck.py``)."""
from __future__ import annotations

import random

import pytest

from streamspec.conformance.connectivity import random_case
from streamspec.pipeline.cli import main

from .streamcheck import restart_equals_batch, write_file

pytestmark = pytest.mark.spark


def edge_rows(seed: int, keys=("a", "b")):
    """A random case (ties, equal times, gaps longer than the window) spread over keys."""
    case = next(c for c in map(lambda s: random_case(s, max_edges=80), range(seed, seed + 200))
                if len(c.edges) >= 30 and isinstance(c.edges[0].u, int) and c.params.workload)
    rng = random.Random(seed)
    rows = [{"u": e.u, "v": e.v, "t": e.t, "key": rng.choice(keys)} for e in case.edges]
    return case, rows


def query_file(tmp_path, workload) -> str:
    path = tmp_path / "queries.txt"
    path.write_text("".join(f"{a} {b}\n" for a, b in workload))
    return str(path)


@pytest.mark.parametrize("fmt,engine", [("json", "bic"), ("parquet", "rwc")])
def test_restart_from_checkpoint_equals_the_batch_run(spark, tmp_path, fmt, engine):
    case, rows = edge_rows(3)
    argv = ["--window", str(case.params.r), "--slide", str(case.params.s),
            "--queries", query_file(tmp_path, case.params.workload), "--engine", engine,
            "--lateness", case.params.lateness]
    if case.params.t0 is not None:
        argv += ["--origin", str(case.params.t0)]
    got = restart_equals_batch(spark, tmp_path, "connectivity", rows, argv, fmt=fmt)
    assert set(got["key"]) == {"a", "b"}


def test_a_late_edge_stops_the_stream_with_the_specs_message(spark, tmp_path, capsys):
    source = tmp_path / "in"
    source.mkdir()
    write_file(source, "part-0000.json", [{"u": 1, "v": 2, "t": 10, "key": "a"},
                                         {"u": 2, "v": 3, "t": 5, "key": "a"}], 0, "json")
    queries = query_file(tmp_path, [(1, 3)])
    code = main(["stream", "connectivity", "--source", str(source), "--format", "json",
                 "--checkpoint", str(tmp_path / "ckpt"), "--output", str(tmp_path / "out"),
                 "--trigger-once", "--window", "4", "--slide", "2", "--queries", queries])
    assert code == 2
    assert "part-0000.json:2: edge time 5 is earlier than 10" in capsys.readouterr().err


def test_a_late_edge_in_a_later_micro_batch_is_located_in_its_own_file(spark, tmp_path, capsys):
    # the spec numbers records from the engine's first one; the location must still be the
    # second file's line, not a line counted across micro-batches
    source = tmp_path / "in"
    source.mkdir()
    write_file(source, "part-0000.json", [{"u": 1, "v": 2, "t": 10, "key": "a"},
                                         {"u": 2, "v": 3, "t": 11, "key": "a"}], 0, "json")
    write_file(source, "part-0001.json", [{"u": 3, "v": 4, "t": 12, "key": "a"},
                                         {"u": 4, "v": 5, "t": 5, "key": "a"}], 10, "json")
    queries = query_file(tmp_path, [(1, 3)])
    code = main(["stream", "connectivity", "--source", str(source), "--format", "json",
                 "--files-per-batch", "1", "--checkpoint", str(tmp_path / "ckpt"),
                 "--output", str(tmp_path / "out"), "--trigger-once", "--window", "4",
                 "--slide", "2", "--queries", queries])
    assert code == 2
    assert "part-0001.json:2: edge time 5 is earlier than 12" in capsys.readouterr().err


@pytest.mark.spark
def test_state_partitions_set_anywhere_are_left_alone(spark):
    """``streamspec.pipeline.streaming.state_partitions``: a value the session was built with
    (the tests' 2 here), or one given with ``--conf``, is never replaced by the default (the
    cluster lane checks the default itself: a new checkpoint of the 2-core cluster says 2)."""
    from streamspec.pipeline.streaming import SHUFFLE_PARTITIONS, state_partitions
    before = spark.conf.get(SHUFFLE_PARTITIONS)
    try:
        spark.conf.set(SHUFFLE_PARTITIONS, "7")
        state_partitions(spark, {SHUFFLE_PARTITIONS: "7"})
        assert spark.conf.get(SHUFFLE_PARTITIONS) == "7"
        state_partitions(spark, {})              # the session's builder set it
        assert spark.conf.get(SHUFFLE_PARTITIONS) == "7"
    finally:
        spark.conf.set(SHUFFLE_PARTITIONS, before)
