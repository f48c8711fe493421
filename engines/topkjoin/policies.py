"""Maintenance policies: which keys to refresh at an evaluation (at most gamma of them).

Paper §5 (AcquaTop, Algorithm 5, AT-TSM/AT-BSM), the ACQUA policies it compares
with (WSJ-RND, WSJ-LRU, WSJ-WBM, recalled in its Section 3), and these
decisions:

- AT-TSM: the first gamma entries of the list (not the Java's gamma - 1).
- AT-BSM: list positions ``K+1-floor(gamma/2) ..`` (1-based), shifted up to
  fit the end of the list (the authors' Java rule; gamma=1 picks K+1).
- AT-ASM: every entry of the list (unbounded budget).
- LRU: least recently refreshed first; ties keep the candidate order.
- WBM: the ACQUA ranker ``min(L, V)`` over the possibly stale candidates
  (best-before time ``<= tau``; ties by best-before time, then candidate
  order), then the others by best-before time until gamma are elected (the
  Java's rule), with ``L`` in consistent units and change rates
  estimated online from the engine's own fetches (``rate``).  The budget is
  filled because every AcquaTop policy must be exact with an unlimited
  budget (conformance's ``unlimited`` condition).  The paper's Fig. 5 reads stricter ("the best before
  time of other mappings are greater than the current time, so they do not
  need to be refreshed"): ``wbm_stale`` elects the possibly stale ones only
  and may leave budget unused; the bench reports it as a diagnostic.
- RND: gamma draws without replacement from the engine's seeded generator.

AT-* candidates are the list entries in list order; WSJ-* candidates are the
ids of the current window in ascending id order.  Each policy is a function
``(engine, candidates, ctx) -> dense ids``; ``ctx`` is the evaluation's
``Context``.
"""
from __future__ import annotations

import attrs
import numpy as np

from streamspec.engines.topkjoin import _policy_kernels as kern

# budgets up to this pick WBM's first gamma by one scan each (``_policy_kernels``)
SCAN_GAMMA = 32


@attrs.frozen
class Context:
    window: int
    start: int
    tau: int
    gamma: int
    k: int
    last_ts: object        # dense id -> time of its last item in the window (array or dict)


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
    if not len(cands):
        return []
    c = np.asarray(cands, np.int64)
    order = np.argsort(engine.last_refresh[c], kind="stable")   # ties keep the candidate order
    return c[order[:ctx.gamma]].tolist()


def rnd(engine, cands, ctx):
    take = min(ctx.gamma, len(cands))
    if take == 0:
        return []
    picks = engine.rng.choice(len(cands), size=take, replace=False)
    return [cands[i] for i in sorted(picks.tolist())]


def rate(engine, d):
    """Changes per ms of keys ``d``, from what the engine has fetched (Laplace prior: one per slide)."""
    observed = engine.last_refresh[d] - engine.windows.t0
    return (engine.changes_seen[d] + 1) / (observed + engine.params.beta)


def _wbm_columns(engine, cands, ctx):
    """``(candidates, possibly stale, best-before time, WBM score)`` as arrays."""
    beta, tau = engine.params.beta, ctx.tau
    c = np.asarray(cands, np.int64)
    lr = engine.last_refresh[c]
    interval = 1.0 / rate(engine, c)
    best_before = lr + interval
    stale = best_before <= tau
    # remaining life: evaluations (this one included) whose window holds the item
    life = (np.asarray(ctx.last_ts)[c] - ctx.start) // beta + 1
    current_bb = lr + np.ceil((tau - lr) / interval) * interval
    renewed = np.ceil((current_bb + interval - tau) / beta)
    return c, stale, best_before, np.minimum(life, renewed)


def wbm_ranked(engine, cands, ctx):
    """``(stale, fresh)`` candidate arrays: the possibly stale ones ranked by WBM, the others
    by best-before time (both ties by candidate order)."""
    c, stale, best_before, score = _wbm_columns(engine, cands, ctx)
    pos = np.arange(c.size)
    s_idx = pos[stale]
    f_idx = pos[~stale]
    s_order = s_idx[np.lexsort((s_idx, best_before[s_idx], -score[s_idx]))]
    f_order = f_idx[np.lexsort((f_idx, best_before[f_idx]))]
    return c[s_order], c[f_order]


def _first(idx, keys, k: int) -> np.ndarray:
    """The first ``k`` of ``idx`` ordered by ``keys`` (most significant first), then ``idx``:
    ``idx[np.lexsort((idx, *reversed(keys)))][:k]`` without sorting all of them (only
    those whose first key is at most the ``k``-th smallest can be among the first ``k``)."""
    if idx.size > k > 0:
        first = keys[0]
        sel = first <= np.partition(first, k - 1)[k - 1]
        idx, keys = idx[sel], [key[sel] for key in keys]
    return idx[np.lexsort((idx, *reversed(keys)))][:k]


def wbm(engine, cands, ctx):
    """WBM as registered (the Java's rule): possibly stale first, then fresh ones fill the budget.

    The first gamma of ``wbm_ranked``'s two rankings, without ranking every candidate (a
    WSJ engine's candidates are the whole window's ids)."""
    if ctx.gamma is None:               # no budget: every candidate, ranked
        return np.concatenate(wbm_ranked(engine, cands, ctx)).tolist() if len(cands) else []
    if not len(cands) or ctx.gamma <= 0:
        return []
    if ctx.gamma <= SCAN_GAMMA and isinstance(ctx.last_ts, np.ndarray):
        c = np.asarray(cands, np.int64)
        out = np.empty(min(ctx.gamma, c.size), np.int64)
        k = kern.wbm_first(c, engine.last_refresh, engine.changes_seen, ctx.last_ts,
                           engine.windows.t0, engine.params.beta, ctx.start, ctx.tau, ctx.gamma,
                           out)
        return out[:k].tolist()
    c, stale, best_before, score = _wbm_columns(engine, cands, ctx)
    pos = np.arange(c.size)
    s_idx = pos[stale]
    picked = _first(s_idx, [-score[s_idx], best_before[s_idx]], ctx.gamma)
    if picked.size < ctx.gamma:
        f_idx = pos[~stale]
        picked = np.concatenate((picked, _first(f_idx, [best_before[f_idx]],
                                                ctx.gamma - picked.size)))
    return c[picked].tolist()


def wbm_stale(engine, cands, ctx):
    """The paper's literal WBM (Fig. 5): the gamma best possibly stale candidates, no filling."""
    if not len(cands):
        return []
    return wbm_ranked(engine, cands, ctx)[0][:ctx.gamma].tolist()
