"""The engine authors' pages and ``streamspec new-engine`` (issue 26, item 5).

- Each contract page ``docs/engines/<problem>.md`` quotes its minimal engine
  verbatim (the fenced block after ``<!-- engine-example -->``): it is the
  template module ``streamspec.pipeline.templates.<problem>``, one source for
  page and generator.  That engine, registered at run time, passes every check
  of the conformance runner (100 examples each, or ``STREAMSPEC_EXAMPLES``).
- ``streamspec new-engine`` refuses a bad problem, a bad or taken name and a
  non-empty directory with ``InvalidParameter`` (exit 2) and writes nothing;
  it writes the template with the engine's name and an entry point naming it.
- The install lane (marked ``install``): the generated connectivity package,
  installed with ``pip install --target`` (no change to this environment) and
  put on ``PYTHONPATH`` from another directory, is found through its entry
  point, passes ``streamspec conform``, the shipped suite and its own tests;
  with a bug planted in its engine, ``streamspec conform`` fails (exit 1).
"""
from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import pytest

from streamspec.conformance import runner
from streamspec.pipeline import new_engine
from streamspec.pipeline.cli import main as cli_main
from streamspec.pipeline.templates import CLASSES, NAME_LINE, PROBLEMS
from streamspec.spec.errors import InvalidParameter
from streamspec.spec.registry import Registry

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = re.compile(r"<!-- engine-example -->\n```python\n(.*?)```\n", re.S)
EXAMPLES = int(os.environ.get("STREAMSPEC_EXAMPLES") or 100)   # per check


def page_example(problem: str) -> str:
    blocks = EXAMPLE.findall((ROOT / "docs" / "engines" / f"{problem}.md").read_text())
    assert len(blocks) == 1, f"docs/engines/{problem}.md must mark exactly one engine example"
    return blocks[0]


def template_class(problem: str):
    return getattr(importlib.import_module(f"streamspec.pipeline.templates.{problem}"),
                   CLASSES[problem])


@pytest.mark.parametrize("problem", PROBLEMS)
def test_the_page_quotes_the_template_verbatim(problem):
    assert page_example(problem) == new_engine.template(problem)
    assert page_example(problem).count(NAME_LINE) == 1


@pytest.mark.parametrize("problem", PROBLEMS)
def test_the_minimal_engine_passes_the_conformance_runner(problem):
    engine_cls = template_class(problem)
    assert engine_cls.problem == problem and engine_cls.name == "mine"
    assert "mine" not in [n for _, n in Registry.names(problem)]
    Registry.register(engine_cls)
    try:
        if hasattr(runner, "run_all"):
            report = runner.run_all(engine_cls, EXAMPLES, write=False)
            assert not report.failures, "\n\n".join(f.text for f in report.failures)
        else:
            assert runner.run(engine_cls, examples=EXAMPLES) is None
    finally:
        Registry.unregister(engine_cls)


PLANTED = {   # one bug per template: the suite must catch each
    "connectivity": ("if e[2] >= start]", "if e[2] > start]"),       # edges at a window's start lost
    "simjoin": ("t >= self._window[0][2]", "t > self._window[0][2]"),  # expiry one instant late
    "kws": ("if bits[tid] & ~others == 0:", "if bits[tid] == 0:"),   # non-minimal trees kept
    "topkjoin": ("if ts < tau:", "if ts <= tau:"),                     # an item at tau counted
}


@pytest.mark.parametrize("problem", PROBLEMS)
def test_a_bug_planted_in_the_page_example_is_caught(problem, monkeypatch):
    """The page's block, run as a module of its own with one line changed, disagrees with the
    oracle on one of the first 300 seeded random cases (``conformance.<problem>.random_case``,
    no shrinking): the test above is not vacuous."""
    before, after = PLANTED[problem]
    source = page_example(problem)
    assert source.count(before) == 1
    module = types.ModuleType(f"planted_{problem}")
    exec(compile(source.replace(before, after), f"<docs/engines/{problem}.md>", "exec"),
         module.__dict__)
    monkeypatch.setitem(sys.modules, module.__name__, module)   # so its engines pickle
    engine_cls = getattr(module, CLASSES[problem])
    suite = runner.suite(problem)
    assert all(suite.check(template_class(problem), suite.random_case(seed)) is None
               for seed in range(20))
    assert any(suite.check(engine_cls, suite.random_case(seed)) is not None
               for seed in range(300)), f"the planted {problem} bug went unnoticed"


def test_the_engines_index_lists_the_four_pages():
    index = (ROOT / "docs" / "engines" / "index.md").read_text()
    for problem in PROBLEMS:
        assert f"({problem}.md)" in index
    assert "streamspec new-engine" in index


