"""One measured run of a connectivity engine over a stream (BIC TR Section 7.1 metrics).

Per-window latency is the paper's (analysis note Section 1.3): "from just
before the query to just after inserting the triggering edge", so for BIC it
includes the backward build when a chunk completes.  Engines are built with
``hold_back=False`` (the contract applies every edge on arrival), and the
stream is cut at the window ends ``end(n) = t0 + r + n*s`` (and every ``s``
before the first end, the fill).  Each piece is fed in two calls:

1. ``process(<its first edge>)``: the triggering edge.  It makes window ``n``
   due, so the call answers every query of window ``n``, then inserts the
   edge (and builds BIC's backward buffer when a chunk completes).  Its time
   is window ``n``'s latency (split evenly if it makes several windows due,
   which only happens across empty slides); fill pieces make none due.
2. ``process(<the rest of the piece>)``: inserts only; counted in throughput,
   not in latency.

Throughput = all edges / total time of every call (``flush`` included).
Construction and numba compilation are not in it (``warm_up`` compiles
first), nor is making the calls' inputs (the ``EdgeBatch`` views of the
stream, or the slices of the remapped columns): each input is made before
the clock starts, as a source would hand it over.  Windows that ``flush`` evaluates (no edge triggers them) have no
latency.

Two ways to feed the same calls (``KINDS``):

``run`` -- through the contract (``process``), end to end
  Validation and id remapping (the spec boundary) are inside the timings:
  what a user of the engine sees.  The boundary's cost per call is not
  negligible next to BIC's window work: a window's triggering call runs on
  caches the slide before it evicted (see the report in
  ``bench/results/connectivity/README.md``).
``run_engine`` -- the engine alone
  Ids are remapped once up front (the paper's in-memory replay, analysis note
  Section 8.2) and each call goes straight to the contract's driver
  (``_evaluate``, which calls the engine's ``_run`` hook exactly as
  ``process`` would), so only the spec boundary is left out: the engine's
  own latency, the quantity the paper's figures report.

- **Clock.** ``clock="wall"`` (default, the paper's metric) uses
  ``time.perf_counter``; ``clock="cpu"`` uses ``time.process_time``, which a
  busy shared machine distorts far less (every engine here is single-threaded,
  so on a quiet machine the two agree).  The row names the clock.
- **Budget.** A slow engine can be stopped after ``budget`` seconds; the run
  is then *truncated*: its numbers come from a sample, the windows reached
  (a prefix, after the fill); its throughput is the steady-state rate from
  the first window's trigger on (edges fed / their time), and the row says
  so.  Per-window recomputation costs about the same on every window of a
  stationary stream, so the prefix is a fair sample for it.
"""
from __future__ import annotations

import time

import attrs
import numpy as np

from streamspec.spec.connectivity import Params

from streamspec.bench.connectivity.generators import Stream, rmat_stream, workload
from streamspec.bench.connectivity.peers import create

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
KINDS = {"contract": "through process(), hold_back=False",
         "engine": "engine alone (ids remapped up front, the driver's _evaluate called directly)"}
LATENCY = "latency = the triggering edge's call (queries + its insert; BIC defers backward builds)"


@attrs.frozen
class Measurement:
    engine: str
    n_edges: int                  # edges fed (all of them unless truncated)
    seconds: float                # total time of the calls measured
    window_latencies: np.ndarray  # seconds, one per window an edge triggered
    truncated: bool
    steady_edges: int             # edges fed from the first window's trigger on
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
        how = f"{KINDS[self.kind]}; {LATENCY}; {self.clock} clock"
        if self.truncated:
            return (f"{how}; SAMPLED: time budget reached after the first {self.n_windows} "
                    f"windows; throughput = steady-state edges/s from the first trigger on")
        return f"{how}; {self.n_windows} windows; throughput = all edges / total time"

    def row(self) -> dict:
        return {"engine": self.engine, "edges_fed": self.n_edges, "windows": self.n_windows,
                "total_s": round(self.seconds, 6), "throughput_eps": round(self.throughput, 1),
                "p50_ms": round(self.percentile(50) * 1e3, 6),
                "p95_ms": round(self.percentile(95) * 1e3, 6),
                "p99_ms": round(self.percentile(99) * 1e3, 6),
                "truncated": self.truncated, "method": self.method}


