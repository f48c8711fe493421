"""Structured Streaming: engines in group state, restart from the checkpoint exactly once."""
from __future__ import annotations

import os
import random

import pytest

from streamspec.conformance.connectivity import random_case
from streamspec.pipeline.io import write_stream_parquet
from streamspec.pipeline.io.edges import read_edge_stream
from streamspec.pipeline.streaming import windows_stream
from streamspec.spec.registry import Registry

pytestmark = pytest.mark.spark


def drop_file(folder, name, rows, arrival):
    lines = ["u,v,t,key"] + [f"{e.u},{e.v},{e.t},{k}" for e, k in rows]
    (folder / name).write_text("\n".join(lines) + "\n")
    # the file source takes files in modification-time order: make arrival order explicit
    os.utime(folder / name, (1_700_000_000 + arrival, 1_700_000_000 + arrival))


def test_restart_from_checkpoint_loses_and_repeats_nothing(spark, tmp_path):
    # a case with int vertices (the CSV schema below) and enough edges for three files
    case = next(c for c in map(lambda s: random_case(s, max_edges=60), range(100))
                if len(c.edges) >= 20 and isinstance(c.edges[0].u, int) and c.params.workload)
    rng = random.Random(1)
    rows = [(e, rng.choice(["a", "b"])) for e in case.edges]
    source, out, checkpoint = tmp_path / "in", str(tmp_path / "out"), str(tmp_path / "ckpt")
    source.mkdir()
    engine_cls = Registry.get("connectivity", "bic")
    thirds = [rows[:len(rows) // 3], rows[len(rows) // 3:2 * len(rows) // 3], rows[2 * len(rows) // 3:]]

    def run_available():
        query = write_stream_parquet(
            windows_stream(read_edge_stream(spark, str(source)), engine_cls, case.params),
            out, checkpoint, available_now=True)
        query.awaitTermination()

    drop_file(source, "part-0.csv", thirds[0], 0)
    drop_file(source, "part-1.csv", thirds[1], 10)
    run_available()
    drop_file(source, "part-2.csv", thirds[2], 20)
    run_available()   # a new query on the same checkpoint: the engines come back from state
    run_available()   # nothing new: nothing written
    got = sorted((r.key, r.window, r.start, r.end, tuple(r.answers))
                 for r in spark.read.parquet(out).collect())
    want = []
    for key in ("a", "b"):
        engine = engine_cls(case.params)
        for w in engine.process([e for e, k in rows if k == key]):
            want.append((key, w.index, w.start, w.end, w.answers))
    assert got == sorted(want)
