"""``streamspec stream``: unusable flags and paths are typed errors, exit 2, before Spark
starts (no Java stack, nothing created: no checkpoint, no output directory)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

CLI = os.path.join(os.path.dirname(sys.executable), "streamspec")


def stream(tmp_path, *extra, source="in", checkpoint="ckpt", output="out", env=None):
    (tmp_path / "queries.txt").write_text("1 2\n")
    (tmp_path / "in").mkdir(exist_ok=True)
    args = [CLI, "stream", "connectivity", "--source", source, "--checkpoint", checkpoint,
            "--output", output, "--window", "10", "--slide", "5", "--queries", "queries.txt",
            "--trigger-once", *extra]
    environ = {k: v for k, v in os.environ.items() if k != "SPARK_MASTER"}
    environ.update(env or {})
    return subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=environ)


def assert_refused(done, tmp_path, message, before):
    assert done.returncode == 2, done.stderr
    assert message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "java" not in done.stderr.lower(), done.stderr
    assert sorted(os.listdir(tmp_path)) == before        # nothing created


@pytest.mark.parametrize("interval", ["-5", "nan", "inf", "0", "soon"])
def test_interval_must_be_a_finite_positive_number(tmp_path, interval):
    done = stream(tmp_path, "--interval", interval)
    assert_refused(done, tmp_path, "argument --interval", ["in", "queries.txt"])


def test_missing_source(tmp_path):
    done = stream(tmp_path, source="nowhere")
    assert_refused(done, tmp_path, "--source nowhere: no such directory", ["in", "queries.txt"])


def test_source_that_is_a_file(tmp_path):
    (tmp_path / "edges.json").write_text('{"u": 1, "v": 2, "t": 0}\n')
    done = stream(tmp_path, source="edges.json")
    assert_refused(done, tmp_path, "--source edges.json: is a file, not a directory",
                   ["edges.json", "in", "queries.txt"])


def test_checkpoint_that_is_a_file(tmp_path):
    (tmp_path / "ckfile").write_text("x")
    done = stream(tmp_path, checkpoint="ckfile")
    assert_refused(done, tmp_path, "--checkpoint ckfile: is a file, not a directory",
                   ["ckfile", "in", "queries.txt"])


@pytest.mark.parametrize("flag", ["checkpoint", "output"])
def test_path_under_a_file(tmp_path, flag):
    (tmp_path / "plain").write_text("x")
    done = stream(tmp_path, **{flag: "plain/sub"})
    assert_refused(done, tmp_path, f"--{flag} plain/sub: cannot create it: {tmp_path / 'plain'} "
                   "is a file, not a directory", ["in", "plain", "queries.txt"])


def test_output_inside_the_source(tmp_path):
    done = stream(tmp_path, output="in/out")
    assert_refused(done, tmp_path, "--output in/out and --source overlap", ["in", "queries.txt"])
    assert os.listdir(tmp_path / "in") == []


def test_bogus_spark_master_variable_is_typed_without_a_java_stack(tmp_path):
    done = stream(tmp_path, env={"SPARK_MASTER": "bogus://x"})
    assert_refused(done, tmp_path, "$SPARK_MASTER='bogus://x' is not a Spark master URL",
                   ["in", "queries.txt"])
    assert done.stderr.count("\n") == 1, done.stderr     # one line, nothing before it


def test_bogus_master_flag_is_refused_the_same_way(tmp_path):
    done = stream(tmp_path, "--master", "bogus://x")
    assert_refused(done, tmp_path, "is not a Spark master URL", ["in", "queries.txt"])
