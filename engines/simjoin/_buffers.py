"""Array housekeeping shared by the compiled simjoin engines (SWOOP, Static, Base).

Static and Base keep their window's records as rows of per-record arrays (``r_seq``,
``r_ts``, ... from ``meta[K.OLDEST]`` to ``meta[K.N_REC]``) with their tokens in ``p_tok``
(record ``q``'s from ``r_ptr[q]``): ``reserve_records`` makes room for a batch's inserts,
``compact_records`` drops the expired ones.  Each engine's kernel writes its top-k changes into output buffers (``out_pos``,
``out_ptr`` per change; ``out_i``, ``out_j``, ``out_sc``, ``out_e`` per row) and counts
them in ``meta[K.OUT_EV]`` and ``meta[K.OUT_ROW]`` of its own kernel module ``K``; when
they are full it returns, the engine grows them (``grow_out``) and calls it again, and
at the end hands them over as ``Changes`` columns (``collect``).
"""
from __future__ import annotations

import numpy as np

from streamspec.spec.simjoin import Changes

OUT = ("out_pos", "out_ptr", "out_i", "out_j", "out_sc", "out_e")


def grow(a: np.ndarray, need: int, fill=None) -> np.ndarray:
    """``a`` with at least ``need`` rows (doubling); new rows hold ``fill`` or garbage."""
    if need <= a.shape[0]:
        return a
    shape = (max(need, 2 * a.shape[0], 16),) + a.shape[1:]
    out = np.empty(shape, a.dtype) if fill is None else np.full(shape, fill, a.dtype)
    out[:a.shape[0]] = a
    return out


def grow_out(engine, K) -> None:
    """Room in ``engine``'s output buffers for one more change of up to ``k`` rows."""
    m = engine.meta
    ev, rows = int(m[K.OUT_EV]) + 1, int(m[K.OUT_ROW]) + engine.params.k
    engine.out_pos, engine.out_ptr = grow(engine.out_pos, ev), grow(engine.out_ptr, ev)
    engine.out_i, engine.out_j = grow(engine.out_i, rows), grow(engine.out_j, rows)
    engine.out_sc, engine.out_e = grow(engine.out_sc, rows), grow(engine.out_e, rows)


def collect(engine, K) -> Changes:
    """The kernel's output buffers as ``Changes`` columns (copies: the buffers are reused),
    the counters reset for the next call."""
    m = engine.meta
    n_ev, n_rows = int(m[K.OUT_EV]), int(m[K.OUT_ROW])
    ptr = np.empty(n_ev + 1, np.int64)
    ptr[:n_ev] = engine.out_ptr[:n_ev]
    ptr[n_ev] = n_rows
    m[K.OUT_EV] = m[K.OUT_ROW] = 0
    return Changes(engine.out_pos[:n_ev].copy(), ptr, engine.out_i[:n_rows].copy(),
                   engine.out_j[:n_rows].copy(), engine.out_sc[:n_rows].copy(),
                   engine.out_e[:n_rows].copy())


def reserve_records(engine, K, names: tuple[str, ...], prep) -> None:
    """Room in the per-record arrays ``names``, ``r_ptr`` and ``p_tok`` for ``prep``'s inserts
    (new rows hold zeros)."""
    m = engine.meta
    need = int(m[K.N_REC]) + int((prep.op == 0).sum())
    for name in names:
        setattr(engine, name, grow(getattr(engine, name), need, fill=0))
    engine.r_ptr = grow(engine.r_ptr, need + 1, fill=0)
    engine.p_tok = grow(engine.p_tok, int(m[K.N_POST]) + int(prep.tok.size), fill=0)


def compact_records(engine, K, names: tuple[str, ...]) -> None:
    """Drop the expired rows of the per-record arrays ``names`` and their tokens, once they
    are half the arrays (moved to the front in place; ``meta`` rebased)."""
    m = engine.meta
    d = int(m[K.OLDEST])
    if d == 0 or 2 * d < m[K.N_REC]:
        return
    live = int(m[K.N_REC]) - d
    dp = int(engine.r_ptr[d])
    n_post = int(m[K.N_POST]) - dp
    for name in names:
        a = getattr(engine, name)
        a[:live] = a[d:d + live].copy()
    engine.r_ptr[:live + 1] = engine.r_ptr[d:d + live + 1] - dp
    engine.p_tok[:n_post] = engine.p_tok[dp:dp + n_post].copy()
    m[K.OLDEST], m[K.N_REC], m[K.N_POST] = 0, live, n_post
