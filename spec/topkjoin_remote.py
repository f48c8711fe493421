"""The remote (distributed) dataset of the top-k join and the fetch budget.

This docstring is the normative semantics of the remote side; paper: Zahmatkesh & Della Valle, AcquaTop / Topk+N, Sections 2.2 and 5
(local replica, maintenance policy, refresh budget gamma).

- A remote dataset maps each key to a timeline of ``(time, value)`` entries.
  ``value(key, tau)`` is the value of the key's latest entry with
  ``time < tau`` (strictly before, as the authors' SQL does), or ``default``
  (0) before the key's first entry or for a key it does not know.
- Three datasets a user plugs in: ``TimelineDataset`` (in memory),
  ``SqliteDataset`` (a table ``(key, time, value)``; the authors used SQLite)
  and ``CallableDataset`` (a function ``(key, tau) -> value``, e.g. a real
  service).  All are read-only and picklable (the SQLite connection is
  reopened lazily after unpickling), so Spark can ship them.
- ``FetchCounter`` is what engines read through: it counts fetches per
  evaluation and refuses the ``budget + 1``-th one (``BudgetExceeded``), for
  every dataset alike; ``budget=None`` is unbounded (AT-ASM, which refreshes
  every list entry: the one policy without a budget).  ``latency`` (seconds) simulates a slow service.
- The bulk load of the replica at ``t0`` is not counted; ``FetchCounter.load``
  is that path.
- Batched access (issue 15): ``values(dataset, keys, tau)`` reads many keys at
  once, through the dataset's own ``values(keys, tau)`` when it has one (the
  three datasets here do; ``CallableDataset`` takes an optional vectorised
  function), else one ``value`` call per key in order, so a user dataset
  with ``value`` only keeps working.  ``FetchCounter.load_many`` (the bulk load
  of a batch's fresh keys) and ``FetchCounter.fetch_many`` (an evaluation's
  elected keys) use it; ``fetch_many`` still counts one unit of budget per
  key, as the paper's gamma counts remote accesses (Section 5), and a request
  beyond the budget fails at the same key as one ``fetch`` per key would.
- Bounded log (issue 15): ``FetchCounter.log`` keeps the per-evaluation fetch
  counts of a stream's first evaluations (``LOG_RUNS`` runs of equal counts, at
  least that many evaluations), in a preallocated array; ``evaluations``,
  ``fetched`` and ``most`` count every evaluation.
"""
from __future__ import annotations

import bisect
import math
import sqlite3
import time as _time
from typing import Callable, Protocol, runtime_checkable

import numpy as np

from streamspec.spec.errors import InvalidParameter, StreamspecError

TABLE = "timeline"


class BudgetExceeded(StreamspecError, RuntimeError):
    """An engine asked for more remote fetches in one evaluation than its budget allows."""


@runtime_checkable
class RemoteDataset(Protocol):
    def value(self, key, tau: int) -> float:
        """Value of ``key`` as of just before ``tau``."""


def values(dataset, keys, tau: int) -> np.ndarray:
    """``[value(k, tau) for k in keys]`` as float64, in one call when ``dataset`` has a
    ``values(keys, tau)`` method (the vectorised remote access), else key by key in order."""
    many = getattr(dataset, "values", None)
    if many is not None:
        out = np.asarray(many(keys, tau), dtype=np.float64)
        if out.shape != (len(keys),):
            raise InvalidParameter(f"{type(dataset).__name__}.values returned shape {out.shape} "
                                   f"for {len(keys)} keys")
        return out
    value = dataset.value
    keys = keys.tolist() if isinstance(keys, np.ndarray) else keys    # Python keys, as ``fetch``
    return np.fromiter((value(k, tau) for k in keys), dtype=np.float64, count=len(keys))


