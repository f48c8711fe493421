"""Every problem's job on a real Spark standalone cluster equals local mode (issue 29).

One driver process (one Spark application, so the executors and their Python
workers start once) runs, against the ``standalone`` fixture's master, from its
own working directory:

- every problem's bundled demo job (``streamspec demo``'s arguments), its inputs
  given as relative paths and again as ``file://`` URIs, outputs likewise;
- paths the demos do not take but the Spark tasks open: connectivity edges as
  Parquet (the range scan's tasks read the row groups), topkjoin's remote
  timeline as SQLite (each task opens it);
- ``streamspec stream connectivity --trigger-once`` with a relative source,
  checkpoint and output, stopped after two files and restarted after two more;
- every job keeping its rows in reliable checkpoints (``spark.materialise``) under its
  default ``--checkpoint-dir`` beside the output, removed when it ends;
- the executors' check of the paths (``spark.check_task_paths``) on a missing input:
  one ``PathError`` (exit 2) naming the flag, the path and the host.

Each output must equal the same command in local mode row for row, the driver
must never say it fell back to reading on the driver, and every command must
exit 0.  The executors run in other working and temporary directories than the
driver's: before issue 29 the relative paths crashed there.
"""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from streamspec.pipeline.cli import _jobs, main

pytestmark = [pytest.mark.cluster, pytest.mark.spark]

STREAM_ARGS = ["--window", "500", "--slide", "100", "--engine", "bic"]


def _sample() -> str:
    from streamspec.pipeline.jobs.connectivity import SAMPLE
    return SAMPLE


