"""Growable memory for SWOOP's index arena (``engines/simjoin/swoop.py``).

The arena only grows (its segments keep their positions), and at |W| = 1e6 it
holds tens of millions of entries: growing it by allocating a larger array and
copying stopped one batch for most of a second (hundreds of MB copied, every
page of the new array faulted in at once).  On Linux the arena lives in an
anonymous mapping instead, and growing it is ``mremap``: the kernel moves the
page tables, nothing is copied, and the new pages are faulted in only when the
arena's top reaches them, a few at a time, as the lists need them.  Elsewhere
(or when the mapping cannot be made) ``grow`` falls back to a numpy copy.

An array handed out by ``grow`` is a view of the mapping and holds it alive;
after the next ``grow`` of the same arena only the new array may be used (the
mapping may have moved).
"""
from __future__ import annotations

import ctypes
import mmap
import sys
import weakref

import numpy as np

_libc = None
if sys.platform.startswith("linux"):
    try:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.mmap.restype = ctypes.c_void_p
        _libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                               ctypes.c_int, ctypes.c_long)
        _libc.mremap.restype = ctypes.c_void_p
        _libc.mremap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int)
        _libc.munmap.restype = ctypes.c_int
        _libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
    except (OSError, AttributeError):
        _libc = None
_FAILED = ctypes.c_void_p(-1).value
_MREMAP_MAYMOVE = 1


def _unmap(where: list) -> None:
    _libc.munmap(where[0], where[1])


class _Mapping:
    """An anonymous private mapping of ``nbytes``; unmapped when no view holds it."""

    def __init__(self, nbytes: int):
        addr = _libc.mmap(None, nbytes, mmap.PROT_READ | mmap.PROT_WRITE,
                          mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
        if addr in (None, _FAILED):
            raise MemoryError(f"mmap of {nbytes} bytes failed")
        self.where = [addr, nbytes]
        weakref.finalize(self, _unmap, self.where)

    def grow(self, nbytes: int) -> None:
        addr = _libc.mremap(self.where[0], self.where[1], nbytes, _MREMAP_MAYMOVE)
        if addr in (None, _FAILED):
            raise MemoryError(f"mremap to {nbytes} bytes failed")
        self.where[0], self.where[1] = addr, nbytes

    def view(self, dtype, n: int) -> np.ndarray:
        buf = (ctypes.c_char * self.where[1]).from_address(self.where[0])
        buf.owner = self                 # the view's base chain keeps the mapping mapped
        return np.frombuffer(buf, dtype, n)


def _mapping_of(a: np.ndarray):
    base = a.base
    while isinstance(base, np.ndarray):
        base = base.base
    return getattr(base, "owner", None) if isinstance(base, ctypes.Array) else None


def grow(a: np.ndarray, n: int, keep: int, zero: bool = False) -> np.ndarray:
    """An array of ``n`` rows (``n >= len(a)``, ``a``'s dtype and row shape) whose first
    ``keep`` rows are ``a``'s, the others garbage, or zeros with ``zero`` (a fresh mapping
    is zero already); ``a`` must not be used afterwards."""
    row = a.shape[1:]
    nbytes = n * a.dtype.itemsize * int(np.prod(row, dtype=np.int64))
    if _libc is not None:
        old = _mapping_of(a)
        try:
            if old is not None and old.where[1] == a.nbytes:
                old.grow(nbytes)
                return old.view(a.dtype, nbytes // a.dtype.itemsize).reshape((n,) + row)
            fresh = _Mapping(nbytes)
        except MemoryError:
            fresh = None
        if fresh is not None:
            out = fresh.view(a.dtype, nbytes // a.dtype.itemsize).reshape((n,) + row)
            out[:keep] = a[:keep]
            return out
    out = np.zeros((n,) + row, a.dtype) if zero else np.empty((n,) + row, a.dtype)
    out[:keep] = a[:keep]
    return out
