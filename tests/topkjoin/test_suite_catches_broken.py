"""The suite itself is tested: every deliberately broken engine must be caught."""
import pytest

from streamspec.conformance.testing import assert_broken_engine_is_caught
from streamspec.conformance.broken.topkjoin import BROKEN


@pytest.mark.parametrize("broken", BROKEN, ids=lambda c: c.name)
def test_broken_engine_is_caught(broken, tmp_path):
    assert_broken_engine_is_caught(broken, tmp_path)


def test_overspending_is_refused_by_the_counter():
    from streamspec.conformance.broken.topkjoin import OverspendingPolicy
    from streamspec.conformance.topkjoin import check
    from streamspec.conformance.strategies.topkjoin import random_case
    messages = [str(m) for m in (check(OverspendingPolicy, random_case(s)) for s in range(60)) if m]
    assert messages and all("BudgetExceeded" in m for m in messages)
