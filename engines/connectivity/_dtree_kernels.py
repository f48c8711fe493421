"""Numba kernels of the D-Tree engine (``streamspec.engines.connectivity.dtree``).

D-Tree: Chen, Lachish, Helmer, Boehlen, "Dynamic Spanning Trees for
Connectivity Queries on Fully-dynamic Undirected Graphs", PVLDB 15(11), 2022.  The module docstring of ``dtree.py`` maps the functions here to the
paper's operations.  Only ``@njit`` functions over numpy arrays and scalars.

All structures are flat int64 arrays bundled in one tuple ``T`` (see
``TREE_ARRAYS`` in ``dtree.py``):

- per vertex: ``parent`` (-1 = root), ``size`` (subtree size), the children
  as a doubly linked list (``child_head``, ``sib_next``, ``sib_prev``),
  ``tree_eid`` (the edge linking the vertex to its parent), ``nt_head`` (first
  non-tree half-edge of the vertex);
- per edge id ``e`` (a pool slot): endpoints ``eu``, ``ev``, ``ekind``
  (FREE, TREE, NONTREE, LOOP); its non-tree half-edges ``2e`` (owned by
  ``eu``) and ``2e+1`` (owned by ``ev``) in doubly linked lists
  (``he_next``, ``he_prev``).

Every streamed edge has its own id, so parallel edges are separate edges of the
multigraph: one copy may be the tree edge while the others are non-tree edges
and serve as its replacement.
"""
from __future__ import annotations

from streamspec.spec._numba import njit

FREE, TREE, NONTREE, LOOP = 0, 1, 2, 3


# -- intrusive doubly linked lists (children of a vertex, non-tree edges of a vertex) --
@njit(cache=True)
def _list_push(head, nxt, prv, x, owner):
    prv[x] = -1
    first = head[owner]
    nxt[x] = first
    if first != -1:
        prv[first] = x
    head[owner] = x


@njit(cache=True)
def _list_remove(head, nxt, prv, x, owner):
    nx = nxt[x]
    pv = prv[x]
    if pv != -1:
        nxt[pv] = nx
    else:
        head[owner] = nx
    if nx != -1:
        prv[nx] = pv


@njit(cache=True)
def _add_child(T, c, p):
    T[0][c] = p
    _list_push(T[2], T[3], T[4], c, p)


@njit(cache=True)
def _cut_child(T, c):
    parent, sib_next = T[0], T[3]
    p = parent[c]
    if p == -1:
        return
    _list_remove(T[2], sib_next, T[4], c, p)
    parent[c] = -1
    sib_next[c] = -1
    T[4][c] = -1


# -- non-tree edges ---------------------------------------------------------------
@njit(cache=True)
def _nt_push(T, h, owner):
    _list_push(T[6], T[10], T[11], h, owner)


@njit(cache=True)
def _nt_pop(T, h, owner):
    _list_remove(T[6], T[10], T[11], h, owner)


@njit(cache=True)
def nt_add(T, e):
    """Store edge ``e`` as a non-tree edge in both endpoints' adjacency lists."""
    eu, ev, ekind = T[7], T[8], T[9]
    ekind[e] = NONTREE
    _nt_push(T, 2 * e, eu[e])
    _nt_push(T, 2 * e + 1, ev[e])


@njit(cache=True)
def nt_remove(T, e):
    eu, ev = T[7], T[8]
    _nt_pop(T, 2 * e, eu[e])
    _nt_pop(T, 2 * e + 1, ev[e])


# -- spanning-tree primitives (reroot, link, unlink, insertion, deletion) -----------------------------------
@njit(cache=True)
def find_root(T, x):
    parent = T[0]
    while parent[x] != -1:
        x = parent[x]
    return x


@njit(cache=True)
def depth_and_root(T, x):
    parent = T[0]
    d = 0
    while parent[x] != -1:
        x = parent[x]
        d += 1
    return d, x


