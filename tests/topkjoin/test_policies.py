"""Policy election rules (``streamspec.engines.topkjoin.policies``; paper §5)."""
import pytest

from streamspec.engines.topkjoin import policies


def _ctx(gamma, k=5):
    return policies.Context(0, 0, 100, gamma, k, {})


@pytest.mark.parametrize("gamma,size,positions", [
    (1, 30, [6]), (2, 30, [5, 6]), (3, 30, [5, 6, 7]), (5, 30, [4, 5, 6, 7, 8]),
    (7, 30, list(range(3, 10))), (10, 30, list(range(1, 11))), (15, 30, list(range(1, 16))),
    (20, 12, list(range(1, 13))), (7, 8, list(range(2, 9)))])
def test_border_selection_positions(gamma, size, positions):
    cands = list(range(1, size + 1))
    assert policies.border(None, cands, _ctx(gamma)) == positions


def test_top_selection_takes_gamma():
    assert policies.top(None, list("GECF"), _ctx(2, k=3)) == ["G", "E"]


def test_bsm_paper_example():
    # K = 3, gamma = 2 on the list G, E, C, F, ...: refresh C and F (positions 3 and 4)
    assert policies.border(None, list("GECFAB"), _ctx(2, k=3)) == ["C", "F"]


def test_wbm_elects_possibly_stale_candidates_first_and_fills_the_budget():
    # rate = (changes + 1) / (last_refresh - t0 + beta): key 0 was fetched at t0 and never again
    # (best before t0 + beta), key 1 was fetched at 10 beta without change (best before 21 beta),
    # key 2 changed at each of its fetches (best before well before tau)
    import numpy as np
    from types import SimpleNamespace
    beta = 60
    engine = SimpleNamespace(params=SimpleNamespace(beta=beta), windows=SimpleNamespace(t0=0),
                             last_refresh=np.array([0, 10 * beta, 2 * beta]),
                             changes_seen=np.array([0, 0, 2]))
    ctx = policies.Context(3, 3 * beta, 5 * beta, 3, 5, np.array([4 * beta, 4 * beta, 3 * beta]))
    assert sorted(policies.wbm_stale(engine, [0, 1, 2], ctx)) == [0, 2]   # key 1 is not stale
    assert policies.wbm(engine, [0, 1, 2], ctx)[-1] == 1                  # filled with it, last
