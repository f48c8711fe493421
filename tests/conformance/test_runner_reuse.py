"""``runner.run_check`` reuses a derandomized run's examples for the next engine.

What makes that sound: every engine that passes is checked on the same examples, in the
same order, whether they are drawn again or reused; an engine that fails one of them is
sent to the real hypothesis run and reported exactly as without reuse (same example count
to the kill, same shrunk reproducer).
"""
from __future__ import annotations

import json

import pytest

from streamspec.conformance import broken, checks, runner
from streamspec.spec.registry import Registry

EXAMPLES = 100


def _checked(monkeypatch) -> list:
    """The examples ``_attempt`` sees from now on, as a reproducer writes them (before the
    engine runs on them); pickles of equal examples may differ in what they share."""
    seen, attempt = [], runner._attempt

    def spy(check, engine_cls, example):
        seen.append(json.dumps(check.encode(example))
                    + runner.suite(engine_cls.problem).dump(check.case(example)))
        return attempt(check, engine_cls, example)

    monkeypatch.setattr(runner, "_attempt", spy)
    return seen


@pytest.mark.parametrize("problem,first,second", [
    ("connectivity", "bic", "msf"), ("simjoin", "swoop", "base"),
    ("kws", "fullmesh", "partialmesh"), ("topkjoin", "mintopk", "at-lru")])
@pytest.mark.parametrize("check", [c.name for c in checks.CHECKS])
def test_a_passing_engine_sees_the_examples_drawn_for_another(problem, first, second, check,
                                                               monkeypatch):
    monkeypatch.setattr(runner, "_PASSED", {})
    chk = checks.get(check)
    seen = _checked(monkeypatch)
    assert runner.run_check(Registry.get(problem, first), chk, EXAMPLES) == ([], None)
    drawn_for_first = list(seen)
    assert len(drawn_for_first) >= EXAMPLES // 2 and len(runner._PASSED) == 1

    seen.clear()                        # drawn again, with nothing kept: the same examples
    monkeypatch.setattr(runner, "_PASSED", {})
    assert runner.run_check(Registry.get(problem, second), chk, EXAMPLES) == ([], None)
    assert seen == drawn_for_first

    seen.clear()                        # reused: the same examples again, none drawn
    monkeypatch.setattr(runner, "_PASSED", {})
    runner.run_check(Registry.get(problem, first), chk, EXAMPLES)
    seen.clear()
    monkeypatch.setattr(runner, "given", lambda *a, **k: pytest.fail("drew the examples again"))
    assert runner.run_check(Registry.get(problem, second), chk, EXAMPLES) == ([], None)
    assert seen == drawn_for_first


@pytest.mark.parametrize("problem,passing,name", [
    ("connectivity", "bic", "broken-open-start"), ("kws", "fullmesh", "broken-closed-end")])
def test_a_failing_engine_after_reuse_is_reported_as_without_it(problem, passing, name,
                                                                tmp_path, monkeypatch):
    mutant = broken.find(problem, name)
    check = checks.get("step_by_step")
    monkeypatch.setattr(runner, "FAILURES_DIR", tmp_path / "alone")
    monkeypatch.setattr(runner, "_PASSED", {})
    alone, killed_alone = runner.run_check(mutant, check, EXAMPLES)

    monkeypatch.setattr(runner, "FAILURES_DIR", tmp_path / "after")
    assert runner.run_check(Registry.get(problem, passing), check, EXAMPLES) == ([], None)
    assert runner._PASSED
    after, killed_after = runner.run_check(mutant, check, EXAMPLES)

    assert alone and killed_alone is not None
    assert killed_after == killed_alone
    assert [f.path.name for f in after] == [f.path.name for f in alone]
    assert [f.path.read_text() for f in after] == [f.path.read_text() for f in alone]


def test_a_seeded_run_keeps_nothing(monkeypatch):
    monkeypatch.setattr(runner, "_PASSED", {})
    runner.run_check(Registry.get("connectivity", "bic"), checks.get("step_by_step"), 20, seed=3)
    assert runner._PASSED == {}


def test_the_ci_sequence_is_the_one_the_gate_was_tuned_on():
    """Hypothesis seeds a derandomized run from ``run_check``'s inner ``probe`` source: an
    edit to it silently draws other examples, so other kills and other shrinks (one kws
    mutant's reproducer took 200 s instead of 3 s).  Pinned: where two mutants die.  A change
    of a strategy or of the checks moves these on purpose; then update them here."""
    from streamspec.conformance import mutation
    kills = {(p, n): mutation.run_mutant(broken.find(p, n))
             for p, n in [("kws", "broken-below-t-max"), ("connectivity", "broken-late-admitted")]}
    assert {k: (r.check, r.examples) for k, r in kills.items()} == {
        ("kws", "broken-below-t-max"): ("step_by_step", 19),
        ("connectivity", "broken-late-admitted"): ("step_by_step", 312)}


def test_the_pickling_helper_runs_the_next_body_on_the_sequence_hypothesis_draws(monkeypatch):
    """``testing._derandomized`` (the pickling helper's runs): a body given the kept examples
    sees what a fresh derandomized run would show it, whether the kept ones were a whole run
    or stopped at an earlier body's failure."""
    from hypothesis import strategies as st

    from streamspec.conformance import testing
    monkeypatch.setattr(testing, "_DRAWN", {})
    strategy = st.lists(st.integers(0, 50), max_size=5)

    def seen(key, fail_on=None):
        out = []

        def body(x):
            out.append(x)
            if x == fail_on:
                raise AssertionError(x)
        try:
            testing._derandomized(key, strategy, 40, body)
        except AssertionError:
            pass
        return out

    fresh = seen("a")                       # hypothesis draws them
    assert len(fresh) == 40 and testing._DRAWN["a"][1]
    assert seen("a") == fresh               # the kept ones, the same
    first = [i for i, x in enumerate(fresh) if x not in fresh[:i]]     # first occurrences
    late, early = first[len(first) // 2], first[2]
    failed = seen("b", fresh[late])         # stops there (hypothesis shows it once more)
    assert failed[:late + 1] == fresh[:late + 1]
    assert testing._DRAWN["b"] == (testing._DRAWN["a"][0][:late + 1], False)
    assert seen("b", fresh[early]) == fresh[:early + 1]     # fails among the kept: no hypothesis
    assert seen("b") == fresh[:late + 1] + fresh            # past them: hypothesis afresh
    assert testing._DRAWN["b"][1]
