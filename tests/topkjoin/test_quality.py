"""Quality of the approximate engines against the oracle on random streams.

Reported, not asserted (approximate engines have no quality floor): the numbers go to the terminal
summary through ``record_property``/print.  Asserted only where the paper
proves exactness (static data, K+N covering the window, unlimited budget).
"""
import pytest

from streamspec.conformance.strategies.topkjoin import random_case
from streamspec.conformance.topkjoin import conditions, quality_of
from streamspec.spec.registry import Registry

PROBLEM = "topkjoin"
SEEDS = range(40)


def test_quality_is_measured_and_exact_where_proven(engine_cls, record_property):
    nd = pr = ev = 0.0
    for seed in SEEDS:
        case = random_case(seed, max_items=120)
        q = quality_of(engine_cls, case)
        if set(engine_cls.exact_when) & conditions(case):
            assert q.ndcg == q.precision == q.evaluations, (seed, str(q))
        nd, pr, ev = nd + q.ndcg, pr + q.precision, ev + q.evaluations
    assert 0 <= nd <= ev and 0 <= pr <= ev
    record_property("mean_ndcg", nd / ev)
    record_property("mean_precision", pr / ev)
    print(f"\n{engine_cls.name}: mean nDCG@k {nd / ev:.4f}, mean precision@k {pr / ev:.4f} "
          f"over {int(ev)} evaluations")


def test_budget_matters_on_changing_data():
    """A refreshing policy does at least as well as never refreshing, on the changing cases."""
    wst, tsm = Registry.get(PROBLEM, "wst"), Registry.get(PROBLEM, "at-asm")
    cases = [c for c in (random_case(s, max_items=150) for s in range(60)) if c.scenario == "changing"]
    q_wst = sum(quality_of(wst, c).ndcg for c in cases)
    q_asm = sum(quality_of(tsm, c).ndcg for c in cases)
    assert q_asm >= q_wst
