"""One measured run of a connectivity engine over a stream (BIC TR Section 7.1 metrics).

Two ways to run an engine:

``run`` (through the contract, end to end)
- **Slide latency.** The stream is fed slide by slide, one ``process``
  call per slide.  Under the continuous model the first edge of slide ``k``
  makes exactly one window due, so each call that yields a window does that
  window's work: apply one slide of edges (the held-back edges of the previous
  slide), answer every query, and, when a chunk completes, build BIC's backward
  buffer.  The latency of a window is the time of the call that yielded it (split
  evenly if a call yields several, which only happens across empty slides).
  The contract holds back edges past the last due window, so through
  ``process`` a window's work always includes one slide of inserts.  The first
  ``K`` calls only fill the first window and yield nothing; the trailing
  windows that ``flush`` evaluates are partial and not in the percentiles.
- **Throughput** = edges / total time of all ``process`` calls plus ``flush``
  (everything the engine does, backward builds included); construction and
  numba compilation are not in it (``warm_up`` compiles first).

``run_paper`` (the paper's latency, at the engine-hook level)
- **Window latency** as the paper defines it (analysis note Section 1.3): from
  just before the queries of window ``n`` to just after inserting the edge
  that triggered it, which includes BIC's backward build when a chunk
  completes.  The stream's ids are remapped once up front (the paper's offline
  replay, analysis note Section 8.2) and each slide is handed to the engine's
  ``_run`` hook (``spec.connectivity.ConnectivityEngine``) in two calls: the
  triggering (first) edge with the due window -- timed as the latency -- then
  the rest of the slide with no window due.  The spec boundary (validation,
  id remapping) is outside these timings, so its throughput is the engine's
  own; ``slide_latencies`` are the two calls together.
- The split needs an engine whose ``_run`` applies edges past the last window
  it evaluates, as the hook's docstring says; the base driver never asks for
  that, and some engines (RWC, D-Tree at the time of writing) drop such edges.
  ``splits_slides(name)`` checks it on a tiny stream against the oracle; an
  engine that fails is measured with ``run`` instead (``kind="slide"``: one
  slide of inserts plus the evaluation, an upper bound of the paper's
  latency; for RWC the inserts are FIFO appends, small next to the rebuild).

Common to both:
- **Clock.** ``clock="wall"`` (default, the paper's metric) uses
  ``time.perf_counter``; ``clock="cpu"`` uses ``time.process_time``, which a
  busy shared machine distorts far less (every engine here is single-threaded,
  so on a quiet machine the two agree).  The row names the clock.
- **Budget.** A slow engine can be stopped after ``budget`` seconds; the run
  is then *truncated*: its throughput is the steady-state rate of the
  measured window calls (edges they fed / their time), its latencies are those
  of the windows reached, and the row says so.  Per-window recomputation costs
  about the same on every window, so a prefix is a fair sample for it.
"""
from __future__ import annotations

import functools
import time

import attrs
import numpy as np

from spec.connectivity import Params

from bench.connectivity.generators import Stream, rmat_stream, workload
from bench.connectivity.peers import create


@attrs.frozen
class Measurement:
    engine: str
    n_edges: int                 # edges fed (all of them unless truncated)
    seconds: float               # total time of the calls measured
    window_latencies: np.ndarray  # seconds, one per full window evaluated by ``process``
    truncated: bool
    steady_edges: int            # edges fed by the window-yielding calls
    steady_seconds: float        # and their time
    stream_edges: int            # length of the whole stream
    clock: str = "wall"
    kind: str = "contract"       # "contract" (run), "paper" or "slide" (run_paper)
    slide_latencies: np.ndarray | None = None   # run_paper: trigger + rest of slide

    @property
    def whole_stream_seconds(self) -> float:
        """Time for the whole stream at this throughput (extrapolated when truncated)."""
        return self.stream_edges / self.throughput

    @property
    def n_windows(self) -> int:
        return len(self.window_latencies)

    @property
    def throughput(self) -> float:
        """Edges per second: end to end, or the steady-state rate when truncated."""
        if self.truncated:
            return self.steady_edges / self.steady_seconds if self.steady_seconds else float("nan")
        return self.n_edges / self.seconds if self.seconds else float("nan")

    def percentile(self, q: float) -> float:
        if self.n_windows == 0:
            return float("nan")
        return float(np.percentile(self.window_latencies, q))

    @property
    def method(self) -> str:
        how = {"contract": "through process(), one call per slide",
               "paper": "paper latency (queries + triggering edge) at the _run hook, ids remapped "
                        "up front",
               "slide": "paper latency unavailable (the engine's _run drops edges past the "
                        "evaluated window): through process(), latency = one slide of inserts + "
                        "the window, an upper bound"}[self.kind]
        if self.truncated:
            return (f"{how}; {self.clock} clock; truncated by budget: first {self.n_windows} "
                    f"windows; throughput = steady-state edges/s of those window calls")
        return (f"{how}; {self.clock} clock; all {self.n_windows} full windows; throughput = "
                f"all edges / total time")

    def row(self) -> dict:
        return {"engine": self.engine, "edges_fed": self.n_edges, "windows": self.n_windows,
                "total_s": round(self.seconds, 6), "throughput_eps": round(self.throughput, 1),
                "p50_ms": round(self.percentile(50) * 1e3, 6),
                "p95_ms": round(self.percentile(95) * 1e3, 6),
                "p99_ms": round(self.percentile(99) * 1e3, 6),
                "truncated": self.truncated, "method": self.method}


