"""Numba kernels of the maximum-spanning-forest engine (``streamspec.engines.connectivity.msf``).

The forest of the stream's edges that keeps the newest edges, stored as
rooted trees with parent pointers (the representation of D-Tree and of the
AM-tree line of work on sliding-window connectivity; issue 13 of the
tracker): each non-root vertex holds its parent and the time of the edge to
it.  One record of four int64 per vertex (``V[x]``, 32 bytes, two per cache
line), so a step up a tree touches one record:

- ``PARENT``: parent vertex, ``-1`` at a root;
- ``PTIME``: time of the edge to the parent; at a root, the tree's size
  (small-to-large linking);
- ``MARK``: the lowest-common-ancestor search's stamp (``2 * epoch + side``);
- ``SEEN``: the last time the vertex was an endpoint (presence).

Operations (all O(depth) steps, no amortized structure, nothing deferred):
``lowest_common_ancestor`` walks up from both ends in turn, marking, and
finds the oldest edge of the path on the way (for a query, over the window's
edges only);
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
N_V = 4          # 32 bytes: two records per (64-byte aligned) cache line
# slots of the state vector ``st``
EPOCH = 0        # stamps of the last ancestor search (marks below 2 * epoch are stale)
LAST_T = 1       # time of the last applied edge (NEVER before the first)
N_ST = 2


@njit(cache=True)
def _oldest_up_to(V, x, y):
    """``(time, vertex)`` of the oldest edge from ``x`` up to its ancestor ``y``."""
    best = INF
    c = -1
    while x != y:
        pt = V[x, PTIME]
        if pt < best:
            best = pt
            c = x
        x = V[x, PARENT]
    return best, c


@njit(cache=True)
def lowest_common_ancestor(V, st, a, b, start):
    """The lowest common ancestor ``y`` of ``a != b`` over the forest's edges at or after
    ``start`` (``NEVER``: all of them), and the oldest edge on each half of the
    path: ``(y, ta, ca, tb, cb)``, the edge ``c``-parent of time ``t`` on ``a``'s
    (``b``'s) side (``(INF, -1)`` when that side is empty).  ``y == -1`` when
    those edges do not connect them; ``ca`` and ``cb`` are then where the two
    walks stopped (with ``NEVER``: the two roots).

    Both ends step up in turn, each marking what it visits with a stamp of
    this search and keeping the oldest edge it passed: the first vertex one
    side reaches that the other side has marked is ``y``, found after at most
    twice the longer of the two distances to it (not the depths, when the
    ends are close); the other side's oldest edge up to ``y`` is found by
    walking its part again (records still in cache; storing running minima
    in the records instead made them 48 bytes, and the search slower).
    A side stops at its root or at an edge older than ``start``: in a rooted
    forest the recent edges' components each have one top, so two stopped
    walks that never met are not connected.
    """
    st[EPOCH] += 1
    ma = 2 * st[EPOCH]
    mb = ma + 1
    V[a, MARK] = ma
    V[b, MARK] = mb
    x = a
    y = b
    ta = INF
    ca = -1
    tb = INF
    cb = -1
    xdone = False
    ydone = False
    while not (xdone and ydone):
        if not xdone:
            p = V[x, PARENT]
            pt = V[x, PTIME]
            if p == -1 or pt < start:
                xdone = True
            else:
                if pt < ta:
                    ta = pt
                    ca = x
                if V[p, MARK] == mb:
                    tb, cb = _oldest_up_to(V, b, p)
                    return p, ta, ca, tb, cb
                V[p, MARK] = ma
                x = p
        if not ydone:
            p = V[y, PARENT]
            pt = V[y, PTIME]
            if p == -1 or pt < start:
                ydone = True
            else:
                if pt < tb:
                    tb = pt
                    cb = y
                if V[p, MARK] == ma:
                    ta, ca = _oldest_up_to(V, a, p)
                    return p, ta, ca, tb, cb
                V[p, MARK] = mb
                y = p
    return -1, INF, x, INF, y


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
    # a repeat of a forest edge: the cycle is the two copies, the older leaves
    if V[u, PARENT] == v:
        if V[u, PTIME] < t:
            V[u, PTIME] = t
        return
    if V[v, PARENT] == u:
        if V[v, PTIME] < t:
            V[v, PTIME] = t
        return
    y, tu, cu, tv, cv = lowest_common_ancestor(V, st, u, v, NEVER)
    if y == -1:
        ru = cu
        rv = cv                          # the two roots
        size = V[ru, PTIME] + V[rv, PTIME]
        if V[ru, PTIME] > V[rv, PTIME]:
            u, v, rv = v, u, ru
        reroot(V, u)
        V[u, PARENT] = v
        V[u, PTIME] = t
        V[rv, PTIME] = size
        return
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

    The forest's edges at or after ``start`` connect exactly what the window's
    edges connect (the cycle property of a maximum spanning forest), so the
    ancestor search runs over those edges only: a false answer stops at the
    first older edge on each side.  ``cache[q]`` holds the pair's path minimum
    found by an earlier true answer, a lower bound of its bottleneck (the
    largest path minimum over all a-b paths), which only grows as edges
    arrive: a cached value at or after ``start`` already answers true.
    """
    if V[a, SEEN] < start or V[b, SEEN] < start:
        return False
    if a == b:
        return True
    if cache[q] >= start:
        return True
    y, ta, _, tb, _ = lowest_common_ancestor(V, st, a, b, start)
    if y == -1:
        return False
    cache[q] = min(ta, tb)
    return True


@njit(cache=True)
def msf_run(V, st, u, v, t, t0, r, s, first_window, upto, qa, qb, cache, out):
    """Apply edges ``(u, v, t)`` in order, evaluating windows ``first_window..upto-1``.

    Window ``w`` (``[t0 + w*s, t0 + w*s + r)``) is answered before the first
    edge with ``t >= end(w)`` is inserted, so every edge in the forest then is
    before its end; windows left after the last edge are answered at the end.
    Row ``w - first_window`` of ``out`` receives the answers (every cell is
    written); a window that starts after the last applied edge is empty, its
    row all false (a gap costs one fill, not a loop per window).
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
                due = upto if i == n else min(upto, (ti - t0 - r) // s + 1)
                out[w - first_window:due - first_window, :] = False
                w = due
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
