"""Packaging: one import namespace, and numba caches outside the installed package (issue 12).

The layers stay top-level folders of the repository and install as
``streamspec.<layer>`` through setuptools' ``package-dir`` mapping; the list of
packages in pyproject.toml is explicit, so this checks it names every package
folder (a forgotten one would be missing from the wheel).  The numba cache
locator (``streamspec.spec._numba``) must send streamspec's kernels to the
per-user cache directory and leave every other function to numba's defaults.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import time
import tomllib
from pathlib import Path

import streamspec.spec._numba as nb

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("spec", "reference", "engines", "pipeline", "conformance", "bench")


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_package_folder_is_listed_under_the_streamspec_namespace():
    setup = pyproject()["tool"]["setuptools"]
    on_disk = {"streamspec." + str(init.parent.relative_to(ROOT)).replace(os.sep, ".")
               for layer in LAYERS for init in (ROOT / layer).rglob("__init__.py")
               if "results" not in init.parts}
    # docs/ ships as a data-only package (its pages; tests/packaging/test_docs.py checks them)
    assert set(setup["packages"]) == on_disk | {"streamspec.docs"}
    assert setup["package-dir"] == {**{f"streamspec.{layer}": layer for layer in LAYERS},
                                    "streamspec.docs": "docs"}


def test_entry_points_name_streamspec_modules_only():
    project = pyproject()["project"]
    targets = [*project["scripts"].values(), *project["entry-points"]["streamspec.engines"].values(),
               *project["entry-points"]["pytest11"].values()]
    assert targets and all(t.startswith("streamspec.") for t in targets)


def test_streamspec_kernels_cache_in_the_user_cache_directory(tmp_path):
    """A cached kernel compiled in a fresh process lands under $STREAMSPEC_CACHE_DIR, not in
    the package's __pycache__."""
    source = ROOT / "engines" / "connectivity" / "__pycache__"
    before = set(source.glob("*.nbi")) if source.exists() else set()
    code = textwrap.dedent("""
        from streamspec.spec.connectivity import Params
        from streamspec.spec.registry import Registry
        engine = Registry.create("connectivity", "rwc", Params(r=10, s=5, workload=[(1, 2)]))
        list(engine.process([(1, 2, 0), (2, 3, 11)])) + list(engine.flush())
    """)
    env = {**os.environ, "STREAMSPEC_CACHE_DIR": str(tmp_path)}
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("NUMBA_DISABLE_JIT", None)
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    cached = list((tmp_path / "numba").rglob("_rwc_kernels.*.nbi"))
    assert cached, f"no cache index under {tmp_path}"
    after = set(source.glob("*.nbi")) if source.exists() else set()
    assert after == before


def test_functions_outside_streamspec_keep_numbas_locators(tmp_path):
    outside = tmp_path / "theirs.py"
    outside.write_text("def f(x):\n    return x\n")
    namespace: dict = {}
    exec(compile(outside.read_text(), str(outside), "exec"), namespace)
    assert nb.StreamspecCacheLocator.from_function(namespace["f"], str(outside)) is None


def test_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("STREAMSPEC_CACHE_DIR", str(tmp_path))
    assert nb.cache_root() == str(tmp_path / "numba")
    monkeypatch.delenv("STREAMSPEC_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert nb.cache_root().startswith(str(tmp_path / "xdg"))


def test_editing_a_callee_recompiles_the_cached_caller(tmp_path):
    """numba stamps a cache entry with the function's own file; a caller that inlined a
    kernel of another module kept running the old callee after an edit of that module
    alone.  Our stamp covers the kernel's folder (and spec/), so the caller recompiles."""
    pkg = tmp_path / "kern"
    pkg.mkdir()
    (pkg / "callee.py").write_text("from numba import njit\n\n@njit(cache=True)\ndef g():\n    return 1\n")
    (pkg / "caller.py").write_text("from numba import njit\nfrom callee import g\n\n"
                                   "@njit(cache=True)\ndef f():\n    return g()\n")
    code = textwrap.dedent(f"""
        import os, sys
        import streamspec.spec._numba as nb
        nb.OUR_DIRS = ({str(pkg)!r} + os.sep,)   # treat the folder as one of ours
        sys.path.insert(0, {str(pkg)!r})
        from caller import f
        print(f())
    """)
    env = {**os.environ, "STREAMSPEC_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("NUMBA_DISABLE_JIT", None)

    def run() -> str:
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert run() == "1"
    assert list((tmp_path / "cache").rglob("caller.f-*.nbi")), "the caller was not cached"
    (pkg / "callee.py").write_text("from numba import njit\n\n@njit(cache=True)\ndef g():\n    return 2\n")
    os.utime(pkg / "callee.py", ns=(1, 10**18))    # a stamp unlike the first one, whatever the clock
    assert run() == "2"


def test_kernel_modules_take_njit_from_the_cache_locator_module():
    """numba's own ``njit`` compiles with numba's default locator (``__pycache__`` beside the
    source: site-packages for a wheel) unless ``streamspec.spec._numba`` happened to be
    imported first; every kernel module imports ``njit`` from there, so its caches go to the
    user cache directory whatever ran before (the compiled CNGen once missed this: the demo
    left its caches in site-packages)."""
    direct = re.compile(r"^\s*(from numba import [^\n]*\bn?jit\b|@numba\.n?jit\b)", re.M)
    offenders = [str(path.relative_to(ROOT)) for layer in LAYERS
                 for path in sorted((ROOT / layer).rglob("*.py"))
                 if path != ROOT / "spec" / "_numba.py" and direct.search(path.read_text())]
    assert offenders == []


def test_processes_that_start_cold_together_compile_a_kernel_once(tmp_path):
    """Two processes miss the cache at the same moment (the Python workers of a ``local[2]``
    job): the first compiles under the kernel's lock, the second waits and loads what the
    first saved.  Without the lock both compiled (the simjoin demo compiled its kernels
    twice).  Each process reports numba's own hit and miss counts for the kernel."""
    (tmp_path / "kern.py").write_text(textwrap.dedent("""
        import numpy as np
        from streamspec.spec._numba import njit

        @njit(cache=True)
        def f(a):          # a compile of about a second: long enough for the other to miss too
            return np.sort(a)[0] + a.sum()
    """))
    go = tmp_path / "go"
    code = textwrap.dedent(f"""
        import os, sys, time
        import numpy as np
        sys.path.insert(0, {str(tmp_path)!r})
        from kern import f
        open(os.path.join({str(tmp_path)!r}, f"ready-{{os.getpid()}}"), "w").close()
        while not os.path.exists({str(go)!r}):
            time.sleep(0.001)
        f(np.arange(10.0))
        print(sum(f.stats.cache_hits.values()), sum(f.stats.cache_misses.values()))
    """)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("NUMBA_DISABLE_JIT", None)
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("ready-*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)          # both imported, neither has looked the kernel up yet
    go.write_text("")
    counts = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        counts.append(tuple(map(int, out.split())))
    assert sorted(counts) == [(0, 1), (1, 0)], counts     # one compiled, the other loaded
