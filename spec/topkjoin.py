"""Continuous top-k join of a stream with an evolving remote dataset: the contract.

This docstring is the normative semantics; paper: Zahmatkesh & Della Valle,
"Topk+N / AcquaTop" (Sections 2-5; ``F`` below is the linear score of its experiments).
Remote datasets and the fetch budget:
``streamspec.spec.topkjoin_remote``; quality metrics: ``streamspec.spec.topkjoin_quality``.

- A stream item ``Item(id, x, ts)``: a join key (all ints or all strs), a
  finite numeric streaming value, an int timestamp; ``ts`` non-decreasing.
- Window ``i`` is ``[t0 + i*beta, t0 + i*beta + omega)`` (``streamspec.spec.windows``,
  ``r=omega``, ``s=beta``), evaluated at its end ``tau_i``; ``t0`` defaults to
  the first item's ts.  Every window is evaluated, also empty ones across gaps
  (empty answer); ``flush`` evaluates every window whose start is ``<=`` the
  last item's ts.  A window is evaluated when an item with ``ts >= tau_i``
  arrives (all of that batch is ingested first; later items never enter it).
- The streaming score of an id in window ``i``: ``sum`` of its x, or the x of
  its ``latest`` item (by ts, then stream order).  Ids without an item in the
  window do not join.
- ``F(s, v) = w_s * norm(s) + w_v * norm(v)``, ``norm(z) = (z - lo)/(hi - lo)``
  over the given ranges (no clipping); a user ``score`` function replaces F
  and must be non-decreasing in both arguments (checked on a grid).
- The answer at ``tau_i``: the window's ids scored ``F(s_i(id), value(id,
  tau_i))`` ranked by ``(score desc, id asc)``, the first ``min(K, n)``.
  Approximate engines rank their own scores with the same total order.

Decisions the paper leaves open:

- ``stream_range`` and ``remote_range`` default to ``(0, 1)`` (no
  normalisation); the command line defaults them to the min/max of its inputs.
- ``process`` after ``flush`` is an error; an item earlier than one seen is
  ``OutOfOrder``; validation is all-or-nothing per call for sized inputs.
- Sums of non-integer x can differ in the last bit between engines (summation
  order); conformance uses values whose sums are exact.
"""
from __future__ import annotations

import math
from typing import Callable, ClassVar, Iterable, Iterator

import attrs
import numpy as np

from streamspec.spec.engine import validation_units
from streamspec.spec.errors import (ContractViolation, InvalidParameter, InvalidRecord,
                                    MalformedRecord, OutOfOrder, StreamspecError, describe,
                                    engine_label)
from streamspec.spec.topkjoin_remote import FetchCounter, RemoteDataset, TimelineDataset
from streamspec.spec.vertices import IdIndex
from streamspec.spec.windows import SlidingWindows

PROBLEM = "topkjoin"
BATCH = 4096
AGGREGATES = ("sum", "latest")
_EVALUATE = "TopkJoinEngine._evaluate"


def _wanted(k: int, m: int) -> str:
    return (f"a list of at most K={k} pairs (dense id, score), best first, each id an int "
            f"in 0..{m - 1} (self.keys) and each score a number")


@attrs.frozen
class Item:
    """A stream item: join key ``id``, streaming value ``x``, time ``ts``."""

    id: int | str
    x: float
    ts: int


@attrs.frozen(eq=False)
class ItemBatch:
    """Items as columns (the fast path): ``id`` int64 or object, ``x`` float64, ``ts`` int64."""

    id: np.ndarray
    x: np.ndarray
    ts: np.ndarray

    def __len__(self) -> int:
        return len(self.ts)

    @classmethod
    def of(cls, items: Iterable, first_index: int = 0) -> "ItemBatch":
        ids, xs, ts = [], [], []
        for i, it in enumerate(items, first_index):
            if isinstance(it, Item):
                k, x, t = it.id, it.x, it.ts
            else:
                try:
                    k, x, t = it
                except (TypeError, ValueError):
                    raise MalformedRecord(f"expected an item (id, x, ts), got {it!r}", index=i) from None
            if isinstance(t, bool) or not isinstance(t, (int, np.integer)):
                raise MalformedRecord(f"item time must be an integer, got {t!r}", index=i)
            if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
                raise MalformedRecord(f"item value must be a number, got {x!r}", index=i)
            ids.append(k), xs.append(x), ts.append(t)
        return cls(_id_column(ids), np.asarray(xs, dtype=np.float64), np.asarray(ts, dtype=np.int64))