@njit(cache=True)
def reroot(T, v):
    """Make ``v`` the root of its tree: reverse the parent pointers on the path
    to the old root (carrying each edge id along) and fix the subtree sizes."""
    parent, size, tree_eid = T[0], T[1], T[5]
    cur = parent[v]
    if cur == -1:
        return
    carry = tree_eid[v]
    _cut_child(T, v)
    tree_eid[v] = -1
    ch = v
    while cur != -1:
        g = parent[cur]
        nxt = tree_eid[cur]
        _cut_child(T, cur)
        _add_child(T, cur, ch)
        tree_eid[cur] = carry
        carry = nxt
        ch = cur
        cur = g
    # ch is the old root: walk back down to v, old sizes become complements
    while parent[ch] != -1:
        p = parent[ch]
        size[ch] -= size[p]
        size[p] += size[ch]
        ch = p


@njit(cache=True)
def find(T, x):
    """Root of ``x``; if the root's child on the path holds more than half of the
    tree, that child becomes the root (the paper's query-time rebalancing
    towards the centroid)."""
    parent, size = T[0], T[1]
    last = -1
    while parent[x] != -1:
        last = x
        x = parent[x]
    if last != -1 and size[last] > size[x] // 2:
        reroot(T, last)
        return last
    return x


@njit(cache=True)
def link(T, v, rv, w, e):
    """Hang the tree rooted at ``w`` under ``v`` (root ``rv``) by edge ``e``;
    reroot at the deepest vertex of the path holding more than half of the new
    tree, which keeps the root near the centroid."""
    parent, size, tree_eid, ekind = T[0], T[1], T[5], T[9]
    _add_child(T, w, v)
    tree_eid[w] = e
    ekind[e] = TREE
    total = size[rv] + size[w]
    m = -1
    i = v
    while i != -1:
        size[i] += size[w]
        if m == -1 and size[i] > total // 2:
            m = i
        i = parent[i]
    if m != -1 and m != rv:
        reroot(T, m)


@njit(cache=True)
def unlink(T, v):
    """Cut ``v`` from its parent; returns the root of the remaining tree."""
    parent, size, tree_eid = T[0], T[1], T[5]
    ci = v
    i = parent[v]
    while i != -1:
        size[i] -= size[v]
        ci = i
        i = parent[i]
    _cut_child(T, v)
    tree_eid[v] = -1
    return ci


@njit(cache=True)
def insert_tree_edge(T, v, rv, w, rw, e):
    """Join two trees by edge ``e = (v, w)``: the smaller one is rerooted at its
    endpoint and linked under the other endpoint."""
    size = T[1]
    if size[rv] < size[rw]:
        v, w = w, v
        rv, rw = rw, rv
    reroot(T, w)
    link(T, v, rv, w, e)


@njit(cache=True)
def insert_nontree_edge(T, u, v, e):
    """``u`` and ``v`` are already connected.  If their depths differ by 2 or
    more, the new edge becomes a tree edge and the tree edge above the deep
    side's ancestor at depth ``depth(v) + 2`` becomes a non-tree edge, which
    makes the deep side shallower; otherwise ``e`` is a non-tree edge."""
    parent, tree_eid = T[0], T[5]
    du, r = depth_and_root(T, u)
    dv, r = depth_and_root(T, v)
    if du < dv:
        u, v = v, u
        du, dv = dv, du
    delta = du - dv
    if delta < 2:
        nt_add(T, e)
        return
    i = u
    for _ in range(delta - 2):
        i = parent[i]
    f = tree_eid[i]
    unlink(T, i)
    nt_add(T, f)
    reroot(T, u)
    link(T, v, r, u, e)


@njit(cache=True)
def delete_tree_edge(T, c, queue):
    """Delete the tree edge from ``c`` to its parent.  Search the smaller of the
    two trees breadth-first for a non-tree edge into the larger one; if found it
    becomes the new tree edge, else the smaller tree is rerooted near its
    centroid."""
    size, child_head, sib_next, eu, ev, he_next = T[1], T[2], T[3], T[7], T[8], T[10]
    nt_head = T[6]
    rs = unlink(T, c)
    rl = c
    if size[rs] > size[rl]:
        rs, rl = rl, rs
    queue[0] = rs
    qh, qt = 0, 1
    m = -1
    half = size[rs] // 2
    while qh < qt:
        a = queue[qh]
        qh += 1
        h = nt_head[a]
        while h != -1:
            f = h >> 1
            b = ev[f] if (h & 1) == 0 else eu[f]
            if find_root(T, b) == rl:
                nt_remove(T, f)
                insert_tree_edge(T, b, rl, a, rs, f)
                return
            h = he_next[h]
        if size[a] > half:
            m = a
        ch = child_head[a]
        while ch != -1:
            queue[qt] = ch
            qt += 1
            ch = sib_next[ch]
    if m != -1 and m != rs:
        reroot(T, m)


