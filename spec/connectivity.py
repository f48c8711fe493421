"""Sliding-window connectivity over a streaming graph: the contract.

This docstring is the normative semantics; paper: Zhang, Bonifati, Oezsu,
"Incremental Sliding Window Connectivity over Streaming Graphs" (BIC, PVLDB
17(10), 2024; technical report Sections 3-4).

- A streaming edge ``Edge(u, v, t)`` is undirected; ``t`` is an int and
  non-decreasing; self-loops and duplicate edges are allowed.  Vertex ids are
  all ints or all strs: the workload fixes the type (the first edge does when
  the workload is empty); an id of the other type is an ``InvalidRecord``.
- Window ``n`` is ``[t0 + n*s, t0 + n*s + r)`` (``streamspec.spec.windows``); ``t0``
  defaults to the first edge's time and may not be after it.
- Window ``n`` is evaluated when an edge with ``t >= end(n)`` arrives, before
  that edge is applied; ``flush`` evaluates every window whose start is
  ``<=`` the last edge's time.  Every window is evaluated, also across gaps
  (all answers false), so there is exactly one ``WindowResult`` per window.
- A vertex is present in a window iff it is an endpoint of an edge of that
  window.  ``Q(a, b)`` is true iff both are present and connected;
  ``Q(x, x)`` is true iff ``x`` is present.

Decisions the paper leaves open (a user's expectations):

- ``advance_to(t)`` is a watermark: no edge earlier than ``t`` will come, so
  every window with ``end <= t`` is evaluated now.  Spark's partitioned replay
  and streaming use it to close windows that no later edge triggers.
- ``connected(a, b)`` answers for the most recently evaluated window.  To make
  that exact for every engine, the driver by default holds back the edges that
  arrived after the last due window (at most one slide of them) until the next
  window falls due; they are never lost.  ``hold_back=False`` (constructor)
  applies every edge on arrival instead: the outputs are the same, a window's
  latency is then just its queries plus the triggering edge (BIC TR Section 7's
  latency), and ``connected`` raises ``AdHocUnavailable``.
- At end of stream with ``r < s``, edges after the last window's end lie in no
  window: they are validated and counted, never applied.
- ``flush`` ends the stream: ``process`` after ``flush`` is an error.
- Lateness policy ``error`` (default): an edge earlier than one already seen
  is an ``OutOfOrder`` error.  ``drop``: such edges are dropped and counted in
  ``engine.dropped_late``.
- Validation is all-or-nothing per call for sized inputs (a list, a tuple,
  an ``EdgeBatch``): a bad record anywhere leaves the engine unchanged.  A
  lazy iterable is validated in batches of ``BATCH`` records, each atomically.
"""
from __future__ import annotations

import contextlib
from typing import ClassVar, Iterable, Iterator

import attrs
import numpy as np

from streamspec.spec._connectivity_kernels import feed_int64, feed_one
from streamspec.spec._numba import entry_point
from streamspec.spec.engine import validation_units
from streamspec.spec.errors import (AdHocUnavailable, ContractViolation, InvalidParameter,
                                    InvalidRecord, MalformedRecord, NoWindowYet, OutOfOrder,
                                    StreamspecError)
from streamspec.spec.vertices import IdIndex
from streamspec.spec.windows import SlidingWindows

PROBLEM = "connectivity"
BATCH = 4096
# batches up to this size take plain-Python paths at the boundary (validation,
# id remapping): numpy's per-call overhead dominates there
SMALL = 16
# eager batches of at least this many edges end with a dry run of the engine's fused
# one-edge call, if it has one (``ConnectivityEngine._prewarm``): ~50-60 us on the caches
# the batch evicted, about 1% of a batch this large (msf, R-MAT), more of a smaller one,
# which evicts less anyway; the benchmarks set it beyond any batch (``NO_PREWARM``) to
# time the triggering call without it
PREWARM = 1 << 15
NO_PREWARM = 1 << 62


@contextlib.contextmanager
def prewarm_after(edges: int):
    """``PREWARM`` set to ``edges`` while the block runs (``NO_PREWARM``: off; 1: after
    every call), then restored: how the benchmarks and the conformance suite switch it."""
    global PREWARM
    shipped, PREWARM = PREWARM, edges
    try:
        yield
    finally:
        PREWARM = shipped
_I64 = np.dtype(np.int64)
_BOOL = np.dtype(bool)
_ARRAY = np.ndarray
_NO_EDGES = (np.empty(0, np.int64),) * 3    # nothing pending (shared: an empty array holds nothing)
_NEW = object.__new__
_FEED: list = []    # feed_int64, feed_one compiled for _feed_int64's arguments (_feed_entry)
# one-window answer rows as tuples of bools, by the row's bytes (``_row_tuple``):
# shared by every engine of the process (the tuples are immutable values)
_ROWS: dict[bytes, tuple] = {}
_ROWS_KEPT = 256            # distinct rows kept; then the memo starts over
_ROW_BYTES = 1024           # longer rows (more queries) are not kept