class TimelineDataset:
    """In-memory timelines: ``{key: [(time, value), ...]}`` (any order; sorted here)."""

    def __init__(self, timelines: dict | None = None, default: float = 0.0):
        self.default = float(default)
        self._times: dict = {}
        self._values: dict = {}
        for key, entries in (timelines or {}).items():
            entries = sorted((int(t), float(v)) for t, v in entries)
            # equal times: the last one given wins, like a later row overwriting
            dedup: dict[int, float] = {}
            for t, v in entries:
                dedup[t] = v
            self._times[key] = list(dedup)
            self._values[key] = list(dedup.values())

    @classmethod
    def from_rows(cls, rows, default: float = 0.0) -> "TimelineDataset":
        """From ``(key, time, value)`` rows (later rows win on equal ``(key, time)``)."""
        timelines: dict = {}
        for key, t, v in rows:
            timelines.setdefault(key, []).append((t, v))
        return cls(timelines, default)

    def value(self, key, tau: int) -> float:
        times = self._times.get(key)
        if not times:
            return self.default
        i = bisect.bisect_left(times, tau)  # entries with time < tau
        return self._values[key][i - 1] if i else self.default

    def values(self, keys, tau: int) -> np.ndarray:
        """``value`` of every key (one bisection each, no Python call per key)."""
        get_t, get_v, tau, default = self._times.get, self._values.get, int(tau), self.default
        out = np.empty(len(keys), np.float64)
        for j, key in enumerate(keys.tolist() if isinstance(keys, np.ndarray) else keys):
            times = get_t(key)
            i = bisect.bisect_left(times, tau) if times else 0
            out[j] = get_v(key)[i - 1] if i else default
        return out

    def keys(self) -> list:
        return list(self._times)

    def rows(self):
        for key, times in self._times.items():
            for t, v in zip(times, self._values[key]):
                yield key, t, v

    def value_range(self) -> tuple[float, float]:
        """Min and max over every entry and the default (the CLI's default remote range)."""
        vals = [v for vs in self._values.values() for v in vs] + [self.default]
        return min(vals), max(vals)

    def __eq__(self, other):
        return (isinstance(other, TimelineDataset) and self.default == other.default
                and self._times == other._times and self._values == other._values)


class SqliteDataset:
    """A SQLite table ``(key, time, value)``; one indexed query per fetch."""

    def __init__(self, path: str, table: str = TABLE, default: float = 0.0):
        if not table.isidentifier():
            raise InvalidParameter(f"table name must be an identifier, got {table!r}")
        self.path, self.table, self.default = str(path), table, float(default)
        self._conn = None
        cols = {row[1] for row in self._connection().execute(f"PRAGMA table_info({table})")}
        if not {"key", "time", "value"} <= cols:
            raise InvalidParameter(f"{path}: table {table!r} must have columns key, time, value "
                                   f"(found {sorted(cols) or 'no table'})")

    def _connection(self):
        if self._conn is None:
            self._conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True,
                                         check_same_thread=False)
        return self._conn

    def value(self, key, tau: int) -> float:
        row = self._connection().execute(
            f"SELECT value FROM {self.table} WHERE key = ? AND time < ? "
            f"ORDER BY time DESC, rowid DESC LIMIT 1", (key, int(tau))).fetchone()
        return float(row[0]) if row else self.default

    def values(self, keys, tau: int) -> np.ndarray:
        """``value`` of every key: one query per chunk of keys instead of one per key."""
        keys = keys.tolist() if isinstance(keys, np.ndarray) else list(keys)
        found: dict = {}
        conn = self._connection()
        for a in range(0, len(keys), 500):        # SQLite's bound-parameter limit
            chunk = list(dict.fromkeys(keys[a:a + 500]))
            marks = ",".join("?" * len(chunk))
            # per key, its latest row before tau (ties: the later row, as ``value``)
            for key, v in conn.execute(
                    f"SELECT key, value FROM (SELECT key, value, ROW_NUMBER() OVER "
                    f"(PARTITION BY key ORDER BY time DESC, rowid DESC) AS r FROM {self.table} "
                    f"WHERE key IN ({marks}) AND time < ?) WHERE r = 1", (*chunk, int(tau))):
                found[key] = float(v)
        default = self.default
        return np.array([found.get(k, default) for k in keys], dtype=np.float64)

    def value_range(self) -> tuple[float, float]:
        lo, hi = self._connection().execute(
            f"SELECT MIN(value), MAX(value) FROM {self.table}").fetchone()
        if lo is None:
            return self.default, self.default
        return min(float(lo), self.default), max(float(hi), self.default)

    @staticmethod
    def write(path: str, rows, table: str = TABLE) -> None:
        """Create ``path`` with the table ``(key, time, value)`` and an index (for tests and bench)."""
        with sqlite3.connect(path) as conn:
            conn.execute(f"CREATE TABLE {table} (key, time INTEGER, value REAL)")
            conn.executemany(f"INSERT INTO {table} VALUES (?, ?, ?)", rows)
            conn.execute(f"CREATE INDEX {table}_key_time ON {table} (key, time)")
        conn.close()

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_conn"] = None
        return state


