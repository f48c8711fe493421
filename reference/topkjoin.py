"""The top-k join oracle: at every evaluation, the full join with the true remote values
(``streamspec.spec.topkjoin``; the authors' Java ``OracleJoinOperator`` does the same).

``evaluate(items, params)`` is the definition with no driver: for each window,
aggregate its items per id, score every id with ``F(s, value(id, tau))`` read
straight from the remote dataset (no budget), rank by ``(score desc, id asc)``
and keep the first ``min(K, n)``.  ``OracleEngine`` is the same computation
behind the engine contract, so the pipeline and the conformance suite can run it.
"""
from __future__ import annotations

from streamspec.spec.topkjoin import Evaluation, Item, ItemBatch, Params, TopkJoinEngine, rank_key
from streamspec.spec.windows import SlidingWindows


def aggregate(window_items, how: str) -> dict:
    """Streaming score per id: ``sum`` of x, or the x of the ``latest`` item (stream order breaks ts ties)."""
    out: dict = {}
    for key, x, _ in window_items:
        out[key] = out.get(key, 0.0) + x if how == "sum" else x
    return out


def window_answer(window_items, tau: int, params: Params, score=None) -> list[tuple]:
    """The exact ranked answer of one window evaluated at ``tau``."""
    score = score or params.scoring()
    scored = [(key, score(s, params.remote.value(key, tau)))
              for key, s in aggregate(window_items, params.aggregate).items()]
    scored.sort(key=lambda e: rank_key(e[1], e[0]))
    return scored[:params.k]


def evaluate(items, params: Params) -> list[Evaluation]:
    """Every evaluation of the stream ``items`` (``Item`` or ``(id, x, ts)``), flush included."""
    rows = [(it.id, float(it.x), int(it.ts)) if isinstance(it, Item) else
            (it[0], float(it[1]), int(it[2])) for it in items]
    if not rows:
        return []
    t0 = params.t0 if params.t0 is not None else rows[0][2]
    w = SlidingWindows(params.omega, params.beta, t0)
    score = params.scoring()
    return [Evaluation(i, w.start(i), w.end(i),
                       window_answer([r for r in rows if w.start(i) <= r[2] < w.end(i)],
                                     w.end(i), params, score))
            for i in range(w.started_by(rows[-1][2]))]


class OracleEngine(TopkJoinEngine):
    """Keeps the items of the windows not yet evaluated; recomputes each answer from scratch."""

    name = "oracle"
    exact = True
    exact_when = ("static", "full_list", "unlimited", "changing")
    description = "full join with the true remote values at every evaluation (the oracle)"

    def _start(self):
        self._items: list[tuple[int, float, int]] = []

    def _ingest(self, ids, x, ts):
        self._items.extend(zip(ids.tolist(), x.tolist(), ts.tolist()))

    def _evaluate(self, window, start, tau):
        self._items = [r for r in self._items if r[2] >= start]
        inside = [r for r in self._items if r[2] < tau]
        ext = self.keys.external
        scored = [(d, self.score(s, self.params.remote.value(ext(d), tau)))
                  for d, s in aggregate(inside, self.params.aggregate).items()]
        scored.sort(key=lambda e: rank_key(e[1], ext(e[0])))
        return scored[:self.params.k]


__all__ = ["evaluate", "window_answer", "aggregate", "OracleEngine", "ItemBatch"]
