"""Reliable materialisation and ``--checkpoint-dir`` (issue 29).

``spark.materialise`` keeps a job's computed rows with ``localCheckpoint`` in local
mode and with a reliable checkpoint on the job's ``--checkpoint-dir`` on a cluster;
the directory is resolved on the driver like the other path flags, removed when the job
ends (done or failed), and one a killed run left beside the output is removed by the
next run.  ``STREAMSPEC_MATERIALISE=reliable`` takes the cluster's path in local mode
(as the measurement does): the Spark tests below run it.  The cluster lane
(``tests/cluster``) runs every job with the reliable path by default.
"""
from __future__ import annotations

import argparse
import os
import re
import types

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from streamspec.pipeline import flags
from streamspec.pipeline import spark as spark_mod
from streamspec.pipeline.cli import main
from streamspec.pipeline.io import checkpoint_dir_beside, recover_output
from streamspec.spec.errors import PathError

LEFT = re.compile(r"\.out\.checkpoints-[0-9a-f]+")


def _session(master: str):
    """As much of a SparkSession as ``reliable_checkpoints`` reads."""
    return types.SimpleNamespace(sparkContext=types.SimpleNamespace(master=master))


class _Frame:
    """A DataFrame stand-in that records which checkpoint it was asked for."""

    def __init__(self, master):
        self.sparkSession = _session(master)
        self.calls = []

    def localCheckpoint(self, eager=True):
        self.calls.append(("localCheckpoint", eager))
        return self

    def checkpoint(self, eager=True):
        self.calls.append(("checkpoint", eager))
        return self


@pytest.mark.parametrize("master, expected", [
    ("local", "localCheckpoint"), ("local[2]", "localCheckpoint"), ("local[*]", "localCheckpoint"),
    ("spark://127.0.0.1:7077", "checkpoint"), ("yarn", "checkpoint"),
    ("k8s://https://api:6443", "checkpoint"),
])
def test_materialise_keeps_local_checkpoints_in_local_mode_only(master, expected, monkeypatch):
    monkeypatch.delenv(spark_mod.MATERIALISE_ENV, raising=False)
    frame = _Frame(master)
    assert spark_mod.materialise(frame) is frame
    assert spark_mod.materialise(frame, eager=False) is frame
    assert frame.calls == [(expected, True), (expected, False)]


@pytest.mark.parametrize("forced, master, expected", [
    ("reliable", "local[2]", "checkpoint"), ("RELIABLE", "local[2]", "checkpoint"),
    ("local", "spark://h:7077", "localCheckpoint"), ("", "local[2]", "localCheckpoint"),
    ("nonsense", "spark://h:7077", "checkpoint"),
])
def test_the_environment_forces_one_kind_for_measurements(forced, master, expected, monkeypatch):
    monkeypatch.setenv(spark_mod.MATERIALISE_ENV, forced)
    frame = _Frame(master)
    spark_mod.materialise(frame)
    assert frame.calls == [(expected, True)]


def _run_parser():
    parser = argparse.ArgumentParser()
    flags.add_run_options(parser, unit="ranges")
    return parser


