"""Numba kernels of the DFS baseline (``streamspec.engines.connectivity.dfs``).

BIC TR Section 7.1: "DFS corresponds to executing a depth-first search for
each query in each window instance"; the authors' Java runs it behind the same
FDC driver as D-Tree: window edges in a FIFO, each
edge inserted into an adjacency structure on arrival, the expired ones deleted
oldest first at each slide, then one DFS per workload query.

Adjacency: a pool of edge slots, each with two half-edges ``2*slot`` (at
``eu``, leading to ``ev``) and ``2*slot + 1`` (at ``ev``, leading to ``eu``)
in doubly linked per-vertex lists, so inserting and deleting an edge are O(1).
Only ``@njit`` functions over numpy arrays and scalars live here.
"""
from __future__ import annotations

from streamspec.spec._numba import njit


@njit(cache=True)
def _link(adj_head, he_next, he_prev, x, h):
    nxt = adj_head[x]
    he_prev[h] = -1
    he_next[h] = nxt
    if nxt != -1:
        he_prev[nxt] = h
    adj_head[x] = h


@njit(cache=True)
def _unlink(adj_head, he_next, he_prev, x, h):
    p = he_prev[h]
    n = he_next[h]
    if p == -1:
        adj_head[x] = n
    else:
        he_next[p] = n
    if n != -1:
        he_prev[n] = p


@njit(cache=True)
def _other(eu, ev, h):
    return ev[h >> 1] if (h & 1) == 0 else eu[h >> 1]


@njit(cache=True)
def present(adj_head, he_next, eu, ev, et, x, lo, hi):
    """``x`` is an endpoint of a stored edge with ``lo <= t < hi``."""
    h = adj_head[x]
    while h != -1:
        t = et[h >> 1]
        if lo <= t and t < hi:
            return True
        h = he_next[h]
    return False


@njit(cache=True)
def dfs_connected(adj_head, he_next, eu, ev, et, mark, stamp, stack, a, b, lo, hi):
    """``Q(a, b)`` over the stored edges with ``lo <= t < hi``: one depth-first search.

    ``mark`` is this query's stamp (visited <=> ``stamp[x] == mark``), so the
    search costs only what it visits; ``stack`` holds each vertex at most once.
    """
    if not present(adj_head, he_next, eu, ev, et, a, lo, hi):
        return False
    if not present(adj_head, he_next, eu, ev, et, b, lo, hi):
        return False
    if a == b:
        return True
    stamp[a] = mark
    top = 0
    stack[top] = a
    top += 1
    while top > 0:
        top -= 1
        x = stack[top]
        h = adj_head[x]
        while h != -1:
            t = et[h >> 1]
            if lo <= t and t < hi:
                y = _other(eu, ev, h)
                if y == b:
                    return True
                if stamp[y] != mark:
                    stamp[y] = mark
                    stack[top] = y
                    top += 1
            h = he_next[h]
    return False


@njit(cache=True)
def _evict(adj_head, he_next, he_prev, eu, ev, fifo_slot, fifo_t, head, tail, free_ids,
           n_free, start):
    # the FDC driver's evict(start): delete the expired edges one by one, oldest first
    while head < tail and fifo_t[head] < start:
        slot = fifo_slot[head]
        _unlink(adj_head, he_next, he_prev, eu[slot], 2 * slot)
        _unlink(adj_head, he_next, he_prev, ev[slot], 2 * slot + 1)
        free_ids[n_free] = slot
        n_free += 1
        head += 1
    return head, n_free


@njit(cache=True)
def dfs_run(adj_head, he_next, he_prev, eu, ev, et, fifo_slot, fifo_t, head, tail, free_ids,
            n_free, stamp, stack, mark, u, v, t, t0, r, s, first_window, upto, qa, qb, out):
    """Apply edges ``(u, v, t)`` in order, evaluating windows ``first_window..upto-1``.

    Window ``w`` is evaluated before the first edge with ``t >= end(w)`` (and
    the rest after the last edge): evict the edges before ``start(w)``, then a
    DFS per query; row ``w - first_window`` of ``out`` (all false on entry)
    receives the answers.  The pool must hold ``len(u)`` free slots and the
    FIFO room for ``len(u)`` more entries.  Returns ``(head, tail, n_free, mark)``.
    """
    w = first_window
    nq = qa.shape[0]
    n = u.shape[0]
    i = 0
    while True:
        ti = t[i] if i < n else 0
        while w < upto and (i >= n or ti >= t0 + w * s + r):
            start = t0 + w * s
            head, n_free = _evict(adj_head, he_next, he_prev, eu, ev, fifo_slot, fifo_t, head,
                                  tail, free_ids, n_free, start)
            if head == tail:
                # an empty window, and so is every one before the next edge: rows stay false
                w = upto if i >= n else min(upto, (ti - t0 - r) // s + 1)
                continue
            row = w - first_window
            for q in range(nq):
                mark += 1
                out[row, q] = dfs_connected(adj_head, he_next, eu, ev, et, mark, stamp, stack,
                                            qa[q], qb[q], start, start + r)
            w += 1
        if i >= n:
            break
        n_free -= 1
        slot = free_ids[n_free]
        a = u[i]
        b = v[i]
        eu[slot] = a
        ev[slot] = b
        et[slot] = ti
        _link(adj_head, he_next, he_prev, a, 2 * slot)
        _link(adj_head, he_next, he_prev, b, 2 * slot + 1)
        fifo_slot[tail] = slot
        fifo_t[tail] = ti
        tail += 1
        i += 1
    return head, tail, n_free, mark
