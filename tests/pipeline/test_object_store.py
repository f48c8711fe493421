"""Inputs in an S3 bucket equal the same inputs on local disk (issue 29).

An S3-compatible server from PyPI, moto's (``pip install 'moto[s3]' flask flask-cors``:
its S3 service and the server's web app), runs on 127.0.0.1 on a free port for this module.  Every problem's ``streamspec run`` (the
``streamspec demo`` arguments) reads its inputs from the bucket, as ``s3://`` and as
``s3a://`` URIs (the same bucket and key), with a local output: the rows equal those of
the same run from local files.  The S3 settings come the way a user gives them to Spark,
``--conf spark.hadoop.fs.s3a.endpoint=...`` and the access keys: the driver's checks and
the Spark tasks (connectivity's Parquet row groups, its text spans, simjoin's JSON lines
spans, kws' tuple files, topkjoin's items) read the bucket through ``pyarrow.fs``, and so
do the driver's readers of the other input flags (connectivity's ``--queries``, kws'
``--schema``, topkjoin's ``--remote`` timeline), taken from the bucket in the same runs.  A bad
line in an object is named ``s3://bucket/key:LINE`` (exit 2); an output in a bucket is
refused (exit 2) when Spark has no connector for it, as the tests' Spark has none.  With
the connector's jars (hadoop-aws 3.3.1 and the AWS SDK bundle, from the PyPI sdist
``sagemaker_pyspark``: a 181 MB download, and a Spark of its own) outputs, checkpoints
and a stream on ``s3a://`` are measured by ``bench/results/cluster/s3a_connector.py``
(``s3a-connector.log``), not here; here the part-by-part commit an object store gets is
run on the local Hadoop file system, killed midway and finished by the next run.
"""
from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("moto", reason="the object-store test needs moto's S3 server: "
                                   "pip install 'moto[s3]' flask flask-cors")

from streamspec.pipeline import fs, text_scan   # noqa: E402
from streamspec.pipeline.cli import _jobs, main  # noqa: E402
from streamspec.pipeline.io import topkjoin_text  # noqa: E402

