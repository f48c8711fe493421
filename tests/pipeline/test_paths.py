"""Path flags resolved on the driver, ``--conf``, the executors' Python (issue 29).

The cluster itself is exercised by ``tests/cluster``; these are the rules, without
a cluster.
"""
from __future__ import annotations

import argparse
import os

import pytest

from streamspec.pipeline import flags
from streamspec.pipeline.cli import main
from streamspec.pipeline.spark import executor_python, path_failure, spark_defaults
from streamspec.spec.errors import PathError


def test_relative_paths_and_file_uris_become_absolute_local_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert flags.local_path("edges.txt", "input") == str(tmp_path / "edges.txt")
    assert flags.local_path("../x/y.db", "remote") == str(tmp_path.parent / "x" / "y.db")
    for uri in ("file:///data/e.parquet", "file:/data/e.parquet", "file://localhost/data/e.parquet",
                "FILE:///data/e.parquet"):
        assert flags.local_path(uri, "input") == "/data/e.parquet", uri
    assert flags.local_path("file:///a%20b/c.txt", "input") == "/a b/c.txt"
    assert flags.local_path("file:rel/e.txt", "input") == str(tmp_path / "rel" / "e.txt")
    assert flags.local_path("weird:name.txt", "input") == str(tmp_path / "weird:name.txt")
    assert flags.local_path("", "output") == ""          # the flag's own check names it


@pytest.mark.parametrize("value, words", [
    ("hdfs://nn:8020/edges.parquet", ["--input", "hdfs://", "not supported", "file://"]),
    ("s3a://bucket/edges", ["--input", "s3a://", "not supported"]),
    ("file://otherhost/edges.txt", ["--input", "otherhost", "file:///path"]),
])
def test_schemes_streamspec_cannot_read_are_refused_by_name(value, words):
    with pytest.raises(PathError) as err:
        flags.local_path(value, "input")
    for word in words:
        assert word in str(err.value)
    assert err.value.exit_code == 2


def test_outputs_on_other_file_systems_go_to_spark_unchanged():
    assert flags.local_path("hdfs://nn/out", "output", spark_schemes=True) == "hdfs://nn/out"


def test_resolve_paths_covers_every_path_flag_and_kws_named_inputs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = argparse.Namespace(input=["movie=m.csv", "actor=file:///d/a.csv"], schema="s.json",
                              schema_changes=None, deletions="del.csv", output="out",
                              queries="q.txt", remote="file:///d/r.db", keywords="a,b")
    flags.resolve_paths(args)
    assert args.input == [f"movie={tmp_path / 'm.csv'}", "actor=/d/a.csv"]
    assert (args.schema, args.deletions, args.output, args.queries, args.remote) == (
        str(tmp_path / "s.json"), str(tmp_path / "del.csv"), str(tmp_path / "out"),
        str(tmp_path / "q.txt"), "/d/r.db")
    assert args.schema_changes is None and args.keywords == "a,b"
    reads, writes = flags.task_paths(args)
    assert ("--input", str(tmp_path / "m.csv")) in reads and ("--remote", "/d/r.db") in reads
    assert ("--queries", str(tmp_path / "q.txt")) not in reads     # the driver reads it
    assert writes == [("--output", str(tmp_path / "out"))]


def test_a_scheme_on_an_input_is_exit_2_before_spark(capsys):
    # s3://, s3a://, gs://, hdfs:// inputs are read through pyarrow.fs (test_object_store)
    rc = main(["run", "connectivity", "--input", "ftp://host/edges.parquet", "--queries", "q",
               "--window", "10", "--slide", "5", "--output", "out"])
    assert rc == 2
    assert "ftp:// scheme is not supported" in capsys.readouterr().err
    rc = main(["run", "connectivity", "--input", "edges.parquet", "--queries", "ftp://b/q",
               "--window", "10", "--slide", "5", "--output", "out"])
    assert rc == 2      # --queries takes the URIs --input takes, no other
    assert "--queries ftp://b/q: the ftp:// scheme is not supported" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["spark.executor.memory=4g", "spark.a.b=x=y", "spark.c="])
def test_conf_takes_key_value(text):
    key, value = flags.spark_conf(text)
    assert f"{key}={value}" == text


@pytest.mark.parametrize("text", ["spark.executor.memory", "=4g", "spark a=1", ""])
def test_conf_refuses_anything_else(text):
    with pytest.raises(argparse.ArgumentTypeError, match="KEY=VALUE"):
        flags.spark_conf(text)


def test_a_bad_conf_is_exit_2_on_run_and_stream(capsys):
    for argv in (["run", "connectivity", "--input", "e", "--queries", "q", "--window", "1",
                  "--slide", "1", "--output", "o", "--conf", "spark.executor.memory"],
                 ["stream", "connectivity", "--source", "s", "--checkpoint", "c", "--output", "o",
                  "--queries", "q", "--window", "1", "--slide", "1", "--conf", "nothing"]):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 2
        assert "expected KEY=VALUE" in capsys.readouterr().err


def test_spark_defaults_are_read_and_pick_the_executors_python(tmp_path, monkeypatch):
    (tmp_path / "spark-defaults.conf").write_text(
        "# a comment\nspark.executor.memory   3g\nspark.pyspark.python=/opt/py/bin/python\n"
        "spark.driver.host: 10.0.0.1\n")
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    monkeypatch.setenv("PYSPARK_PYTHON", "/env/python")
    assert spark_defaults() == {"spark.executor.memory": "3g",
                                "spark.pyspark.python": "/opt/py/bin/python",
                                "spark.driver.host": "10.0.0.1"}
    assert executor_python() == "/opt/py/bin/python"
    assert executor_python({"spark.pyspark.python": "/conf/python"}) == "/conf/python"
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path / "none"))
    assert executor_python() == "/env/python"
    monkeypatch.delenv("PYSPARK_PYTHON")
    import sys
    assert executor_python() == sys.executable


def test_a_task_that_could_not_open_a_path_is_recognised():
    pyarrow = ("org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n"
               "  File \"range_scan.py\", line 220, in _read\n"
               "FileNotFoundError: [Errno 2] Failed to open local file 'edges.parquet'. Detail: "
               "[errno 2] No such file or directory\n")
    sqlite = "sqlite3.OperationalError: unable to open database file\n"
    assert "Failed to open local file 'edges.parquet'" in path_failure(pyarrow)
    assert "unable to open database file" in path_failure(sqlite)
    assert path_failure("ValueError: bad\n") is None


@pytest.mark.spark
def test_the_driver_only_log_profile_is_not_passed_to_executors(spark):
    conf = spark.sparkContext.getConf()
    assert "log4j2.configurationFile" in (conf.get("spark.driver.extraJavaOptions") or "")
    assert "log4j2" not in (conf.get("spark.executor.extraJavaOptions") or "")
    assert os.path.isabs(conf.get("spark.pyspark.python"))
