"""Issue 15 (throughput at small slides): the AcquaTop kernels and the WBM election no longer
rank every id of a window, only those that can be chosen.  Each shortcut must give exactly
what ranking everything gives; these tests compare them on crowded, tie-heavy inputs."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from streamspec.engines.topkjoin import _super_list_kernels as kern
from streamspec.engines.topkjoin import policies
from streamspec.engines.topkjoin.super_list import SuperTopKList


def staircase_of_everything(ids, scores, w_val, w_ts, tie, t0, beta, c, cap, span):
    """The list ``arrivals`` must build, written out: every id ranked by (score desc, tie
    asc), each counted in the windows ``c .. min(ew, c + span - 1)`` that have room."""
    order = sorted(range(ids.size), key=lambda i: (-scores[i], tie[ids[i]]))
    cnt = [0] * span
    out = []
    for i in order:
        d = int(ids[i])
        ew = (int(w_ts[d]) - t0) // beta
        sw = None
        for w in range(min(ew - c, span - 1) + 1):
            if cnt[w] < cap:
                cnt[w] += 1
                sw = c + w if sw is None else sw
        if sw is not None:
            out.append((d, float(scores[i]), int(tie[d]), float(w_val[d]), int(w_ts[d]), sw, ew))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_arrivals_rank_only_what_can_reach_the_list_and_equal_ranking_everything(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 300))
    cap, span, c, t0, beta = int(rng.integers(1, 8)), int(rng.integers(1, 4)), 3, 0, 10
    ids = rng.permutation(n).astype(np.int64)                   # any order: no tie order needed
    tie = rng.permutation(n).astype(np.int64) * 7               # distinct ranks
    w_val = rng.integers(1, 4, n).astype(np.float64)
    # last times in windows c .. c + span + 1: some ids reach every active window, some one
    w_ts = (c * beta + rng.integers(0, (span + 1) * beta, n)).astype(np.int64)
    scores = rng.integers(0, 6, n).astype(np.float64) / 2      # many equal scores
    lst = SuperTopKList(cap, span, c)
    lst.m = kern.arrivals(ids, scores, w_val, w_ts, tie, t0, beta, c, cap, span, *lst._cols(),
                          lst.cnt)
    got = list(zip(*(col[:lst.m].tolist() for col in lst._cols())))
    assert got == staircase_of_everything(ids, scores, w_val, w_ts, tie, t0, beta, c, cap, span)
    assert lst.marks() == lst.rebuilt_marks()


@pytest.mark.parametrize("seed", range(30))
def test_offers_that_are_discarded_leave_the_list_as_the_rebuild_does(seed):
    """``offer`` returns early for an object every window it reaches has ``cap`` entries
    before; the list must be what inserting it and rebuilding (§3.7) gives."""
    rng = np.random.default_rng(seed)
    cap, span, c, t0, beta = int(rng.integers(1, 5)), int(rng.integers(1, 4)), 0, 0, 10
    lst = SuperTopKList(cap, span, c)
    for d in range(60):
        score, tie = float(rng.integers(0, 8)), int(rng.integers(0, 1000)) * 100 + d
        ts = int(rng.integers(0, (span + 1) * beta))
        twin_cols = [col.copy() for col in lst._cols()]
        full = kern.staircase(*twin_cols, _insert(twin_cols, lst.m, score, tie, d, ts, ts // beta),
                              c, cap, span, np.zeros(span, np.int64))
        lst.m = kern.offer(*lst._cols(), lst.m, c, cap, span, lst.cnt, d, score, tie, 1.0, ts,
                           (ts - t0) // beta)
        assert lst.m == full
        assert [col[:full].tolist() for col in lst._cols()] == [col[:full].tolist()
                                                               for col in twin_cols]


def _insert(cols, m, score, tie, d, ts, ew):
    """Put the object at its place in the total order, no staircase yet; returns m + 1."""
    l_score, l_tie = cols[1], cols[2]
    at = next((i for i in range(m) if score > l_score[i] or (score == l_score[i]
                                                            and tie < l_tie[i])), m)
    for col in cols:
        col[at + 1:m + 1] = col[at:m].copy()
    for col, value in zip(cols, (d, score, tie, 1.0, ts, 0, ew)):   # dense .. sw, ew
        col[at] = value
    return m + 1


@pytest.mark.parametrize("seed", range(30))
def test_wbm_elects_the_first_gamma_of_the_full_ranking(seed):
    rng = np.random.default_rng(seed)
    n, beta = int(rng.integers(1, 400)), 60
    engine = SimpleNamespace(params=SimpleNamespace(beta=beta), windows=SimpleNamespace(t0=0),
                             last_refresh=rng.integers(0, 6, n) * beta,
                             changes_seen=rng.integers(0, 3, n))
    tau = 6 * beta
    last_ts = rng.integers(3, 6, n) * beta
    cands = rng.permutation(n)[:int(rng.integers(1, n + 1))]
    for gamma in (1, 3, 7, n, n + 5):
        ctx = policies.Context(3, 3 * beta, tau, gamma, 5, last_ts)
        stale, fresh = policies.wbm_ranked(engine, cands, ctx)
        assert policies.wbm(engine, cands, ctx) == np.concatenate((stale, fresh))[:gamma].tolist()


@pytest.mark.parametrize("latest", [False, True])
@pytest.mark.parametrize("seed", range(25))
def test_changed_objects_in_one_call_equal_replacing_them_one_by_one(seed, latest):
    """``changed_objects`` (the kernel, with the LBPs kept between discarded objects) against
    ``SuperTopKList.replace`` called per object as ``AcquaTopEngine._changed_object`` does."""
    rng = np.random.default_rng(seed)
    n, cap, span, c, t0, beta = int(rng.integers(1, 200)), int(rng.integers(1, 6)), \
        int(rng.integers(1, 4)), 2, 0, 10
    tie = rng.permutation(n).astype(np.int64)
    w_val = rng.integers(1, 5, n).astype(np.float64)
    w_ts = (c * beta + rng.integers(0, (span + 1) * beta, n)).astype(np.int64)
    replica = rng.integers(0, 4, n).astype(np.float64)
    stamp = 7
    w_mark = np.where(rng.random(n) < 0.9, stamp, 3)            # some ids not in the window
    window = np.flatnonzero(w_mark == stamp)
    lin = (1.0, 1.0, 0.0, 10.0, 0.0, 4.0)                        # ws, wv, slo, shi, vlo, vhi

    def score(s, v):          # ``Scoring``'s linear F, in its operation order
        ws, wv, slo, shi, vlo, vhi = lin
        return ws * ((s - slo) / (shi - slo)) + wv * ((v - vlo) / (vhi - vlo))
    scores = np.array([score(w_val[d], replica[d]) for d in window])
    kernel, loop = SuperTopKList(cap, span, c), SuperTopKList(cap, span, c)
    for lst in (kernel, loop):
        lst.m = kern.arrivals(window, scores, w_val, w_ts, tie, t0, beta, c, cap, span,
                              *lst._cols(), lst.cnt)
    smin = float(w_val[window].min()) if window.size else 0.0
    replica[:] = rng.integers(0, 4, n)                           # the remote values changed
    changed = rng.permutation(n)[:int(rng.integers(0, n + 1))].astype(np.int64)
    changed = changed[np.argsort(tie[changed])]
    kernel.m = kern.changed_objects(changed, replica, w_val, w_ts, w_mark, stamp, tie, latest,
                                    smin, t0, beta, *lin, *kernel._cols(), kernel.m, kernel.c,
                                    kernel.cap, kernel.span, kernel.cnt)
    for d in changed.tolist():
        at = loop.find(d)
        if at >= 0:
            s = float(loop.sval[at])
        elif w_mark[d] == stamp:
            s = smin if latest else float(w_val[d])
        else:
            continue
        ts = int(w_ts[d])
        loop.replace(d, (-score(s, replica[d]), int(tie[d])), s, ts, (ts - t0) // beta)
    assert [col[:kernel.m].tolist() for col in kernel._cols()] == \
        [col[:loop.m].tolist() for col in loop._cols()]
