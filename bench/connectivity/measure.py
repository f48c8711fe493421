"""One measured run of a connectivity engine over a stream (BIC TR Section 7.1 metrics).

Two ways to run an engine, both slide by slide:

``run`` -- through the contract, end to end
  One ``process`` call per slide (``EdgeBatch`` views, no copies).  Under the
  continuous model the first edge of slide ``k`` makes one window due, so each
  call that yields a window does that window's work: apply one slide of edges
  (the edges the driver held back since the previous window), answer every
  query, and, when a chunk completes, build BIC's backward buffer.  Validation
  and id remapping (the spec boundary) are inside the timings.

``run_engine`` -- the engine alone
  Ids are remapped once up front (the paper's offline replay, analysis note
  Section 8.2) and the engine's ``_run`` hook is called exactly as the
  contract's driver calls it (same edges, same windows per call), so the spec
  boundary is outside the timings: the engine's own throughput and latency.

Per-window latency = time of the call that yielded the window (split evenly if
a call yields several, which only happens across empty slides).  The first
window's call also applies the ``K - 1`` slides before it (the fill), so that
window is left out of the percentiles, and so are the partial trailing windows
that ``flush`` evaluates.  Throughput = edges / total time of every call
(``flush`` included; backward builds included); construction and numba
compilation are not in it (``warm_up`` compiles first).

The paper's latency (analysis note Section 1.3: queries + inserting the one
triggering edge) cannot be isolated here: the contract holds back the edges
past the last due window until the next window falls due (so that
``connected`` is exact), and the engines do the same at the hook (BIC keeps
them aside, RWC and D-Tree drop edges past the windows they evaluate).  So a
window's latency here always includes one slide of inserts: a lower bound on
it is the time to insert a slide, which the paper's definition leaves out.

- **Clock.** ``clock="wall"`` (default, the paper's metric) uses
  ``time.perf_counter``; ``clock="cpu"`` uses ``time.process_time``, which a
  busy shared machine distorts far less (every engine here is single-threaded,
  so on a quiet machine the two agree).  The row names the clock.
- **Budget.** A slow engine can be stopped after ``budget`` seconds; the run
  is then *truncated*: its throughput is the steady-state rate of the
  window calls measured (edges they applied / their time), its latencies are
  those of the windows reached, and the row says so.  Per-window
  recomputation costs about the same on every window, so a prefix is a fair
  sample for it.
"""
from __future__ import annotations

import time

import attrs
import numpy as np

from spec.connectivity import Params

from bench.connectivity.generators import Stream, rmat_stream, workload
from bench.connectivity.peers import create

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
KINDS = {"contract": "through process(), one call per slide",
         "engine": "engine alone: the _run hook called as the driver calls it, ids remapped "
                   "up front"}


@attrs.frozen
class Measurement:
    engine: str
    n_edges: int                  # edges fed (all of them unless truncated)
    seconds: float                # total time of the calls measured
    window_latencies: np.ndarray  # seconds, one per full window (the first excluded)
    truncated: bool
    steady_edges: int             # edges applied by the window calls after the first
    steady_seconds: float         # and their time
    stream_edges: int             # length of the whole stream
    clock: str = "wall"
    kind: str = "contract"        # "contract" (run) or "engine" (run_engine)

    @property
    def n_windows(self) -> int:
        return len(self.window_latencies)

    @property
    def throughput(self) -> float:
        """Edges per second: end to end, or the steady-state rate when truncated."""
        if self.truncated:
            return self.steady_edges / self.steady_seconds if self.steady_seconds else float("nan")
        return self.n_edges / self.seconds if self.seconds else float("nan")

    @property
    def whole_stream_seconds(self) -> float:
        """Time for the whole stream at this throughput (extrapolated when truncated)."""
        return self.stream_edges / self.throughput

    def percentile(self, q: float) -> float:
        if self.n_windows == 0:
            return float("nan")
        return float(np.percentile(self.window_latencies, q))

    @property
    def method(self) -> str:
        how = f"{KINDS[self.kind]}; {self.clock} clock"
        if self.truncated:
            return (f"{how}; truncated by budget: {self.n_windows} windows measured; throughput"
                    f" = steady-state edges/s of those window calls")
        return f"{how}; {self.n_windows} full windows; throughput = all edges / total time"

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