class CallableDataset:
    """A function ``(key, tau) -> value`` (a real service).  Must be picklable for Spark.

    ``many``, optional: the same function over a numpy array of keys, ``(keys, tau) ->
    values`` (a service's batch endpoint); without it ``values`` calls ``fn`` per key."""

    def __init__(self, fn: Callable[[object, int], float], many: Callable | None = None):
        if not callable(fn):
            raise InvalidParameter(f"expected a callable (key, tau) -> value, got {fn!r}")
        if many is not None and not callable(many):
            raise InvalidParameter(f"expected a callable (keys, tau) -> values, got {many!r}")
        self.fn = fn
        self.many = many

    def __setstate__(self, state):
        self.__dict__.update({"many": None, **state})     # pickled before ``many`` existed

    def value(self, key, tau: int) -> float:
        v = float(self.fn(key, int(tau)))
        if not math.isfinite(v):
            raise InvalidParameter(f"remote value of {key!r} at {tau} is not finite: {v}")
        return v

    def values(self, keys, tau: int) -> np.ndarray:
        """``value`` of every key: one call of ``many`` when given."""
        if self.many is None:
            value = self.value
            keys = keys.tolist() if isinstance(keys, np.ndarray) else keys
            return np.fromiter((value(k, tau) for k in keys), dtype=np.float64, count=len(keys))
        out = np.asarray(self.many(np.asarray(keys), int(tau)), dtype=np.float64)
        if out.shape != (len(keys),):
            raise InvalidParameter(f"batch remote function returned shape {out.shape} "
                                   f"for {len(keys)} keys")
        bad = ~np.isfinite(out)
        if bad.any():
            at = int(np.flatnonzero(bad)[0])
            raise InvalidParameter(f"remote value of {keys[at]!r} at {tau} is not finite: "
                                   f"{out[at]}")
        return out


class FetchLogTruncated(StreamspecError, RuntimeError):
    """The per-evaluation fetch log was asked for after it stopped recording (``LOG_RUNS``)."""


# runs of equal per-evaluation fetch counts the log records (issue 15, bounded state): the
# first evaluations of a stream, at least LOG_RUNS of them (the experiments read the first
# 150); beyond that only ``evaluations``, ``fetched`` and ``most`` go on counting
LOG_RUNS = 1024
_RUN_MAX = np.iinfo(np.int32).max


