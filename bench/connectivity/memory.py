"""Peak memory of one engine run, measured in a fresh subprocess (BIC TR Section 7.2, memory).

Method (documented in every row it produces):

1. The parent saves the stream (``u``, ``v``, ``t`` arrays) to a ``.npz`` file
   and the parameters to JSON; the child process loads them, so generating
   the stream leaves no high-water mark behind in the child.
2. The child warms the engine up on a tiny stream (numba compiles), then
   resets the kernel's peak-RSS counter (``/proc/self/clear_refs`` with ``5``,
   Linux >= 4.0) and records its current RSS as the baseline.
3. It replays the stream with ``measure.run`` (``hold_back=False``, the
   triggering edge of each window, then the rest of the slide) and reads the
   peak RSS (``VmHWM``).  **peak delta = peak RSS - baseline**: what the
   engine's state and its transient buffers (and the spec boundary's id
   index, the same for every engine) added on top of the input.
   Where the peak counter cannot be reset, ``resource.getrusage`` maxrss is
   used for both readings and the row says so.
4. Optionally (``tracemalloc=True``, a second child) ``tracemalloc``'s peak,
   which sees numpy allocations (numpy reports them to tracemalloc) but not
   memory that numba-compiled code allocates itself.

CLI (used by the parent; runnable by hand):
``python -m streamspec.bench.connectivity.memory ENGINE STREAM.npz PARAMS.json [--tracemalloc]``
prints one JSON object.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from streamspec.spec.connectivity import Params

from streamspec.bench.connectivity.generators import Stream
from streamspec.bench.connectivity.measure import run, warm_up


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def _maxrss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss   # KiB on Linux


def replay(name: str, stream: Stream, params: Params) -> None:
    run(name, stream, params, warm=False)


def child(name: str, stream_path: str, params_path: str, use_tracemalloc: bool) -> dict:
    data = np.load(stream_path)
    stream = Stream(data["u"], data["v"], data["t"])
    spec = json.loads(Path(params_path).read_text())
    params = Params(r=spec["r"], s=spec["s"], workload=[tuple(q) for q in spec["workload"]])
    warm_up(name)
    if use_tracemalloc:
        import tracemalloc
        tracemalloc.start()
        replay(name, stream, params)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return {"engine": name, "tracemalloc_peak_bytes": int(peak),
                "method": "tracemalloc peak (numpy allocations; not numba-internal ones)"}
    if _reset_peak() and _status_kib("VmHWM") is not None:
        base = _status_kib("VmRSS")
        replay(name, stream, params)
        peak = _status_kib("VmHWM")
        method = "VmHWM after /proc/self/clear_refs reset minus VmRSS before the run"
    else:
        base = _maxrss_kib()
        replay(name, stream, params)
        peak = _maxrss_kib()
        method = "getrusage maxrss after minus before the run (peak could not be reset)"
    return {"engine": name, "baseline_rss_bytes": base * 1024, "peak_rss_bytes": peak * 1024,
            "peak_delta_bytes": max(0, peak - base) * 1024, "method": method}


def measure(name: str, stream: Stream, params: Params, tracemalloc: bool = False,
            timeout: float | None = None) -> dict:
    """Run ``name`` over ``stream`` in a fresh interpreter; return the child's JSON report."""
    with tempfile.TemporaryDirectory(prefix="streamspec-mem-") as tmp:
        stream_path = os.path.join(tmp, "stream.npz")
        params_path = os.path.join(tmp, "params.json")
        np.savez(stream_path, u=stream.u, v=stream.v, t=stream.t)
        Path(params_path).write_text(json.dumps(
            {"r": params.r, "s": params.s, "workload": [list(q) for q in params.workload]}))
        cmd = [sys.executable, "-m", "streamspec.bench.connectivity.memory", name, stream_path, params_path]
        if tracemalloc:
            cmd.append("--tracemalloc")
        root = Path(__file__).resolve().parents[2]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [str(root)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=root)
        if done.returncode != 0:
            raise RuntimeError(f"memory child for {name} failed:\n{done.stderr[-2000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m streamspec.bench.connectivity.memory",
                                     description="peak memory of one engine run (child process)")
    parser.add_argument("engine")
    parser.add_argument("stream", help=".npz with arrays u, v, t")
    parser.add_argument("params", help="JSON with r, s, workload")
    parser.add_argument("--tracemalloc", action="store_true")
    args = parser.parse_args(argv)
    print(json.dumps(child(args.engine, args.stream, args.params, args.tracemalloc)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
