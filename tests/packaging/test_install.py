"""The install lane: streamspec installed as a user installs it (issue 12).

Builds the wheel, installs it into a fresh virtual environment outside the
checkout, and from a directory that holds folders named like the old
top-level packages (``pipeline/``, ``spec/``, ``engines/``) runs
``streamspec demo``, ``streamspec conform`` and the shipped conformance suite
(``pytest --pyargs streamspec.conformance --engine bic``), and an unrelated
one-test pytest project, which must see neither the plugin nor a changed
hypothesis profile.  Then it installs the checkout editable over the wheel
(the README's first command, then its second) and runs the demo again.
Along the way: the wheel holds only ``streamspec/`` and its dist-info (no
benchmark results), numba caches land in the user cache directory and never
in site-packages, and an uninstall leaves nothing of streamspec's behind.  What
pytest itself writes there stays: running ``--pyargs streamspec.conformance``
makes pytest cache the assertion-rewritten test modules and plugin
(``__pycache__/*-pytest-*.pyc``) beside them, as it does for every installed
pytest plugin, and pip does not know those files.  They do not shadow anything
(regular packages win over such leftover folders), and this lane checks that
nothing else is left.

Marked ``install``: it needs the package index (or pip's cache) and takes a
few minutes; ``pytest -m install`` runs it alone.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.install
ROOT = Path(__file__).resolve().parents[2]
UNRELATED_TEST = """\
import hypothesis


def test_one():
    assert hypothesis.settings.default.max_examples == 100 and 1 + 1 == 2
"""


def run(argv, cwd, env, timeout=900):
    started = time.monotonic()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    print(f"{time.monotonic() - started:6.1f} s  {' '.join(map(str, argv))}")   # -s / -rA show it
    assert done.returncode == 0, (f"{' '.join(map(str, argv))} exited {done.returncode}\n"
                                  f"--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}")
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def lane(tmp_path_factory):
    base = tmp_path_factory.mktemp("install")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("STREAMSPEC_", "NUMBA_", "PYTHON", "VIRTUAL_ENV", "PYTEST"))}
    env["XDG_CACHE_HOME"] = str(base / "cache")      # where the numba caches must go
    env["HOME"] = str(base / "home")
    env["PIP_CACHE_DIR"] = os.environ.get("PIP_CACHE_DIR",
                                          str(Path.home() / ".cache" / "pip"))  # keep pip's
    venv = base / "venv"
    run([sys.executable, "-m", "venv", str(venv)], base, env)
    bin_ = venv / "bin"
    env["PATH"] = f"{bin_}{os.pathsep}{env.get('PATH', '')}"
    wheels = base / "wheels"
    run([bin_ / "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)], base, env)
    user = base / "user"
    for shadow in ("pipeline", "spec", "engines"):
        (user / shadow).mkdir(parents=True)
        (user / shadow / "__init__.py").write_text("# the user's own package of that name\n")
    return dict(base=base, env=env, bin=bin_, wheel=next(wheels.glob("streamspec-*.whl")),
                user=user)


def site_packages(bin_: Path) -> Path:
    out = subprocess.run([bin_ / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def test_the_wheel_holds_one_namespace_and_no_results(lane):
    names = zipfile.ZipFile(lane["wheel"]).namelist()
    assert {n.split("/")[0] for n in names} == {"streamspec", "streamspec-0.1.0.dist-info"}
    assert not [n for n in names if "/results/" in n or n.endswith((".nbi", ".nbc"))]
    assert "streamspec/pipeline/data/connectivity-edges.txt" in names
    assert "streamspec/conformance/known_gaps.toml" in names


def test_wheel_install_runs_demo_conform_and_the_shipped_suite_beside_a_users_pipeline_folder(lane):
    bin_, env, user = lane["bin"], lane["env"], lane["user"]
    run([bin_ / "pip", "install", "-q", str(lane["wheel"]), "pytest"], lane["base"], env)
    site = site_packages(bin_)
    installed = run([bin_ / "python", "-c", "import importlib.metadata as m;"
                     "print(sorted({str(f).split('/')[0] for f in m.files('streamspec')}))"],
                    lane["base"], env)
    tops = {n for n in eval(installed) if n != ".."}        # ".." is bin/streamspec
    assert tops == {"streamspec", "streamspec-0.1.0.dist-info"}, tops

    out = run([bin_ / "streamspec", "demo", "--output", "out"], user, env)
    assert "connectivity:" in out and (user / "out" / "connectivity").is_dir()
    out = run([bin_ / "streamspec", "conform", "connectivity", "--engine", "bic",
               "--examples", "50"], user, env)
    assert "ok   connectivity.bic" in out
    out = run([bin_ / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "--pyargs", "streamspec.conformance", "--engine", "bic"],
              user, {**env, "STREAMSPEC_PROFILE": "dev"})
    assert " passed" in out and " failed" not in out

    assert not list((site / "streamspec").rglob("*.nb[ic]")), "numba caches in site-packages"
    assert list((lane["base"] / "cache" / "streamspec").rglob("*.nbi")), "no numba cache written"


def test_an_unrelated_pytest_project_does_not_see_streamspec(lane):
    project = lane["base"] / "other"
    project.mkdir()
    (project / "test_one.py").write_text(UNRELATED_TEST)
    out = run([lane["bin"] / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider"],
              project, lane["env"])
    assert "1 passed" in out and "streamspec" not in out


def test_editable_install_over_the_wheel_runs_the_demo_again(lane):
    bin_, env, user = lane["bin"], lane["env"], lane["user"]
    run([bin_ / "pip", "install", "-q", "-e", str(ROOT)], lane["base"], env)
    site = site_packages(bin_)
    assert leftovers(site) == [], "the wheel's files were left in site-packages"
    where = run([bin_ / "python", "-c", "import streamspec.engines as e; print(e.__file__)"], user, env)
    assert where.strip() == str(ROOT / "engines" / "__init__.py")
    # the checkout's kernels: from the cache this test session compiles them into (whatever
    # of them it has compiled by now; the rest compile here), not compiled a second time
    from streamspec.spec._numba import cache_root
    warm = {**env, "STREAMSPEC_CACHE_DIR": os.path.dirname(cache_root())}
    out = run([bin_ / "streamspec", "demo", "--output", "out2"], user, warm)
    assert "topkjoin" in out and (user / "out2" / "topkjoin").is_dir()
    run([bin_ / "pip", "uninstall", "-y", "-q", "streamspec"], lane["base"], env)
    assert leftovers(site) == []
    assert not [p for p in site.iterdir() if "streamspec" in p.name.lower() and p.is_file()]


def leftovers(site: Path) -> list[str]:
    """Files under site-packages/streamspec other than pytest's assertion-rewrite caches."""
    root = site / "streamspec"
    files = [p for p in root.rglob("*") if p.is_file()] if root.exists() else []
    return [str(p.relative_to(site)) for p in files
            if not (p.parent.name == "__pycache__" and "-pytest-" in p.name)]
