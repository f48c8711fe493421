"""A lost executor does not fail a job on a cluster (issue 29: reliable checkpoints).

On the cluster lane's standalone cluster (``tests/cluster/conftest.py``'s ``Standalone``: a
master and two one-core workers on 127.0.0.1 from the installed pyspark), the connectivity job
of ``measure_checkpoint.py`` on a bigger R-MAT Parquet stream (``bench/pipeline.py``'s
``make_inputs``; ``--edges``, default 4M, 1000 edges per time, window 1000, slide 50, 100
queries, engine bic, ``--partitions 2``) runs once untouched (the reference), then once per
kill: one executor JVM (the ``CoarseGrainedExecutorBackend`` process whose working directory
is under worker 0's, found by its command line in ``/proc``) gets SIGKILL

- ``replay``: ``--replay-after`` seconds into the replay stage (``checkpoint at ...``: the
  tasks compute the windows with ``mapInArrow`` and write the reliable checkpoint), while
  both executors run a task of it;
- ``write``: as soon as a task of the output's write runs (``parquet at ...``: after the
  checkpoint is written and the tasks' checks are read; the write reads the checkpoint).

The script watches the driver through its REST API (``--conf spark.ui.enabled=true`` on a
free port, the same for every run), and prints per run: what was killed when (seconds
since the process started, the stage then running), the exit code, the wall time, from the
event log the executors removed and added and the tasks that failed, and whether the
output equals the reference row for row.  Each kill runs ``--rounds`` times (default 2).
``--local-checkpoint`` adds each kill once with ``STREAMSPEC_MATERIALISE=local``
(``localCheckpoint`` forced on the cluster): the contrast.

``python bench/results/cluster/lost_executor.py --local-checkpoint > bench/results/cluster/lost_executor.log``
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure_checkpoint import load  # noqa: E402


def say(*a):
    print(*a, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str):
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return json.load(r)
    except (OSError, ValueError):
        return None


def executors(under: Path) -> list[int]:
    """Pids of the executor JVMs whose working directory is under ``under``."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            cmd = open(f"/proc/{d}/cmdline", "rb").read().split(b"\0")
            cwd = os.readlink(f"/proc/{d}/cwd")
        except OSError:
            continue
        if b"org.apache.spark.executor.CoarseGrainedExecutorBackend" in cmd and \
                cwd.startswith(str(under)):
            found.append(int(d))
    return found


def python_children(pid: int) -> int:
    """How many Python processes run under the JVM ``pid`` (its task workers)."""
    n = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = open(f"/proc/{d}/stat").read()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == pid and b"python" in open(f"/proc/{d}/cmdline", "rb").read():
                n += 1
        except (OSError, ValueError, IndexError):
            continue
    return n


def events(logdir: Path) -> list[dict]:
    """The event log's events; the driver JVM may still be renaming it from ``.inprogress``
    when the Python driver has exited: wait for that a little, then read what is there."""
    deadline = time.monotonic() + 10
    while any(p.name.endswith(".inprogress") for p in logdir.iterdir()) and \
            time.monotonic() < deadline:
        time.sleep(0.2)
    found = []
    for path in sorted(logdir.iterdir()):
        for line in path.read_text(errors="replace").splitlines():
            try:
                found.append(json.loads(line))
            except ValueError:
                pass            # a last line cut short
    return found


def inputs(edges: int):
    from streamspec.bench.pipeline import make_inputs

    root = Path(tempfile.mkdtemp(prefix="lost-executor-"))
    work = root / "driver"
    work.mkdir()
    sizes = argparse.Namespace(vertices=1_000_000, edges=edges, per_timestamp=1000, queries=100)
    _, _, parquet, queries = make_inputs(sizes, work)
    return root, work, parquet, queries


def rows(path: Path):
    import pyarrow.parquet as pq
    table = pq.read_table(path)
    return table.sort_by([(c, "ascending") for c in ("window",) if c in table.column_names])


