"""The mutation gate: the suite's checks, with the ``ci`` profile's examples (derandomized),
kill every mutant of ``conformance/broken/<problem>.py``; and a mutant named on the
command line of either route (``streamspec conform``, ``pytest --pyargs
streamspec.conformance``) fails there.

Each mutant is one test (its id ``problem.broken-name``): killed by the first check of its
class, with a shrunk reproducer that replays (the check that killed it is printed:
``pytest -rA`` or ``-s`` shows it; ``python -m streamspec.conformance.mutation`` prints the
whole table with the examples each kill took).  A mutant that survives is a
gap of the suite: ``conformance.broken.KNOWN_SURVIVORS`` records those known, as strict
xfails naming what is missing, so the gap shows in every report and the entry must go
once it is closed.
"""
from __future__ import annotations

import os
import pickle
import subprocess
import sys

import pytest

from streamspec.conformance import broken, mutation
from streamspec.spec.registry import Registry

ALL = [m for p in broken.PROBLEMS for m in broken.catalogue(p)]
MIN_PER_PROBLEM = 8



def _param(m):
    gap = broken.KNOWN_SURVIVORS.get((m.problem, m.name))
    marks = [pytest.mark.xfail(reason=f"suite gap: {gap}", strict=True)] if gap else []
    return pytest.param(m, id=f"{m.problem}.{m.name}", marks=marks)


@pytest.mark.parametrize("mutant", [_param(m) for m in ALL])
def test_the_ci_profile_kills_the_mutant(mutant, tmp_path):
    """The first check of ``mutation.check_order`` kills the mutant with the ci profile's
    examples (derandomized, as the gate runs it), shrunk and written as the suite does; each
    reproducer fails the mutant again and passes the oracle.  (One run for both claims: the
    gate's own route, ``mutation.run_mutant``, draws the same examples up to the kill;
    ``test_the_kill_is_deterministic`` runs it.)"""
    check = mutation.check_order(mutant)[0]
    replays = mutation.replay_kill(mutant, check, mutation.ci_examples(), tmp_path)
    print(f"{mutant.problem}.{mutant.name} ({mutant.mutation}): "
          + (f"killed by {check}, {len(replays)} reproducer(s)" if replays else "SURVIVED"))
    assert replays, (f"{mutant.problem}.{mutant.name} ({mutant.mutation}) survived {check} with "
                     f"{mutation.ci_examples()} examples")
    assert sorted(tmp_path.glob("*.jsonl")) == sorted(path for path, _, _ in replays)
    for path, on_mutant, on_oracle in replays:
        assert on_mutant is not None, f"{path} does not fail {mutant.name} again"
        assert on_oracle is None, f"{path} fails the oracle: {on_oracle}"


def test_the_kill_is_deterministic():
    """Derandomized: the same mutant dies at the same example of the same check twice."""
    mutant = broken.find("connectivity", "broken-open-start")
    first, second = (mutation.run_mutant(mutant, examples=200) for _ in range(2))
    assert first.killed and (first.check, first.examples) == (second.check, second.examples)


@pytest.mark.parametrize("problem", broken.PROBLEMS)
def test_catalogue_shape(problem):
    """At least ``MIN_PER_PROBLEM`` mutants, each a module-level ``broken-...`` class of the
    problem (its instances pickle) with a documented ``mutation`` class, names unique."""
    mutants = broken.catalogue(problem)
    assert len(mutants) >= MIN_PER_PROBLEM
    names = [m.name for m in mutants]
    assert len(set(names)) == len(names)
    for m in mutants:
        assert m.problem == problem and m.name.startswith("broken-"), m
        assert m.mutation in broken.MUTATIONS, (m.name, m.mutation)
        assert m.__doc__ and m.description
        assert pickle.loads(pickle.dumps(m)) is m       # module-level: found again by pickle
        assert broken.find(problem, m.name) is m
    assert broken.find(problem, "broken-no-such-mutant") is None
    assert broken.find("no-such-problem", names[0]) is None


def test_registered_registers_for_the_duration():
    mutant = broken.find("simjoin", "broken-score-only")
    assert ("simjoin", mutant.name) not in Registry.names("simjoin")
    with broken.registered("simjoin") as mutants:
        assert mutant in mutants
        assert Registry.get("simjoin", mutant.name) is mutant
    assert ("simjoin", mutant.name) not in Registry.names("simjoin")


# -- the real routes ---------------------------------------------------------------------------
# one mutant per problem that dies in the first examples of the step-by-step check
ROUTED = {"connectivity": "broken-skips-empty", "simjoin": "broken-closed-end",
          "kws": "broken-open-start", "topkjoin": "broken-open-start"}


@pytest.mark.parametrize("problem", broken.PROBLEMS)
def test_streamspec_conform_fails_on_the_mutant(problem, tmp_path, monkeypatch, capsys):
    from streamspec.conformance import runner
    from streamspec.pipeline.cli import main
    monkeypatch.setattr(runner, "FAILURES_DIR", tmp_path)
    monkeypatch.chdir(tmp_path)
    code = main(["conform", problem, "--engine", ROUTED[problem], "--examples", "300"])
    captured = capsys.readouterr()
    assert code == 1, captured.out + captured.err
    assert f"FAIL {problem}.{ROUTED[problem]}" in captured.out


@pytest.mark.parametrize("problem", broken.PROBLEMS)
def test_pytest_pyargs_fails_on_the_mutant(problem, tmp_path):
    env = dict(os.environ, STREAMSPEC_PROFILE="ci", STREAMSPEC_EXAMPLES="300",
               STREAMSPEC_FAILURES=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--pyargs", "streamspec.conformance", "-x", "-q",
         "-p", "no:cacheprovider", "--engine", f"{problem}.{ROUTED[problem]}"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out[-3000:]        # 1: tests failed (not a usage error, 4)
    assert "failed" in out and ROUTED[problem] in out
