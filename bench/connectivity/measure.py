"""One measured run of a connectivity engine over a stream (BIC TR Section 7.1 metrics).

Per-window latency is the paper's (BIC TR Section 7.1): "from just
before the query to just after inserting the triggering edge".  Engines are
built with ``hold_back=False`` (the contract applies every edge on arrival),
and the stream is cut at the window ends ``end(n) = t0 + r + n*s`` (and every
``s`` before the first end, the fill).  Each piece is fed in two calls:

1. ``process(<its first edge>)``: the triggering edge.  It makes window ``n``
   due, so the call answers every query of window ``n``, then inserts the
   edge.  Its time is window ``n``'s latency (split evenly if it makes several
   windows due, which only happens across empty slides); fill pieces make
   none due.
2. ``process(<the rest of the piece>)``: inserts only; counted in throughput,
   not in latency.

**Where BIC's backward build lands** (``build``, BIC TR Section 5.2).  The
paper's BIC builds the backward buffer of a completed chunk when the chunk's
first edge after it is inserted, which is a window's triggering edge: that
window's latency includes a whole-chunk build every ``K`` windows.  This
project's ``bic`` defers that build by default until the new chunk holds
``BicEngine.build_defer`` edges (1024), i.e. into a call that answers no
window; its engine option ``build`` selects the placement (``bic`` is
``bic:build=deferred``, ``bic:build=inside`` the paper's, any other option of
the name kept: ``bic:prereduce=false`` with ``build="inside"`` runs
``bic:build=inside,prereduce=false``).  ``build=None`` (default) runs the
engine as named; ``"deferred"`` or ``"inside"`` set the option on the name
(``engine_name``), so ``build="deferred"`` measures the engine as it ships
(the build in throughput, not in latency) and ``build="inside"`` the paper's
placement, the honest worst case of a window.  Engines that declare no
``build`` option defer nothing, and both settings measure the same thing
(``Measurement.defers`` is then False).  Reports show both side by side
(``targets`` and ``experiment``); a latency column never says "build
included" unless the engine ran with ``build=inside``.

**Garbage collection** (``freeze_gc``).  CPython's cyclic collector runs when
allocations outnumber deallocations by a threshold, wherever that happens; a
full (generation 2) pass walks every tracked object (the harness's stream
bookkeeping, numba's and numpy's module objects): 40-60 ms here, 4-10 times
a BIC window's build.  None of the engines creates cyclic garbage on its hot
path (the collector has nothing to free), so the pass is pure harness noise.
With ``freeze_gc=True`` (default) the harness, not the engine (an engine
must not change the process's GC state behind its user's back), runs
``gc.collect(); gc.freeze()`` after warm-up and construction, so later passes
only walk objects made during the run, and ``gc.unfreeze()`` at the end (``bench.heap``).
Either way every collector pass that starts inside a timed triggering call
is counted with its time (``gc_passes_in_triggers``, ``gc_ms_in_triggers``,
``gc_full_in_triggers``), so the rows show whether GC touched the latency.

Throughput = all edges / total time of every call (``flush`` included).
Construction and numba compilation are not in it (``warm_up`` compiles
first), nor is making the calls' inputs (the ``EdgeBatch`` views of the
stream, or the slices of the remapped columns): each input is made before
the clock starts, as a source would hand it over.  Windows that ``flush``
evaluates (no edge triggers them) have no latency.

Two ways to feed the same calls (``KINDS``):

``run`` -- through the contract (``process``), end to end
  Validation and id remapping (the spec boundary) are inside the timings:
  what a user of the engine sees.  The boundary's cost per call is not
  negligible next to BIC's window work: a window's triggering call runs on
  caches the slide before it evicted (see the report in
  ``bench/results/connectivity/README.md``).
``run_engine`` -- the engine alone
  Ids are remapped once up front (the paper's in-memory replay, dense ids
  as the engines use them) and each call goes straight to the contract's driver
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

import contextlib
import gc
import time

import attrs
import numpy as np

from streamspec.spec.connectivity import Params
from streamspec.spec.registry import Registry

from streamspec.bench import heap
from streamspec.bench.connectivity.generators import Stream, rmat_stream, workload
from streamspec.bench.connectivity.peers import PEERS, create

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
KINDS = {"contract": "through process(), hold_back=False",
         "engine": "engine alone (ids remapped up front, the driver's _evaluate called directly)"}
BUILDS = {"deferred": "backward build deferred out of the triggering call (build=deferred, bic's default)",
          "inside": "backward build inside the triggering call (build=inside, the paper's)"}
LATENCY = "latency = the triggering edge's call (queries + its insert)"


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
    build: str = "deferred"       # where BIC's backward build lands (BUILDS): the engine's option
    defers: bool = False          # the engine has a deferrable build (a ``build`` option)
    gc_frozen: bool = False       # gc.freeze() after warm-up and construction
    gc_passes_in_triggers: int = 0    # collector passes started inside a triggering call
    gc_full_in_triggers: int = 0      # of which full (generation 2) passes
    gc_seconds_in_triggers: float = 0.0

    @property
    def n_windows(self) -> int:
        return len(self.window_latencies)

    @property
    def throughput(self) -> float:
        """Edges per second: end to end, or the steady-state rate when truncated."""
        if self.truncated:
            return self.steady_throughput
        return self.n_edges / self.seconds if self.seconds else float("nan")

    @property
    def steady_throughput(self) -> float:
        """Edges per second from the first window's trigger on (the fill left out)."""
        return self.steady_edges / self.steady_seconds if self.steady_seconds else float("nan")

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
        build = BUILDS[self.build] if self.defers else "nothing deferred (no build option)"
        gc_how = "gc frozen after warm-up" if self.gc_frozen else "gc not frozen"
        how = f"{KINDS[self.kind]}; {LATENCY}; {build}; {gc_how}; {self.clock} clock"
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
                "truncated": self.truncated, "build": self.build if self.defers else "none",
                "defers": self.defers,
                "gc_frozen": self.gc_frozen, "gc_passes_in_triggers": self.gc_passes_in_triggers,
                "gc_full_in_triggers": self.gc_full_in_triggers,
                "gc_ms_in_triggers": round(self.gc_seconds_in_triggers * 1e3, 3),
                "method": self.method}


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


