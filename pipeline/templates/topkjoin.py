"""A minimal top-k join engine: a local replica of the remote values, its top refreshed.

The base class ``TopkJoinEngine`` validates every item, maps ids to dense ints, fixes
the origin ``t0``, decides which windows are due and starts the fetch counter of each
evaluation (``self.fetcher``, the only door to the remote dataset).  This engine keeps
the items of the windows not yet evaluated and a replica of each key's remote value,
bulk-loaded as of ``t0`` when the key is first seen (not counted).  At each evaluation
it ranks the window's ids with the replica, fetches fresh values for the best of them
(at most ``budget`` fetches) and ranks again.  Exact when the remote data does not
change after ``t0`` ("static") or the budget covers every id of the window ("unlimited").
"""
from __future__ import annotations

import numpy as np

from streamspec.spec.topkjoin import TopkJoinEngine, rank_key


class RefreshTopEngine(TopkJoinEngine):
    """A replica of the remote values; each evaluation refreshes the top of the ranking."""

    name = "mine"
    exact = False
    exact_when = ("static", "unlimited")
    description = "replica loaded at t0, best-ranked ids refreshed within the budget (minimal engine)"

    def _start(self) -> None:
        # self.windows (with its origin t0) and self.keys are known from here on
        self._items: list[tuple[int, float, int]] = []   # (dense id, x, ts) in stream order
        self._replica: dict[int, float] = {}             # dense id -> remote value held locally

    def _ingest(self, ids: np.ndarray, x: np.ndarray, ts: np.ndarray) -> None:
        """A validated batch: dense ids (``self.keys.external`` maps them back), values, times."""
        for d in ids.tolist():
            if d not in self._replica:
                self._replica[d] = self.fetcher.load(self.keys.external(d), self.windows.t0)
        self._items.extend(zip(ids.tolist(), x.tolist(), ts.tolist()))

    def _evaluate(self, window: int, start: int, tau: int) -> list[tuple[int, float]]:
        """The ranked answer of window ``[start, tau)``: ``[(dense id, score), ...]``."""
        self._items = [item for item in self._items if item[2] >= start]
        streaming: dict[int, float] = {}                 # dense id -> sum of x, or latest x
        for d, x, ts in self._items:
            if ts < tau:
                streaming[d] = streaming.get(d, 0.0) + x if self.params.aggregate == "sum" else x
        for d, _ in self._ranked(streaming)[:self.params.budget]:
            self._replica[d] = self.fetcher.fetch(self.keys.external(d))   # one unit of budget
        return self._ranked(streaming)[:self.params.k]

    def _ranked(self, streaming: dict) -> list[tuple[int, float]]:
        ext = self.keys.external
        scored = [(d, self.score(s, self._replica[d])) for d, s in streaming.items()]
        scored.sort(key=lambda pair: rank_key(pair[1], ext(pair[0])))
        return scored
