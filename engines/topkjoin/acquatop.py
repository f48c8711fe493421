"""AcquaTop: Topk+N over a local replica refreshed by a maintenance policy.

Paper §5 (Algorithm 5: process arrivals, UpdateReplica, UpdateChangedObjects,
report, purge) and §4 (Topk+N); the decisions of ``streamspec.spec.topkjoin`` and
``streamspec.spec.topkjoin_remote``.

What the engine keeps, and why:

- ``aggs``: per-slot partial aggregates of the windows not yet evaluated
  (``window_aggregates``): the exact streaming score of every id of the
  current window (memory O(distinct ids per slot), not O(items)).
- ``slist``: the Super-MTK+N list (K+N slots per active window, window marks;
  ``super_list``), numpy columns.
- ``replica``/``last_refresh``/``changes_seen``/``tie``: per key held (dense-id
  arrays): the local replica of the remote values, loaded with
  ``value(key, t0)`` when the key is first seen (the uncounted bulk load, done
  lazily), when each was last fetched, how many of its fetches found a change
  (online change rates for WBM), and the rank of its external id (the total
  order's tie-break).
- ``departed``: the replica cells of fetched keys that left the window
  (``replica.DepartedEntries``: at most 512 keys, those that left longest
  ago forgotten first; a forgotten or never fetched key that comes back is
  bulk-loaded again, as if first seen).
- ``rng``: the seeded generator of WSJ-RND.

Bounded state (issue 15): the id index and every per-key array hold the keys
live in the engine's state only (an id in a block of a window not yet
evaluated, in the open slot, in the list or in the last answer), plus the fresh ids of the
batches since the last check (made after the evaluations of each batch).
When the ids in use exceed the live ones of the last compaction by
``max(COMPACT_SLACK, live)``, the ids that left are evicted and the rest
renumbered ``0..`` in their order (``_compact``: one pass over the per-key
arrays, blocks and list, after at least that many fresh ids: amortised O(1)
per fresh id; ``IdIndex.compact`` does the same for the index).  The slack
is as large as the live set so that ids that recur every window or two are
not evicted just to be loaded again (with ``live / 4`` an id domain the size
of one window churned at every slide: 0.49M items per CPU-s instead of 1.6M,
``bench/topkjoin/state.py``).  Memory is
then O(K+N per active window + ids live in the windows not yet evaluated +
512 departed cells), whatever the number of ids ever seen; the
answers are those of an engine that forgets nothing as long as no fetched
key is forgotten (``replica``'s policy decides then).

One evaluation of window ``c`` at ``tau`` (the Java's batch flow, made
exact for static data): (1) every id of window ``c`` arrives with its exact
streaming score and replica value (ids already in the list are indistinct
arrivals: their old window's score is stale); the list becomes MinTopK's
list of these objects, i.e. for every active window its top K+N (the others
are discarded); (2) the policy elects at most gamma keys, fetched through the
``FetchCounter`` (which refuses the gamma+1-th); a changed value updates the
replica; (3) changed ids are re-inserted one by one in id order (remove,
rebuild from the retained entries, insert: Theorem 2's hole is refilled only
from retained entries): those in the list with their streaming score, those
outside it (but in the window) with the exact count under ``sum`` and with
the per-window minimum streaming score ``S_min[c]`` (a lower bound: paper
§4.3, Theorem 3) under ``latest``; (4) the first K entries are the answer;
(5) the window is purged.  Changes of keys not in the window are ignored
(they do not join); they are applied to the replica all the same.

Speed: the per-item and per-id work is in numba kernels (``_acquatop_kernels``,
the list's in ``_super_list_kernels``);
per evaluation Python does the election and the gamma fetches only.  At a small
slide (600 items at 1e3 items per window) the fixed costs of a batch and an
evaluation decide the items per CPU second (issue 15's 1M target), so each step
is one kernel call where it was many numpy calls: the id index is a hash table
(``key_index``), the eviction one pass (``_eviction_kernels``), the departed store's
put and take (``_replica_kernels``), WBM's election (``_policy_kernels``), the
changed objects of an evaluation re-inserted in one call (``changed_objects``,
linear scoring), and an arrival ranks only the ids that can reach the list.
"""
from __future__ import annotations

from collections import deque
from typing import Callable, ClassVar

import numpy as np

from streamspec.engines.topkjoin import _acquatop_kernels as kern
from streamspec.engines.topkjoin import _eviction_kernels as evict
from streamspec.engines.topkjoin import _super_list_kernels as list_kern
from streamspec.engines.topkjoin import policies, replica
from streamspec.engines.topkjoin.key_index import KeyIndex
from streamspec.engines.topkjoin.replica import DepartedEntries
from streamspec.engines.topkjoin.super_list import SuperTopKList
from streamspec.engines.topkjoin.window_aggregates import SlotAggregates
from streamspec.spec.topkjoin import TopkJoinEngine, rank_key