def _id_column(values: list) -> np.ndarray:
    if values and all(type(x) is int or isinstance(x, np.integer) for x in values):
        try:
            return np.asarray(values, dtype=np.int64)
        except OverflowError:
            pass
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    return arr


def id_type(x) -> type | None:
    if isinstance(x, (bool, np.bool_)):
        return None
    if isinstance(x, (int, np.integer)):
        return int
    if isinstance(x, str):
        return str
    return None


def _range(name):
    def convert(value):
        try:
            lo, hi = (float(v) for v in value)
        except (TypeError, ValueError):
            raise InvalidParameter(f"{name} must be a pair (lo, hi), got {value!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
            raise InvalidParameter(f"{name} must be finite with hi > lo, got {value!r}")
        return lo, hi
    return convert


def _positive_int(name, allow_zero=False):
    def check(instance, attribute, value):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidParameter(f"{name} must be an integer, got {value!r}")
        if value < 0 or (value == 0 and not allow_zero):
            raise InvalidParameter(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value}")
    return check


@attrs.frozen
class Params:
    """Query parameters.  ``remote`` is the remote dataset (default: empty, every value 0)."""

    omega: int = attrs.field(validator=_positive_int("window width omega"))
    beta: int = attrs.field(validator=_positive_int("slide beta"))
    k: int = attrs.field(validator=_positive_int("K"))
    n: int = attrs.field(default=0, validator=_positive_int("N", allow_zero=True))
    budget: int = attrs.field(default=0, validator=_positive_int("budget gamma", allow_zero=True))
    aggregate: str = "sum"
    weights: tuple = attrs.field(default=(0.7, 0.3), converter=lambda w: tuple(float(x) for x in w))
    stream_range: tuple = attrs.field(default=(0.0, 1.0), converter=_range("stream_range"))
    remote_range: tuple = attrs.field(default=(0.0, 1.0), converter=_range("remote_range"))
    t0: int | None = None
    remote: RemoteDataset = attrs.field(factory=TimelineDataset, eq=False)
    seed: int = 0
    latency: float = 0.0
    score: Callable | None = attrs.field(default=None, eq=False)

    def __attrs_post_init__(self):
        if self.aggregate not in AGGREGATES:
            raise InvalidParameter(f"aggregate must be one of {AGGREGATES}, got {self.aggregate!r}")
        if len(self.weights) != 2 or not all(math.isfinite(w) and w >= 0 for w in self.weights):
            raise InvalidParameter(f"weights must be two finite numbers >= 0, got {self.weights!r}")
        if self.t0 is not None and (isinstance(self.t0, bool) or not isinstance(self.t0, int)):
            raise InvalidParameter(f"origin t0 must be an integer, got {self.t0!r}")
        if not isinstance(self.remote, RemoteDataset):
            raise InvalidParameter(f"remote must have a value(key, tau) method, got {self.remote!r}")
        if not (isinstance(self.latency, (int, float)) and self.latency >= 0):
            raise InvalidParameter(f"latency must be >= 0 seconds, got {self.latency!r}")
        if self.score is not None:
            check_monotone(self.score, self.stream_range, self.remote_range)

    @property
    def windows(self) -> SlidingWindows:
        return SlidingWindows(self.omega, self.beta, 0 if self.t0 is None else self.t0)

    def scoring(self) -> "Scoring":
        return Scoring(self.weights, self.stream_range, self.remote_range, self.score)


def check_monotone(fn, srange, vrange, points: int = 7) -> None:
    """``InvalidParameter`` unless ``fn`` is non-decreasing in both arguments on a grid."""
    ss = np.linspace(*srange, points)
    vs = np.linspace(*vrange, points)
    try:
        grid = np.array([[float(fn(s, v)) for v in vs] for s in ss])
    except Exception as err:  # a user function failing on the grid is a parameter error
        raise InvalidParameter(f"score function failed on ({srange}, {vrange}): {err}") from err
    if not np.isfinite(grid).all():
        raise InvalidParameter("score function is not finite on the ranges")
    if (np.diff(grid, axis=0) < 0).any() or (np.diff(grid, axis=1) < 0).any():
        raise InvalidParameter("score function must be non-decreasing in both arguments")


@attrs.frozen
class Scoring:
    """``F(s, v)``: the linear normalised score of the paper's experiments, or the user's function."""

    weights: tuple
    stream_range: tuple
    remote_range: tuple
    fn: Callable | None = None

    def __call__(self, s: float, v: float) -> float:
        if self.fn is not None:
            return float(self.fn(s, v))
        (ws, wv), (slo, shi), (vlo, vhi) = self.weights, self.stream_range, self.remote_range
        return ws * ((s - slo) / (shi - slo)) + wv * ((v - vlo) / (vhi - vlo))


def rank_key(score: float, key) -> tuple:
    """The total order every engine uses: score descending, then id ascending."""
    return (-score, key)


@attrs.frozen
class Evaluation:
    """The answer of window ``window`` (``[start, tau)``): ``answer`` = ((id, score), ...) by rank."""

    window: int
    start: int
    tau: int
    answer: tuple = attrs.field(converter=lambda a: tuple((k, float(s)) for k, s in a))

    @property
    def ids(self) -> tuple:
        return tuple(k for k, _ in self.answer)

    @property
    def scores(self) -> tuple:
        return tuple(s for _, s in self.answer)


def validate(batch: ItemBatch, kind: type, last_t: int | None, first_index: int = 0) -> None:
    """Check a batch against the spec without changing anything (first bad record raises)."""
    if batch.ts.dtype.kind not in "iu":
        raise MalformedRecord("item times must be integers", index=first_index)
    if batch.id.dtype.kind in "iu":
        if kind is not int:
            raise InvalidRecord(f"id {batch.id[0]!r} is an int, the stream's ids are str",
                                index=first_index)
    else:
        for i, x in enumerate(batch.id):
            if id_type(x) is not kind:
                raise InvalidRecord(f"id {x!r} is not of the stream's id type {kind.__name__}",
                                    index=first_index + i)
    bad = np.flatnonzero(~np.isfinite(batch.x))
    if bad.size:
        i = int(bad[0])
        raise InvalidRecord(f"item value {float(batch.x[i])!r} is not finite", index=first_index + i)
    t = batch.ts
    if len(t) == 0:
        return
    prev = np.empty(len(t), dtype=np.int64)
    prev[0] = t[0] if last_t is None else last_t
    prev[1:] = t[:-1]
    bad = np.flatnonzero(t < prev)
    if bad.size:
        i = int(bad[0])
        raise OutOfOrder(f"item time {int(t[i])} is earlier than {int(prev[i])} already seen",
                         index=first_index + i)


class TopkJoinEngine:
    """Base class of top-k join engines and the oracle: the spec boundary.

    It validates, maps ids to dense ids, fixes ``t0`` and decides which windows
    are due.  Subclasses implement two hooks over dense ids:

    - ``_ingest(ids, x, ts)``: a validated batch (already in ``self.keys``);
    - ``_evaluate(window, start, tau) -> [(dense id, score), ...]``: the ranked
      answer of ``window``, called for every window in order, once.
    ``self.fetcher`` (a ``FetchCounter`` with the engine's ``budget``, started
    here for each evaluation) is the engine's only door to the remote dataset;
    ``self.keys.external`` maps dense ids back.  An answer of another shape
    (not a list, longer than K, an entry that is not a known dense id and a
    number) is a ``ContractViolation`` naming the hook.
    """

    problem: ClassVar[str] = PROBLEM
    name: ClassVar[str]
    exact: ClassVar[bool] = False
    description: ClassVar[str]
    #: conformance conditions under which the engine must equal the oracle
    #: ("static", "full_list", "unlimited"; see conformance/topkjoin.py)
    exact_when: ClassVar[tuple] = ()
    #: fetches per evaluation; None is unbounded (AT-ASM)
    unbounded: ClassVar[bool] = False

    def __init__(self, params: Params):
        if not isinstance(params, Params):
            raise InvalidParameter(f"expected streamspec.spec.topkjoin.Params, got {type(params).__name__}")
        self.params = params
        self.score = params.scoring()
        self.fetcher = FetchCounter(params.remote, None if self.unbounded else params.budget,
                                    params.latency)
        self.windows: SlidingWindows | None = None
        self.keys: IdIndex | None = None
        self.next_window = 0
        self.last_t: int | None = None
        self.closed = False
        self._seen = 0

    # -- the public contract -------------------------------------------------
    def process(self, events) -> Iterator[Evaluation]:
        """Consume items in order; yield the evaluations they make due (a generator)."""
        if self.closed:
            raise StreamspecError("the stream was flushed; create a new engine")
        for chunk in validation_units(events, (ItemBatch,), BATCH):
            batch = chunk if isinstance(chunk, ItemBatch) else ItemBatch.of(chunk, self._seen)
            yield from self._feed(batch)

    def flush(self) -> list[Evaluation]:
        """End of stream: evaluate every window whose start is at or before the last item."""
        self.closed = True
        if self.windows is None or self.last_t is None:
            return []
        return self._run_windows(self.windows.started_by(self.last_t))

    # -- the driver ------------------------------------------------------------
    def _feed(self, batch: ItemBatch) -> list[Evaluation]:
        n = len(batch)
        if n == 0:
            return []
        first = self._seen
        kind = self.keys.kind if self.keys else id_type(batch.id[0])
        if kind is None:
            raise InvalidRecord(f"id {batch.id[0]!r} is neither int nor str", index=first)
        validate(batch, kind, self.last_t, first)
        t0 = self.params.t0
        if self.windows is None and t0 is not None and t0 > batch.ts[0]:
            raise OutOfOrder(f"item time {int(batch.ts[0])} is before the origin t0={t0}",
                             index=first)
        # validated: from here on nothing can fail on the input
        self._seen += n
        if self.keys is None:
            self.keys = IdIndex(kind)
        if self.windows is None:
            self.windows = SlidingWindows(self.params.omega, self.params.beta,
                                          t0 if t0 is not None else int(batch.ts[0]))
            self._start()
        dense = self.keys.add(batch.id)
        self._ingest(dense, batch.x, batch.ts)
        self.last_t = int(batch.ts[-1])
        return self._run_windows(self.windows.due_before(self.last_t))

    def _run_windows(self, upto: int) -> list[Evaluation]:
        out = []
        ext = self.keys.external
        w = self.windows
        while self.next_window < upto:
            i = self.next_window
            self.fetcher.begin(w.end(i))  # the budget is per evaluation
            ranked = self._evaluate(i, w.start(i), w.end(i))
            out.append(Evaluation(i, w.start(i), w.end(i), self._answer(ranked, ext)))
            self.next_window += 1
        return out

    def _answer(self, ranked, ext) -> list:
        """The hook's ranked ``(dense id, score)`` with external ids; another shape
        is a ``ContractViolation``."""
        k, m = self.params.k, self.keys.size
        if type(ranked) not in (list, tuple) or len(ranked) > k:
            raise ContractViolation.of(self, _EVALUATE, ranked, _wanted(k, m))
        out = []
        for entry in ranked:
            try:
                d, s = entry
                if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)) \
                        or not 0 <= d < m or isinstance(s, (str, bytes)):
                    raise TypeError
                out.append((ext(d), float(s)))
            except (TypeError, ValueError):
                raise ContractViolation(_EVALUATE, f"a {type(ranked).__name__} holding "
                                                   f"{describe(entry)}",
                                        _wanted(k, m), engine=engine_label(self)) from None
        return out

    # -- engine hooks ------------------------------------------------------------
    def _start(self) -> None:
        pass

    def _ingest(self, ids: np.ndarray, x: np.ndarray, ts: np.ndarray) -> None:
        raise NotImplementedError

    def _evaluate(self, window: int, start: int, tau: int) -> list[tuple[int, float]]:
        raise NotImplementedError
