"""A real Spark standalone cluster on 127.0.0.1, from the installed pyspark (issue 29).

``standalone``: one master and two workers of one core each
(``pyspark/bin/spark-class org.apache.spark.deploy.master.Master`` and ``...Worker``),
every process in its own working and temporary directory, none the driver's, so
a path that is only meaningful on the driver (relative, or in the driver's temp
directory) fails on the executors as it would on a real cluster.  The fixture
waits until both workers registered (the master's ``/json/`` page) and stops
every process it started (its process group: the executors too) at the end,
also when a test or the start itself fails.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from streamspec.pipeline.spark import QUICK_JIT

WORKERS = 2
START_TIMEOUT = 120.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spark_class() -> Path:
    import pyspark
    return Path(pyspark.__file__).parent / "bin" / "spark-class"


class Standalone:
    """The running cluster: its master URL and the directories of each process."""

    def __init__(self, root: Path):
        self.root = root
        self.procs: list[subprocess.Popen] = []
        self.logs: list[Path] = []
        self.port, self.webui = _free_port(), _free_port()
        self.url = f"spark://127.0.0.1:{self.port}"

    def _start(self, name: str, *args: str) -> None:
        home = self.root / name
        (home / "tmp").mkdir(parents=True)
        env = {**os.environ, "TMPDIR": str(home / "tmp"), "SPARK_LOCAL_DIRS": str(home / "tmp"),
               "SPARK_LOG_DIR": str(home), "SPARK_WORKER_DIR": str(home / "work"),
               "SPARK_LOCAL_IP": "127.0.0.1",
               # the quick JIT, as streamspec's own driver and executors (spark.QUICK_JIT)
               "SPARK_DAEMON_JAVA_OPTS": f"-Djava.io.tmpdir={home / 'tmp'} {QUICK_JIT}"}
        env.pop("SPARK_MASTER", None)
        log = home / "out.log"
        self.logs.append(log)
        with open(log, "wb") as out:
            self.procs.append(subprocess.Popen(
                [str(_spark_class()), *args], cwd=home, env=env, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True))

    def start(self) -> None:
        self._start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(self.port), "--webui-port", str(self.webui))
        for n in range(WORKERS):
            work = self.root / f"worker{n}" / "work"
            self._start(f"worker{n}", "org.apache.spark.deploy.worker.Worker", "--host",
                        "127.0.0.1", "--cores", "1", "--memory", "2g", "--webui-port",
                        str(_free_port()), "--work-dir", str(work), self.url)
        self.wait()

    def alive_workers(self) -> int:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.webui}/json/", timeout=2) as r:
                return int(json.load(r).get("aliveworkers", 0))
        except (OSError, ValueError):
            return 0

    def wait(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.alive_workers() >= WORKERS:
                return
            dead = [p for p in self.procs if p.poll() is not None]
            if dead:
                break
            time.sleep(0.5)
        raise RuntimeError(f"the standalone cluster did not start ({self.alive_workers()} of "
                           f"{WORKERS} workers registered); logs:\n" + self.tail())

    def tail(self, lines: int = 15) -> str:
        out = []
        for log in self.logs:
            text = log.read_text(errors="replace").splitlines() if log.exists() else []
            out += [f"== {log}", *text[-lines:]]
        return "\n".join(out)

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(timeout=10)


@pytest.fixture(scope="session")
def standalone(tmp_path_factory):
    """A started ``Standalone`` (module docstring); skipped without Java."""
    import shutil

    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java: a Spark standalone cluster needs it")
    cluster = Standalone(tmp_path_factory.mktemp("standalone"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