@njit(cache=True)
def insert_edge(T, e, u, v):
    """Insert the streamed edge ``e = (u, v)``."""
    eu, ev, ekind = T[7], T[8], T[9]
    eu[e] = u
    ev[e] = v
    if u == v:
        ekind[e] = LOOP   # a self-loop only makes its vertex present
        return
    ru = find(T, u)
    rv = find(T, v)
    if ru != rv:
        ru = find_root(T, u)   # find(v) may have rerooted u's tree
    if ru != rv:
        insert_tree_edge(T, u, ru, v, rv, e)
    else:
        insert_nontree_edge(T, u, v, e)


@njit(cache=True)
def delete_edge(T, e, queue):
    """Delete the streamed edge ``e`` (tree, non-tree or self-loop)."""
    parent, tree_eid, eu, ev, ekind = T[0], T[5], T[7], T[8], T[9]
    kind = ekind[e]
    if kind == NONTREE:
        nt_remove(T, e)
    elif kind == TREE:
        u = eu[e]
        c = u if (parent[u] == ev[e] and tree_eid[u] == e) else ev[e]
        delete_tree_edge(T, c, queue)
    ekind[e] = FREE


@njit(cache=True)
def connected(T, deg, a, b):
    """``Q(a, b)``: both present and the same root (with rebalancing finds)."""
    if deg[a] <= 0 or deg[b] <= 0:
        return False
    if a == b:
        return True
    ra = find(T, a)
    rb = find(T, b)
    if ra != rb:
        ra = find_root(T, a)
    return ra == rb


@njit(cache=True)
def expire(T, deg, fifo_eid, fifo_t, head, tail, start, free_ids, n_free, queue):
    """Delete the FIFO's edges older than ``start`` one by one, oldest first (the
    FDC driver of the BIC paper); returns ``(head, n_free)``."""
    eu, ev = T[7], T[8]
    while head < tail and fifo_t[head] < start:
        e = fifo_eid[head]
        delete_edge(T, e, queue)
        deg[eu[e]] -= 1
        deg[ev[e]] -= 1
        free_ids[n_free] = e
        n_free += 1
        head += 1
    return head, n_free


@njit(cache=True)
def dtree_run(T, deg, fifo_eid, fifo_t, head, tail, free_ids, n_free, queue,
              u, v, t, t0, r, s, first_window, upto, qa, qb, out):
    """Apply edges ``(u, v, t)`` in order, evaluating windows ``first_window..upto-1``
    (window ``w`` before the first edge with ``t >= end(w)``, the rest after the
    last edge) into rows ``w - first_window`` of ``out`` (all false on entry).
    The FIFO needs room for ``len(u)`` edges after ``tail`` and the pool
    ``len(u)`` free ids.  Returns ``(head, tail, n_free)``."""
    w = first_window
    nq = qa.shape[0]
    for i in range(u.shape[0]):
        ti = t[i]
        while w < upto and ti >= t0 + w * s + r:
            head, n_free = expire(T, deg, fifo_eid, fifo_t, head, tail, t0 + w * s,
                                  free_ids, n_free, queue)
            if head == tail:
                # the graph is empty: every window ending by ti is empty (rows stay false)
                w = min(upto, (ti - t0 - r) // s + 1)
                continue
            row = w - first_window
            for q in range(nq):
                out[row, q] = connected(T, deg, qa[q], qb[q])
            w += 1
        n_free -= 1
        e = free_ids[n_free]
        fifo_eid[tail] = e
        fifo_t[tail] = ti
        tail += 1
        deg[u[i]] += 1
        deg[v[i]] += 1
        insert_edge(T, e, u[i], v[i])
    while w < upto:
        head, n_free = expire(T, deg, fifo_eid, fifo_t, head, tail, t0 + w * s,
                              free_ids, n_free, queue)
        if head == tail:
            break   # empty graph: the remaining rows stay false
        row = w - first_window
        for q in range(nq):
            out[row, q] = connected(T, deg, qa[q], qb[q])
        w += 1
    return head, tail, n_free
