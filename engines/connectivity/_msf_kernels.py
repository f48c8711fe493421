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
new edge closes when it is older.  When the searches grow long (mean steps
per insert past ``SWITCH_STEPS``: long paths, as in a ring or a chain), the
forest moves into link-cut trees for good (``to_link_cut``; the ``lct_*``
functions below), O(log n) amortized per operation.  Only ``@njit`` functions
over numpy arrays and scalars live here.
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
MODE = 2         # 0: parent-pointer trees; 1: link-cut trees (after a switch, for good)
STEPS = 3        # ancestor-search steps of the inserts since the last check
COUNT = 4        # inserts since the last check
RESUME = 5       # where msf_run stopped to ask for the switch (-1: it did not)
FRESH = 6        # link-cut: edge slots ever used
FREE_TOP = 7     # link-cut: height of the free stack of edge slots
N_ST = 8
CHECK = 4096     # inserts between two looks at the mean search length
SWITCH_STEPS = 256   # mean steps per insert beyond which the trees go link-cut


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
                st[STEPS] += 1
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
                st[STEPS] += 1
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
def msf_run(V, st, LT, ET, u, v, t, t0, r, s, first_window, upto, qa, qb, cache, out):
    """Apply edges ``(u, v, t)`` in order, evaluating windows ``first_window..upto-1``.

    Window ``w`` (``[t0 + w*s, t0 + w*s + r)``) is answered before the first
    edge with ``t >= end(w)`` is inserted, so every edge in the forest then is
    before its end; windows left after the last edge are answered at the end.
    Row ``w - first_window`` of ``out`` receives the answers (every cell is
    written); a window that starts after the last applied edge is empty, its
    row all false (a gap costs one fill, not a loop per window).

    In parent-pointer mode, every ``CHECK`` inserts the mean ancestor-search
    length is looked at; past ``SWITCH_STEPS`` the call stops before edge
    ``st[RESUME]`` (windows up to the returned one answered) so that the caller
    moves the forest into link-cut trees (``to_link_cut``) and calls again.
    """
    w = first_window
    nq = qa.shape[0]
    n = u.shape[0]
    st[RESUME] = -1
    lct = st[MODE] == 1
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
            if lct:
                for q in range(nq):
                    out[row, q] = lct_answer(LT, ET, V, qa[q], qb[q], start, cache, q)
            else:
                for q in range(nq):
                    out[row, q] = answer(V, st, qa[q], qb[q], start, cache, q)
            w += 1
        if i == n:
            break
        a = u[i]
        b = v[i]
        if lct:
            lct_insert_edge(LT, ET, st, a, b, ti)
        else:
            if st[COUNT] >= CHECK:
                if st[STEPS] > SWITCH_STEPS * st[COUNT]:
                    st[RESUME] = i
                    return w
                st[COUNT] = 0
                st[STEPS] = 0
            st[COUNT] += 1
            insert_edge(V, st, a, b, ti)
        V[a, SEEN] = ti
        V[b, SEEN] = ti
        st[LAST_T] = ti
    return w

# -- the same forest in link-cut trees (the fallback for deep trees) ---------------
# Sleator and Tarjan, "A data structure for dynamic trees" (JCSS 26(3) 1983),
# splay-based (JACM 32(3) 1985): O(log n) amortized per operation where a
# parent-pointer walk is O(depth).  Node 2x is vertex x, node 2k+1 edge slot k;
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
    L, R, REV = LT[0], LT[1], LT[4]
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
