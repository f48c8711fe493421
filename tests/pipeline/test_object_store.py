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
refused before Spark starts (exit 2), since streamspec lands outputs by a directory
rename and this Spark has no s3a connector.
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

    # an output (or checkpoint dir) in a bucket: refused before Spark starts, saying why
    for flag in ("--output", "--checkpoint-dir"):
        argv = [str(tmp_path / "x") if a == "OUT" else a for a in runs["connectivity"]]
        argv = [f"s3a://{BUCKET}/out" if a == str(tmp_path / "x") and flag == "--output" else a
                for a in argv]
        if flag == "--checkpoint-dir":
            argv += ["--checkpoint-dir", f"s3://{BUCKET}/ckpt"]
        assert main([*argv, *_conf(s3_endpoint)]) == 2, flag
        err = capsys.readouterr().err
        assert f"{flag} s3" in err and "atomically" in err and "hadoop-aws" in err, err
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
