"""The suite itself is tested: every deliberately broken engine must be caught."""
import pytest

from conformance import runner
from conformance.broken.topkjoin import BROKEN
from spec.registry import Registry


@pytest.mark.parametrize("broken", BROKEN, ids=lambda c: c.name)
def test_broken_engine_is_caught(broken, tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "FAILURES_DIR", tmp_path)
    Registry.register(broken)
    try:
        report = runner.run(broken, examples=300)
    finally:
        Registry.unregister(broken)
    assert report is not None, f"{broken.name} slipped through the conformance suite"
    assert f"--engine {broken.name} --replay" in report
    saved = list(tmp_path.glob("*.jsonl"))
    assert len(saved) == 1
    assert runner.replay(broken, saved[0]) is not None
    assert runner.replay(Registry.get("topkjoin", "oracle"), saved[0]) is None


def test_overspending_is_refused_by_the_counter():
    from conformance.broken.topkjoin import OverspendingPolicy
    from conformance.topkjoin import check
    from conformance.strategies.topkjoin import random_case
    messages = [str(m) for m in (check(OverspendingPolicy, random_case(s)) for s in range(60)) if m]
    assert messages and all("BudgetExceeded" in m for m in messages)
