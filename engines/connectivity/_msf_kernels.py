"""Numba kernels of the maximum-spanning-forest engine (``streamspec.engines.connectivity.msf``).

A link-cut tree (Sleator and Tarjan, "A data structure for dynamic trees",
JCSS 26(3), 1983; splay-based version, Sleator and Tarjan, JACM 32(3), 1985)
over the forest of the stream's edges kept with the largest times: a forest
edge is a node of its own (so a path aggregate over nodes is an aggregate over
edges), each splay subtree knows its node of minimum edge time.

Node layout: vertex ``x`` is node ``2x``, edge slot ``k`` is node ``2k + 1``
(so growing the vertex capacity never moves a node).  ``L``, ``R``, ``P``:
splay children and parent (``P`` of a splay root is its path-parent, ``-1``
at a tree's root path); ``REV``: pending reversal (makeroot); ``AGG``: the node
of minimum time in the splay subtree; ``ET[k]``: time of edge slot ``k``
(vertex nodes count as +inf).  Only ``@njit`` functions over numpy arrays and
scalars live here; recursion is avoided (``STACK`` is the push-down scratch).
"""
from __future__ import annotations

import numpy as np
from streamspec.spec._numba import njit

INF = np.iinfo(np.int64).max
NEVER = np.iinfo(np.int64).min
# slots of the state vector ``st``
FRESH = 0        # edge slots ever used (slots below it are live or on the free stack)
FREE_TOP = 1     # height of the free stack of edge slots
LAST_T = 2       # time of the last applied edge (NEVER before the first)
N_ST = 3


@njit(cache=True, inline="always")
def _time(ET, n):
    return ET[n >> 1] if n & 1 else INF


@njit(cache=True, inline="always")
def _is_root(L, R, P, x):
    """``x`` is the root of its splay tree (its parent pointer, if any, is a path-parent)."""
    p = P[x]
    return p == -1 or (L[p] != x and R[p] != x)


@njit(cache=True, inline="always")
def _push(L, R, REV, x):
    # a pending reversal swaps x's children and moves down to them
    if REV[x]:
        a = L[x]
        b = R[x]
        L[x] = b
        R[x] = a
        if a != -1:
            REV[a] ^= 1
        if b != -1:
            REV[b] ^= 1
        REV[x] = 0


@njit(cache=True, inline="always")
def _pull(L, R, AGG, ET, x):
    best = x
    bt = _time(ET, x)
    a = L[x]
    if a != -1:
        m = AGG[a]
        mt = _time(ET, m)
        if mt < bt:
            best = m
            bt = mt
    b = R[x]
    if b != -1:
        m = AGG[b]
        if _time(ET, m) < bt:
            best = m
    AGG[x] = best


@njit(cache=True, inline="always")
def _rotate(L, R, P, AGG, ET, x):
    p = P[x]
    g = P[p]
    if L[p] == x:
        c = R[x]
        L[p] = c
        R[x] = p
    else:
        c = L[x]
        R[p] = c
        L[x] = p
    if c != -1:
        P[c] = p
    if g != -1:
        if L[g] == p:
            L[g] = x
        elif R[g] == p:
            R[g] = x
    P[x] = g
    P[p] = x
    _pull(L, R, AGG, ET, p)


@njit(cache=True)
def splay(L, R, P, REV, AGG, ET, STACK, x):
    """Make ``x`` the root of its splay tree (pending reversals pushed top-down first)."""
    n = 0
    y = x
    STACK[0] = y
    while not _is_root(L, R, P, y):
        y = P[y]
        n += 1
        STACK[n] = y
    while n >= 0:
        _push(L, R, REV, STACK[n])
        n -= 1
    while not _is_root(L, R, P, x):
        p = P[x]
        if not _is_root(L, R, P, p):
            g = P[p]
            if (L[g] == p) == (L[p] == x):
                _rotate(L, R, P, AGG, ET, p)    # zig-zig
            else:
                _rotate(L, R, P, AGG, ET, x)    # zig-zag
        _rotate(L, R, P, AGG, ET, x)
    _pull(L, R, AGG, ET, x)


@njit(cache=True)
def access(L, R, P, REV, AGG, ET, STACK, x):
    """Make the tree path root..``x`` preferred; ``x`` ends as its splay root, deepest node."""
    last = -1
    y = x
    while y != -1:
        splay(L, R, P, REV, AGG, ET, STACK, y)
        R[y] = last
        _pull(L, R, AGG, ET, y)
        last = y
        y = P[y]
    splay(L, R, P, REV, AGG, ET, STACK, x)


@njit(cache=True)
def make_root(L, R, P, REV, AGG, ET, STACK, x):
    """Reroot ``x``'s tree at ``x`` (``x`` ends as the splay root of the root path)."""
    access(L, R, P, REV, AGG, ET, STACK, x)
    REV[x] ^= 1


@njit(cache=True)
def uf_find(UF, x):
    """Root of ``x`` in the union-find of forest components (full path compression)."""
    root = x
    while UF[root] != root:
        root = UF[root]
    while UF[x] != root:
        nxt = UF[x]
        UF[x] = root
        x = nxt
    return root