def pieces(stream: Stream, params: Params) -> list[tuple[int, int]]:
    """Edge ranges ``[lo, hi)`` cut at the window ends (and every ``s`` before the first).

    The first edge of a piece at or after ``end(0)`` is a triggering edge:
    feeding it makes the windows ending by its time due.  Empty pieces are left out.
    """
    if len(stream) == 0:
        return []
    t0 = int(stream.t[0]) if params.t0 is None else params.t0
    first = t0 + params.r - (params.r // params.s) * params.s      # end(0) - a whole number of s
    n = (int(stream.t[-1]) - first) // params.s + 1
    cuts = first + params.s * np.arange(n + 1, dtype=np.int64)
    bounds = [0] + np.searchsorted(stream.t, cuts, side="left").tolist() + [len(stream)]
    return [(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]


def warm_up(name: str) -> None:
    """Run the engine once on a tiny stream so numba compiles outside the timings."""
    stream = rmat_stream(64, 2000, 20, seed=1)
    params = Params(r=10, s=2, workload=workload(stream, 4, seed=1, top=None))
    run(name, stream, params, warm=False)


def _contract_feed(engine, stream: Stream):
    def prepare(lo: int, hi: int):
        return stream.batch(lo, hi)

    def feed(batch) -> list:
        return list(engine.process(batch))
    return prepare, feed


def _engine_feed(engine, stream: Stream, params: Params):
    """What ``process`` does after validation and id remapping, with ids remapped up front."""
    engine._init_vertices(int)
    engine._set_origin(params.t0 if params.t0 is not None else int(stream.t[0]))
    dense = engine.vertices.add(np.concatenate([stream.u, stream.v]))
    gu, gv, t = dense[:len(stream)], dense[len(stream):], stream.t

    def prepare(lo: int, hi: int):
        return (gu[lo:hi], gv[lo:hi], t[lo:hi]), int(t[hi - 1])

    def feed(piece) -> list:
        # eager driver: nothing is pending between calls, so this is _feed's concatenation
        engine._pending, engine.last_t = piece
        return engine._evaluate(engine.windows.due_before(engine.last_t), final=False)
    return prepare, feed


def _measure(name, stream, params, budget, warm, clock, kind, record) -> Measurement:
    if warm:
        warm_up(name)
    engine = create(name, params, hold_back=False)
    prepare, feed = _engine_feed(engine, stream, params) if kind == "engine" else \
        _contract_feed(engine, stream)
    now = CLOCKS[clock]
    latencies: list[float] = []
    total = steady = 0.0
    fed = steady_edges = 0
    truncated = False
    for lo, hi in pieces(stream, params):
        # the input exists before the clock starts: an engine is timed from the
        # arrival of its input, not from the source's making of it
        trigger = prepare(lo, lo + 1)
        rest_in = prepare(lo + 1, hi) if hi > lo + 1 else None
        start = now()
        out = feed(trigger)                          # the triggering edge
        mid = now()
        rest = feed(rest_in) if rest_in is not None else []   # the rest: inserts only
        took = now() - start
        produced = len(out)
        if record is not None:
            record.extend(out + rest)
        total += took
        fed += hi - lo
        if produced:
            latencies.extend([(mid - start) / produced] * produced)
        if latencies:
            steady += took
            steady_edges += hi - lo
        if budget is not None and total > budget and latencies and fed < len(stream):
            truncated = True
            break
    if not truncated:
        start = now()
        out = engine.flush()
        total += now() - start
        if record is not None:
            record.extend(out)
    return Measurement(name, fed, total, np.asarray(latencies, np.float64), truncated,
                       steady_edges, steady, len(stream), clock, kind)


def run(name: str, stream: Stream, params: Params, budget: float | None = None,
        warm: bool = True, clock: str = "wall", record: list | None = None) -> Measurement:
    """Feed ``stream`` to engine ``name`` through ``process`` (triggering edge, then the rest).

    ``record``: a list that receives every ``WindowResult`` in order (flush's
    too), so tests can check the measured run against the oracle.
    """
    return _measure(name, stream, params, budget, warm, clock, "contract", record)


def run_engine(name: str, stream: Stream, params: Params, budget: float | None = None,
               warm: bool = True, clock: str = "wall", record: list | None = None) -> Measurement:
    """The same calls without the spec boundary (ids remapped up front); ``record`` as in ``run``."""
    if len(stream) == 0:
        raise ValueError("empty stream")
    return _measure(name, stream, params, budget, warm, clock, "engine", record)
