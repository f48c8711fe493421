"""Maintenance policies: which keys to refresh at an evaluation (at most gamma of them).

Paper §5 (AcquaTop, Algorithm 5, AT-TSM/AT-BSM), the ACQUA policies it compares
with (WSJ-RND, WSJ-LRU, WSJ-WBM), analysis note §6 and the decisions of
notes/topkjoin.md:

- AT-TSM: the first gamma entries of the list (not the Java's gamma - 1).
- AT-BSM: list positions ``K+1-floor(gamma/2) ..`` (1-based), shifted up to
  fit the end of the list (analysis §6.3, the Java rule; gamma=1 picks K+1).
- AT-ASM: every entry of the list (unbounded budget).
- LRU: least recently refreshed first; ties keep the candidate order.
- WBM: the ACQUA ranker ``min(L, V)`` over the possibly stale candidates, then
  the others by best-before time (§6.9), with ``L`` in consistent units and
  change rates estimated online from the engine's own fetches (``rate``).
- RND: gamma draws without replacement from the engine's seeded generator.

AT-* candidates are the list entries in list order; WSJ-* candidates are the
ids of the current window in ascending id order.  Each policy is a function
``(engine, candidates, ctx) -> dense ids``; ``ctx`` is the evaluation's
``Context``.
"""
from __future__ import annotations

import math

import attrs


@attrs.frozen
class Context:
    window: int
    start: int
    tau: int
    gamma: int
    k: int
    last_ts: dict          # dense id -> time of its last item in the window


def top(engine, cands, ctx):
    return cands[:ctx.gamma]


def border(engine, cands, ctx):
    g, size = ctx.gamma, len(cands)
    start = ctx.k + 1 - g // 2
    if start + g - 1 > size:
        start = size - g + 1
    start = max(start, 1)
    return cands[start - 1:start - 1 + g]


def everything(engine, cands, ctx):
    return list(cands)


def nothing(engine, cands, ctx):
    return []


def lru(engine, cands, ctx):
    order = sorted(range(len(cands)), key=lambda i: engine.last_refresh[cands[i]])
    return [cands[i] for i in order[:ctx.gamma]]


def rnd(engine, cands, ctx):
    take = min(ctx.gamma, len(cands))
    if take == 0:
        return []
    picks = engine.rng.choice(len(cands), size=take, replace=False)
    return [cands[i] for i in sorted(picks.tolist())]


def rate(engine, d) -> float:
    """Changes per ms of key ``d``, from what the engine has fetched (Laplace prior: one per slide)."""
    observed = engine.last_refresh[d] - engine.windows.t0
    return (engine.changes_seen.get(d, 0) + 1) / (observed + engine.params.beta)


def wbm(engine, cands, ctx):
    beta, tau = engine.params.beta, ctx.tau
    stale, fresh = [], []
    for pos, d in enumerate(cands):
        lr = engine.last_refresh[d]
        interval = 1.0 / rate(engine, d)
        best_before = lr + interval
        if best_before <= tau:
            # remaining life: evaluations (this one included) whose window holds the item
            life = (ctx.last_ts[d] - ctx.start) // beta + 1
            current_bb = lr + math.ceil((tau - lr) / interval) * interval
            renewed = math.ceil((current_bb + interval - tau) / beta)
            stale.append((-min(life, renewed), best_before, pos, d))
        else:
            fresh.append((best_before, pos, d))
    stale.sort()
    fresh.sort()
    chosen = [row[-1] for row in stale] + [row[-1] for row in fresh]
    return chosen[:ctx.gamma]
