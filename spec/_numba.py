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

One compile per kernel, however many processes start cold at once.  numba looks a
kernel up in its cache and, on a miss, compiles it; two processes that miss at the
same moment (the two Python workers of a ``local[2]`` Spark job, the executors of a
cluster on one host, two test workers) both compile it, each paying seconds of CPU
for the same machine code.  So ``njit`` here gives each cached kernel a compile that
holds an exclusive ``flock`` on a lock file beside the kernel's cache index while it
looks up and compiles: the second process waits for the first, then loads what it
saved.  The lock is per kernel (a caller being compiled needs its callees' locks,
never the other way round, so two processes cannot wait on each other), taken only
on the first call of each signature in a process, released by the kernel if the
process dies, and skipped where ``flock`` is not available.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import os

import numba
from numba.core import caching, sigutils
from numba.core.compiler_lock import global_compiler_lock

__all__ = ["njit", "cache_root", "entry_point"]

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


_HELD: set[str] = set()     # lock files this process holds (a kernel compiling itself again)


def _lock_path(dispatcher) -> str | None:
    index = getattr(getattr(getattr(dispatcher, "_cache", None), "_cache_file", None),
                    "_index_path", None)        # numba's NullCache (no cache=True) has none
    return index[:-len(".nbi")] + ".lock" if index and index.endswith(".nbi") else None


def _one_compile(dispatcher) -> None:
    """Make ``dispatcher.compile`` look up and compile under the kernel's file lock."""
    compile_ = getattr(dispatcher, "compile", None)
    lock = _lock_path(dispatcher)
    if compile_ is None or lock is None:
        return                      # the plain function (NUMBA_DISABLE_JIT), or no cache

    @functools.wraps(compile_)
    def compile(sig):
        # in-process first (numba's own lock, re-entrant), then the file: a thread never
        # holds the file while it waits for the compiler another thread holds
        with global_compiler_lock:
            args, _ = sigutils.normalize_signature(sig)
            if lock in _HELD or dispatcher.overloads.get(tuple(args)) is not None:
                return compile_(sig)        # compiled here already, or compiling now
            try:
                fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError:
                return compile_(sig)        # a read-only cache: numba does without it too
            try:
                with contextlib.suppress(OSError):    # no flock on this file system: unlocked
                    fcntl.flock(fd, fcntl.LOCK_EX)
                _HELD.add(lock)
                return compile_(sig)        # numba's own lookup first: hits what the other saved
            finally:
                _HELD.discard(lock)
                os.close(fd)                # releases the flock

    dispatcher.compile = compile


def njit(*args, **options):
    """numba's ``njit``; a kernel with ``cache=True`` compiles once across processes."""
    made = numba.njit(*args, **options)
    if isinstance(made, numba.core.dispatcher.Dispatcher):
        _one_compile(made)
        return made

    def decorate(func):
        dispatcher = made(func)
        _one_compile(dispatcher)
        return dispatcher
    return decorate


def entry_point(dispatcher, *argtypes):
    """``dispatcher`` compiled for ``argtypes`` (numba types), as the compiled
    function itself; without the JIT (``NUMBA_DISABLE_JIT``) the plain function.

    Calling it skips numba's dispatcher, which types every argument and looks
    the signature up before each call: a few microseconds a call, more on the
    caches a slide of inserts has just evicted (a window's triggering call,
    issue 28).  The caller must pass exactly these types (arrays of that dtype
    and dimension; a layout ``A`` type takes any strides)."""
    compile_ = getattr(dispatcher, "compile", None)
    if compile_ is None:
        return dispatcher
    return compile_(tuple(argtypes))
