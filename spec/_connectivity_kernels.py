"""The connectivity contract's boundary for int64 edge columns, as one numba call.

A window's triggering ``process`` call (BIC TR Section 7.1's latency is one
edge) runs on caches that the previous slide of inserts has just evicted; each
Python or numpy step then costs tens of microseconds, more than BIC spends
answering the window's queries.  ``feed_int64`` does in one call what
``validate`` (the time check), ``IdIndex.add`` (the direct table) and the copy
of the times into the pending columns do in a dozen; on a large batch it is
one pass over the edges instead of several (the table reads remain, one per id).
"""
from __future__ import annotations

from streamspec.spec._numba import njit

from streamspec.spec._vertices_kernels import direct_add


@njit(cache=True)
def feed_int64(u, v, t, last_t, check_last, table, size, out):
    """Check ``t`` is non-decreasing (from ``last_t`` when ``check_last``) and
    map ``u``, ``v`` through the direct ``table`` (external id -> dense id or
    -1), numbering fresh ids ``size, size + 1, ...`` in increasing value.

    ``out`` (length ``5n``) receives ``[dense u | dense v | t | fresh ids]``.
    Returns ``(status, n_fresh, last time)``: status ``-1`` done; ``i >= 0``
    edge ``i`` is earlier than the time before it; ``-2`` an id lies outside
    the table.  Unless done, nothing has changed.
    """
    n = t.size
    before = last_t if check_last else t[0]
    for i in range(n):
        if t[i] < before:
            return i, 0, before
        before = t[i]
        out[2 * n + i] = t[i]
    nf = direct_add(u, v, table, size, out[:2 * n], out[3 * n:])
    if nf < 0:
        return -2, 0, before
    return -1, nf, before


@njit(cache=True)
def feed_one(u, v, t, last_t, check_last, table, size, gu, gv, gt, fresh):
    """``feed_int64`` for a one-edge batch, into three one-element columns
    ``gu``, ``gv``, ``gt`` (dense u, dense v, time) and ``fresh`` (length 2),
    which the caller reuses from call to call (``ConnectivityEngine.retains_columns``):
    a window's trigger then makes no array.  Same returns, same numbering as
    ``feed_int64`` (fresh ids in increasing value); unless done, nothing has
    changed."""
    ti = t[0]
    if check_last and ti < last_t:
        return 0, 0, last_t
    a = u[0]
    b = v[0]
    cap = table.size
    if a < 0 or a >= cap or b < 0 or b >= cap:
        return -2, 0, ti
    nf = 0
    if table[a] == -1:
        fresh[0] = a
        nf = 1
    if table[b] == -1 and b != a:
        fresh[nf] = b
        nf += 1
    if nf == 2 and fresh[1] < fresh[0]:
        fresh[0], fresh[1] = fresh[1], fresh[0]
    for k in range(nf):
        table[fresh[k]] = size + k
    gu[0] = table[a]
    gv[0] = table[b]
    gt[0] = ti
    return -1, nf, ti


# -- the fused one-edge triggering call's shared steps (``ConnectivityEngine._trigger_kernel``:
# ``_msf_kernels.msf_trigger``, ``_bic_kernels.trigger``)

@njit(cache=True, _nrt=False, inline="always")
def windows_due(ti, end0, s, first_window):
    """``SlidingWindows.due_before(ti)`` (the first window ending at ``end0``, one a
    slide ``s`` after), at least ``first_window``."""
    upto = (ti - end0) // s + 1 if ti >= end0 else 0
    return upto if upto > first_window else first_window


@njit(cache=True, _nrt=False, inline="always")
def same_row(out, last, update):
    """Whether row ``out[0]`` equals ``last`` (0/1 per query; 2 before any row); with
    ``update``, ``last`` becomes the row (the fused call's ``answered`` 1 or 2)."""
    same = 1
    for q in range(out.shape[1]):
        x = 1 if out[0, q] else 0
        if x != last[q]:
            if update:
                last[q] = x
            same = 0
    return same
