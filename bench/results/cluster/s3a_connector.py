"""Outputs, checkpoints and a stream on ``s3a://`` with the s3a connector's jars given to
Spark (``--conf spark.jars=...``), against moto's S3 server on 127.0.0.1 (issue 29).

The pyspark wheel (4.x, Hadoop client 3.5.0) has no s3a connector, and the Maven
repositories are out of reach here.  The PyPI sdist ``sagemaker_pyspark==1.4.5``
(Apache-2.0) carries ``deps/jars/hadoop-aws-3.3.1.jar`` and
``deps/jars/aws-java-sdk-bundle-1.11.901.jar``: this script takes them from it
(``pip download --no-deps``, 181 MB, into a cache directory, unless ``--jars DIR`` holds
them already), starts moto's server and runs, each as the ``streamspec`` command a user
types (one Spark per command):

1. no jars: ``--output s3a://...`` is exit 2, "Spark has no s3a:// connector here";
2. the jars alone: exit 2, the connector fails to start (hadoop-aws 3.3.1 reads Hadoop
   3.5's defaults: ``NumberFormatException: For input string: "60s"``) and the message
   names the ``--conf`` settings it needs (``fs.OLD_S3A_CONF``);
3. with them: ``streamspec run connectivity`` (the demo) to ``s3a://`` equals the same run
   to a local directory row for row, ``_SUCCESS`` present, no staging left; again without
   ``--overwrite``: exit 2 (output exists); with it: exit 0, equal;
4. ``--checkpoint-dir s3a://...`` with reliable checkpoints forced
   (``STREAMSPEC_MATERIALISE=reliable``, as on a cluster): equal, the directory removed;
5. ``streamspec stream connectivity --trigger-once`` with ``--source``, ``--checkpoint``
   and ``--output`` in the bucket, then a second file and a restart: the output equals
   the same two runs on local directories.

Run: ``python bench/results/cluster/s3a_connector.py [--jars DIR] [--log FILE]``; the
measured seconds are wall times on whatever load the machine has.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

SDIST = "sagemaker_pyspark==1.4.5"
JARS = {"hadoop-aws-3.3.1.jar":
        "6be50ad8a8b445d2802381b085b2a3ede5c29d353450a6a21f16b2fefa962b6e",
        "aws-java-sdk-bundle-1.11.901.jar":
        "b87175b32a16544cc1b37cf40390eb375833e62bed67f8ce6cde4b7ad6429ead"}
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"), "streamspec", "s3a")
BUCKET = "streamspec-s3a"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def jars(directory: Path, log) -> list[Path]:
    """The two jars in ``directory``, taken from the sdist (downloaded there) if absent."""
    directory.mkdir(parents=True, exist_ok=True)
    if not all((directory / n).exists() for n in JARS):
        sdists = sorted(directory.glob("sagemaker_pyspark-*.tar.gz"))
        if not sdists:
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                   SDIST, "-d", str(directory)]
            log(f"$ {' '.join(cmd)}")
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            sdists = sorted(directory.glob("sagemaker_pyspark-*.tar.gz"))
        with tarfile.open(sdists[-1]) as tar:
            for member in tar.getmembers():
                if member.name.rsplit("/", 1)[-1] in JARS:
                    member.name = member.name.rsplit("/", 1)[-1]
                    tar.extract(member, directory)
    for name, digest in JARS.items():
        if sha256(directory / name) != digest:
            raise SystemExit(f"{directory / name}: not the jar this script was measured with")
    return [directory / n for n in JARS]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jars", type=Path, default=CACHE,
                    help=f"directory of the two jars (default {CACHE}, filled from the sdist)")
    ap.add_argument("--log", type=Path, default=Path(__file__).with_name("s3a-connector.log"))
    opts = ap.parse_args()
    lines: list[str] = []

    def log(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    import boto3

    from streamspec.pipeline import fs
    from streamspec.pipeline.jobs.connectivity import SAMPLE, demo_argv

    log(f"# s3a_connector.py, {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}; "
        f"load {os.getloadavg()[0]:.1f} (2 cores, shared)")
    found = jars(opts.jars, log)
    import pyspark
    hadoop = sorted(p.name for p in Path(pyspark.__file__).parent.joinpath("jars").glob(
        "hadoop-client-api-*.jar"))
    log(f"pyspark {pyspark.__version__}, {', '.join(hadoop)}; jars: "
        + ", ".join(f"{p.name} (sha256 {JARS[p.name][:12]}...)" for p in found))
    cli = str(Path(sys.executable).parent / "streamspec")
    server = str(Path(sys.executable).parent / "moto_server")
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    moto = subprocess.Popen([server, "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    work = Path(tempfile.mkdtemp(prefix="s3a-connector-"))
    failures = 0
    try:
        for _ in range(150):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="testing",
                          aws_secret_access_key="testing", region_name="us-east-1")
        s3.create_bucket(Bucket=BUCKET)
        creds = ["--conf", f"spark.hadoop.fs.s3a.endpoint={endpoint}",
                 "--conf", "spark.hadoop.fs.s3a.path.style.access=true",
                 "--conf", "spark.hadoop.fs.s3a.access.key=testing",
                 "--conf", "spark.hadoop.fs.s3a.secret.key=testing"]
        with_jars = ["--conf", "spark.jars=" + ",".join(str(p) for p in found)]
        old = [a for k, v in fs.OLD_S3A_CONF.items() for a in ("--conf", f"{k}={v}")]
        fs.configure([tuple(a.split("=", 1)) for a in creds[1::2]])
        for label, group in (("S3", creds), ("JARS", with_jars), ("OLD", old)):
            log(f"{label}='{' '.join(group)}'")

        def run(name, argv, want, expect=(), env=None):
            nonlocal failures
            began = time.monotonic()
            done = subprocess.run([cli, *argv], capture_output=True, text=True, check=False,
                                  env={**os.environ, **(env or {})})
            took = time.monotonic() - began
            said = [ln for ln in done.stderr.splitlines() if ln.startswith("streamspec")]
            ok = done.returncode == want and all(e in done.stderr for e in expect)
            failures += not ok
            log(f"\n## {name}: exit {done.returncode} (want {want}) in {took:.1f} s"
                f"{'' if ok else '  <-- NOT AS EXPECTED'}")
            shown = " ".join(argv)
            for group, label in ((creds, "$S3"), (with_jars, "$JARS"), (old, "$OLD")):
                shown = shown.replace(" ".join(group), label)
            log(f"$ streamspec {shown}")
            for ln in said[-3:] or done.stderr.strip().splitlines()[-3:]:
                log(f"  {ln[:600]}")
            return done

        def table(uri):
            import pyarrow as pa
            t = fs.read_table(uri)
            return t.sort_by([(c, "ascending") for c in t.column_names
                              if not pa.types.is_nested(t.schema.field(c).type)])

        def check(name, ok):
            nonlocal failures
            failures += not ok
            log(f"  {name}: {'yes' if ok else 'NO'}")

        def keys(prefix):
            got = s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", [])
            return sorted(o["Key"] for o in got)

        demo = ["run", "connectivity", *demo_argv("OUT")]
        local = work / "local-out"
        run("local output (the reference)", [str(local) if a == "OUT" else a for a in demo], 0)
        to_s3 = [f"s3a://{BUCKET}/out" if a == "OUT" else a for a in demo if a != "--overwrite"]
        run("1. no connector jars", [*to_s3, *creds], 2, ["Spark has no s3a:// connector here"])
        run("2. the jars, without the settings hadoop-aws 3.3.1 needs on Hadoop 3.5",
            [*to_s3, *creds, *with_jars], 2, ["NumberFormatException", "threads.keepalivetime"])
        run("3. the jars and the settings: output on s3a://", [*to_s3, *creds, *with_jars, *old], 0)
        check("rows equal the local run's", table(f"s3a://{BUCKET}/out").equals(table(str(local))))
        check("_SUCCESS in place, no staging or checkpoint left beside the output",
              "out/_SUCCESS" in keys("out/") and not [k for k in keys("") if k.startswith(".out")])
        run("3b. again, without --overwrite", [*to_s3, *creds, *with_jars, *old], 2,
            ["output exists"])
        run("3c. again, with --overwrite", [*to_s3, "--overwrite", *creds, *with_jars, *old], 0)
        check("rows equal the local run's", table(f"s3a://{BUCKET}/out").equals(table(str(local))))
        check("one output's parts only", len([k for k in keys("out/") if k.endswith(".parquet")])
              == len(list(local.glob("*.parquet"))))
        # 3d. what a run killed while moving its parts into place leaves (made by hand: the
        # old _SUCCESS deleted, one old part left, one of the new parts moved, the others
        # staged with their list); the next run, even one refused, finishes the move first
        parts = sorted(local.glob("*.parquet"))
        staging = ".out.tmp-0123456789ab"
        s3.delete_object(Bucket=BUCKET, Key="out/_SUCCESS")
        for key in keys("out/")[1:]:
            s3.delete_object(Bucket=BUCKET, Key=key)
        names = [f"part-{i:05d}-killed.snappy.parquet" for i in range(len(parts))]
        for i, (name, part) in enumerate(zip(names, parts)):
            s3.put_object(Bucket=BUCKET, Key=f"out/{name}" if i == 0 else f"{staging}/{name}",
                          Body=part.read_bytes())
        s3.put_object(Bucket=BUCKET, Key=f"{staging}/_SUCCESS", Body=b"")
        s3.put_object(Bucket=BUCKET, Key=f"{staging}/_streamspec_commit",
                      Body="".join(n + "\n" for n in names).encode())
        log(f"\n(made by hand: out/ without _SUCCESS, holding one old part and {names[0]}; "
            f"{staging}/ holding the {len(names) - 1} other parts and their list)")
        run("3d. the next run, without --overwrite", [*to_s3, *creds, *with_jars, *old], 2,
            ["finished the move from " + staging, "output exists"])
        check("the staged output in place, _SUCCESS last, the old part gone",
              keys("out/") == sorted(["out/_SUCCESS", *(f"out/{n}" for n in names)])
              and not keys(staging))
        check("rows equal the local run's", table(f"s3a://{BUCKET}/out").equals(table(str(local))))
        ck = [f"s3a://{BUCKET}/out2" if a == "OUT" else a for a in demo]
        run("4. --checkpoint-dir s3a:// with reliable checkpoints (as on a cluster)",
            [*ck, "--checkpoint-dir", f"s3a://{BUCKET}/ckpt", *creds, *with_jars, *old], 0,
            env={"STREAMSPEC_MATERIALISE": "reliable"})
        check("rows equal the local run's", table(f"s3a://{BUCKET}/out2").equals(table(str(local))))
        check("the checkpoint directory removed", not keys("ckpt"))

        # 5. a stream: two JSON-lines files, one per restart
        edges = [ln.split() for ln in Path(SAMPLE, "connectivity-edges.txt").read_text().splitlines()
                 if ln.strip() and not ln.startswith("#")]
        files = []
        for half in (edges[:len(edges) // 2], edges[len(edges) // 2:]):
            files.append("".join(json.dumps({"u": int(u), "v": int(v), "t": int(t)}) + "\n"
                                 for u, v, t in half).encode())
        (work / "in").mkdir()
        queries = Path(SAMPLE, "connectivity-queries.txt")
        stream = ["stream", "connectivity", "--format", "json", "--trigger-once",
                  "--window", "500", "--slide", "100", "--queries", str(queries)]
        for n, data in enumerate(files):
            (work / "in" / f"part-{n}.json").write_bytes(data)
            s3.put_object(Bucket=BUCKET, Key=f"src/part-{n}.json", Body=data)
            run(f"5. stream, local directories, file {n + 1} of 2",
                [*stream, "--source", str(work / "in"), "--checkpoint", str(work / "sck"),
                 "--output", str(work / "sout")], 0)
            run(f"5. stream, --source, --checkpoint and --output on s3a://, file {n + 1} of 2",
                [*stream, "--source", f"s3a://{BUCKET}/src", "--checkpoint",
                 f"s3a://{BUCKET}/sck", "--output", f"s3a://{BUCKET}/sout",
                 *creds, *with_jars, *old], 0)
            check("rows equal the local stream's",
                  table(f"s3a://{BUCKET}/sout").equals(table(str(work / "sout"))))
    finally:
        moto.terminate()
        moto.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)
    log(f"\n{failures} not as expected")
    opts.log.write_text("\n".join(lines) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