def warm_up(name: str) -> None:
    """Run the engine once on a tiny stream so numba compiles outside the timings."""
    stream = rmat_stream(64, 2000, 20, seed=1)
    params = Params(r=10, s=2, workload=workload(stream, 4, seed=1, top=None))
    engine = create(name, params)
    for batch in stream.slides(2):
        for _ in engine.process(batch):
            pass
    engine.flush()


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def run(name: str, stream: Stream, params: Params, budget: float | None = None,
        warm: bool = True, clock: str = "wall") -> Measurement:
    """Feed ``stream`` to engine ``name`` one slide per ``process`` call and time it."""
    if warm:
        warm_up(name)
    engine = create(name, params)
    latencies: list[float] = []
    total = steady = 0.0
    fed = steady_edges = 0
    truncated = False
    now = CLOCKS[clock]
    for batch in stream.slides(params.s, params.t0):
        start = now()
        produced = sum(1 for _ in engine.process(batch))
        took = now() - start
        total += took
        fed += len(batch)
        if produced:
            latencies.extend([took / produced] * produced)
            steady += took
            steady_edges += len(batch)
        if budget is not None and total > budget and fed < len(stream) and latencies:
            truncated = True
            break
    if not truncated:
        start = now()
        engine.flush()
        total += now() - start
    return Measurement(name, fed, total, np.asarray(latencies, dtype=np.float64), truncated,
                       steady_edges, steady, len(stream), clock)


@functools.lru_cache(maxsize=None)
def splits_slides(name: str) -> bool:
    """Does ``run_paper``'s two-call split replay a small stream exactly like the oracle?"""
    from reference.connectivity import evaluate

    stream = rmat_stream(40, 600, 6, seed=11)
    params = Params(r=12, s=4, workload=workload(stream, 6, seed=11, top=None))
    got: list = []
    _split_replay(name, stream, params, None, "cpu", got)
    edges = list(zip(stream.u.tolist(), stream.v.tolist(), stream.t.tolist()))
    return got == [w.answers for w in evaluate(edges, params)]


def run_paper(name: str, stream: Stream, params: Params, budget: float | None = None,
              warm: bool = True, clock: str = "wall", record: list | None = None) -> Measurement:
    """The paper's per-window latency at the engine-hook level (see the module docstring).

    Falls back to ``run`` (``kind="slide"``) for an engine that fails
    ``splits_slides``.  ``record``: a list that receives every evaluated
    window's answers (a tuple of bools per window, in order), for tests.
    """
    if warm:
        warm_up(name)
    if not splits_slides(name):
        m = run(name, stream, params, budget, warm=False, clock=clock)
        return attrs.evolve(m, kind="slide", slide_latencies=m.window_latencies)
    return _split_replay(name, stream, params, budget, clock, record)


def _split_replay(name, stream, params, budget, clock, record) -> Measurement:
    engine = create(name, params)
    if len(stream) == 0:
        raise ValueError("empty stream")
    # what ConnectivityEngine._feed does on the first batch, for the whole stream at once
    engine._init_vertices(int)
    t0 = params.t0 if params.t0 is not None else int(stream.t[0])
    engine._set_origin(t0)
    dense = engine.vertices.add(np.concatenate([stream.u, stream.v]))
    gu, gv, t = dense[:len(stream)], dense[len(stream):], stream.t
    windows = engine.windows
    bounds = stream.slide_bounds(params.s, t0).tolist()
    now = CLOCKS[clock]
    latencies: list[float] = []
    slide_latencies: list[float] = []
    total = steady = 0.0
    fed = steady_edges = 0
    truncated = False

    def apply(lo, hi, upto):
        start = now()
        out = engine._run(gu[lo:hi], gv[lo:hi], t[lo:hi], upto)
        took = now() - start
        if record is not None:
            record.extend(tuple(bool(x) for x in row) for row in out.tolist())
        engine.next_window = upto
        engine.last_t = int(t[hi - 1])
        return took

    for lo, hi in zip(bounds[:-1], bounds[1:]):
        if hi == lo:
            continue
        due = max(windows.due_before(int(t[lo])), engine.next_window)
        produced = due - engine.next_window
        trigger = apply(lo, lo + 1, due)
        rest = apply(lo + 1, hi, due) if hi > lo + 1 else 0.0
        total += trigger + rest
        fed += hi - lo
        if produced:
            latencies.extend([trigger / produced] * produced)
            slide_latencies.extend([(trigger + rest) / produced] * produced)
            steady += trigger + rest
            steady_edges += hi - lo
        if budget is not None and total > budget and fed < len(stream) and latencies:
            truncated = True
            break
    if not truncated:   # flush: the trailing windows (partial; not in the percentiles)
        final = windows.started_by(int(t[-1]))
        if final > engine.next_window:
            total += apply(len(stream), len(stream), final)
    return Measurement(name, fed, total, np.asarray(latencies, dtype=np.float64), truncated,
                       steady_edges, steady, len(stream), clock, "paper",
                       np.asarray(slide_latencies, dtype=np.float64))
