"""The simjoin oracle: the one-time top-k join (SWOOP Definition 1) recomputed
from all valid pairs after every operation (``streamspec.spec.simjoin``).

``evaluate(events, params)`` is the definition itself: for every event, the
``TopK`` it emits (or ``None`` when the list did not change).  ``valid_pairs``
lists every qualifying pair of the window; ``minimal_stock`` is the set of
pairs whose rank at their own end time is at most ``k`` (Section 6.1), used to
check that SWOOP's stock is exactly the minimal one.  ``OracleEngine`` is the
same computation behind the engine contract (``--engine oracle``).
"""
from __future__ import annotations

from streamspec.spec._simjoin_similarity import similarity
from streamspec.spec.simjoin import Advance, Params, SimJoinEngine, TopK, order_key


def valid_pairs(window, params: Params, t: float) -> list[tuple]:
    """``(key, seq_i, seq_j, score, e)`` for every qualifying pair valid at ``t``.

    ``window`` holds ``(seq, tokens: frozenset, ts: float, side)``.
    """
    w, kind = params.wf, params.kind
    live = [r for r in window if t < r[2] + w]
    out = []
    for a in range(len(live)):          # the window is in arrival order: seq_i > seq_j
        for b in range(a):
            si, ti, _, side_i = live[a]
            sj, tj, tsj, side_j = live[b]
            if params.join == "rs" and side_i == side_j:
                continue
            o = len(ti & tj)
            if o == 0:
                continue
            score = float(similarity(kind, len(ti), len(tj), o))
            e = tsj + w
            out.append((order_key(score, e, si, sj), si, sj, score, e))
    out.sort()
    return out


def topk(window, params: Params, t: float) -> tuple:
    """The top-k list at ``t``: ``((seq_i, seq_j, score, e), ...)``, best first."""
    return tuple(p[1:] for p in valid_pairs(window, params, t)[:params.k])


def minimal_stock(window, params: Params, t: float) -> set[tuple[int, int]]:
    """``{(seq_i, seq_j)}`` of the valid pairs whose rank at their end time is ``<= k``:
    fewer than ``k`` better pairs are still valid when they end."""
    pairs = valid_pairs(window, params, t)
    keep = set()
    for n, (key, si, sj, score, e) in enumerate(pairs):
        better = sum(1 for q in pairs[:n] if q[4] >= e)
        if better < params.k:
            keep.add((si, sj))
    return keep


def evaluate(events, params: Params) -> list[TopK | None]:
    """Per event, the ``TopK`` it emits, or ``None`` (unchanged list or dropped late event)."""
    window, ids, now, last = [], [], None, ()
    side = {"R": 0, "S": 1, None: 0}
    out: list[TopK | None] = []
    for ev in events:
        t = float(ev.t if isinstance(ev, Advance) else ev.ts)
        if now is not None and t < now:
            out.append(None)          # only reachable with lateness="drop"
            continue
        now = t
        if not isinstance(ev, Advance):
            window.append((len(ids), frozenset(ev.tokens), t, side[ev.side]))
            ids.append(ev.id)
        window = [r for r in window if now < r[2] + params.wf]
        current = topk(window, params, now)
        if current != last:
            out.append(TopK(now, tuple((ids[i], ids[j], s, e) for i, j, s, e in current)))
            last = current
        else:
            out.append(None)
    return out


class OracleEngine(SimJoinEngine):
    """All valid pairs recomputed and sorted after every operation."""

    name = "oracle"
    exact = True
    description = "one-time top-k join over all valid pairs after every operation (the oracle)"

    def _start(self):
        self._window: list[tuple] = []
        self._last: tuple = ()

    def _apply(self, prep):
        changes = []
        for p in range(len(prep.op)):
            t = float(prep.ts[p])
            if prep.op[p] == 0:
                toks = frozenset(prep.tok[prep.tok_ptr[p]:prep.tok_ptr[p + 1]].tolist())
                self._window.append((int(prep.seq[p]), toks, t, int(prep.side[p])))
            self._window = [r for r in self._window if self._alive(r, t)]
            current = self._top(t)
            if current != self._last:
                changes.append((p, current))
                self._last = current
        return changes

    def _alive(self, record, t: float) -> bool:
        """A record stays in the window while ``t < ts + w``."""
        return t < record[2] + self.params.wf

    def _top(self, t: float) -> tuple:
        return topk(self._window, self.params, t)