def run_driver(cwd: Path, argvs: list[list[str]], timeout: float = 1500.0):
    """``streamspec`` commands one after the other in one driver process in ``cwd`` (its
    own temp directory); ``== checkpoints PATH rdds`` when a job removes its reliable
    checkpoints (``spark.checkpoint_dir``) with Spark's in them; ``["!copy", SRC, DST]``
    copies a file between two commands,
    ``["!probe", MASTER, PATH]`` prints what ``check_task_paths`` says of an input PATH.
    The output has ``== rc N`` after each command."""
    code = ("import json, os, shutil, sys, time\n"
            "from streamspec.pipeline.cli import main\n"
            "import streamspec.pipeline.spark as S\n"
            "import streamspec.pipeline.flags as F\n"
            "remove = S._remove_dir\n"
            "def said(spark, path):\n"     # the job's reliable checkpoints, just before removal
            "    local = F.local_of(path) if path else None\n"
            "    rdds = local and any(d.startswith('rdd-') for _, ds, _ in os.walk(local) for d in ds)\n"
            "    print('== checkpoints', path, 'rdds' if rdds else 'none', flush=True)\n"
            "    remove(spark, path)\n"
            "S._remove_dir = said\n"
            "for argv in json.loads(sys.argv[1]):\n"
            "    if argv[0] == '!copy':\n"
            "        shutil.copy(argv[1], argv[2]); continue\n"
            "    if argv[0] == '!probe':\n"
            "        from streamspec.pipeline.spark import check_task_paths, session\n"
            "        try:\n"
            "            check_task_paths(session(argv[1]), [('--input', argv[2])], [])\n"
            "        except Exception as err:\n"
            "            print('== probe', type(err).__name__, err.exit_code, err, flush=True)\n"
            "        continue\n"
            "    print('== streamspec', ' '.join(argv), flush=True)\n"
            "    print('== streamspec', ' '.join(argv), file=sys.stderr, flush=True)\n"
            "    started = time.monotonic()\n"
            "    print('== rc', main(argv), flush=True)\n"
            "    print(f'== took {time.monotonic() - started:.1f} s', flush=True)\n")
    tmp = cwd / ".driver-tmp"
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONUNBUFFERED": "1", "SPARK_LOCAL_IP": "127.0.0.1"}
    env.pop("SPARK_MASTER", None)
    return subprocess.run([sys.executable, "-c", code, json.dumps(argvs)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def _inputs(root: Path) -> None:
    """The bundled samples under ``root/data``, plus connectivity's edges as Parquet (two
    row groups) and topkjoin's remote timeline as SQLite."""
    shutil.copytree(_sample(), root / "data", ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    u, v, t = [], [], []
    for line in (root / "data" / "connectivity-edges.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            a, b, c = map(int, line.split())
            u.append(a), v.append(b), t.append(c)
    table = pa.table({"u": u, "v": v, "t": t})
    pq.write_table(table, root / "data" / "edges.parquet", row_group_size=len(u) // 2 + 1)
    quarter = len(u) // 4 + 1
    (root / "data" / "stream").mkdir()
    for n in range(4):
        pq.write_table(table.slice(n * quarter, quarter),
                       root / "data" / "stream" / f"part-{n + 1:04d}.parquet")
    with sqlite3.connect(root / "data" / "topkjoin" / "followers.db") as db:
        db.execute("create table timeline(key integer, time integer, value real)")
        rows = [line.split(",") for line in
                (root / "data" / "topkjoin" / "followers-dfc.csv").read_text().splitlines()[1:]]
        db.executemany("insert into timeline values (?, ?, ?)",
                       [(int(k), int(t), float(x)) for k, t, x in rows])


def _jobs_argv(place) -> dict[str, list[str]]:
    """``name -> argv`` of every job, the sample paths written by ``place(relative)``."""
    sample = _sample()
    out = {}
    for name, module in sorted(_jobs().items()):
        if hasattr(module, "demo_argv"):
            argv = module.demo_argv("OUT")
            out[name] = ["run", name, *(a.replace(sample, place("data")) for a in argv)]
    conn = out["connectivity"]
    out["connectivity-parquet"] = [place("data/edges.parquet") if a.endswith("edges.txt") else a
                                   for a in conn]
    top = out["topkjoin"]
    out["topkjoin-sqlite"] = [place("data/topkjoin/followers.db") if a.endswith("followers-dfc.csv")
                              else a for a in top]
    return out


def _stream_argvs(place, out: str) -> list[list[str]]:
    """Two files streamed, two more arriving, a restart from the checkpoint."""
    stream = ["stream", "connectivity", "--source", place("stream-in"), "--checkpoint",
              place(f"{out}-checkpoint"), "--output", place(out), "--trigger-once",
              "--queries", place("data/connectivity-queries.txt"), *STREAM_ARGS]
    copies = [["!copy", f"data/stream/part-{n:04d}.parquet", f"stream-in/part-{n:04d}.parquet"]
              for n in range(1, 5)]
    return [*copies[:2], stream, *copies[2:], stream]


def _with_output(argv: list[str], output: str) -> list[str]:
    return [output if a == "OUT" else a for a in argv]


def _rows(path: Path) -> list:
    """The dataset's rows, lists as tuples, sorted: equal as a multiset of rows."""
    def frozen(v):
        return tuple(frozen(x) for x in v) if isinstance(v, (list, tuple)) else v
    table = pq.read_table(path)
    return sorted((tuple(frozen(v) for v in row.values()) for row in table.to_pylist()),
                  key=repr)


def test_every_job_and_a_stream_restart_on_the_cluster_equal_local_mode(
        standalone, spark, tmp_path, monkeypatch):
    cluster = tmp_path / "driver"
    cluster.mkdir()
    _inputs(cluster)
    (cluster / "stream-in").mkdir()
    relative = _jobs_argv(lambda p: p)
    uri = _jobs_argv(lambda p: (cluster / p).as_uri())
    argvs = []
    for name in relative:
        argvs.append(_with_output(relative[name], f"out/rel/{name}"))
        argvs.append(_with_output(uri[name], (cluster / "out" / "uri" / name).as_uri()))
    argvs += _stream_argvs(lambda p: p, "stream-out")
    argvs = [a if a[0] == "!copy" else [*a, "--master", standalone.url] for a in argvs]
    # the executors' check of the paths, asked of one the driver never looked at
    argvs.append(["!probe", standalone.url, str(cluster / "nowhere.parquet")])
    done = run_driver(cluster, argvs)
    print("\n".join(line for line in done.stdout.splitlines()      # -s / -rA show the times
                    if line.startswith(("== streamspec", "== took"))))
    report = f"stdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-6000:]}"
    assert done.returncode == 0, report
    assert done.stdout.count("== rc 0") == len([a for a in argvs if not a[0].startswith("!")]), \
        report
    probe = f"== probe PathError 2 --input {cluster / 'nowhere.parquet'}: no such file or directory " \
            "on the Spark executors (host "
    assert probe in done.stdout, report
    assert "reading the input on the driver" not in done.stderr, report
    assert "Traceback" not in done.stderr, report
    # every job kept its rows in reliable checkpoints beside its output, gone afterwards
    checkpoints = [line.split() for line in done.stdout.splitlines()
                   if line.startswith("== checkpoints ")]
    assert len(checkpoints) == 2 * len(relative), report
    assert all(c[3] == "rdds" and ".checkpoints-" in c[2] for c in checkpoints), checkpoints
    assert not [d for d, ds, _ in os.walk(cluster) for n in ds if ".checkpoints-" in n]

    # the same commands in local mode, in this process (the test session's local Spark)
    local = tmp_path / "local"
    local.mkdir()
    _inputs(local)
    (local / "stream-in").mkdir()
    monkeypatch.chdir(local)
    for name, argv in _jobs_argv(lambda p: p).items():
        assert main([*_with_output(argv, f"out/{name}"), "--master", "local[2]"]) == 0, name
    for argv in _stream_argvs(lambda p: p, "stream-out"):
        if argv[0] == "!copy":
            shutil.copy(argv[1], argv[2])
        else:
            assert main([*argv, "--master", "local[2]"]) == 0

    for name in relative:
        expected = _rows(local / "out" / name)
        assert expected, name
        assert _rows(cluster / "out" / "rel" / name) == expected, f"{name}, relative paths"
        assert _rows(cluster / "out" / "uri" / name) == expected, f"{name}, file:// URIs"
    # the stream's state partitions: the cluster's cores, not Spark's 200 (streaming.state_partitions)
    offsets = (cluster / "stream-out-checkpoint" / "offsets" / "0").read_text()
    assert '"spark.sql.shuffle.partitions":"2"' in offsets, offsets
    streamed = _rows(cluster / "stream-out")
    assert streamed and streamed == _rows(local / "stream-out")
