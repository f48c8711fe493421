"""The connectivity demo job, local[2] against the cluster lane's standalone cluster, twice each,
alternating, one fresh `streamspec run` process per run (JVM start included).

Run from the checkout with streamspec installed: `python bench/results/cluster/measure_demo.py`
(prints one line per run: round, master, exit code, wall seconds, the job's last line).
"""
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
spec = importlib.util.spec_from_file_location("cc", ROOT / "tests" / "cluster" / "conftest.py")
cc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cc)
root = Path(tempfile.mkdtemp(prefix="measure-"))
c = cc.Standalone(root / "cluster")
try:
    c.start()
    from streamspec.pipeline.jobs import connectivity as m
    work = root / "driver"
    work.mkdir()
    streamspec = str(Path(sys.executable).with_name("streamspec"))
    base = [streamspec, "run", "connectivity", *m.demo_argv("out")]
    print(f"# load before: {open('/proc/loadavg').read().strip()}", flush=True)
    for rnd in range(2):
        for master in ("local[2]", c.url):
            t = time.monotonic()
            p = subprocess.run([*base, "--master", master], cwd=work,
                               capture_output=True, text=True,
                               env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"})
            print(rnd, master, p.returncode, round(time.monotonic() - t, 1),
                  p.stdout.strip()[-120:], flush=True)
    print(f"# load after: {open('/proc/loadavg').read().strip()}", flush=True)
finally:
    c.stop()
