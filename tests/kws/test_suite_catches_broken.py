"""The suite itself is tested: every deliberately broken kws engine must be caught.

S-KWS failures need several tuples to line up (a tuple joining itself, a
partner arriving exactly at a window end), so the sweep runs the suite's
plain random cases (``streamspec.conformance.kws.random_case``, the Spark fuzzing path)
over a fixed range of seeds; the first failing case must round-trip through
the JSON-lines reproducer, fail again on replay, and pass on the oracle.
"""
import pytest

from streamspec.conformance import kws as suite
from streamspec.conformance import runner
from streamspec.conformance.broken.kws import BROKEN
from streamspec.spec.registry import Registry

SEEDS = range(1000)


@pytest.mark.parametrize("broken", BROKEN, ids=lambda c: c.name)
def test_broken_engine_is_caught(broken, tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "FAILURES_DIR", tmp_path)
    for seed in SEEDS:
        case = suite.random_case(seed)
        if suite.check(broken, case) is not None:
            break
    else:
        pytest.fail(f"{broken.name} slipped through {len(SEEDS)} random cases")
    path, command = runner.save_reproducer(broken, case)
    assert f"--engine {broken.name} --replay" in command
    assert suite.load(suite.dump(case)) == case
    assert runner.replay(broken, path) is not None
    assert runner.replay(Registry.get("kws", "oracle"), path) is None
