"""numba in one place: the ``njit`` every kernel module uses, and where its caches live.

Kernels are compiled with ``cache=True`` so a second process (a Spark executor,
the next run) loads them instead of compiling.  numba's own default writes the
cache into ``__pycache__`` beside the source, which for an installed streamspec
is site-packages: the files outlive ``pip uninstall`` and a later editable
install finds a stale ``streamspec/engines`` folder there.  So the caches of
streamspec's own kernels go to a per-user cache directory instead:
``$STREAMSPEC_CACHE_DIR`` if set, else the platform's user cache directory
(``~/.cache/streamspec/numba`` on Linux), one sub-directory per source folder
(numba's hashed sub-path, so two installs never share one).  numba keys each
entry by the source file's stamp and its own version, so an upgrade or a
reinstall recompiles rather than loading a stale kernel.  numba's stamp is the
function's own file only, but a kernel inlines the kernels it calls from other
modules (``_bic_kernels.run`` calls into ``_bic_build``, simjoin's kernels into
``spec/_simjoin_similarity``): editing a callee alone left the caller's cached
machine code stale.  So our stamp also covers every module of the kernel's
folder and of ``spec/`` (where the shared kernels live); editing any of them
recompiles the kernels that could have inlined it.  ``NUMBA_CACHE_DIR``,
when a user sets it, still wins; functions outside streamspec are untouched.
"""
from __future__ import annotations

import os

from numba import njit
from numba.core import caching

__all__ = ["njit", "cache_root"]

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cache_root() -> str:
    """The directory that holds streamspec's numba caches."""
    explicit = os.environ.get("STREAMSPEC_CACHE_DIR")
    if explicit:
        return os.path.join(os.path.abspath(explicit), "numba")
    import platformdirs
    return os.path.join(platformdirs.user_cache_dir("streamspec", appauthor=False), "numba")


LAYERS = ("spec", "reference", "engines", "pipeline", "conformance", "bench")
# the layer folders: <site-packages>/streamspec/<layer> installed, <checkout>/<layer> editable
OUR_DIRS = tuple(os.path.join(PACKAGE_ROOT, layer) + os.sep for layer in LAYERS)


def _ours(py_file: str) -> bool:
    return os.path.abspath(py_file).startswith(OUR_DIRS)


_Base = getattr(caching, "UserWideCacheLocator", None) or getattr(caching, "_UserWideCacheLocator")


SPEC_DIR = os.path.join(PACKAGE_ROOT, "spec")


def folder_stamp(folder: str) -> tuple:
    """(name, mtime_ns, size) of every module of ``folder``: changes when any of them does."""
    out = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            st = os.stat(os.path.join(folder, name))
            out.append((name, st.st_mtime_ns, st.st_size))
    return tuple(out)


class StreamspecCacheLocator(_Base):
    """numba cache locator for streamspec's own kernels: the per-user cache directory,
    entries stamped by the kernel's folder and ``spec/`` (see the module docstring)."""

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        self._cache_path = os.path.join(cache_root(), self.get_suitable_cache_subpath(py_file))

    def get_source_stamp(self):
        folder = os.path.dirname(os.path.abspath(self._py_file))
        return (super().get_source_stamp(), folder_stamp(folder), folder_stamp(SPEC_DIR))

    @classmethod
    def from_function(cls, py_func, py_file):
        if os.environ.get("NUMBA_CACHE_DIR") or not _ours(py_file):
            return None
        return super().from_function(py_func, py_file)


def _install() -> None:
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")   # 0.68 / older
    if StreamspecCacheLocator not in impl._locator_classes:
        impl._locator_classes = [StreamspecCacheLocator, *impl._locator_classes]


_install()