def run(cluster, work: Path, parquet: Path, queries: Path, tag: str, kill: str | None,
        replay_after: float, materialise: str | None = None):
    out = f"out-{tag}"
    ui = free_port()
    logdir = Path(tempfile.mkdtemp(prefix=f"evlog-{tag}-", dir=work))
    argv = [str(Path(sys.executable).with_name("streamspec")), "run", "connectivity",
            "--input", str(parquet), "--queries", str(queries), "--window", "1000",
            "--slide", "50", "--engine", "bic", "--partitions", "2", "--output", out,
            "--no-progress", "--master", cluster.url,
            "--conf", "spark.ui.enabled=true", "--conf", f"spark.ui.port={ui}",
            "--conf", "spark.eventLog.enabled=true", "--conf", f"spark.eventLog.dir=file://{logdir}",
            "--conf", "spark.eventLog.compress=false", "--conf", "spark.eventLog.rolling.enabled=false"]
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    if materialise:
        env["STREAMSPEC_MATERIALISE"] = materialise
    victim_dir = cluster.root / "worker0" / "work"
    t0 = time.monotonic()
    with open(work / f"{tag}.stdout", "w") as so, open(work / f"{tag}.stderr", "w") as se:
        p = subprocess.Popen(argv, cwd=work, env=env, stdout=so, stderr=se)
    api, app, seen, killed, active_since = f"http://127.0.0.1:{ui}/api/v1", None, {}, None, {}
    while p.poll() is None:
        time.sleep(0.1)
        now = time.monotonic() - t0
        if app is None:
            apps = get(f"{api}/applications")
            app = apps[0]["id"] if apps else None
            continue
        stages = get(f"{api}/applications/{app}/stages?status=active") or []
        for s in stages:
            key = (s["stageId"], s["attemptId"])
            if key not in seen:
                seen[key] = now
                say(f"  {tag} {now:6.2f} s stage {s['stageId']}.{s['attemptId']} active: "
                    f"{s['name'][:70]} ({s['numTasks']} tasks)")
                if os.environ.get("LOST_EXECUTOR_DETAILS"):
                    say("    " + s.get("details", "").replace("\n", " | ")[:600])
            active_since.setdefault(key, now)
        if killed or kill is None:
            continue
        for s in stages:
            running = s.get("numActiveTasks", 0)
            key = (s["stageId"], s["attemptId"])
            if kill == "replay" and s["name"].startswith(("checkpoint at", "localCheckpoint at")) and running >= 2 \
                    and now - active_since[key] >= replay_after:
                killed = (now, s)
            elif kill == "write" and s["name"].startswith("parquet at") and running >= 1:
                killed = (now, s)
            if killed:
                break
        if killed:
            pids = executors(victim_dir)
            busy = {pid: python_children(pid) for pid in pids}
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            now, s = killed
            say(f"  {tag} {now:6.2f} s KILL -9 executor pid(s) {pids} of worker 0 "
                f"(python workers under it: {busy}) during stage {s['stageId']}.{s['attemptId']} "
                f"'{s['name'][:60]}' ({now - active_since[(s['stageId'], s['attemptId'])]:.1f} s "
                f"after it was seen active), {s.get('numActiveTasks')} tasks running, "
                f"{s.get('numCompleteTasks')} of {s['numTasks']} complete")
    wall = time.monotonic() - t0
    evs = events(logdir)
    removed = [e.get("Removed Reason", "")[:90] for e in evs
               if e["Event"] == "SparkListenerExecutorRemoved"]
    added = [e.get("Executor ID") for e in evs if e["Event"] == "SparkListenerExecutorAdded"]
    failed = [(e["Stage ID"], e["Task End Reason"].get("Reason"))
              for e in evs if e["Event"] == "SparkListenerTaskEnd"
              and e["Task End Reason"].get("Reason") != "Success"]
    say(f"{tag}: rc={p.returncode} wall {wall:.1f} s load {open('/proc/loadavg').read().split()[0]}"
        f"{' STREAMSPEC_MATERIALISE=' + materialise if materialise else ''}")
    say(f"  executors added {added}; removed {removed or 'none'}")
    say(f"  tasks not successful: {failed or 'none'}")
    say(f"  stdout: {(work / f'{tag}.stdout').read_text().strip()[:300]}")
    if p.returncode:
        err = (work / f'{tag}.stderr').read_text().splitlines()
        first = next((line for line in err if "Exception" in line), err[-1] if err else "")
        say(f"  stderr: {len(err)} lines; the first naming an exception: {first[:300]}")
    return p.returncode, (work / out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--edges", type=int, default=4_000_000)
    ap.add_argument("--replay-after", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=2, help="kills of each kind (reliable)")
    ap.add_argument("--kills", default="replay,write")
    ap.add_argument("--local-checkpoint", action="store_true")
    args = ap.parse_args()
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--short", "pipeline"],
                           capture_output=True, text=True).stdout.strip()
    say(f"# commit {commit}{' (pipeline/ has uncommitted changes: ' + dirty.replace(chr(10), '; ') + ')' if dirty else ''}")
    say(f"# {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC; load {open('/proc/loadavg').read().strip()}")
    root, work, parquet, queries = inputs(args.edges)
    say(f"# {parquet.name}: {parquet.stat().st_size / 1e6:.1f} MB")
    cc = load("cc", ROOT / "tests" / "cluster" / "conftest.py")
    c = cc.Standalone(root / "cluster")
    results = {}
    try:
        c.start()
        say(f"# cluster {c.url}: master and two one-core workers, pids "
            f"{[q.pid for q in c.procs]}")
        rc, ref = run(c, work, parquet, queries, "reference", None, args.replay_after)
        reference = rows(ref) if rc == 0 else None
        kills = [k for k in args.kills.split(",") if k]
        plans = [(k, None, r) for r in range(args.rounds) for k in kills]
        if args.local_checkpoint:
            plans += [(k, "local", 0) for k in kills]
        for kill, kind, rnd in plans:
            tag = f"kill-{kill}" + (f"-{kind}" if kind else "") + f"-{rnd}"
            rc, out = run(c, work, parquet, queries, tag, kill, args.replay_after, kind)
            if rc == 0 and reference is not None:
                got = rows(out)
                same = got.equals(reference)
                say(f"  output equals the reference row for row: {same} "
                    f"({got.num_rows} rows, {reference.num_rows} in the reference)")
                results[tag] = (rc, same)
            else:
                results[tag] = (rc, None)
        say(f"# alive workers at the end: {c.alive_workers()}")
    finally:
        c.stop()
    say(f"# summary {results}; load after {open('/proc/loadavg').read().strip()}")


if __name__ == "__main__":
    main()