class FetchCounter:
    """The engine's only door to the remote dataset: counts and limits fetches per evaluation.

    The fetches of each finished evaluation are logged run-length encoded, ``[count,
    evaluations]`` rows of an int32 array preallocated at ``LOG_RUNS`` rows (8 KB): a
    stream's engine lives as long as the stream (Spark's group state), and once ids churn
    the count changes between evaluations, so a log growing with the evaluations would be
    the one part of the state that grows with the stream (paper §5: the state is the list
    and the replica).  The log stops when its rows are used up; the totals go on."""

    def __init__(self, dataset: RemoteDataset, budget: int | None, latency: float = 0.0):
        self.dataset = dataset
        self.budget = budget
        self.latency = float(latency)
        self.tau: int | None = None
        self.count = 0
        self._runs = np.zeros((LOG_RUNS, 2), np.int32)
        self._nruns = 0
        self.complete = True          # every finished evaluation is in ``log``
        self.evaluations = 0          # finished evaluations, fetches in them, most in one
        self.fetched = 0
        self.most = 0

    def __getstate__(self) -> dict:
        """The runs in use only (Spark rewrites the engine's group state every batch)."""
        state = dict(self.__dict__)
        state["_runs"] = self._runs[:self._nruns].copy()
        return state

    def __setstate__(self, state: dict) -> None:
        if "runs" in state:               # pickled before the bounded log: a list of runs
            runs = state.pop("runs")
            state.update(_runs=np.asarray(runs, np.int32).reshape(-1, 2), _nruns=len(runs),
                         complete=True, evaluations=sum(t for _, t in runs),
                         fetched=sum(c * t for c, t in runs),
                         most=max((c for c, _ in runs), default=0))
        self.__dict__.update(state)
        runs = np.zeros((max(LOG_RUNS, self._nruns), 2), np.int32)
        runs[:self._nruns] = self._runs[:self._nruns]
        self._runs = runs

    @property
    def runs(self) -> np.ndarray:
        """The log's ``[count, evaluations]`` runs in use (a view)."""
        return self._runs[:self._nruns]

    @property
    def log(self) -> list[int]:
        """Fetches of each finished evaluation, in order (``FetchLogTruncated`` once the log
        stopped: ``evaluations``, ``fetched`` and ``most`` still cover every evaluation)."""
        if not self.complete:
            raise FetchLogTruncated(
                f"the fetch log kept the first {int(self.runs[:, 1].sum())} of "
                f"{self.evaluations} evaluations ({LOG_RUNS} runs of equal counts); "
                f"use evaluations, fetched and most")
        return [count for count, times in self.runs.tolist() for _ in range(times)]

    def begin(self, tau: int) -> None:
        """Start the evaluation at ``tau`` (closes the previous one in ``log``)."""
        if self.tau is not None:
            count, n = self.count, self._nruns
            self.evaluations += 1
            self.fetched += count
            self.most = max(self.most, count)
            if self.complete:
                runs = self._runs
                if n and runs[n - 1, 0] == count and runs[n - 1, 1] < _RUN_MAX:
                    runs[n - 1, 1] += 1
                elif n < runs.shape[0]:
                    runs[n, 0], runs[n, 1] = count, 1
                    self._nruns = n + 1
                else:
                    self.complete = False
        self.tau, self.count = int(tau), 0

    def fetch(self, key) -> float:
        """``value(key, tau)`` of the current evaluation; one unit of budget."""
        if self.budget is not None and self.count >= self.budget:
            raise BudgetExceeded(f"fetch {self.count + 1} of {key!r} at tau={self.tau} exceeds "
                                 f"the budget of {self.budget} fetches per evaluation")
        self.count += 1
        if self.latency:
            _time.sleep(self.latency)
        return self.dataset.value(key, self.tau)

    def fetch_many(self, keys) -> np.ndarray:
        """``fetch`` of every key in order, in one remote call; one unit of budget per key."""
        n = len(keys)
        if self.budget is not None and self.count + n > self.budget:
            # the refusal of one ``fetch`` per key: the keys within the budget are fetched
            return np.array([self.fetch(k) for k in keys], dtype=np.float64)
        self.count += n
        if self.latency and n:
            _time.sleep(self.latency * n)
        return values(self.dataset, keys, self.tau)

    def load(self, key, t0: int) -> float:
        """The replica's bulk load at ``t0`` (not counted)."""
        return self.dataset.value(key, t0)

    def load_many(self, keys, t0: int) -> np.ndarray:
        """``load`` of every key, in one remote call (not counted)."""
        return values(self.dataset, keys, t0)

    @property
    def per_evaluation(self) -> list[int]:
        """Fetches of every evaluation so far, the current one included."""
        return self.log + ([self.count] if self.tau is not None else [])