class _Tally:
    """Accumulates call times into throughput and per-window latencies."""

    def __init__(self, budget):
        self.budget = budget
        self.latencies: list[float] = []
        self.total = self.steady = 0.0
        self.fed = self.steady_edges = 0
        self.filled = False

    def add(self, took: float, edges_fed: int, edges_applied: int, produced: int) -> None:
        self.total += took
        self.fed += edges_fed
        if produced and self.filled:
            self.latencies.extend([took / produced] * produced)
            self.steady += took
            self.steady_edges += edges_applied
        elif produced:
            self.filled = True        # the first window's call: it also did the fill

    def over_budget(self, stream_edges: int) -> bool:
        return (self.budget is not None and self.total > self.budget
                and self.fed < stream_edges and len(self.latencies) > 0)

    def result(self, name, stream, truncated, clock, kind) -> Measurement:
        return Measurement(name, self.fed, self.total, np.asarray(self.latencies, np.float64),
                           truncated, self.steady_edges, self.steady, len(stream), clock, kind)


def run(name: str, stream: Stream, params: Params, budget: float | None = None,
        warm: bool = True, clock: str = "wall") -> Measurement:
    """Feed ``stream`` to engine ``name`` through ``process``, one slide per call, and time it."""
    if warm:
        warm_up(name)
    engine = create(name, params)
    now = CLOCKS[clock]
    tally = _Tally(budget)
    truncated = False
    previous = 0
    for batch in stream.slides(params.s, params.t0):
        start = now()
        produced = sum(1 for _ in engine.process(batch))
        took = now() - start
        # the call applies what was held back: the previous slide, in the steady state
        tally.add(took, len(batch), previous, produced)
        previous = len(batch)
        if tally.over_budget(len(stream)):
            truncated = True
            break
    if not truncated:
        start = now()
        engine.flush()
        tally.total += now() - start
    return tally.result(name, stream, truncated, clock, "contract")


def run_engine(name: str, stream: Stream, params: Params, budget: float | None = None,
               warm: bool = True, clock: str = "wall", record: list | None = None) -> Measurement:
    """The engine alone: its ``_run`` hook called as the contract's driver calls it.

    ``record``: a list that receives every evaluated window's answers (a
    tuple of bools per window, in order), so tests can check the replay.
    """
    if warm:
        warm_up(name)
    if len(stream) == 0:
        raise ValueError("empty stream")
    engine = create(name, params)
    # what ConnectivityEngine._feed does on the first batch, for the whole stream at once
    engine._init_vertices(int)
    t0 = params.t0 if params.t0 is not None else int(stream.t[0])
    engine._set_origin(t0)
    dense = engine.vertices.add(np.concatenate([stream.u, stream.v]))
    gu, gv, t = dense[:len(stream)], dense[len(stream):], stream.t
    windows = engine.windows
    now = CLOCKS[clock]
    tally = _Tally(budget)
    truncated = False
    applied = 0                          # edges before this index were handed to _run

    def apply(hi: int, upto: int) -> float:
        nonlocal applied
        start = now()
        out = engine._run(gu[applied:hi], gv[applied:hi], t[applied:hi], upto)
        took = now() - start
        engine.next_window = upto        # what ConnectivityEngine._evaluate does after _run
        if record is not None:
            record.extend(tuple(bool(x) for x in row) for row in out.tolist())
        applied = hi
        return took

    bounds = stream.slide_bounds(params.s, t0).tolist()
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        if hi == lo:
            continue
        engine.last_t = int(t[hi - 1])
        upto = windows.due_before(engine.last_t)
        if upto <= engine.next_window:
            tally.add(0.0, hi - lo, 0, 0)          # held back: nothing runs
            continue
        cut = int(np.searchsorted(t[:hi], windows.end(upto - 1), side="left"))
        produced, before = upto - engine.next_window, applied
        tally.add(apply(cut, upto), hi - lo, cut - before, produced)
        if tally.over_budget(len(stream)):
            truncated = True
            break
    if not truncated:
        final = max(windows.started_by(int(t[-1])), engine.next_window)
        tally.total += apply(len(stream), final)
    return tally.result(name, stream, truncated, clock, "engine")