@pytest.mark.parametrize("problem", PROBLEMS)
def test_new_engine_writes_the_template_under_the_new_name(tmp_path, problem, capsys):
    target = tmp_path / "pkg"
    assert cli_main(["new-engine", problem, "my-eng", str(target)]) == 0
    assert "wrote" in capsys.readouterr().out
    project = tomllib.loads((target / "pyproject.toml").read_text())
    entry = project["project"]["entry-points"]["streamspec.engines"]
    assert entry == {f"{problem}.my-eng": f"streamspec_my_eng.engine:{CLASSES[problem]}"}
    assert project["tool"]["setuptools"]["packages"] == ["streamspec_my_eng"]
    engine = (target / "streamspec_my_eng" / "engine.py").read_text()
    assert engine == new_engine.template(problem).replace(NAME_LINE, '    name = "my-eng"\n')
    assert (target / "streamspec_my_eng" / "__init__.py").is_file()
    tests = (target / "tests" / "test_conformance.py").read_text()
    assert f'Registry.get("{problem}", "my-eng")' in tests
    readme = (target / "README.md").read_text()
    assert f"pytest --pyargs streamspec.conformance --engine my-eng" in readme


@pytest.mark.parametrize("argv, message", [
    (["connectivity", "Mine"], "engine name 'Mine'"),
    (["connectivity", "a.b"], "engine name 'a.b'"),
    (["connectivity", "x:y=1"], "engine name 'x:y=1'"),
    (["connectivity", "bic"], "registered already"),
    (["simjoin", "oracle"], "registered already"),
    (["graphs", "mine"], "unknown problem 'graphs'"),
])
def test_new_engine_refuses_bad_problems_and_names_and_writes_nothing(tmp_path, argv, message,
                                                                       capsys):
    target = tmp_path / "pkg"
    with pytest.raises(InvalidParameter, match=re.escape(message)):
        new_engine.write(argv[0], argv[1], target)
    assert not target.exists()
    assert cli_main(["new-engine", *argv, str(target)]) == 2
    assert message in capsys.readouterr().err
    assert not target.exists()


def test_new_engine_refuses_a_non_empty_directory_or_a_file(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine\n")
    with pytest.raises(InvalidParameter, match="not empty"):
        new_engine.write("connectivity", "mine", tmp_path / "full")
    assert sorted(p.name for p in (tmp_path / "full").iterdir()) == ["notes.txt"]
    (tmp_path / "file").write_text("")
    with pytest.raises(InvalidParameter, match="not a directory"):
        new_engine.write("connectivity", "mine", tmp_path / "file")
    (tmp_path / "empty").mkdir()
    assert len(new_engine.write("connectivity", "mine", tmp_path / "empty")) == 5


# -- the install lane ---------------------------------------------------------------------


def _run(argv, cwd, env, expect=0):
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == expect, (f"{' '.join(map(str, argv))} exited {done.returncode}, "
                                       f"expected {expect}\n--- stdout\n{done.stdout[-4000:]}\n"
                                       f"--- stderr\n{done.stderr[-4000:]}")
    return done.stdout + done.stderr


@pytest.mark.install
def test_a_generated_package_installs_and_passes_the_suite_and_a_planted_bug_fails(tmp_path):
    package, site, user = tmp_path / "streamspec-mine", tmp_path / "site", tmp_path / "user"
    user.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STREAMSPEC_", "PYTHON"))}
    env["STREAMSPEC_FAILURES"] = str(tmp_path / "failures")
    streamspec = [sys.executable, "-m", "streamspec.pipeline.cli"]
    _run([*streamspec, "new-engine", "connectivity", "mine", str(package)], user, env)
    _run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site),
          str(package)], user, env)
    assert (site / "streamspec_mine" / "engine.py").is_file()
    env["PYTHONPATH"] = str(site)

    out = _run([*streamspec, "engines", "connectivity"], user, env)
    assert "connectivity.mine" in out
    out = _run([*streamspec, "conform", "connectivity", "--engine", "mine", "--examples", "30"],
               user, env)
    assert "ok   connectivity.mine" in out
    out = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs",
                "streamspec.conformance", "--engine", "mine"], user,
               {**env, "STREAMSPEC_EXAMPLES": "20"})
    assert " passed" in out and " failed" not in out
    out = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                str(package / "tests")], user, {**env, "STREAMSPEC_EXAMPLES": "20"})
    assert "2 passed" in out

    engine = site / "streamspec_mine" / "engine.py"
    source = engine.read_text()
    planted = source.replace("if e[2] >= start]", "if e[2] > start]")   # drops edges at a start
    assert planted != source
    engine.write_text(planted)
    out = _run([*streamspec, "conform", "connectivity", "--engine", "mine", "--examples", "30"],
               user, env, expect=1)
    assert "FAIL connectivity.mine" in out and "--replay" in out