# the least room for fresh ids between two compactions (``AcquaTopEngine.threshold``)
COMPACT_SLACK = 256
# evaluation steps (and batches) over which ``threshold`` takes its maxima
RECENT = 16
# False: never evict (tests compare against it)
EVICT = True
# False: the room between compactions is ``COMPACT_SLACK`` alone (tests: evict at every batch)
LOAD_SLACK = True


class AcquaTopEngine(TopkJoinEngine):
    """Topk+N with a replica refreshed by ``policy`` over ``candidates``."""

    name = "acquatop"
    description = "AcquaTop: Topk+N list, replica refreshed by a policy"
    policy: ClassVar[Callable] = staticmethod(policies.nothing)
    candidates: ClassVar[str] = "list"     # "list" (AT-*) or "window" (WSJ-*)
    use_n: ClassVar[bool] = True           # False: plain MinTopK (N = 0)

    def _start(self):
        p = self.params
        n = p.n if self.use_n else 0
        self.span = (p.omega - 1) // p.beta + 1     # windows an item belongs to
        self.slist = SuperTopKList(p.k + n, self.span, 0)
        if self.keys.kind is int and not self.keys.size:
            self.keys = KeyIndex()        # external ids in a numpy column (``key_index``)
        self.aggs = SlotAggregates(self.windows.t0, p.omega, p.beta, p.aggregate)
        # the replica's per-key cells: buffers at the per-key capacity, ``replica``,
        # ``last_refresh`` and ``changes_seen`` views of the cells of the ids held
        self._cells = (np.zeros(0, np.float64), np.zeros(0, np.int64), np.zeros(0, np.int64))
        self._view(0)
        # ids live after each of the last evaluation steps, fresh ids of the last batches
        self._lives: deque[int] = deque(maxlen=RECENT)
        self._fresh: deque[int] = deque(maxlen=RECENT)
        self.departed = DepartedEntries()
        self._answered: list[int] = []
        self.rng = np.random.default_rng(p.seed)
        self.smin: float | None = None
        self._scores = np.zeros(0, np.float64)
        self._linear = self.score.fn is None and (
            (*p.weights, *p.stream_range, *p.remote_range))

    @property
    def tie(self) -> np.ndarray:
        return self.aggs.tie

    def __getstate__(self):
        """The replica cells of the ids held only (no views: they would pickle as copies);
        ``__setstate__`` makes the views again, at the capacity the slot aggregates keep."""
        state = dict(self.__dict__)
        if "_cells" in state:
            state["_cells"] = tuple(c[:self._held].copy() for c in self._cells)
            for name in ("replica", "last_refresh", "changes_seen"):
                del state[name]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if "_cells" in state:
            size = max(self.aggs.acc_val.size, self._held)
            cells = tuple(np.zeros(size, c.dtype) for c in self._cells)
            for new, old in zip(cells, self._cells):
                new[:old.size] = old
            self._cells = cells
            self._view(self._held)

    # -- bounded state (issue 15) -------------------------------------------------
    def threshold(self) -> int:
        """Ids the engine may hold before it evicts: the most ids live after one of the
        last ``RECENT`` evaluation steps, plus the most fresh ids of one of the last
        ``RECENT`` batches, the live ids again or ``COMPACT_SLACK``, whichever is
        largest (amortisation: at least that many fresh ids between two compactions).  The
        per-key arrays are allocated at this capacity as soon as it is known, whether or
        not ids churn (an engine whose ids all recur holds the same arrays as one whose ids
        are all fresh), and brought down to it when over four times it (a burst is over)."""
        return self._room(max(self._fresh, default=0))

    def _room(self, fresh: int) -> int:
        live = max(self._lives, default=0)
        if not LOAD_SLACK:
            return live + COMPACT_SLACK
        return live + max(fresh, COMPACT_SLACK, live)

    def _view(self, n: int) -> None:
        self._held = n
        self.replica, self.last_refresh, self.changes_seen = (c[:n] for c in self._cells)

    def _reserve(self, size: int) -> None:
        """Per-key arrays (slot aggregates and replica cells) at ``size`` cells."""
        if size == self._cells[0].size:
            return
        self.aggs.reserve(size)
        if isinstance(self.keys, KeyIndex):   # the batch being ingested may add its ids on top
            self.keys.reserve(size + max(self._fresh, default=0))
        n = min(self._held, size)
        cells = tuple(np.zeros(size, c.dtype) for c in self._cells)
        for new, old in zip(cells, self._cells):
            new[:n] = old[:n]
        self._cells = cells
        self._view(n)

    def _ingest(self, ids, x, ts):
        self._fresh.append(self.keys.size - self._held)
        if EVICT and self.keys.size > self.threshold():
            ids = self._compact(ids)         # before the batch's fresh ids get cells
        n = self.keys.size
        if n > self._cells[0].size:          # more live ids than ever: a larger capacity
            self._reserve(max(n, self.threshold()) if EVICT else max(n, 2 * self._held, 64))
        elif EVICT and self._cells[0].size > 4 * max(self.threshold(), n):
            self._reserve(max(self.threshold(), n))
        if n > self._held:
            self._new_keys(self._held, n)
        self.aggs.ingest(ids, x, ts)

    def _run_windows(self, upto: int):
        """The due evaluations (the base driver: answers mapped to external ids), then the
        live ids counted (when the evaluated windows' blocks are gone and the fewest ids
        live) and the per-key capacity brought to ``threshold()``."""
        out = super()._run_windows(upto)
        if EVICT and out:
            live = self._live()
            self._lives.append(int(live.sum()))
            # the fewest ids are live now: evict if more are held than the room without a
            # batch's fresh ids allows (a burst of ids that left, or a quieter stream)
            if self.keys.size > self._room(0):
                self._compact(np.zeros(0, np.int64), live)
            if self.threshold() > self._cells[0].size:
                self._reserve(self.threshold())
        return out

    def _live(self, batch=None) -> np.ndarray:
        """Mask of the ids held that are live: in a block, the open slot, the list, the last
        answer (their replica cells are the values the scores reported were computed from)
        or ``batch`` (being ingested)."""
        live = np.zeros(self.keys.size, np.bool_)
        live[:self._held] = self.aggs.live(self.slist.dense, self.slist.m)
        live[self._answered] = True
        if batch is not None:
            live[batch] = True
        return live

    def _externals(self, lo: int, hi: int):
        """External ids of dense ids ``lo..hi-1``: an array (int keys) or a list (str)."""
        if isinstance(self.keys, KeyIndex):
            return self.keys.externals(lo, hi)
        return self.keys._external[lo:hi]

    def _new_keys(self, old: int, n: int) -> None:
        """Keys ``old..n-1`` are new to the index: their departed cells if kept, else the
        bulk load's values at t0 (not counted)."""
        t0 = self.windows.t0
        fresh = self._externals(old, n)
        found, val, last, changes = self.departed.take(fresh)
        self._view(n)
        vals, lr, seen = self.replica[old:], self.last_refresh[old:], self.changes_seen[old:]
        lr[:], seen[:] = t0, 0
        vals[found], lr[found], seen[found] = val, last, changes
        miss = np.flatnonzero(~found)
        if miss.size:    # one remote call for the batch's fresh keys (``values``)
            keys = fresh if miss.size == len(fresh) else (
                fresh[miss] if isinstance(fresh, np.ndarray) else [fresh[i] for i in miss.tolist()])
            vals[miss] = self.fetcher.load_many(keys, t0)
        self.aggs.grow_keys(n)
        if self.keys.kind is int:
            self.aggs.tie[old:n] = fresh
        else:  # ranks of the sorted strings (recomputed only when keys are added)
            externals = self.keys._external
            order = sorted(range(n), key=externals.__getitem__)
            self.aggs.tie[np.asarray(order, np.int64)] = np.arange(n, dtype=np.int64)

    def _compact(self, batch: np.ndarray, live: np.ndarray | None = None) -> np.ndarray:
        """Evict the ids that left the window, renumber the rest ``0..`` in their order;
        return ``batch`` (dense ids being ingested, kept) renumbered.

        Departed ids that were fetched leave their replica cells to ``departed``.  The
        batch's fresh ids (``>= _held``) have no cells yet: they stay last, in order."""
        aggs, slist = self.aggs, self.slist
        n, held = self.keys.size, self._held
        live = self._live(batch) if live is None else live
        if isinstance(self.keys, KeyIndex):
            return self._evict(batch, live)
        keep = np.flatnonzero(live)
        gone = np.flatnonzero(~live)          # all below ``held``: the batch's ids are live
        # a cell never fetched is the bulk load's: reloaded if its key comes back
        fetched = gone[self.last_refresh[gone] != self.windows.t0]
        if fetched.size:
            ext = self._externals(0, n)
            self.departed.capacity = replica.capacity(n)
            self.departed.put(ext[fetched] if isinstance(ext, np.ndarray) else
                              [ext[d] for d in fetched.tolist()], self.replica[fetched],
                              self.last_refresh[fetched], self.changes_seen[fetched])
        del live, gone, fetched                 # temporaries: the peak is a compaction's
        remap = np.full(n, -1, np.int64)
        remap[keep] = np.arange(keep.size, dtype=np.int64)
        self.keys.compact(keep)
        cells = keep[keep < held]
        for c in self._cells:
            c[:cells.size] = c[cells]
        self._view(int(cells.size))
        aggs.renumber(cells, remap)
        slist.renumber(remap)
        self._answered = remap[self._answered].tolist()
        return remap[batch]

    def _evict(self, batch: np.ndarray, live: np.ndarray) -> np.ndarray:
        """``_compact`` for int keys in one kernel pass (``_eviction_kernels.evict``)."""
        aggs, slist, held = self.aggs, self.slist, self._held
        n = live.size
        remap = np.empty(n, np.int64)
        gone = n - int(np.count_nonzero(live))
        out = (np.empty(gone, np.int64), np.empty(gone, np.float64), np.empty(gone, np.int64),
               np.empty(gone, np.int64))
        kept, cells, fetched = evict.evict(
            live, held, self.windows.t0, self.keys._column, *self._cells, aggs.acc_val,
            aggs.acc_ts, aggs.acc_mark, aggs.tie, aggs.w_mark, aggs.touched, int(aggs.meta[3]),
            aggs.buf_id, int(aggs.meta[0]), slist.dense, slist.m, remap, *out)
        if fetched:
            self.departed.capacity = replica.capacity(n)
            self.departed.put(*(a[:fetched] for a in out))
        del live, out                           # temporaries: the peak is a compaction's
        self.keys.compacted(kept)
        self._view(cells)
        aggs.keys = cells
        self._answered = remap[self._answered].tolist()
        return remap[batch]

    # -- one evaluation (Algorithm 5) ---------------------------------------------
    def _evaluate(self, window, start, tau):
        aggs = self.aggs
        # the AT engines' candidates are the list's: the window's ids need no tie order
        ids, svals, last_ts = aggs.window(window, self.candidates == "window")
        self.smin = float(svals.min()) if ids.size else None
        self._arrivals(ids, aggs.w_val, aggs.w_ts, (ids, svals, last_ts))
        changed = self._refresh(window, start, tau, ids, aggs.w_ts)
        if len(changed):
            tie = self.tie
            changed = changed[np.argsort(tie[changed])]      # in id order (distinct ties)
            if self._linear:          # all of them in one kernel call (the same steps)
                sl = self.slist
                sl.m = list_kern.changed_objects(
                    changed, self.replica, aggs.w_val, aggs.w_ts, aggs.w_mark, aggs.stamp, tie,
                    aggs.latest, 0.0 if self.smin is None else self.smin, self.windows.t0,
                    self.params.beta, *self._linear, *sl._cols(), sl.m, sl.c, sl.cap, sl.span,
                    sl.cnt)
            else:
                for d in changed.tolist():
                    self._changed_object(d, aggs.w_val, aggs.w_ts)
        answer = self.slist.top(self.params.k)
        self._answered = [d for d, _ in answer]
        self.slist.purge()
        aggs.drop_before_window(window + 1)
        return answer

    def _scores_of(self, svals, vals) -> np.ndarray:
        if self._linear:
            out = np.empty(svals.size, np.float64)
            kern.linear_scores(svals, vals, *self._linear, out)
            return out
        return np.array([self.score(s, v) for s, v in zip(svals.tolist(), vals.tolist())],
                        dtype=np.float64)

    def _entry(self, d, s, ts):
        return (rank_key(self.score(s, self.replica[d]), int(self.tie[d])), s, ts,
                (ts - self.windows.t0) // self.params.beta)

    def _arrivals(self, ids, sval, tsd, arrays):
        """Step 1: the window's ids arrive (re-arrivals re-scored, the others offered)."""
        _, svals, _ = arrays
        scores = self._scores_of(svals, self.replica[ids])
        self.slist.arrive(ids, scores, sval, tsd, self.tie, self.windows.t0, self.params.beta)

    def _refresh(self, window, start, tau, ids, tsd) -> np.ndarray:
        """Step 2 (UpdateReplica): fetch the elected keys; return those whose value changed
        (distinct dense ids)."""
        # the window's ids as an array (no Python int per id: a window holds up to 1e5)
        cands = self.slist.ids() if self.candidates == "list" else ids
        ctx = policies.Context(window, start, tau, self.params.budget, self.params.k, tsd)
        elected = np.asarray(self.policy(self, cands, ctx), np.int64)
        if not elected.size:
            return elected
        ext = self.keys.external
        # the elected keys in one remote call, one unit of budget each (``fetch_many``)
        got = self.fetcher.fetch_many([ext(d) for d in elected.tolist()])
        self.last_refresh[elected] = tau
        diff = got != self.replica[elected]
        hit = np.unique(elected[diff])      # (policies elect distinct keys; a repeat is one change)
        self.replica[elected[diff]] = got[diff]
        self.changes_seen[hit] += 1
        return hit

    def _changed_object(self, d, sval, tsd):
        """Step 3: re-score a changed object and put it back where it belongs."""
        at = self.slist.find(d)
        if at >= 0:
            s = float(self.slist.sval[at])
        elif self.aggs.in_window(d):
            s = float(sval[d]) if self.params.aggregate == "sum" else self.smin
        else:
            return  # not in the window: does not join
        self.slist.replace(d, *self._entry(d, s, int(tsd[d])))

    # -- introspection (tests, bench) --------------------------------------------
    def memory_rows(self) -> int:
        """Rows the engine holds: list entries plus per-slot partial aggregates."""
        return len(self.slist) + self.aggs.size

    def state_sizes(self) -> dict[str, int]:
        """Entries of every structure that could grow with the ids seen (tests, bench)."""
        keys = self.keys
        index = 0 if keys is None else (
            keys.held() if isinstance(keys, KeyIndex) else keys.size if keys.kind is str
            else int(keys._direct.size + keys._keys.size))
        external = 0 if keys is None else (
            keys.size if isinstance(keys, KeyIndex) else len(keys._external))
        return {"ids": 0 if keys is None else keys.size,
                "id_index": 0 if keys is None else index,
                "external": external,
                "external_capacity": int(keys._column.size) if isinstance(keys, KeyIndex)
                else external,
                "replica": int(self.replica.size),
                "per_key_capacity": int(self.aggs.acc_val.size),
                "departed": len(self.departed),
                "list": len(self.slist),
                "list_capacity": int(self.slist.dense.size),
                "block_rows": self.aggs.size,
                "block_capacity": int(self.aggs.buf_id.size)}


def _policy_engine(name: str, policy, candidates: str, text: str, **extra):
    attrs = {"name": name, "policy": staticmethod(policy), "candidates": candidates,
             "description": text, "__doc__": text, **extra}
    return type(f"{''.join(p.title() for p in name.split('-'))}Engine", (AcquaTopEngine,), attrs)


_EXACT_AT = ("static", "unlimited")
AtTsmEngine = _policy_engine("at-tsm", policies.top, "list",
                             "AcquaTop, top selection: refresh the first gamma list entries",
                             exact_when=_EXACT_AT)
AtBsmEngine = _policy_engine("at-bsm", policies.border, "list",
                             "AcquaTop, border selection: refresh around the K/N border",
                             exact_when=_EXACT_AT)
AtAsmEngine = _policy_engine("at-asm", policies.everything, "list",
                             "AcquaTop, all selection: refresh every list entry (no budget)",
                             exact_when=("static", "unlimited", "full_list"), unbounded=True)
AtLruEngine = _policy_engine("at-lru", policies.lru, "list",
                             "AcquaTop with LRU over the list entries", exact_when=_EXACT_AT)
AtWbmEngine = _policy_engine("at-wbm", policies.wbm, "list",
                             "AcquaTop with the WBM ranker over the list entries",
                             exact_when=_EXACT_AT)
WstEngine = _policy_engine("wst", policies.nothing, "window",
                           "ACQUA WST baseline: never refresh the replica", exact_when=("static",))
WsjRndEngine = _policy_engine("wsj-rnd", policies.rnd, "window",
                              "ACQUA WSJ-RND: gamma random window keys (seeded, no replacement)",
                              exact_when=_EXACT_AT)
WsjLruEngine = _policy_engine("wsj-lru", policies.lru, "window",
                              "ACQUA WSJ-LRU: least recently refreshed window keys",
                              exact_when=_EXACT_AT)
WsjWbmEngine = _policy_engine("wsj-wbm", policies.wbm, "window",
                              "ACQUA WSJ-WBM: WBM ranker over the window keys",
                              exact_when=_EXACT_AT)

ENGINES = (AtTsmEngine, AtBsmEngine, AtAsmEngine, AtLruEngine, AtWbmEngine,
           WstEngine, WsjRndEngine, WsjLruEngine, WsjWbmEngine)
