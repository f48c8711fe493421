"""The restart check every problem's ``streamspec stream`` test runs (issue 11).

``restart_equals_batch(spark, tmp_path, problem, rows, argv)``: ``rows`` (dicts
in arrival order, each with a ``key``) are cut into four files; the CLI
streams the first two with ``--trigger-once`` and stops, the last two files
arrive, a second run restarts from the checkpoint, a third run finds nothing
new.  The output must equal one engine per key fed the key's rows in one
go, in-process (what ``streamspec run`` computes before its flush): nothing
lost, nothing repeated, events numbered on across the restart.
"""
from __future__ import annotations

import argparse
import json
import os

import pandas as pd

from streamspec.pipeline.cli import build_parser, main


def write_file(folder, name: str, rows: list[dict], arrival: int, fmt: str) -> None:
    path = folder / name
    if fmt == "json":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        pd.DataFrame(rows).to_parquet(path, index=False)
    # Spark's file source takes new files in modification-time order: make arrival explicit
    os.utime(path, (1_700_000_000 + arrival, 1_700_000_000 + arrival))


def batch_rows(adapter, args: argparse.Namespace, rows: list[dict]) -> pd.DataFrame:
    """Each key's rows through one engine in one go: the outputs as the stream writes them."""
    from streamspec.pipeline.job import engine_of

    engine_cls = engine_of(adapter, args)
    params = adapter.stream_params(args)
    frame = pd.DataFrame(rows)
    parts = []
    for key, group in frame.groupby("key", sort=True):
        engine = engine_cls(params)
        events = adapter.stream_events(group.drop(columns="key").reset_index(drop=True), params)
        out = adapter.stream_rows(list(engine.process(events)), 0)
        out.insert(0, "key", key)
        parts.append(out)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def canonical(frame: pd.DataFrame) -> list[tuple]:
    def plain(v):
        if v is pd.NA or v is pd.NaT or (isinstance(v, float) and v != v):
            return None
        if hasattr(v, "tolist"):
            v = v.tolist()
        return tuple(plain(x) for x in v) if isinstance(v, (list, tuple)) else v
    return sorted((tuple(plain(v) for v in row) for row in frame.itertuples(index=False)),
                  key=repr)


def restart_equals_batch(spark, tmp_path, problem: str, rows: list[dict], argv: list[str],
                         fmt: str = "json") -> pd.DataFrame:
    """The check of the module docstring; returns the streamed output (for extra checks)."""
    import importlib

    source, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    source.mkdir()
    cut = [len(rows) * q // 4 for q in range(5)]
    files = [rows[a:b] for a, b in zip(cut, cut[1:])]
    full = ["stream", problem, "--source", str(source), "--checkpoint", str(ckpt),
            "--output", str(out), "--format", fmt, "--trigger-once", *argv]
    for i in (0, 1):
        write_file(source, f"part-{i:04d}.{fmt}", files[i], 10 * i, fmt)
    assert main(full) == 0
    first = spark.read.parquet(str(out)).count() if out.exists() else 0
    for i in (2, 3):
        write_file(source, f"part-{i:04d}.{fmt}", files[i], 10 * i, fmt)
    assert main(full) == 0          # restarted: the engines come back from the state store
    assert main(full) == 0          # nothing new: nothing written
    got = spark.read.parquet(str(out)).toPandas()
    adapter = importlib.import_module(f"streamspec.pipeline.jobs.{problem}")
    want = batch_rows(adapter, build_parser().parse_args(full), rows)
    assert list(got.columns) == list(want.columns)
    assert canonical(got) == canonical(want)
    assert 0 < first < len(want), "the restart must fall mid-stream"
    return got