def has_build(name: str) -> bool:
    """Whether engine ``name`` declares the ``build`` option (a deferrable backward build: BIC)."""
    if name in PEERS:
        return False
    return "build" in (getattr(Registry.get("connectivity", name), "options", None) or {})


def engine_name(name: str, build: str | None = None) -> str:
    """``name`` with its engine's ``build`` option set to ``build`` (``None``: ``name``
    unchanged), its other options kept: ``engine_name("bic:prereduce=false", "inside")``
    is ``"bic:build=inside,prereduce=false"``.  Names of engines that declare no
    ``build`` option (every engine but BIC, the peers) come back unchanged."""
    if build is not None and build not in BUILDS:
        raise ValueError(f"build must be one of {sorted(BUILDS)}, got {build!r}")
    if build is None or not has_build(name):
        return name
    cls = Registry.get("connectivity", name)
    options = dict(getattr(cls, "configured", None) or {}, build=build)
    return Registry.configure(Registry.get("connectivity", name.partition(":")[0].strip()),
                              options).name


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


class _GcWatch:
    """Collector passes (and their time, on ``clock``) that start while ``armed``."""

    def __init__(self, now):
        self.now, self.armed, self.passes, self.full, self.seconds = now, False, 0, 0, 0.0
        self._start = None

    def __call__(self, phase, info):
        if phase == "start":
            self._start = self.now() if self.armed else None
            if self.armed:
                self.passes += 1
                self.full += info["generation"] == 2
        elif self._start is not None:
            self.seconds += self.now() - self._start
            self._start = None


def _measure(name, stream, params, budget, warm, clock, kind, record, build=None,
             freeze_gc=True) -> Measurement:
    named = engine_name(name, build)
    if warm:
        warm_up(named)
    engine = create(named, params, hold_back=False)
    defers = has_build(named)
    build = engine.build if defers else (build or "deferred")
    prepare, feed = _engine_feed(engine, stream, params) if kind == "engine" else \
        _contract_feed(engine, stream)
    now = CLOCKS[clock]
    watch = _GcWatch(now)
    gc.callbacks.append(watch)
    try:
        with heap.frozen() if freeze_gc else contextlib.nullcontext():
            return _timed(name, engine, stream, params, budget, now, prepare, feed, record,
                          watch, dict(clock=clock, kind=kind, build=build, defers=defers,
                                      gc_frozen=freeze_gc))
    finally:
        gc.callbacks.remove(watch)


def _timed(name, engine, stream, params, budget, now, prepare, feed, record, watch, how):
    latencies: list[float] = []
    total = steady = 0.0
    fed = steady_edges = 0
    truncated = False
    for lo, hi in pieces(stream, params):
        # the input exists before the clock starts: an engine is timed from the
        # arrival of its input, not from the source's making of it
        trigger = prepare(lo, lo + 1)
        rest_in = prepare(lo + 1, hi) if hi > lo + 1 else None
        before = (watch.passes, watch.full, watch.seconds)
        watch.armed = True
        start = now()
        out = feed(trigger)                          # the triggering edge
        mid = now()
        watch.armed = False
        rest = feed(rest_in) if rest_in is not None else []   # the rest: inserts only
        took = now() - start
        produced = len(out)
        if not produced:              # a fill piece: no window, no latency to disturb
            watch.passes, watch.full, watch.seconds = before
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
                       steady_edges, steady, len(stream), gc_passes_in_triggers=watch.passes,
                       gc_full_in_triggers=watch.full, gc_seconds_in_triggers=watch.seconds,
                       **how)


def run(name: str, stream: Stream, params: Params, budget: float | None = None,
        warm: bool = True, clock: str = "wall", record: list | None = None,
        build: str | None = None, freeze_gc: bool = True) -> Measurement:
    """Feed ``stream`` to engine ``name`` through ``process`` (triggering edge, then the rest).

    ``record``: a list that receives every ``WindowResult`` in order (flush's
    too), so tests can check the measured run against the oracle.
    ``build``: ``None`` (the engine as named), ``"deferred"`` (BIC's default) or
    ``"inside"`` (BIC's backward build in the triggering call, the paper's): the
    engine's ``build`` option (``engine_name``); ``freeze_gc``: see the module docstring.
    """
    return _measure(name, stream, params, budget, warm, clock, "contract", record, build,
                    freeze_gc)


def run_engine(name: str, stream: Stream, params: Params, budget: float | None = None,
               warm: bool = True, clock: str = "wall", record: list | None = None,
               build: str | None = None, freeze_gc: bool = True) -> Measurement:
    """The same calls without the spec boundary (ids remapped up front); the
    other arguments as in ``run``."""
    if len(stream) == 0:
        raise ValueError("empty stream")
    return _measure(name, stream, params, budget, warm, clock, "engine", record, build,
                    freeze_gc)
