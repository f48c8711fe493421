"""The conformance suite as a shipped product, run the way a third party runs it:
in a subprocess with this environment's python, from a directory outside the
project (so the project's pyproject addopts do not apply).

- installing streamspec changes nothing in an unrelated project's pytest run
  (the ``pytest11`` entry point is inert: no ``--engine``, hypothesis untouched);
- without hypothesis, pytest still runs, and asking for the suite is a clean
  usage error saying what to install;
- ``pytest --pyargs streamspec.conformance --engine bic`` runs the connectivity
  suite and shows every other problem as skipped, with the reason.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

UNRELATED_TEST = '''
from datetime import timedelta

import pytest
from hypothesis import given, settings, strategies as st


def test_streamspec_is_inert(pytestconfig):
    # hypothesis's own choice stands: its "default" profile, or its "ci" one when it detects a
    # CI run (deadline None there), never one of streamspec's
    profile = getattr(settings, "_current_profile", "default")
    assert profile in ("default", "ci"), profile
    assert settings.default.max_examples == 100
    assert settings.default.deadline == (timedelta(milliseconds=200) if profile == "default"
                                         else settings.get_profile("ci").deadline)
    assert not pytestconfig.pluginmanager.has_plugin("streamspec.conformance.plugin")
    with pytest.raises(ValueError):
        pytestconfig.getoption("--engine")


@given(st.integers())
def test_hypothesis_still_works(x):
    assert x == x
'''

# Simulates an environment without hypothesis: its imports fail, and its pytest
# plugin (which an uninstalled hypothesis would not register) is disabled.
NO_HYPOTHESIS = '''
import sys

import pytest


class NoHypothesis:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("hypothesis", "_hypothesis_globals"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoHypothesis())
sys.exit(pytest.main(["-p", "no:hypothesispytest", "-p", "no:cacheprovider"] + sys.argv[1:]))
'''


def clean_env(**extra) -> dict:
    """This environment minus anything that would activate the suite by itself."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("STREAMSPEC_PROFILE", "STREAMSPEC_EXAMPLES", "PYTEST_ADDOPTS")}
    env.update(extra)
    return env


def run(args, cwd, **env):
    return subprocess.run([sys.executable, *args], cwd=cwd, env=clean_env(**env),
                          capture_output=True, text=True, timeout=300)


def write_project(tmp_path):
    (tmp_path / "test_unrelated.py").write_text(textwrap.dedent(UNRELATED_TEST))
    (tmp_path / "no_hypothesis.py").write_text(textwrap.dedent(NO_HYPOTHESIS))
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    assert True\n")


def test_plugin_is_inert_in_an_unrelated_project(tmp_path):
    write_project(tmp_path)
    done = run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_unrelated.py"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
    assert "streamspec" not in done.stdout


def test_without_hypothesis_pytest_runs_and_the_suite_says_what_to_install(tmp_path):
    write_project(tmp_path)
    inert = run(["no_hypothesis.py", "-q", "test_plain.py"], tmp_path)
    assert inert.returncode == 0, inert.stdout + inert.stderr
    assert "1 passed" in inert.stdout
    asked = run(["no_hypothesis.py", "-q", "--engine", "bic", "test_plain.py"], tmp_path)
    assert asked.returncode == 4, asked.stdout + asked.stderr       # pytest's usage error
    assert "pip install 'hypothesis>=6.100'" in asked.stderr
    assert "Traceback" not in asked.stdout + asked.stderr


def test_shipped_suite_on_one_engine_skips_the_other_problems(tmp_path):
    done = run(["-m", "pytest", "--pyargs", "streamspec.conformance", "--engine", "bic", "-q",
                "-rs", "-p", "no:cacheprovider"], tmp_path,
               STREAMSPEC_PROFILE="dev", STREAMSPEC_EXAMPLES="10")
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "4 passed" in out, out          # connectivity's three checks on bic, and its coverage test
    for problem in ("kws", "simjoin", "topkjoin"):
        assert f"--engine ['bic'] selects no {problem} engine" in out, out
    assert " failed" not in out and " error" not in out


def test_the_suite_runs_an_engine_variant_named_with_options(tmp_path):
    done = run(["-m", "pytest", "--pyargs", "streamspec.conformance", "-rs", "-v",
                "-p", "no:cacheprovider", "--engine", "kws.fullmesh:purge=eager",
                "-k", "step_by_step"], tmp_path,
               STREAMSPEC_PROFILE="dev", STREAMSPEC_EXAMPLES="5")
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "test_step_by_step[fullmesh:purge=eager] PASSED" in out, out
    assert "1 passed" in out, out
    bad = run(["-m", "pytest", "--pyargs", "streamspec.conformance", "-q", "-p", "no:cacheprovider",
               "--engine", "fullmesh:purge=never"], tmp_path, STREAMSPEC_PROFILE="dev")
    assert bad.returncode == 4, bad.stdout + bad.stderr           # pytest's usage error
    assert "--engine fullmesh:purge=never" in bad.stderr and "'never'" in bad.stderr
    assert "Traceback" not in bad.stdout + bad.stderr