@njit(cache=True)
def path_min(L, R, P, REV, AGG, ET, STACK, a, b):
    """Time of the oldest edge on the forest path between vertices ``a != b`` of one tree."""
    make_root(L, R, P, REV, AGG, ET, STACK, 2 * a)
    access(L, R, P, REV, AGG, ET, STACK, 2 * b)
    # the splay tree of 2b is now exactly the path a..b
    return _time(ET, AGG[2 * b])


@njit(cache=True)
def insert_edge(L, R, P, REV, AGG, ET, STACK, UF, FREE, st, u, v, t):
    """Add edge ``(u, v, t)`` (``t`` >= every time in the forest) to the maximum spanning forest.

    Different trees: link by a new edge node.  Same tree: the new edge closes
    a cycle; the oldest edge on it (the path u..v) leaves the forest if it is
    older than ``t`` and its node is reused for the new edge.  Returns 1 when
    the forest changed.
    """
    if u == v:
        return 0                         # self-loops only count for presence
    nu = 2 * u
    nv = 2 * v
    ru = uf_find(UF, u)
    rv = uf_find(UF, v)
    if ru != rv:
        # a new tree edge: take a free slot (live forest edges < vertices <= capacity)
        if st[FREE_TOP] > 0:
            st[FREE_TOP] -= 1
            k = FREE[st[FREE_TOP]]
        else:
            k = st[FRESH]
            st[FRESH] += 1
        f = 2 * k + 1
        ET[k] = t
        L[f] = -1
        R[f] = -1
        REV[f] = 0
        AGG[f] = f
        make_root(L, R, P, REV, AGG, ET, STACK, nu)
        P[nu] = f                        # u's tree hangs below the edge node,
        P[f] = nv                        # which hangs below v
        UF[ru] = rv
        return 1
    make_root(L, R, P, REV, AGG, ET, STACK, nu)
    access(L, R, P, REV, AGG, ET, STACK, nv)
    e = AGG[nv]
    if _time(ET, e) >= t:
        return 0                         # equal times: either edge is a maximum forest
    # cut e out of the path u..e..v: after splaying it, its left splay subtree
    # is the path part on u's side (rooted at u), its right the part on v's side
    splay(L, R, P, REV, AGG, ET, STACK, e)
    a = L[e]
    b = R[e]
    P[a] = -1
    P[b] = -1
    L[e] = -1
    R[e] = -1
    ET[e >> 1] = t
    AGG[e] = e
    # link again through e: u is the root of its part; splay it so that its
    # whole splay tree (the root path) hangs below e
    splay(L, R, P, REV, AGG, ET, STACK, nu)
    P[nu] = e
    P[e] = nv
    return 1


@njit(cache=True)
def answer(L, R, P, REV, AGG, ET, STACK, UF, SEEN, a, b, start, cache, q):
    """``Q(a, b)`` on the window starting at ``start`` (every applied edge is before its end).

    ``cache[q]`` holds a path minimum found earlier for this query: the
    bottleneck (largest path minimum over all paths) only grows as edges
    arrive, so a cached value at or after ``start`` already answers true.
    """
    if SEEN[a] < start or SEEN[b] < start:
        return False
    if a == b:
        return True
    if cache[q] >= start:
        return True
    if uf_find(UF, a) != uf_find(UF, b):
        return False
    m = path_min(L, R, P, REV, AGG, ET, STACK, a, b)
    cache[q] = m
    return m >= start


@njit(cache=True)
def msf_run(L, R, P, REV, AGG, ET, STACK, UF, FREE, SEEN, st, u, v, t, t0, r, s,
            first_window, upto, qa, qb, cache, out):
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
                out[row, q] = answer(L, R, P, REV, AGG, ET, STACK, UF, SEEN, qa[q], qb[q],
                                     start, cache, q)
            w += 1
        if i == n:
            break
        a = u[i]
        b = v[i]
        SEEN[a] = ti
        SEEN[b] = ti
        st[LAST_T] = ti
        insert_edge(L, R, P, REV, AGG, ET, STACK, UF, FREE, st, a, b, ti)
    return w


@njit(cache=True)
def forest_edges(L, R, P, REV, AGG, ET, STACK, UF, n_vertices):
    """The represented forest as (child vertex, parent vertex, time) rows, for tests:
    every tree rooted at its union-find root, edges read off by walking each
    vertex's path to that root (a slow check, O(n) link-cut operations)."""
    rows = np.empty((max(n_vertices - 1, 0), 3), dtype=np.int64)
    k = 0
    for x in range(n_vertices):
        root = uf_find(UF, x)
        if root == x:
            continue
        make_root(L, R, P, REV, AGG, ET, STACK, 2 * root)
        access(L, R, P, REV, AGG, ET, STACK, 2 * x)
        # the splay tree of 2x is the path root..x: its in-order predecessor
        # of 2x is the edge node to x's parent, before it the parent itself
        e = L[2 * x]
        _push(L, R, REV, e)
        while R[e] != -1:
            e = R[e]
            _push(L, R, REV, e)
        splay(L, R, P, REV, AGG, ET, STACK, e)
        p = L[e]
        _push(L, R, REV, p)
        while R[p] != -1:
            p = R[p]
            _push(L, R, REV, p)
        splay(L, R, P, REV, AGG, ET, STACK, p)
        rows[k, 0] = x
        rows[k, 1] = p >> 1
        rows[k, 2] = ET[e >> 1]
        k += 1
    return rows[:k]
