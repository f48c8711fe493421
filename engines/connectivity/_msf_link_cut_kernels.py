"""Link-cut trees of the MSF engine's fallback (``streamspec.engines.connectivity.msf``).

Sleator and Tarjan, "A data structure for dynamic trees" (JCSS 26(3) 1983),
splay-based (JACM 32(3) 1985): the same forest as ``_msf_kernels``' parent
pointers, O(log n) amortized per operation whatever its shape.  The engine
moves its forest here, for good, when the parent-pointer searches grow long
(``_msf_kernels.SWITCH_STEPS``).  Only ``@njit`` functions over numpy arrays
and scalars live here.
"""
from __future__ import annotations

import numpy as np
from streamspec.spec._numba import njit

from streamspec.engines.connectivity._msf_layout import FREE_TOP, FRESH, INF, PARENT, PTIME, SEEN

# Node 2x is vertex x, node 2k+1 edge slot k;
# LT rows (L, R, P, AGG, REV, STACK, UF, FREE) of one int32 array (one argument
# to dispatch, not eight: the call of a window's trigger pays per argument): splay children and
# parent (a splay root's P is its path-parent), the node of minimum time in
# the splay subtree, the pending reversal, a push-down scratch, the union-find
# of trees (components only merge), the free edge slots; ET[k] the time of
# edge slot k.  Vertex records V keep presence (SEEN).
@njit(cache=True, inline="always")
def _time(ET, n):
    return ET[n >> 1] if n & 1 else INF


@njit(cache=True, inline="always")
def _is_root(L, R, P, x):
    p = P[x]
    return p == -1 or (L[p] != x and R[p] != x)


@njit(cache=True, inline="always")
def _push(L, R, REV, x):
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
    if a != -1 and _time(ET, AGG[a]) < bt:
        best = AGG[a]
        bt = _time(ET, best)
    b = R[x]
    if b != -1 and _time(ET, AGG[b]) < bt:
        best = AGG[b]
    AGG[x] = best


@njit(cache=True)
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
def lct_splay(LT, ET, x):
    """Make ``x`` the root of its splay tree (pending reversals pushed top-down first)."""
    L, R, P, AGG, REV, STACK = LT[0], LT[1], LT[2], LT[3], LT[4], LT[5]
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
            if (L[P[p]] == p) == (L[p] == x):
                _rotate(L, R, P, AGG, ET, p)    # zig-zig
            else:
                _rotate(L, R, P, AGG, ET, x)    # zig-zag
        _rotate(L, R, P, AGG, ET, x)
    _pull(L, R, AGG, ET, x)


@njit(cache=True)
def lct_access(LT, ET, x):
    """Make the path root..``x`` preferred; ``x`` ends as its splay root (deepest node)."""
    L, R, AGG, P = LT[0], LT[1], LT[3], LT[2]
    last = -1
    y = x
    while y != -1:
        lct_splay(LT, ET, y)
        R[y] = last
        _pull(L, R, AGG, ET, y)
        last = y
        y = P[y]
    lct_splay(LT, ET, x)


@njit(cache=True)
def lct_make_root(LT, ET, x):
    lct_access(LT, ET, x)
    LT[4][x] ^= 1


@njit(cache=True)
def uf_find(UF, x):
    root = x
    while UF[root] != root:
        root = UF[root]
    while UF[x] != root:
        nxt = UF[x]
        UF[x] = root
        x = nxt
    return root


@njit(cache=True)
def lct_insert_edge(LT, ET, st, u, v, t):
    """``insert_edge`` on the link-cut trees: link different trees by a new edge
    node; inside a tree, cut the oldest edge node of the path u..v (splayed, its
    two splay subtrees are the two sides) and reuse it for the new edge."""
    if u == v:
        return
    L, R, P, AGG, REV, UF, FREE = LT[0], LT[1], LT[2], LT[3], LT[4], LT[6], LT[7]
    nu = 2 * u
    nv = 2 * v
    ru = uf_find(UF, u)
    rv = uf_find(UF, v)
    if ru != rv:
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
        lct_make_root(LT, ET, nu)
        P[nu] = f
        P[f] = nv
        UF[ru] = rv
        return
    lct_make_root(LT, ET, nu)
    lct_access(LT, ET, nv)
    e = AGG[nv]                          # the splay tree of nv is the path u..v
    if _time(ET, e) >= t:
        return
    lct_splay(LT, ET, e)
    P[L[e]] = -1
    P[R[e]] = -1
    L[e] = -1
    R[e] = -1
    ET[e >> 1] = t
    AGG[e] = e
    lct_splay(LT, ET, nu)                # u roots its part: hang its root path below e
    P[nu] = e
    P[e] = nv


@njit(cache=True)
def lct_answer(LT, ET, V, a, b, start, cache, q):
    """``answer`` on the link-cut trees (path minimum by make_root(a), access(b))."""
    if V[a, SEEN] < start or V[b, SEEN] < start:
        return False
    if a == b or cache[q] >= start:
        return True
    if uf_find(LT[6], a) != uf_find(LT[6], b):
        return False
    lct_make_root(LT, ET, 2 * a)
    lct_access(LT, ET, 2 * b)
    m = _time(ET, LT[3][2 * b])
    cache[q] = m
    return m >= start


@njit(cache=True)
def to_link_cut(V, LT, ET, st, n):
    """The parent-pointer forest of vertices ``0..n-1`` as link-cut trees: every
    preferred path a single node (a valid representation: each node's path-parent
    is its tree parent), vertex x's parent edge in slot x, roots' slots free."""
    L, R, P, AGG, REV, STACK, UF, FREE = LT[0], LT[1], LT[2], LT[3], LT[4], LT[5], LT[6], LT[7]
    free = 0
    for x in range(n):
        for node in (2 * x, 2 * x + 1):
            L[node] = -1
            R[node] = -1
            P[node] = -1
            AGG[node] = node
            REV[node] = 0
        UF[x] = -1
        p = V[x, PARENT]
        if p == -1:
            ET[x] = INF
            FREE[free] = x
            free += 1
        else:
            ET[x] = V[x, PTIME]
            P[2 * x] = 2 * x + 1
            P[2 * x + 1] = 2 * p
    for x in range(n):                   # union-find: every vertex points at its root
        k = 0
        y = x
        while UF[y] == -1 and V[y, PARENT] != -1:
            STACK[k] = y
            k += 1
            y = V[y, PARENT]
        root = y if UF[y] == -1 else UF[y]
        UF[y] = root
        for i in range(k):
            UF[STACK[i]] = root
    st[FREE_TOP] = free
    st[FRESH] = n


@njit(cache=True)
def lct_edge_ends(LT, ET, e, n):
    """The two vertices next to edge node ``e`` (tests; O(n) accesses): rooted at
    ``e``, vertex x is a neighbour iff the path e..x holds just e and x."""
    L, R = LT[0], LT[1]
    ends = np.full(2, -1, dtype=np.int64)
    found = 0
    for x in range(n):
        lct_make_root(LT, ET, e)
        lct_access(LT, ET, 2 * x)
        c = L[2 * x]
        if c == e and L[e] == -1 and R[e] == -1:
            ends[found] = x
            found += 1
            if found == 2:
                break
    return ends
