"""Numba kernels of the maximum-spanning-forest engine (``streamspec.engines.connectivity.msf``).

The forest of the stream's edges that keeps the newest edges, stored as
rooted trees with parent pointers (the representation of D-Tree and of the
AM-tree line of work on sliding-window connectivity; issue 13 of the
tracker): each non-root vertex holds its parent and the time of the edge to
it.  One record of four int64 per vertex (``V[x]``, one cache line holds two),
so a step up a tree touches one record:

- ``PARENT``: parent vertex, ``-1`` at a root;
- ``PTIME``: time of the edge to the parent; at a root, the tree's size
  (small-to-large linking);
- ``MARK``: the lowest-common-ancestor search's stamp (``2 * epoch + side``);
- ``SEEN``: the last time the vertex was an endpoint (presence).

Operations (all O(depth) steps, no amortized structure, nothing deferred):
``lowest_common_ancestor`` walks up from both ends in turn, marking;
``reroot`` reverses the path from a vertex to its root (evert);
``insert_edge`` links two trees (the smaller rerooted at its endpoint and hung
below the other) or, inside a tree, replaces the oldest edge of the cycle the
new edge closes when it is older.  Only ``@njit`` functions over numpy arrays
and scalars live here.
"""
from __future__ import annotations

import numpy as np
from streamspec.spec._numba import njit

INF = np.iinfo(np.int64).max
NEVER = np.iinfo(np.int64).min
# columns of the vertex records V
PARENT = 0
PTIME = 1
MARK = 2
SEEN = 3
N_V = 4
# slots of the state vector ``st``
EPOCH = 0        # stamps of the last ancestor search (marks below 2 * epoch are stale)
LAST_T = 1       # time of the last applied edge (NEVER before the first)
N_ST = 2


@njit(cache=True)
def lowest_common_ancestor(V, st, a, b):
    """The lowest common ancestor of ``a != b``, or ``-1`` when they are in different trees.

    Both ends step up in turn, each marking what it visits with a stamp of
    this search: the first vertex one side reaches that the other side has
    marked is the answer, found after at most twice the longer of the two
    distances to it (not the depths, when the ends are close).
    """
    st[EPOCH] += 1
    ma = 2 * st[EPOCH]
    mb = ma + 1
    V[a, MARK] = ma
    V[b, MARK] = mb
    x = a
    y = b
    while x != -1 or y != -1:
        if x != -1:
            x = V[x, PARENT]
            if x != -1:
                if V[x, MARK] == mb:
                    return x
                V[x, MARK] = ma
        if y != -1:
            y = V[y, PARENT]
            if y != -1:
                if V[y, MARK] == ma:
                    return y
                V[y, MARK] = mb
    return -1


@njit(cache=True)
def root_of(V, x):
    while V[x, PARENT] != -1:
        x = V[x, PARENT]
    return x


@njit(cache=True)
def reroot(V, x):
    """Make ``x`` the root of its tree by reversing the path from ``x`` to the root.

    The old root's size field is overwritten by an edge time: the caller
    hangs ``x`` at once or stores the size at ``x``.
    """
    cur = x
    p = V[x, PARENT]
    pt = V[x, PTIME]
    V[x, PARENT] = -1
    while p != -1:
        nxt = V[p, PARENT]
        nt = V[p, PTIME]
        V[p, PARENT] = cur
        V[p, PTIME] = pt
        cur = p
        p = nxt
        pt = nt


@njit(cache=True)
def oldest_on_path(V, a, y):
    """``(time, vertex)`` of the oldest edge from ``a`` up to its ancestor ``y``
    (the edge is ``vertex``-parent); ``(INF, -1)`` when ``a == y``."""
    best = INF
    c = -1
    while a != y:
        pt = V[a, PTIME]
        if pt < best:
            best = pt
            c = a
        a = V[a, PARENT]
    return best, c


@njit(cache=True)
def insert_edge(V, st, u, v, t):
    """Add edge ``(u, v, t)`` (``t`` >= every time in the forest) to the maximum spanning forest.

    Different trees: the smaller is rerooted at its endpoint and hung below
    the other endpoint (small-to-large keeps trees shallow).  Same tree: the
    path u..v plus the new edge is a cycle; if its oldest edge is older than
    ``t`` it leaves the forest, and the side it cut off (holding u or v) is
    rerooted at that endpoint and hung below the other.  Equal times: either
    edge gives a maximum forest, the old one stays.
    """
    if u == v:
        return                           # self-loops only count for presence
    y = lowest_common_ancestor(V, st, u, v)
    if y == -1:
        ru = root_of(V, u)
        rv = root_of(V, v)
        size = V[ru, PTIME] + V[rv, PTIME]
        if V[ru, PTIME] > V[rv, PTIME]:
            u, v, rv = v, u, ru
        reroot(V, u)
        V[u, PARENT] = v
        V[u, PTIME] = t
        V[rv, PTIME] = size
        return
    tu, cu = oldest_on_path(V, u, y)
    tv, cv = oldest_on_path(V, v, y)
    if tu <= tv:
        if tu >= t:
            return
        c = cu
    else:
        if tv >= t:
            return
        c = cv
        u, v = v, u
    # c is on u's side: cutting c's edge detaches the part holding u
    V[c, PARENT] = -1
    reroot(V, u)
    V[u, PARENT] = v
    V[u, PTIME] = t


@njit(cache=True)
def answer(V, st, a, b, start, cache, q):
    """``Q(a, b)`` on the window starting at ``start`` (every applied edge is before its end).

    ``cache[q]`` holds a path minimum found earlier for this query: the
    bottleneck (the largest path minimum over all a-b paths of the edges so
    far) only grows as edges arrive, and the forest path's minimum is that
    bottleneck, so a cached value at or after ``start`` already answers true.
    """
    if V[a, SEEN] < start or V[b, SEEN] < start:
        return False
    if a == b:
        return True
    if cache[q] >= start:
        return True
    y = lowest_common_ancestor(V, st, a, b)
    if y == -1:
        return False
    ta, _ = oldest_on_path(V, a, y)
    tb, _ = oldest_on_path(V, b, y)
    m = min(ta, tb)
    cache[q] = m
    return m >= start


@njit(cache=True)
def msf_run(V, st, u, v, t, t0, r, s, first_window, upto, qa, qb, cache, out):
    """Apply edges ``(u, v, t)`` in order, evaluating windows ``first_window..upto-1``.

    Window ``w`` (``[t0 + w*s, t0 + w*s + r)``) is answered before the first
    edge with ``t >= end(w)`` is inserted, so every edge in the forest then is
    before its end; windows left after the last edge are answered at the end.
    Row ``w - first_window`` of ``out`` (all false on entry) receives the
    answers; a window that starts after the last applied edge is empty and its
    row stays false (a gap costs nothing per window).
    """
    w = first_window
    nq = qa.shape[0]
    n = u.shape[0]
    for i in range(n + 1):
        ti = t[i] if i < n else INF
        while w < upto and ti >= t0 + w * s + r:
            start = t0 + w * s
            if st[LAST_T] < start:
                # empty window: so is every later one up to the next edge's
                if i == n:
                    break
                w = min(upto, (ti - t0 - r) // s + 1)
                continue
            row = w - first_window
            for q in range(nq):
                out[row, q] = answer(V, st, qa[q], qb[q], start, cache, q)
            w += 1
        if i == n:
            break
        a = u[i]
        b = v[i]
        V[a, SEEN] = ti
        V[b, SEEN] = ti
        st[LAST_T] = ti
        insert_edge(V, st, a, b, ti)
    return w
