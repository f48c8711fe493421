"""Numba kernels of the RWC baseline (``streamspec.engines.connectivity.rwc``).

RWC ("recompute per window", BIC TR Section 7.1, as the
authors' Java runs it): keep the window's edges in a FIFO and rebuild a union-find (union by size,
full path compression) from scratch at every window.  Presence is an epoch
stamp per vertex, so starting a new union-find costs nothing per vertex.
Only ``@njit`` functions over numpy arrays and scalars live here.
"""
from __future__ import annotations

import numpy as np
from streamspec.spec._numba import njit


@njit(cache=True)
def uf_find(parent, x):
    """Root of ``x`` with full path compression (two passes)."""
    root = x
    while parent[root] != root:
        root = parent[root]
    while parent[x] != root:
        nxt = parent[x]
        parent[x] = root
        x = nxt
    return root


@njit(cache=True)
def _touch(parent, size, stamp, epoch, x):
    # a vertex enters this window's union-find as a singleton on first sight
    if stamp[x] != epoch:
        stamp[x] = epoch
        parent[x] = x
        size[x] = 1


@njit(cache=True)
def uf_build(fifo_u, fifo_v, head, tail, parent, size, stamp, epoch):
    """Union-find over the window edges ``fifo[head:tail]`` under stamp ``epoch``."""
    for i in range(head, tail):
        a = fifo_u[i]
        b = fifo_v[i]
        _touch(parent, size, stamp, epoch, a)
        _touch(parent, size, stamp, epoch, b)
        ra = uf_find(parent, a)
        rb = uf_find(parent, b)
        if ra == rb:
            continue
        # union by size; on ties the source endpoint's root stays root (as in Java)
        if size[ra] < size[rb]:
            ra, rb = rb, ra
        parent[rb] = ra
        size[ra] += size[rb]


@njit(cache=True)
def uf_connected(parent, stamp, epoch, a, b):
    """``Q(a, b)`` on the union-find stamped ``epoch``: both present and same root."""
    if stamp[a] != epoch or stamp[b] != epoch:
        return False
    return uf_find(parent, a) == uf_find(parent, b)


@njit(cache=True)
def rwc_run(fifo_u, fifo_v, fifo_t, head, tail, u, v, t, t0, r, s, first_window, upto,
            parent, size, stamp, epoch, qa, qb, out):
    """Apply edges ``(u, v, t)`` in order, evaluating windows ``first_window..upto-1``.

    Window ``w`` (``[t0 + w*s, t0 + w*s + r)``) is evaluated before the first
    edge with ``t >= end(w)``; windows left after the last edge are evaluated at
    the end.  Row ``w - first_window`` of ``out`` (all false on entry) receives
    the answers.  The FIFO arrays must have room for ``len(u)`` more edges after
    ``tail``.  Returns ``(head, tail, epoch)``.
    """
    w = first_window
    nq = qa.shape[0]
    for i in range(u.shape[0]):
        ti = t[i]
        while w < upto and ti >= t0 + w * s + r:
            start = t0 + w * s
            while head < tail and fifo_t[head] < start:
                head += 1
            if head == tail:
                # nothing left in the FIFO: every window ending by ti is empty,
                # its row stays all false (no per-window loop over a huge gap)
                due = (ti - t0 - r) // s + 1
                w = min(upto, due)
                epoch += 1
                continue
            epoch += 1
            uf_build(fifo_u, fifo_v, head, tail, parent, size, stamp, epoch)
            row = w - first_window
            for q in range(nq):
                out[row, q] = uf_connected(parent, stamp, epoch, qa[q], qb[q])
            w += 1
        fifo_u[tail] = u[i]
        fifo_v[tail] = v[i]
        fifo_t[tail] = ti
        tail += 1
    while w < upto:
        start = t0 + w * s
        while head < tail and fifo_t[head] < start:
            head += 1
        epoch += 1
        if head == tail:
            break  # the remaining windows are empty: rows stay false
        uf_build(fifo_u, fifo_v, head, tail, parent, size, stamp, epoch)
        row = w - first_window
        for q in range(nq):
            out[row, q] = uf_connected(parent, stamp, epoch, qa[q], qb[q])
        w += 1
    return head, tail, epoch