def test_the_flag_resolves_like_the_other_path_flags(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    parser = _run_parser()
    args = parser.parse_args(["--output", "out", "--checkpoint-dir", "ck/here"])
    flags.resolve_paths(args)
    assert args.checkpoint_dir == str(tmp_path / "ck" / "here")
    assert args.output == str(tmp_path / "out")
    args = parser.parse_args(["--output", "out", "--checkpoint-dir", "file:///shared/ck"])
    flags.resolve_paths(args)
    assert args.checkpoint_dir == "/shared/ck"
    args = parser.parse_args(["--output", "out", "--checkpoint-dir", "hdfs://nn:8020/ck"])
    flags.resolve_paths(args)
    assert args.checkpoint_dir == "hdfs://nn:8020/ck"      # Spark's file systems write it
    args = parser.parse_args(["--output", "out"])
    assert args.checkpoint_dir is None                     # the job's default, per run
    # the executors must be able to create it (checked on a cluster before any work)
    args = parser.parse_args(["--output", "out", "--checkpoint-dir", "ck"])
    flags.resolve_paths(args)
    assert ("--checkpoint-dir", str(tmp_path / "ck")) in flags.task_paths(args)[1]
    with pytest.raises(PathError, match="--checkpoint-dir file://elsewhere/ck"):
        flags.resolve_paths(parser.parse_args(["--output", "o", "--checkpoint-dir",
                                               "file://elsewhere/ck"]))


def test_demo_passes_the_flag_to_every_job(monkeypatch, capsys):
    from streamspec.pipeline import job
    seen = []
    monkeypatch.setattr(job, "run", lambda adapter, args: seen.append(
        (adapter.PROBLEM, args.output, args.checkpoint_dir)) or 0)
    assert main(["demo", "--output", "o", "--checkpoint-dir", "ck"]) == 0
    assert sorted(p for p, _, _ in seen) == ["connectivity", "kws", "simjoin", "topkjoin"]
    assert all(ck == "ck" and out == f"o/{p}" for p, out, ck in seen), seen
    seen.clear()
    assert main(["demo", "--output", "o"]) == 0
    assert seen and all(ck is None for _, _, ck in seen)   # each job's own default


def test_the_default_is_a_new_hidden_directory_beside_the_output():
    first, second = checkpoint_dir_beside("/data/runs/out"), checkpoint_dir_beside("/data/runs/out/")
    assert first != second
    for found in (first, second):
        head, name = found.rsplit("/", 1)
        assert head == "/data/runs" and LEFT.fullmatch(name), found
    uri = checkpoint_dir_beside("hdfs://nn:8020/jobs/out")
    assert uri.startswith("hdfs://nn:8020/jobs/.out.checkpoints-"), uri


def test_a_killed_runs_checkpoints_are_removed_by_the_next_run(tmp_path):
    stale = tmp_path / ".out.checkpoints-0123456789ab"
    (stale / "5d089c57-f5e6" / "rdd-17").mkdir(parents=True)
    (stale / "5d089c57-f5e6" / "rdd-17" / "part-00000").write_bytes(b"rows")
    other = tmp_path / ".other.checkpoints-0123456789ab"    # another output's: not ours
    other.mkdir()
    said = recover_output(str(tmp_path / "out"), err=open(os.devnull, "w"))
    assert said == [f"streamspec: {tmp_path / 'out'}: removed {stale.name} (Spark checkpoints "
                    "left by a killed run)"]
    assert not stale.exists() and other.exists()


def test_a_directory_that_cannot_be_created_is_a_path_error(tmp_path, monkeypatch):
    monkeypatch.setenv(spark_mod.MATERIALISE_ENV, "reliable")
    (tmp_path / "file").write_text("not a directory")
    with pytest.raises(PathError) as err:
        with spark_mod.checkpoint_dir(_session("local[2]"), str(tmp_path / "file" / "ck")):
            pass
    assert err.value.exit_code == 2
    assert f"--checkpoint-dir {tmp_path / 'file' / 'ck'}: cannot be created (" in str(err.value)


def test_nothing_is_created_when_local_checkpoints_keep_the_rows(tmp_path, monkeypatch):
    monkeypatch.delenv(spark_mod.MATERIALISE_ENV, raising=False)
    with spark_mod.checkpoint_dir(_session("local[2]"), str(tmp_path / "ck")) as used:
        assert used is None
    assert not (tmp_path / "ck").exists()


# -- the job, with the cluster's reliable checkpoints forced in local mode -----------------

def _connectivity(output, *extra):
    from streamspec.pipeline.jobs.connectivity import demo_argv
    argv = demo_argv(str(output))
    return ["run", "connectivity", *argv, "--master", "local[2]", "--no-progress", *extra]


@pytest.fixture
def removed(monkeypatch):
    """The directories the job removed, each checked to exist (with Spark's subdirectory
    of checkpoints in it) just before."""
    seen = []
    real = spark_mod._remove_dir

    def spy(spark, path):
        local = flags.local_of(path) if path else None
        seen.append((local, bool(local) and os.path.isdir(local) and bool(os.listdir(local))))
        real(spark, path)
    monkeypatch.setattr(spark_mod, "_remove_dir", spy)
    monkeypatch.setenv(spark_mod.MATERIALISE_ENV, "reliable")
    return seen


@pytest.mark.spark
def test_a_run_removes_its_checkpoints_and_a_killed_runs(spark, tmp_path, removed, capsys):
    stale = tmp_path / ".out.checkpoints-00000000abcd"
    (stale / "uuid" / "rdd-3").mkdir(parents=True)
    assert main(_connectivity(tmp_path / "out")) == 0
    assert pq.read_table(tmp_path / "out").num_rows > 0
    assert len(removed) == 1 and removed[0][1], removed     # created, used, then removed
    assert LEFT.fullmatch(os.path.basename(removed[0][0])) and \
        os.path.dirname(removed[0][0]) == str(tmp_path)
    assert f"removed {stale.name} (Spark checkpoints left by a killed run)" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["out"]

    # a directory the user names stays; only this run's own subdirectory goes
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "keep.txt").write_text("someone else's")
    assert main(_connectivity(tmp_path / "out", "--checkpoint-dir", str(shared))) == 0
    assert removed[1][0].startswith(f"{shared}/") and removed[1][1], removed
    assert sorted(os.listdir(shared)) == ["keep.txt"]


@pytest.mark.spark
def test_a_failed_run_removes_its_checkpoints(spark, tmp_path, removed, monkeypatch, capsys):
    # out of time order inside one row group: the range scan's tasks find it after the
    # checkpoint directory is in use; the validating reader then names the record (exit 2)
    pq.write_table(pa.table({"u": [1, 2, 3, 4], "v": [2, 3, 4, 5], "t": [1, 5, 3, 7]}),
                   tmp_path / "edges.parquet")
    (tmp_path / "q.txt").write_text("1 2\n")
    monkeypatch.chdir(tmp_path)
    argv = ["run", "connectivity", "--input", "edges.parquet", "--queries", "q.txt",
            "--window", "4", "--slide", "2", "--output", "out", "--checkpoint-dir", "ck",
            "--master", "local[2]", "--no-progress"]
    assert main(argv) == 2
    assert "streamspec: error:" in capsys.readouterr().err
    assert removed and removed[0][0] == str(tmp_path / "ck"), removed
    assert sorted(os.listdir(tmp_path)) == ["edges.parquet", "q.txt"]