BUCKET = "streamspec-inputs"
#: the demos' path flags a reader of streamspec's opens (pipeline.flags.READ_FLAGS)
INPUT_FLAGS = ("--input", "--queries", "--schema", "--remote")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3_endpoint():
    """moto's S3 server on 127.0.0.1, stopped after the module; its endpoint URL."""
    server = shutil.which("moto_server") or str(Path(sys.executable).parent / "moto_server")
    port = _free_port()
    proc = subprocess.Popen([server, "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"moto_server did not start on port {port}")
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _conf(endpoint: str) -> list[str]:
    return ["--conf", f"spark.hadoop.fs.s3a.endpoint={endpoint}",
            "--conf", "spark.hadoop.fs.s3a.access.key=testing",
            "--conf", "spark.hadoop.fs.s3a.secret.key=testing"]


def _upload(endpoint: str, files: dict[str, bytes], bucket: str = BUCKET) -> None:
    """With boto3 (moto's own dependency): pyarrow's multipart uploads trip over moto's
    CompleteMultipartUpload answer."""
    import boto3
    s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="testing",
                      aws_secret_access_key="testing", region_name="us-east-1")
    s3.create_bucket(Bucket=bucket)
    for key, data in files.items():
        s3.put_object(Bucket=bucket, Key=key, Body=data)


def _table(path: Path):
    table = pq.read_table(path)
    return table.sort_by([(c, "ascending") for c in table.column_names
                          if not pa.types.is_nested(table.schema.field(c).type)])


@pytest.mark.spark
def test_inputs_in_a_bucket_equal_local_inputs(spark, s3_endpoint, tmp_path, monkeypatch, capsys):
    from streamspec.pipeline.jobs.connectivity import SAMPLE

    # connectivity's edges also as Parquet (two row groups: the range tasks read them)
    lines = [ln.split() for ln in Path(SAMPLE, "connectivity-edges.txt").read_text().splitlines()
             if ln.strip() and not ln.startswith("#")]
    edges = pa.table({c: [int(f[i]) for f in lines] for i, c in enumerate("uvt")})
    local_parquet = tmp_path / "edges.parquet"
    pq.write_table(edges, local_parquet, row_group_size=len(lines) // 2 + 1)
    sample = Path(SAMPLE)
    uploads = {str(p.relative_to(sample)): p.read_bytes() for p in sample.rglob("*")
               if p.is_file() and p.suffix != ".py"}
    uploads["edges.parquet"] = local_parquet.read_bytes()
    bad = Path(SAMPLE, "connectivity-edges.txt").read_text().splitlines()
    bad_line = next(n for n, ln in enumerate(bad, 1) if n > 3 and ln.strip()
                    and not ln.startswith("#"))
    bad[bad_line - 1] = "1 2 x"
    uploads["bad-edges.txt"] = ("\n".join(bad) + "\n").encode()
    _upload(s3_endpoint, uploads)

    runs = {}
    for name, module in sorted(_jobs().items()):
        if hasattr(module, "demo_argv"):
            runs[name] = ["run", name, *module.demo_argv("OUT")]
    runs["connectivity-parquet"] = [str(local_parquet) if a.endswith("edges.txt") else a
                                    for a in runs["connectivity"]]
    # small text inputs are read on the driver: let the Spark tasks read them as well
    monkeypatch.setattr(text_scan, "MIN_BYTES", 0)
    monkeypatch.setattr(topkjoin_text, "SMALL", 0)
    taken = set()       # the flags some run took from the bucket
    for n, (name, argv) in enumerate(runs.items()):
        local_out, remote_out = tmp_path / f"{name}-local", tmp_path / f"{name}-s3"
        scheme = "s3a" if n % 2 else "s3"

        def uri(arg: str) -> str:   # a path flag's value (kws: REL=FILE) as its object's URI
            rel, eq, path = arg.rpartition("=")
            key = "edges.parquet" if path == str(local_parquet) else Path(path).relative_to(sample)
            return f"{rel}{eq}{scheme}://{BUCKET}/{key}"

        on_disk = [str(local_out) if a == "OUT" else a for a in argv]
        in_bucket, flag = [], None      # every input flag from the bucket
        for a in argv:
            flag = a if a.startswith("--") else flag
            in_bucket.append(str(remote_out) if a == "OUT" else
                             uri(a) if flag in INPUT_FLAGS and not a.startswith("--") else a)
        assert in_bucket != on_disk and any("://" in a for a in in_bucket), name
        taken |= {f for f, a in zip(in_bucket, in_bucket[1:]) if f in INPUT_FLAGS and "://" in a}
        assert main(on_disk) == 0, name
        assert main([*in_bucket, *_conf(s3_endpoint)]) == 0, (name, capsys.readouterr().err)
        assert _table(remote_out).equals(_table(local_out)), name
    assert taken == set(INPUT_FLAGS), taken
    said = capsys.readouterr()
    assert "on the driver" not in said.err, said.err     # no silent or said fallback

    # a bad line in an object: located at the URI's line, exit 2, nothing written
    argv = [a if not a.endswith("connectivity-edges.txt") else f"s3://{BUCKET}/bad-edges.txt"
            for a in runs["connectivity"]]
    assert main([*[str(tmp_path / "bad") if a == "OUT" else a for a in argv],
                 *_conf(s3_endpoint)]) == 2
    err = capsys.readouterr().err
    assert f"s3://{BUCKET}/bad-edges.txt:{bad_line}:" in err, err
    assert "Traceback" not in err and "py4j" not in err.lower()
    assert not (tmp_path / "bad").exists()

    # an output (or checkpoint dir) in a bucket, and this Spark without the s3a connector's
    # jars: refused once Spark has started, before any work, saying what is missing
    for flag in ("--output", "--checkpoint-dir"):
        argv = [str(tmp_path / "x") if a == "OUT" else a for a in runs["connectivity"]]
        argv = [f"s3a://{BUCKET}/out" if a == str(tmp_path / "x") and flag == "--output" else a
                for a in argv]
        if flag == "--checkpoint-dir":
            argv += ["--checkpoint-dir", f"s3://{BUCKET}/ckpt"]
        assert main([*argv, *_conf(s3_endpoint)]) == 2, flag
        err = capsys.readouterr().err
        assert f"{flag} s3" in err and "connector" in err and "spark.jars" in err, err
        assert "Traceback" not in err
    assert not (tmp_path / "x").exists()
    fs.configure()      # the driver's S3 settings back to the environment's


def test_s3_settings_come_from_the_aws_variables_and_the_s3a_conf():
    env = {"AWS_ENDPOINT_URL": "http://e:1", "AWS_REGION": "eu-west-1",
           "AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "s"}
    assert fs.configure(None, env) == {"endpoint": "http://e:1", "region": "eu-west-1",
                                       "access_key": "a", "secret_key": "s"}
    got = fs.configure([("spark.hadoop.fs.s3a.endpoint", "minio:9000"),
                        ("spark.hadoop.fs.s3a.access.key", "k"),
                        ("spark.executor.memory", "4g")], env)
    assert got["endpoint"] == "minio:9000" and got["access_key"] == "k" and got["secret_key"] == "s"
    s3, inner = fs.resolve("s3a://bucket/dir/edges.parquet")
    assert type(s3).__name__ == "S3FileSystem" and inner == "bucket/dir/edges.parquet"
    assert fs.resolve("s3://bucket/dir/")[1] == "bucket/dir"
    fs.configure(None, {})


def test_the_other_input_flags_read_a_bucket_on_the_driver(s3_endpoint, tmp_path, capsys):
    """Without Spark: ``--queries``, ``--schema``, ``--schema-changes``, ``--deletions`` and a
    ``--remote`` timeline keep their URIs through ``resolve_paths`` and read the bucket as
    they read the same file on disk; a bad line is named ``s3://bucket/key:LINE``; a SQLite
    ``--remote`` in a bucket is refused, typed (exit 2), saying why."""
    import argparse

    from streamspec.pipeline.flags import resolve_paths
    from streamspec.pipeline.io.edges import read_query_file
    from streamspec.pipeline.io.kws import read_schema, read_schema_changes, read_types
    from streamspec.pipeline.io.topkjoin import TimelineFile, read_remote
    from streamspec.pipeline.jobs.connectivity import SAMPLE
    from streamspec.pipeline.io import InputError
    from streamspec.spec.errors import MalformedRecord, PathError

    bucket = "streamspec-flags"
    queries = Path(SAMPLE, "connectivity-queries.txt")
    schema = Path(SAMPLE, "kws", "schema.json")
    timeline = Path(SAMPLE, "topkjoin", "followers-dfc.csv")
    changes = tmp_path / "changes.jsonl"
    changes.write_text('{"t": 5, "remove_relation": "actor"}\n\n{"t": 7, "remove_edge": "e1"}\n')
    _upload(s3_endpoint, {"q.txt": queries.read_bytes(), "bad-q.txt": b"1 2\n# c\n1 2 3\n",
                          "schema.json": schema.read_bytes(), "changes.jsonl": changes.read_bytes(),
                          "followers.csv": timeline.read_bytes(), "followers.db": b"SQLite",
                          "bad-timeline.csv": b"key,time,value\n1,0,2\n1,5,x\n"},
            bucket)
    url = f"s3://{bucket}/"
    try:
        with pytest.raises(PathError, match="ftp:// scheme is not supported"):
            resolve_paths(argparse.Namespace(queries="ftp://host/q.txt", conf=None))
        conf = [tuple(a.split("=", 1)) for a in _conf(s3_endpoint)[1::2]]
        args = argparse.Namespace(queries=url + "q.txt", schema="s3a://" + bucket + "/schema.json",
                                  schema_changes=url + "changes.jsonl", remote=url + "followers.csv",
                                  deletions=f"gs://{bucket}/deletions.csv", conf=conf)
        wanted = dict(vars(args))
        resolve_paths(args)                   # takes the S3 settings of --conf too
        assert vars(args) == wanted           # URIs kept: their readers open them

        assert read_query_file(args.queries)[0] == read_query_file(str(queries))[0]
        assert read_query_file(args.queries)[1][0] == url + "q.txt:" + \
            read_query_file(str(queries))[1][0].rpartition(":")[2]
        with pytest.raises(MalformedRecord) as bad:
            read_query_file(url + "bad-q.txt")
        assert f"{url}bad-q.txt:3" in str(bad.value)
        assert read_schema(args.schema) == read_schema(str(schema))
        assert read_types(args.schema) == read_types(str(schema))
        with pytest.raises(InputError, match="no such file"):
            read_schema(url + "missing.json")
        got = read_schema_changes(args.schema_changes)
        assert [e for e, _ in got] == [e for e, _ in read_schema_changes(str(changes))]
        assert [w for _, w in got] == [url + "changes.jsonl:1", url + "changes.jsonl:3"]
        assert read_remote(args.remote) == read_remote(str(timeline))
        assert TimelineFile(args.remote).digest == TimelineFile(str(timeline)).digest
        with pytest.raises(PathError, match="SQLite opens local files only") as refused:
            read_remote(url + "followers.db")
        assert refused.value.exit_code == 2
    finally:
        fs.configure()
    # a stream reads its --remote before Spark starts, with the S3 settings of its --conf
    assert main(["stream", "topkjoin", "--source", str(tmp_path / "in"), "--format", "json",
                 "--checkpoint", str(tmp_path / "ckpt"), "--output", str(tmp_path / "out"),
                 "--remote", url + "bad-timeline.csv", "--window", "4", "--slide", "2",
                 "--k", "1", "--stream-range", "0,3", *_conf(s3_endpoint)]) == 2
    err = capsys.readouterr().err
    assert f"{url}bad-timeline.csv:3" in err and "value" in err, err
    fs.configure()


class _KilledFS:
    """A Hadoop file system whose ``rename`` fails from its ``after``-th call: a run
    killed while moving its parts into place."""

    def __init__(self, fs, after: int):
        self._fs, self._left = fs, after

    def rename(self, src, dst):
        if self._left == 0:
            raise RuntimeError("killed")
        self._left -= 1
        return self._fs.rename(src, dst)

    def __getattr__(self, name):
        return getattr(self._fs, name)


@pytest.mark.spark
def test_an_object_store_output_lands_part_by_part_and_a_killed_move_is_finished(
        spark, tmp_path, monkeypatch, capsys):
    """Where renames are not atomic (an object store: the local Hadoop file system taken
    for one here), the output's parts move into place one by one, ``_SUCCESS`` last; a
    run killed while moving leaves no ``_SUCCESS`` and its staging directory with the list
    of its parts, and the next run finishes the move."""
    from streamspec.pipeline import io

    monkeypatch.setattr(io, "OBJECT_STORES", ("file",))
    out = tmp_path / "out"
    uri = out.as_uri()
    first = spark.range(0, 40, numPartitions=2).toDF("x")
    io.write_parquet_atomic(first, uri)
    assert (out / "_SUCCESS").exists() and sorted(pq.read_table(out)["x"].to_pylist()) == \
        list(range(40))
    assert [p.name for p in tmp_path.iterdir()] == ["out"]      # no staging left
    with pytest.raises(io.OutputExists):
        io.write_parquet_atomic(first, uri)

    # replaced, and killed after one of the new output's three parts moved
    second = spark.range(100, 130, numPartitions=3).toDF("x")
    real = io._filesystem

    def killed(s, p):
        hadoop_fs, hpath = real(s, p)
        return _KilledFS(hadoop_fs, 1), hpath
    monkeypatch.setattr(io, "_filesystem", killed)
    with pytest.raises(io.OutputError, match="incomplete .no _SUCCESS.*finishes it from"):
        io.write_parquet_atomic(second, uri, overwrite=True)
    monkeypatch.setattr(io, "_filesystem", real)
    assert not (out / "_SUCCESS").exists()
    assert len(list(out.glob("*.parquet"))) == 1         # the new one moved, the old ones gone
    staged = [p for p in tmp_path.iterdir() if p.name.startswith(".out.tmp-")]
    assert len(staged) == 1 and (staged[0] / io.COMMIT_LIST).exists()

    said = io.recover_output(uri, spark)     # the next run, first thing
    assert len(said) == 1 and "finished the move" in said[0], said
    assert (out / "_SUCCESS").exists() and sorted(pq.read_table(out)["x"].to_pylist()) == \
        list(range(100, 130))
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    capsys.readouterr()


def test_a_missing_or_broken_spark_connector_is_said_plainly():
    """``fs.spark_cannot_read`` (and so the exit-2 refusal of an output, checkpoint or
    stream source on an object store) names what is wrong: no connector class, or
    hadoop-aws 3.3.x reading Hadoop 3.5's defaults, with the settings that fix it."""
    from types import SimpleNamespace

    from streamspec.spec.errors import PathError

    def spark_raising(err):
        def get(_conf):
            raise err
        path = SimpleNamespace(getFileSystem=get)
        jvm = SimpleNamespace(org=SimpleNamespace(apache=SimpleNamespace(hadoop=SimpleNamespace(
            fs=SimpleNamespace(Path=lambda p: path)))))
        return SimpleNamespace(_jvm=jvm, _jsc=SimpleNamespace(hadoopConfiguration=lambda: None))

    NumberFormatException = type("NumberFormatException", (Exception,), {})
    got = fs.spark_cannot_read(spark_raising(NumberFormatException('For input string: "60s"')),
                               "s3a://b/out")
    assert "s3a:// connector failed to start" in got and '"60s"' in got
    assert all(f"--conf {k}={v}" in got for k, v in fs.OLD_S3A_CONF.items())
    missing = RuntimeError("java.lang.ClassNotFoundException: Class "
                           "org.apache.hadoop.fs.s3a.S3AFileSystem not found")
    with pytest.raises(PathError, match="--output s3a://b/out: Spark has no s3a:// connector "
                                        "here: ClassNotFoundException.*spark.jars") as refused:
        fs.check_spark_connector(spark_raising(missing), "s3a://b/out", "--output")
    assert refused.value.exit_code == 2
    fs.check_spark_connector(None, "hdfs://nn/out", "--output")     # not an object store


def test_a_large_text_input_with_an_output_in_a_bucket_says_it_is_read_on_the_driver(
        monkeypatch, capsys):
    """The tasks stage a large text input beside the output, which a bucket cannot hold
    for them (``text_scan.staging_dir``): the driver reads it, and says so (no silent
    fallback)."""
    from streamspec.pipeline.cli import build_parser
    from streamspec.pipeline.flags import resolve_paths
    from streamspec.pipeline.jobs import connectivity

    monkeypatch.setattr(text_scan, "MIN_BYTES", 0)
    args = build_parser().parse_args(["run", "connectivity",
                                      *connectivity.demo_argv(f"s3a://{BUCKET}/out")])
    resolve_paths(args)
    plan = connectivity.prepare(args)
    assert plan.staged is None
    err = capsys.readouterr().err
    assert "reading the input on the driver" in err and f"s3a://{BUCKET}/out is not a local" in err
    fs.configure()