def _feed_entry():
    """``feed_int64`` and ``feed_one`` compiled for the arguments ``_feed_int64``
    passes (1-d int64 columns of any strides, its own C-contiguous buffers),
    skipping numba's dispatcher on every call (``spec._numba.entry_point``)."""
    if not _FEED:
        from numba import types
        col, own, i64, flag = types.int64[:], types.int64[::1], types.int64, types.boolean
        _FEED.append(entry_point(feed_int64, col, col, col, i64, flag, col, i64, own))
        _FEED.append(entry_point(feed_one, col, col, col, i64, flag, col, i64, own, own, own, own))
    return _FEED


# batches of at most this many edges take an eager engine's reused columns when it
# keeps none of its hook's (``_ScratchColumns``); larger ones allocate theirs
SCRATCH_EDGES = BATCH
_SCRATCH_KEPT = 64          # distinct batch sizes whose views are kept; then the memo starts over


class _ScratchColumns(dict):
    """Batch size ``n >= 2`` -> ``(buffer, dense u, dense v, t, fresh ids)``: views of
    one buffer (key 0) of at least ``5 n`` int64s that ``feed_int64`` fills, for the
    batches of an eager engine that keeps none of its hook's columns
    (``retains_columns = False``), reused from call to call: a slide's call then makes
    no array (``np.empty`` and four slices cost a few microseconds a call on the caches
    the engine's inserts evict).  Scratch, not state: it pickles empty (views would
    pickle as unrelated copies)."""

    def __reduce__(self):
        return (_ScratchColumns, ())

    def columns(self, n: int) -> tuple:
        """The views for ``n`` edges (``n <= SCRATCH_EDGES``), made and remembered."""
        buf = self.get(0)
        if buf is None or buf.size < 5 * n:
            self.clear()        # (views of the old buffer)
            cap = min(SCRATCH_EDGES, max(n, 2 * buf.size // 5 if buf is not None else 0))
            buf = self[0] = np.empty(5 * cap, dtype=np.int64)
        elif len(self) > _SCRATCH_KEPT:
            self.clear()
            self[0] = buf
        cols = self[n] = (buf, buf[:n], buf[n:2 * n], buf[2 * n:3 * n], buf[3 * n:5 * n])
        return cols


def _row_tuple(key: bytes, answers: np.ndarray) -> tuple:
    """The tuple of bools of the one-row bool array ``answers`` (its bytes:
    ``key``), remembered in ``_ROWS`` when short."""
    row = tuple(answers.tolist()[0])    # (no row view: numpy's indexing is cold)
    if len(key) <= _ROW_BYTES:
        if len(_ROWS) >= _ROWS_KEPT:
            _ROWS.clear()
        _ROWS[key] = row
    return row


LATENESS = ("error", "drop")


@attrs.frozen
class Edge:
    """An undirected streaming edge ``(u, v)`` at time ``t``."""

    u: int | str
    v: int | str
    t: int


@attrs.frozen(eq=False)
class EdgeBatch:
    """Edges as columns (the fast path for large inputs): ``u``, ``v`` int64 or
    object arrays, ``t`` int64."""

    u: np.ndarray
    v: np.ndarray
    t: np.ndarray

    def __len__(self) -> int:
        return len(self.t)

    @classmethod
    def of(cls, edges: Iterable, first_index: int = 0) -> "EdgeBatch":
        """Columns from ``Edge`` objects or ``(u, v, t)`` tuples (``MalformedRecord`` otherwise)."""
        us, vs, ts = [], [], []
        for i, e in enumerate(edges, first_index):
            if isinstance(e, Edge):
                u, v, t = e.u, e.v, e.t
            else:
                try:
                    u, v, t = e
                except (TypeError, ValueError):
                    raise MalformedRecord(f"expected an edge (u, v, t), got {e!r}", index=i) from None
            us.append(u), vs.append(v), ts.append(t)
        for i, t in enumerate(ts, first_index):
            if isinstance(t, bool) or not isinstance(t, (int, np.integer)):
                raise MalformedRecord(f"edge time must be an integer, got {t!r}", index=i)
        return cls(_column(us), _column(vs), np.asarray(ts, dtype=np.int64))


def _column(values: list) -> np.ndarray:
    if values and all(type(x) is int or isinstance(x, np.integer) for x in values):
        try:
            return np.asarray(values, dtype=np.int64)
        except OverflowError:
            pass
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    return arr


def _vertex_type(x) -> type | None:
    if isinstance(x, (bool, np.bool_)):
        return None
    if isinstance(x, (int, np.integer)):
        return int
    if isinstance(x, str):
        return str
    return None


@attrs.frozen
class Params:
    """Window size ``r``, slide ``s``, origin ``t0`` (None: first edge's time),
    the workload (ordered query pairs) and the lateness policy."""

    r: int
    s: int
    workload: tuple = attrs.field(converter=lambda w: tuple(tuple(q) for q in w), factory=tuple)
    t0: int | None = None
    lateness: str = "error"

    def __attrs_post_init__(self):
        SlidingWindows(self.r, self.s)  # validates r and s
        if self.t0 is not None and (isinstance(self.t0, bool) or not isinstance(self.t0, int)):
            raise InvalidParameter(f"origin t0 must be an integer, got {self.t0!r}")
        if self.lateness not in LATENESS:
            raise InvalidParameter(f"lateness must be one of {LATENESS}, got {self.lateness!r}")
        types = set()
        for i, q in enumerate(self.workload):
            if len(q) != 2:
                raise InvalidParameter(f"query {i} must be a pair (a, b), got {q!r}")
            for x in q:
                kind = _vertex_type(x)
                if kind is None:
                    raise InvalidParameter(f"query {i}: vertex {x!r} is neither int nor str")
                types.add(kind)
        if len(types) > 1:
            raise InvalidParameter("workload mixes int and str vertices")

    @property
    def vertex_type(self) -> type | None:
        return _vertex_type(self.workload[0][0]) if self.workload else None


@attrs.frozen
class WindowResult:
    """Answers of window ``index`` (``[start, end)``), in workload order."""

    index: int
    start: int
    end: int
    answers: tuple = attrs.field(converter=lambda a: tuple(map(bool, a)))

    @classmethod
    def _of_bools(cls, index: int, start: int, end: int, answers: tuple) -> "WindowResult":
        """The driver's constructor: ``answers`` is already a tuple of bools
        (a bool array's ``tolist``), so the converter is skipped; it is most
        of a one-window call's result cost on cold caches."""
        out = _NEW(cls)
        _SET_INDEX(out, index)
        _SET_START(out, start)
        _SET_END(out, end)
        _SET_ANSWERS(out, answers)
        return out


# the slots' own setters (a frozen class's fields are set past its __setattr__):
# calling one skips object.__setattr__'s lookup of the name on the type, a
# microsecond or two per field on the caches a slide of inserts has just evicted
_SET_INDEX, _SET_START, _SET_END, _SET_ANSWERS = (
    WindowResult.__dict__[name].__set__ for name in ("index", "start", "end", "answers"))


def validate(batch: EdgeBatch, kind: type, last_t: int | None, lateness: str,
             first_index: int = 0) -> np.ndarray:
    """Check a batch against the spec without changing anything.

    Returns the mask of edges to keep, or ``None`` when every edge is kept
    (always so unless ``lateness='drop'``).
    Raises ``InvalidRecord`` / ``OutOfOrder`` naming the first bad record.
    """
    n = len(batch)
    if batch.t.dtype.kind not in "iu":
        raise MalformedRecord("edge times must be integers", index=first_index)
    for col in (batch.u, batch.v):
        if col.dtype.kind in "iu":
            if kind is not int:
                bad = 0
                raise InvalidRecord(f"vertex {col[bad]!r} is an int, the stream's vertices are str",
                                    index=first_index + bad)
        else:
            for i, x in enumerate(col):
                if _vertex_type(x) is not kind:
                    raise InvalidRecord(f"vertex {x!r} is not of the stream's vertex type "
                                        f"{kind.__name__}", index=first_index + i)
    if n <= SMALL:
        return _validate_times_small(batch.t.tolist(), last_t, lateness, first_index)
    t = batch.t
    prev = np.empty(n, dtype=np.int64)
    prev[0] = t[0] if last_t is None else last_t
    if lateness == "error":
        prev[1:] = t[:-1]
        bad = np.flatnonzero(t < prev)
        if bad.size:
            i = int(bad[0])
            before = int(prev[i])
            raise OutOfOrder(f"edge time {int(t[i])} is earlier than {before} already seen",
                             index=first_index + i)
        return None
    running = np.maximum.accumulate(np.concatenate([prev[:1], t]))[:-1]
    keep = t >= running
    return None if keep.all() else keep


def _validate_times_small(ts: list, last_t: int | None, lateness: str, first_index: int):
    """``validate``'s time check for a few edges, in plain Python: a one-edge
    ``process`` call (the paper's per-window latency is one) would otherwise
    spend more time in numpy call overhead than BIC spends answering."""
    before = ts[0] if last_t is None else last_t
    drop = None
    for i, t in enumerate(ts):
        if t >= before:
            before = t
        elif lateness == "error":
            raise OutOfOrder(f"edge time {t} is earlier than {before} already seen",
                             index=first_index + i)
        else:
            drop = [] if drop is None else drop
            drop.append(i)
    if drop is None:
        return None
    keep = np.ones(len(ts), dtype=bool)
    keep[drop] = False
    return keep


class ConnectivityEngine:
    """Base class of connectivity engines and the oracle: the spec boundary.

    It validates, remaps vertex ids to dense ids (workload vertices first),
    decides which windows are due and holds back edges past the last due
    window.  Subclasses implement three hooks over dense ids:

    - ``_run(u, v, t, upto) -> bool array (upto - next_window, Q)``: apply
      every given edge in order, evaluating window ``w`` before the first edge
      with ``t >= end(w)``; after the last edge, evaluate the remaining windows
      up to ``upto`` (exclusive).  ``self.next_window`` is the first one to
      evaluate.  The driver guarantees that no edge handed over has
      ``t >= end(upto)`` and that windows evaluated after the last edge
      contain every edge handed over; a call may evaluate nothing
      (``upto == next_window``) and only apply edges.
    - ``_connected(a, b) -> bool``: ad-hoc query on window ``next_window - 1``
      (``-1`` is a vertex never seen).
    - ``_start()``: called once ``self.windows`` (with ``t0``) is known.

    Rows that are not a numpy array of exactly that shape (bool, or 0/1
    integers), or a ``_connected`` answer that is not a bool, are a
    ``ContractViolation`` naming the hook; exceptions raised inside a hook
    pass through untouched.

    ``_run``'s ``u``, ``v``, ``t`` are int64 arrays the engine may keep
    (``retains_columns``, the default).  An engine whose ``_run`` keeps no
    reference to them once it returns (copies what it stores) may set
    ``retains_columns = False``: with ``hold_back=False`` a one-edge call
    (each window's trigger) then hands it one-element columns the driver
    reuses from call to call, so the triggering call makes no array; numpy's
    allocation and slicing cost several microseconds there, on the caches
    the slide before it evicted.

    Such an engine may also fuse the driver's work on a one-edge call that
    makes exactly one window due with its own: ``_trigger_kernel(*_trigger_args,
    u, v, t, last_t, check_last, table, size, lo, dry) -> (status, n_fresh, fresh0,
    fresh1, last_t, upto, answered)`` (a compiled function; ``_trigger_args``
    None turns it off): the driver's one-edge feed
    (``_connectivity_kernels.feed_one`` on the batch's columns ``u, v, t``,
    with its returns, the fresh ids as two scalars; status ``-3``: not this
    call, nothing done, the driver goes on as without it), the window ``lo =
    next_window`` (``upto = lo + 1``) answered into ``_trigger_answers`` (a
    ``(1, Q)`` bool array, checked as ``_run``'s rows are) and the edge
    applied.  ``answered`` 1 says the row equals the one of the last call that
    answered, whose tuple of bools the driver then reuses; 2 a new row; 3 the
    driver calls ``_trigger_rest(lo)`` to apply the edge.  Unless ``status ==
    -1`` nothing may have changed.  A window's triggering call is then one
    kernel call and a ``WindowResult``.  With ``dry`` true (``_prewarm``, after
    an eager batch of ``PREWARM`` edges or more) the call answers window ``lo``
    on the state as it is into ``_trigger_answers``, applies nothing, changes
    nothing a later answer depends on, and returns status ``-4`` (anything
    else: no pre-warm), ``answered`` 1 when the row equals the last one.

    An eager engine without the fused call may pre-warm too: with
    ``_answers_dry = True`` it implements ``_answer_dry(lo)``, the answers of
    window ``lo = next_window`` on the state as it is (a ``(1, Q)`` bool
    array, or None to decline), applying nothing and changing nothing a later
    answer depends on; the driver's ``_prewarm`` then runs the one-edge call
    through ``process`` and ``_results`` with that row and drops it.  Such an
    engine (or a fused one) may also set ``_warm_due = True`` in ``_run`` when
    the call did work that evicts the caches whatever the batch's size (BIC's
    backward build of a chunk): the driver then pre-warms after that call
    (unless ``PREWARM`` is ``NO_PREWARM``) and clears the flag.
    """

    problem: ClassVar[str] = PROBLEM
    name: ClassVar[str]
    exact: ClassVar[bool] = True
    description: ClassVar[str]
    retains_columns: ClassVar[bool] = True
    # the reused one-edge columns (u, v, t, fresh ids) when not retains_columns
    # and eager; the class default covers engines pickled before they existed
    _one_edge: tuple | None = None
    # their reused columns of larger batches (``_ScratchColumns``), made on first use
    _scratch: "_ScratchColumns | None" = None
    # optional fused one-edge call of eager engines (see the class docstring): the
    # compiled function, its leading arguments, the tuple of the row it last answered
    _trigger_kernel = None
    _trigger_args: tuple | None = None
    _trigger_row: tuple | None = None
    _dry = False                    # inside ``_prewarm``
    # an engine without the fused call that answers a window dry (``_answer_dry``),
    # and its request for a pre-warm after the call in progress (class docstring)
    _answers_dry: ClassVar[bool] = False
    _warm_due = False

    def __init__(self, params: Params, *, hold_back: bool = True):
        if not isinstance(params, Params):
            raise InvalidParameter(f"expected streamspec.spec.connectivity.Params, got {type(params).__name__}")
        self.params = params
        self.hold_back = bool(hold_back)
        self.windows: SlidingWindows | None = None
        self.vertices: IdIndex | None = None
        self.queries = np.empty((0, 2), dtype=np.int64)
        self.next_window = 0
        self.last_t: int | None = None
        self.dropped_late = 0
        self.closed = False
        self._seen = 0
        self._pending = _NO_EDGES
        self._fused = False
        if not (self.hold_back or self.retains_columns):
            self._one_edge = tuple(np.empty(k, dtype=np.int64) for k in (1, 1, 1, 2))
        if params.vertex_type is not None:
            self._init_vertices(params.vertex_type)

    # -- the public contract -------------------------------------------------
    def process(self, events) -> Iterator[WindowResult]:
        """Consume edges in order; yield the windows they make due (a generator)."""
        if self.closed:
            raise StreamspecError("the stream was flushed; create a new engine")
        if type(events) is EdgeBatch:       # the columnar fast path: one atomic unit
            done = self._feed_int64(events) if self._fused else None
            yield from (self._feed_checked(events) if done is None else done)
            return
        for chunk in validation_units(events, (EdgeBatch,), BATCH):
            batch = chunk if isinstance(chunk, EdgeBatch) else EdgeBatch.of(chunk, self._seen)
            yield from self._feed(batch)

    def advance_to(self, t: int) -> list[WindowResult]:
        """Watermark: no edge earlier than ``t`` will come; evaluate windows ending by ``t``."""
        if self.closed:
            raise StreamspecError("the stream was flushed; create a new engine")
        if self.windows is None:
            if self.params.t0 is None:
                return []
            self._set_origin(self.params.t0)
        if self.last_t is None or t > self.last_t:
            self.last_t = int(t)
        return self._evaluate(self.windows.due_before(self.last_t), final=False)

    def flush(self) -> list[WindowResult]:
        """End of stream: evaluate every window whose start is at or before the last edge."""
        self.closed = True
        if self.windows is None or self.last_t is None:
            return []
        return self._evaluate(self.windows.started_by(self.last_t), final=True)

    def connected(self, a, b) -> bool:
        """``Q(a, b)`` on the most recently evaluated window."""
        if not self.hold_back:
            raise AdHocUnavailable("ad-hoc queries need an engine built with hold_back=True")
        if self.next_window == 0:
            raise NoWindowYet("no window has been evaluated yet")
        for x in (a, b):
            if self.vertices and _vertex_type(x) is not self.vertices.kind:
                raise InvalidRecord(f"vertex {x!r} is not of the stream's vertex type "
                                    f"{self.vertices.kind.__name__}")
        ga, gb = (self.vertices.lookup([a, b]).tolist() if self.vertices else (-1, -1))
        if ga < 0 or gb < 0:
            return False
        answer = self._connected(ga, gb)
        if type(answer) is not bool and not (isinstance(answer, (np.bool_, int, np.integer))
                                             and answer in (0, 1)):
            raise ContractViolation.of(self, "ConnectivityEngine._connected", answer,
                                       "a bool (True iff both vertices are present and connected)")
        return bool(answer)

    @property
    def n_vertices(self) -> int:
        return self.vertices.size if self.vertices else 0

    # -- the driver ------------------------------------------------------------
    def _init_vertices(self, kind: type) -> None:
        self.vertices = IdIndex(kind)
        flat = [x for q in self.params.workload for x in q]
        self.queries = self.vertices.add(flat).reshape(-1, 2) if flat else np.empty((0, 2), np.int64)
        self._use_fused()

    def _set_origin(self, t0: int) -> None:
        self.windows = SlidingWindows(self.params.r, self.params.s, int(t0))
        self._start()
        self._use_fused()

    def _use_fused(self) -> None:
        # the fused path needs the origin and int ids (a direct table); it
        # leaves dropping late edges and raising errors to the general path
        self._fused = (self.windows is not None and self.vertices is not None
                       and self.vertices.kind is int and self.params.lateness == "error")

    def _feed(self, batch: EdgeBatch) -> list[WindowResult]:
        if self._fused:
            done = self._feed_int64(batch)
            if done is not None:
                return done
        return self._feed_checked(batch)

    def _feed_checked(self, batch: EdgeBatch) -> list[WindowResult]:
        """``_feed``'s general path: validate (typed errors naming the
        record), remap ids, queue, evaluate."""
        n = len(batch)
        if n == 0:
            return []
        first = self._seen
        kind = self.vertices.kind if self.vertices else _vertex_type(batch.u[0])
        if kind is None:
            raise InvalidRecord(f"vertex {batch.u[0]!r} is neither int nor str", index=first)
        keep = validate(batch, kind, self.last_t, self.params.lateness, first)
        t0 = self.params.t0
        if t0 is not None:          # also after a watermark below t0 (advance_to)
            kept = np.flatnonzero(keep)[:1] if keep is not None else [0]
            if len(kept) and batch.t[kept[0]] < t0:
                raise OutOfOrder(f"edge time {int(batch.t[kept[0]])} is before the origin "
                                 f"t0={t0}", index=first + int(kept[0]))
        # validated: from here on nothing can fail on the input
        self._seen += n
        if keep is not None:
            self.dropped_late += int(n - keep.sum())
            batch = EdgeBatch(batch.u[keep], batch.v[keep], batch.t[keep])
            n = len(batch)
            if n == 0:
                return []
        if self.vertices is None:
            self._init_vertices(kind)
        if self.windows is None:
            self._set_origin(self.params.t0 if self.params.t0 is not None else int(batch.t[0]))
        if n <= SMALL:
            ends = batch.u.tolist() + batch.v.tolist()
        elif batch.u.dtype == batch.v.dtype:
            ends = np.concatenate([batch.u, batch.v])
        else:
            ends = np.concatenate([batch.u.astype(object), batch.v.astype(object)])
        gid = self.vertices.add(ends)
        # a copy: held-back edges must not alias the caller's array
        t = batch.t.astype(np.int64)
        return self._accept(gid[:n], gid[n:], t, int(t[-1]))

    def _feed_int64(self, batch: EdgeBatch) -> list[WindowResult] | None:
        """``_feed`` for int64 columns in one numba call (``feed_int64``);
        ``None`` when the general path must decide (an error to raise, an id
        outside the direct table, other dtypes, no edges): nothing has changed then.

        Eager engines (``hold_back=False``) then hand the edges to ``_run``
        right here and build the results (``_results``): this is a window's
        triggering call (BIC TR Section 7.1's latency), which runs on caches
        the slide before it evicted, where each further Python frame, numpy
        call or object costs about a microsecond (``_accept`` and
        ``_evaluate`` do the same steps in general form)."""
        u, v, t = batch.u, batch.v, batch.t
        if u.dtype is not _I64 or v.dtype is not _I64 or t.dtype is not _I64:
            return None             # (numpy's native int64 dtype is one object; others: general path)
        n = len(t)
        if not n:
            return None
        ids, last, t0 = self.vertices, self.last_t, self.params.t0
        if t0 is not None and (last is None or last < t0):
            last = t0               # an edge before the origin: the general path raises
        args = self._trigger_args if n == 1 else None
        if args is not None:
            # the engine's fused one-edge call (class docstring): feed, the window
            # due, its answers and the edge, in one kernel call
            lo = self.next_window
            dry = self._dry
            status, fresh, f0, f1, last_t, upto, answered = self._trigger_kernel(
                *args, u, v, t, 0 if last is None else last, last is not None, ids._direct,
                ids.size, lo, dry)
            if status == -1 or status == -4:
                if status == -1:
                    if fresh:
                        ids.numbered_pair(fresh, f0, f1)
                    self._seen += 1
                    self.last_t = last_t
                    self.next_window = upto
                row = self._trigger_row
                if answered != 1 or row is None:
                    if answered == 3:
                        self._trigger_rest(lo)
                    row = self._trigger_tuple(lo)
                    if status == -1:    # (answered == 1 refers to the last real row, not a dry one)
                        self._trigger_row = row
                w = self.windows
                start = w.t0 + lo * w.s
                res = _NEW(WindowResult)
                _SET_INDEX(res, lo)
                _SET_START(res, start)
                _SET_END(res, start + w.r)
                _SET_ANSWERS(res, row)
                return [res]
            if dry:
                return []           # a dry call the engine did not take: nothing to warm
            if status != -3:
                return None         # an error to raise, an id outside the table: nothing changed
        feed = _FEED or _feed_entry()
        one = self._one_edge if n == 1 else None
        # (the table read directly: a method call is a frame on a cold cache)
        if one is None:
            if self._one_edge is not None and n <= SCRATCH_EDGES:
                # an eager engine that keeps none of its hook's columns: the views of
                # its reused buffer for this size (_ScratchColumns)
                scratch = self._scratch
                if scratch is None:
                    scratch = self._scratch = _ScratchColumns()
                cols = scratch.get(n)
                out, gu, gv, gt, new = scratch.columns(n) if cols is None else cols
            else:
                out = np.empty(5 * n, dtype=np.int64)
                gu, gv, gt, new = out[:n], out[n:2 * n], out[2 * n:3 * n], out[3 * n:]
            status, fresh, last_t = feed[0](u, v, t, 0 if last is None else last,
                                            last is not None, ids._direct, ids.size, out)
        else:
            # a one-edge call of an engine that keeps none of its hook's
            # columns: the columns are the engine's own, reused (retains_columns)
            gu, gv, gt, new = one
            status, fresh, last_t = feed[1](u, v, t, 0 if last is None else last,
                                            last is not None, ids._direct, ids.size, gu, gv, gt,
                                            new)
        if status != -1:
            return None
        if fresh:
            ids.numbered(new[:fresh])
        if self._dry:
            # (``_prewarm`` of an engine with ``_answer_dry``: the batch is the last
            # edge applied, so nothing above was fresh) window ``lo`` answered on the
            # state as it is, through the triggering call's steps, and dropped
            lo = self.next_window
            answers = self._answer_dry(lo)
            if answers is not None:
                self._results(lo, lo + 1, answers)
            return []
        self._seen += n
        if self.hold_back:
            return self._accept(gu, gv, gt, last_t)
        # eager: nothing is pending between calls (_evaluate's eager branch),
        # so the edges go to the hook as they are, with the windows due
        # (SlidingWindows.due_before, inline)
        self.last_t = last_t
        w = self.windows
        lo = self.next_window
        end0 = w.t0 + w.r
        upto = (last_t - end0) // w.s + 1 if last_t >= end0 else 0
        if upto < lo:
            upto = lo
        answers = self._run(gu, gv, gt, upto)
        self.next_window = upto
        if upto != lo + 1:
            done = self._results(lo, upto, answers) if upto > lo else []
        elif (type(answers) is _ARRAY and answers.dtype is _BOOL
              and answers.shape == (1, len(self.queries))):
            # one window, its row as the hook's contract says (each trigger of an
            # eager engine without the fused call): _results' one-window branch
            # inline, a frame less on the caches the slide's inserts evicted
            start = w.t0 + lo * w.s
            res = _NEW(WindowResult)
            _SET_INDEX(res, lo)
            _SET_START(res, start)
            _SET_END(res, start + w.r)
            key = answers.tobytes()
            row = _ROWS.get(key)
            _SET_ANSWERS(res, _row_tuple(key, answers) if row is None else row)
            done = [res]
        else:
            done = self._results(lo, upto, answers)     # (0/1 rows, or a broken hook's)
        # a pre-warm after a batch of PREWARM edges, or after a call whose chunk-scale
        # work the engine flagged (class docstring) whatever its size, unless it is off
        due = self._warm_due
        if due:
            del self._warm_due      # (the class default, False)
        if ((due and PREWARM < NO_PREWARM)
                or (n >= PREWARM and (self._trigger_args is not None or self._answers_dry))):
            self._prewarm(EdgeBatch(u[n - 1:], v[n - 1:], t[n - 1:]))
        return done

    def _answer_dry(self, lo: int) -> np.ndarray | None:
        """Window ``lo``'s answers on the state as it is, nothing applied (the
        pre-warm of an engine with ``_answers_dry``; class docstring); None: declined."""
        return None

    def _prewarm(self, batch: EdgeBatch) -> None:
        """After an eager batch of ``PREWARM`` edges or more, the fused one-edge
        call (class docstring) run dry through ``process`` on the batch's last
        edge: window ``next_window`` answered on the state as it is, nothing
        applied.  What a triggering call touches (``process``, the compiled
        call, the records its answers read, the row's tuple, a ``WindowResult``)
        is then in cache when a triggering edge comes next after a slide of
        inserts sent as one batch, as it is when every edge comes alone (BIC TR
        Section 7.1 times the triggering edge of an edge-at-a-time stream).  The
        benchmarks report the triggering call with and without it (``PREWARM``).
        An engine without the fused call answers through ``_answer_dry`` instead,
        after a batch of ``PREWARM`` edges or after a call that set ``_warm_due``."""
        self._dry = True
        try:
            list(self.process(batch))
        except ContractViolation:
            pass                    # a broken hook: the triggering call itself will say so
        finally:
            del self._dry           # (the class default, False: no trace in the state)

    def _accept(self, gu: np.ndarray, gv: np.ndarray, t: np.ndarray,
                last_t: int) -> list[WindowResult]:
        """Queue validated edges (dense ids, times the engine owns, the last
        time); evaluate what is due."""
        pu, pv, pt = self._pending
        if len(pt):
            self._pending = (np.concatenate([pu, gu]), np.concatenate([pv, gv]),
                             np.concatenate([pt, t]))
        else:       # nothing held back (always so in eager mode): no concatenation
            self._pending = (gu, gv, t)
        self.last_t = last_t
        return self._evaluate(self.windows.due_before(last_t), final=False)

    def _evaluate(self, upto: int, final: bool) -> list[WindowResult]:
        lo = self.next_window
        upto = max(upto, lo)
        pu, pv, pt = self._pending
        if upto == lo and not final and self.hold_back:
            return []
        if not self.hold_back:
            # eager: every pending edge has t < end(upto) and the hook evaluates
            # each window before the first edge at or past its end, so one call
            # answers the due windows and applies the edges after their trigger
            if len(pt) or upto > lo:
                answers = self._run(pu, pv, pt, upto)
            else:
                answers = None
            self._pending = _NO_EDGES
        else:
            # edges before the trigger of the last due window go in with the
            # windows; the rest are held back; at flush the rest lie in no
            # window (r < s) and are dropped
            cut = int(np.searchsorted(pt, self.windows.end(upto - 1), side="left")) if upto else 0
            if cut or upto > lo or final:
                answers = self._run(pu[:cut], pv[:cut], pt[:cut], upto)
            else:
                answers = None
            self._pending = _NO_EDGES if final else (pu[cut:], pv[cut:], pt[cut:])
        self.next_window = upto
        if upto == lo:
            return []
        return self._results(lo, upto, answers)

    def _results(self, lo: int, upto: int, answers: np.ndarray) -> list[WindowResult]:
        """The ``WindowResult`` of windows ``lo..upto-1`` from the hook's rows."""
        # the hook's contract, in two comparisons (this is every trigger's path)
        if type(answers) is not _ARRAY or answers.shape != (upto - lo, len(self.queries)):
            raise self._bad_rows(answers, lo, upto)
        if answers.dtype is not _BOOL:      # a hook that returns 0/1: the results hold bools
            answers = self._zero_one(answers, lo, upto)
        w = self.windows
        t0, s, r = w.t0, w.s, w.r
        if upto == lo + 1:
            # one window (each trigger of an eager engine): no comprehension, whose
            # steps cost tens of microseconds on the caches a slide has just
            # evicted; _of_bools inline (a frame less)
            start = t0 + lo * s
            res = _NEW(WindowResult)
            _SET_INDEX(res, lo)
            _SET_START(res, start)
            _SET_END(res, start + r)
            # the row's tuple of bools, made once per distinct row (_ROWS): a
            # window's answers mostly repeat the window's before, and its bytes
            # are one object where tolist and tuple make two of nq items
            key = answers.tobytes()
            row = _ROWS.get(key)
            if row is None:
                row = _row_tuple(key, answers)
            _SET_ANSWERS(res, row)
            return [res]
        return [WindowResult._of_bools(n, t0 + n * s, t0 + n * s + r, tuple(row))
                for n, row in zip(range(lo, upto), answers.tolist())]

    def _trigger_tuple(self, lo: int) -> tuple:
        """The tuple of bools of ``_trigger_answers``, the row of window ``lo`` that
        ``_trigger`` answered, checked as ``_results`` checks ``_run``'s rows."""
        answers = self._trigger_answers
        if type(answers) is not _ARRAY or answers.shape != (1, len(self.queries)):
            raise self._bad_rows(answers, lo, lo + 1)
        if answers.dtype is not _BOOL:
            answers = self._zero_one(answers, lo, lo + 1)
        key = answers.tobytes()
        row = _ROWS.get(key)
        return _row_tuple(key, answers) if row is None else row

    def _bad_rows(self, answers, lo: int, upto: int) -> ContractViolation:
        return ContractViolation.of(
            self, "ConnectivityEngine._run", answers,
            f"a numpy bool array of shape (windows due, queries) = ({upto - lo}, "
            f"{len(self.queries)}): one row per window {lo}..{upto - 1}, one column per query")

    def _zero_one(self, answers: np.ndarray, lo: int, upto: int) -> np.ndarray:
        """A hook's rows of another bool dtype object (an unpickled array's) or of
        0/1 integers, as bools; any other dtype or value breaks the contract."""
        kind = answers.dtype.kind
        if kind != "b" and (kind not in "iu" or (answers.size and not (
                answers.min() >= 0 and answers.max() <= 1))):
            raise ContractViolation.of(
                self, "ConnectivityEngine._run", answers,
                f"bool (or 0/1 integer) answers of shape ({upto - lo}, {len(self.queries)})")
        return answers.astype(bool)     # (numpy's bool dtype is one object)

    # -- engine hooks ------------------------------------------------------------
    def _start(self) -> None:
        pass

    def _run(self, u: np.ndarray, v: np.ndarray, t: np.ndarray, upto: int) -> np.ndarray:
        raise NotImplementedError

    def _connected(self, a: int, b: int) -> bool:
        raise NotImplementedError

