"""CNGen over integer arrays (paper Section 3.2, Figure 3.4), for ``streamspec.engines.kws.cngen``.

The same search as ``cngen.Cluster.expand`` (clusters in root ``nid`` order, breadth-first
within a cluster, one node added on the rightmost path, canonical ordered trees, the root
occurrence with the largest rooted code, the leaf and totality pruning), with nodes as
nids, labels as ranks of ``(edge_id, parent_plays_left)`` and subtree codes as integer
sequences: ``[nid, label, <child code>, label, <child code>, ..., END]``.  ``END`` is below
every label and nid, so comparing two sequences lexicographically compares the codes as
``cngen`` compares its nested tuples (a code with fewer children is smaller).

Output: the trees grown (one row each, the positions of a tree as a row of ``tnode``,
``tpar``, ``tlab``; ``tparent`` the tree it grew from, -1 for a root) and the CN rows in the
order CNGen finds them (``cn_tree``: the tree the CN grows from, ``cn_node``/``cn_ppos``/
``cn_lab``: its last position; ``cn_node`` -1 when the root tree itself is the CN).

Only ``@njit`` functions over numpy arrays and scalars live here.
"""
from __future__ import annotations

import numpy as np
from streamspec.spec._numba import njit     # caches in the user cache directory

END = -1


@njit(cache=True)
def _subtree_code(tnode, tpar, tlab, size, v, out, k):
    """Write the code of the subtree of position ``v`` (tree rooted at 0, children in
    position order) into ``out`` from ``k``; the new end.  A subtree is contiguous in
    pre-order."""
    stack = np.empty(size, np.int64)
    out[k] = tnode[v]
    k += 1
    stack[0] = v
    sp = 1
    for p in range(v + 1, size):
        par = tpar[p]
        while sp > 0 and stack[sp - 1] != par:
            out[k] = END
            k += 1
            sp -= 1
        if sp == 0:
            break
        out[k] = tlab[p]
        out[k + 1] = tnode[p]
        k += 2
        stack[sp] = p
        sp += 1
    while sp > 0:
        out[k] = END
        k += 1
        sp -= 1
    return k


@njit(cache=True)
def _cmp(a, la, b, lb):
    """Lexicographic comparison of ``a[:la]`` and ``b[:lb]``: -1, 0 or 1."""
    n = la if la < lb else lb
    for i in range(n):
        if a[i] != b[i]:
            return -1 if a[i] < b[i] else 1
    if la == lb:
        return 0
    return -1 if la < lb else 1


@njit(cache=True)
def _child_key_le(tnode, tpar, tlab, size, c1, c2, buf1, buf2):
    """Whether the key ``(label, code)`` of child ``c2`` is at most that of its left sibling ``c1``."""
    buf1[0] = tlab[c1]
    l1 = _subtree_code(tnode, tpar, tlab, size, c1, buf1, 1)
    buf2[0] = tlab[c2]
    l2 = _subtree_code(tnode, tpar, tlab, size, c2, buf2, 1)
    return _cmp(buf2, l2, buf1, l1) <= 0


@njit(cache=True)
def _canonical_above(tnode, tpar, tlab, size, path, depth, buf1, buf2):
    """In the tree of ``size`` positions whose last position was just added below
    ``path[depth]``: whether every path node above it keeps its children in
    non-increasing key order (only each node's last two children can be out of order)."""
    for i in range(depth - 1, -1, -1):
        p = path[i]
        c2 = path[i + 1]
        c1 = -1
        for c in range(p + 1, c2):
            if tpar[c] == p:
                c1 = c
        if c1 >= 0 and not _child_key_le(tnode, tpar, tlab, size, c1, c2, buf1, buf2):
            return False
    return True


@njit(cache=True)
def _rooted_code(tnode, tpar, tlab, flip, size, r):
    """Code of the unrooted tree rooted at position ``r`` (``cngen._code``): labels oriented
    away from ``r``, children sorted by non-increasing key."""
    order = np.empty(size, np.int64)
    up = np.full(size, -1, np.int64)
    uplab = np.zeros(size, np.int64)
    seen = np.zeros(size, np.bool_)
    order[0] = r
    seen[r] = True
    head, tail = 0, 1
    while head < tail:
        x = order[head]
        head += 1
        for c in range(1, size):
            if tpar[c] == x and not seen[c]:
                seen[c] = True
                up[c] = x
                uplab[c] = tlab[c]
                order[tail] = c
                tail += 1
        p = tpar[x]
        if p >= 0 and not seen[p]:
            seen[p] = True
            up[p] = x
            uplab[p] = flip[tlab[x]]
            order[tail] = p
            tail += 1
    codes = [np.empty(0, np.int64) for _ in range(size)]
    for i in range(size - 1, -1, -1):
        x = order[i]
        kids = [np.empty(0, np.int64) for _ in range(0)]
        for y in range(size):
            if up[y] == x:
                key = np.empty(len(codes[y]) + 1, np.int64)
                key[0] = uplab[y]
                key[1:] = codes[y]
                kids.append(key)
        # selection sort, largest first (at most t_max - 1 children)
        for a in range(len(kids)):
            best = a
            for b in range(a + 1, len(kids)):
                if _cmp(kids[b], len(kids[b]), kids[best], len(kids[best])) > 0:
                    best = b
            if best != a:
                kids[a], kids[best] = kids[best], kids[a]
        n = 2
        for key in kids:
            n += len(key)
        code = np.empty(n, np.int64)
        code[0] = tnode[x]
        k = 1
        for key in kids:
            code[k:k + len(key)] = key
            k += len(key)
        code[k] = END
        codes[x] = code
    return codes[r]


@njit(cache=True)
def _root_is_canonical(tnode, tpar, tlab, flip, size):
    """Of the positions holding the root's node, the root has the largest rooted code."""
    mine = _rooted_code(tnode, tpar, tlab, flip, size, 0)
    for v in range(1, size):
        if tnode[v] == tnode[0]:
            other = _rooted_code(tnode, tpar, tlab, flip, size, v)
            if _cmp(other, len(other), mine, len(mine)) > 0:
                return False
    return True


@njit(cache=True)
def _key_slot(keys, stamp, cluster, k0, k1, k2, k3, k4):
    """Where key ``(k0..k4)`` is in the open-addressing table ``keys`` (rows stamped with
    the cluster that wrote them; other clusters' rows count as empty), or the empty row
    where it goes: ``(row, found)``."""
    mask = keys.shape[0] - 1
    h = (k0 * 0x9E3779B1 + k1 * 0x85EBCA77 + k2 * 0xC2B2AE3D + k3 * 0x27D4EB2F + k4 * 0x165667B1) & mask
    h ^= (h >> 7) & mask
    while stamp[h] == cluster:
        if (keys[h, 0] == k0 and keys[h, 1] == k1 and keys[h, 2] == k2 and keys[h, 3] == k3
                and keys[h, 4] == k4):
            return h, True
        h = (h + 1) & mask
    return h, False


@njit(cache=True)
def _rehash(keys, stamp, slot, cluster):
    """The table twice as large, with the rows of ``cluster``."""
    cap = keys.shape[0] * 2
    nkeys = np.empty((cap, 5), np.int64)
    nstamp = np.full(cap, -1, np.int64)
    nslot = np.empty(cap, np.int64)
    for i in range(keys.shape[0]):
        if stamp[i] == cluster:
            h, _ = _key_slot(nkeys, nstamp, cluster, keys[i, 0], keys[i, 1], keys[i, 2], keys[i, 3],
                             keys[i, 4])
            nkeys[h] = keys[i]
            nstamp[h] = cluster
            nslot[h] = slot[i]
    return nkeys, nstamp, nslot


@njit(cache=True)
def _grow_rows(a, n):
    """``a`` with room for at least ``n`` rows (doubling)."""
    if n <= a.shape[0]:
        return a
    cap = a.shape[0] * 2
    while cap < n:
        cap *= 2
    b = np.empty((cap,) + a.shape[1:], a.dtype)
    b[:a.shape[0]] = a
    return b


@njit(cache=True)
def cngen_search(roots, node_kb, adj_ptr, adj_m, adj_kb, adj_lab, flip, full, rbit, t_max,
                 adj_new, node_new, node_dist, restricted, node_required, req_need):
    """CNGen from every root of ``roots`` (nids, in order; see the module docstring), and
    with ``restricted`` the search of a schema change (Section 4.4,
    ``streamspec.engines.kws._migration_grow``): only the trees that hold a new element
    (an adjacency entry with ``adj_new``: a new label or a new node; a root with
    ``node_new``) or can still take one, and only the CNs that hold one.  A tree without
    a new element can take one while a node of its rightmost path is within reach of an
    endpoint of a new edge: ``node_dist`` (hops in the relation graph, per nid) plus one
    for the new node itself fits in the room left under ``t_max`` (``migration.can_take``).
    With ``node_required`` (empty: none) only the CNs that hold one of those nodes, and only the trees that hold one or can
    still take one (``req_need``: per nid, the nodes a path from it needs to reach a required
    node, at least one; ``_migration_grow``'s searches at a node's first tuple).
    The tenth array returned, ``tflag``, tells which trees hold a new element (all of
    them when not ``restricted``).  The full mesh's build calls this too, unrestricted,
    so that a migration runs the machine code the build loaded."""
    tm = max(t_max, 1)
    cap = 1024
    tnode = np.empty((cap, tm), np.int32)
    tpar = np.empty((cap, tm), np.int8)
    tlab = np.empty((cap, tm), np.int32)
    tsize = np.empty(cap, np.int8)
    tparent = np.empty(cap, np.int32)
    tflag = np.empty(cap, np.bool_)
    treq = np.empty(cap, np.bool_)   # holds a required node (all trees when none is)
    use_req = node_required.shape[0] > 0
    ccap = 4096
    cn_tree = np.empty(ccap, np.int32)
    cn_node = np.empty(ccap, np.int32)
    cn_ppos = np.empty(ccap, np.int8)
    cn_lab = np.empty(ccap, np.int32)
    nt, nc = 0, 0
    # scratch for one tree and its codes
    wn = np.empty(tm + 1, np.int64)
    wp = np.empty(tm + 1, np.int64)
    wl = np.empty(tm + 1, np.int64)
    deg = np.empty(tm + 1, np.int64)
    path = np.empty(tm + 1, np.int64)
    onpath = np.zeros(tm + 1, np.bool_)
    buf1 = np.empty(4 * tm + 8, np.int64)
    buf2 = np.empty(4 * tm + 8, np.int64)
    # the last level only tries entries holding every missing keyword: per (node, missing
    # keywords), the adjacency entries that hold them, in adjacency order
    n_nodes = adj_ptr.shape[0] - 1
    masks = full + 1
    fin_ptr = np.zeros(n_nodes * masks + 1, np.int64)
    for nv in range(n_nodes):
        for mk in range(masks):
            c = 0
            for a in range(adj_ptr[nv], adj_ptr[nv + 1]):
                if adj_kb[a] & mk == mk:
                    c += 1
            fin_ptr[nv * masks + mk + 1] = fin_ptr[nv * masks + mk] + c
    fin = np.empty(fin_ptr[-1], np.int64)
    k = 0
    for nv in range(n_nodes):
        for mk in range(masks):
            for a in range(adj_ptr[nv], adj_ptr[nv + 1]):
                if adj_kb[a] & mk == mk:
                    fin[k] = a
                    k += 1
    # restricted: the same lists of the new entries only (a tree without a new element
    # can only become a new CN through one)
    fin_new_ptr = np.zeros(n_nodes * masks + 1 if restricted else 1, np.int64)
    fin_new = np.empty(0, np.int64)
    if restricted:
        for nv in range(n_nodes):
            for mk in range(masks):
                c = 0
                for ia in range(fin_ptr[nv * masks + mk], fin_ptr[nv * masks + mk + 1]):
                    if adj_new[fin[ia]]:
                        c += 1
                fin_new_ptr[nv * masks + mk + 1] = fin_new_ptr[nv * masks + mk] + c
        fin_new = np.empty(fin_new_ptr[-1], np.int64)
        k = 0
        for ia in range(fin.shape[0]):
            if adj_new[fin[ia]]:
                fin_new[k] = fin[ia]
                k += 1
    # restricted: the nodes with a new adjacency entry (the endpoints of a new edge)
    has_new = np.zeros(n_nodes, np.bool_)
    if restricted:
        for nv in range(n_nodes):
            for a in range(adj_ptr[nv], adj_ptr[nv + 1]):
                if adj_new[a]:
                    has_new[nv] = True
    small = masks <= 64   # the leaf test as one bitmap over s = union & kb
    all_entries = np.arange(adj_m.shape[0])
    # the last level's candidate lists, by key, per cluster: an open-addressing table
    # (numba's typed dict cost a third of a migration's search)
    hkeys = np.empty((4096, 5), np.int64)
    hstamp = np.full(4096, -1, np.int64)
    hslot = np.empty(4096, np.int64)
    cached = np.empty(1024, np.int64)
    c_start = np.empty(1024, np.int64)
    c_len = np.empty(1024, np.int64)
    for ri in range(roots.shape[0]):
        root = roots[ri]
        rreq = not use_req or node_required[root]
        if not rreq and req_need[root] > t_max - 1:
            continue  # no tree of this cluster can take a required node
        fresh = not restricted or node_new[root]
        if not fresh:
            if node_kb[root] == full:
                continue  # an old one-node CN
            if node_dist[root] + 1 > t_max - 1:
                continue  # no tree of this cluster can take a new element
        tnode = _grow_rows(tnode, nt + 1)
        tpar = _grow_rows(tpar, nt + 1)
        tlab = _grow_rows(tlab, nt + 1)
        tsize = _grow_rows(tsize, nt + 1)
        tparent = _grow_rows(tparent, nt + 1)
        tflag = _grow_rows(tflag, nt + 1)
        treq = _grow_rows(treq, nt + 1)
        tnode[nt, 0] = root
        tpar[nt, 0] = -1
        tlab[nt, 0] = -1
        tsize[nt] = 1
        tparent[nt] = -1
        tflag[nt] = fresh
        treq[nt] = rreq
        head = nt
        nt += 1
        # the last level's candidate lists of this cluster (the removed roots differ by cluster)
        n_keys = 0   # the keys of this cluster in the table (rows stamped ``ri``)
        n_cached = 0
        if node_kb[root] == full:  # the one-node CN
            if not rreq:
                continue
            cn_tree = _grow_rows(cn_tree, nc + 1)
            cn_node = _grow_rows(cn_node, nc + 1)
            cn_ppos = _grow_rows(cn_ppos, nc + 1)
            cn_lab = _grow_rows(cn_lab, nc + 1)
            cn_tree[nc] = head
            cn_node[nc] = -1
            cn_ppos[nc] = -1
            cn_lab[nc] = -1
            nc += 1
            continue
        while head < nt:  # breadth-first: the queue is the tree table from ``head`` on
            q = head
            head += 1
            size = np.int64(tsize[q])
            if size >= t_max:
                continue
            sflag = tflag[q]
            qreq = treq[q]
            last_level = size + 1 == t_max
            union = 0
            multi = 0
            repeated_root = False
            for i in range(size):
                wn[i] = tnode[q, i]
                wp[i] = tpar[q, i]
                wl[i] = tlab[q, i]
                deg[i] = 0
                kb = node_kb[wn[i]]
                multi |= union & kb
                union |= kb
                if i > 0 and wn[i] == root:
                    repeated_root = True
            for i in range(1, size):
                deg[i] += 1
                deg[wp[i]] += 1
            # the rightmost path: from the root, the last child each time
            npath = 1
            path[0] = 0
            while True:
                x = path[npath - 1]
                last = -1
                for c in range(x + 1, size):
                    if wp[c] == x:
                        last = c
                if last < 0:
                    break
                path[npath] = last
                npath += 1
            missing = full & ~union
            for depth in range(npath - 1, -1, -1):
                v = path[depth]
                nv = wn[v]
                if last_level and not sflag and not has_new[nv]:
                    continue  # only a new entry below v could make a new CN
                for i in range(size):
                    onpath[i] = False
                for i in range(depth + 1):
                    onpath[path[i]] = True
                # v's last child (the canonical order at v) and whether some path node
                # above v has two children or more (the order above v can break)
                lastc = -1
                for c in range(v + 1, size):
                    if wp[c] == v:
                        lastc = c
                above = False
                for i in range(depth):
                    p = path[i]
                    kids = 0
                    for c in range(p + 1, size):
                        if wp[c] == p:
                            kids += 1
                    if kids > 1:
                        above = True
                # bad[s] (bit s): adding a node whose keywords within the union are s leaves
                # some leaf without a keyword of its own (bad_cn: the CN's leaves; bad_grow:
                # the leaves off the path, which can no longer change)
                bad_cn = 0
                bad_grow = 0
                if small:
                    for w in range(size):
                        u = node_kb[wn[w]] & ~multi
                        cn_leaf = deg[w] + (1 if w == v else 0) <= 1
                        grow_leaf = deg[w] <= 1 and not onpath[w]
                        if cn_leaf or grow_leaf:
                            rest = union & ~u   # every s within the union holding all of u
                            sb = rest
                            while True:
                                if cn_leaf:
                                    bad_cn |= np.int64(1) << (sb | u)
                                if grow_leaf:
                                    bad_grow |= np.int64(1) << (sb | u)
                                if sb == 0:
                                    break
                                sb = (sb - 1) & rest
                lastlab = wl[lastc] if lastc >= 0 else -2
                lastnid = wn[lastc] if lastc >= 0 else -2
                if last_level and not sflag:
                    # the few new entries below v, each checked (the cache's keys rarely recur here)
                    lo, hi, table = fin_new_ptr[nv * masks + missing], fin_new_ptr[nv * masks + missing + 1], fin_new
                    checked = False
                elif last_level and small:
                    # the candidates passing every test that depends on the tree only through
                    # (nv, union, bad_cn, v's last child): made once per cluster and key
                    h, found = _key_slot(hkeys, hstamp, ri, nv, union, bad_cn, lastlab, lastnid)
                    if found:
                        slot = hslot[h]
                    else:
                        slot = n_keys
                        n_keys += 1
                        hkeys[h, 0] = nv
                        hkeys[h, 1] = union
                        hkeys[h, 2] = bad_cn
                        hkeys[h, 3] = lastlab
                        hkeys[h, 4] = lastnid
                        hstamp[h] = ri
                        hslot[h] = slot
                        if 2 * n_keys > hkeys.shape[0]:  # keep the table at most half full
                            hkeys, hstamp, hslot = _rehash(hkeys, hstamp, hslot, ri)
                        c_start = _grow_rows(c_start, slot + 1)
                        c_len = _grow_rows(c_len, slot + 1)
                        c_start[slot] = n_cached
                        for ia in range(fin_ptr[nv * masks + missing], fin_ptr[nv * masks + missing + 1]):
                            a = fin[ia]
                            nm = adj_m[a]
                            if (adj_kb[a] & rbit and nm < root) or (bad_cn >> (union & adj_kb[a])) & 1:
                                continue
                            lab = adj_lab[a]
                            if lastc >= 0 and (lab > lastlab or (lab == lastlab and nm > lastnid)):
                                continue
                            if n_cached >= cached.shape[0]:
                                cached = _grow_rows(cached, n_cached + 1)
                            cached[n_cached] = a
                            n_cached += 1
                        c_len[slot] = n_cached - c_start[slot]
                    lo, hi, table = c_start[slot], c_start[slot] + c_len[slot], cached
                    checked = True
                elif last_level:
                    lo, hi, table = fin_ptr[nv * masks + missing], fin_ptr[nv * masks + missing + 1], fin
                    checked = False
                else:
                    lo, hi, table = adj_ptr[nv], adj_ptr[nv + 1], all_entries
                    checked = False
                for ia in range(lo, hi):
                    a = table[ia]
                    nm = adj_m[a]
                    kb = adj_kb[a]
                    lab = adj_lab[a]
                    total = (union | kb) == full
                    rq = qreq or node_required[nm]
                    if not rq:
                        if total:
                            continue  # a CN without a required node
                        # kept while a node of its rightmost path can still reach one
                        room = t_max - size - 1
                        reach = req_need[nm] <= room
                        for i in range(depth + 1):
                            if req_need[wn[path[i]]] <= room:
                                reach = True
                        if not reach:
                            continue
                    new_elem = sflag or adj_new[a]
                    if not new_elem and not checked:
                        if total:
                            continue  # an old CN
                        # a growth without a new element: kept while it can still take one
                        room = t_max - size - 1
                        reach = node_dist[nm] + 1 <= room
                        for i in range(depth + 1):
                            if node_dist[wn[path[i]]] + 1 <= room:
                                reach = True
                        if not reach:
                            continue
                    if not checked:
                        if kb & rbit and nm < root:
                            continue  # removed with an earlier root's cluster
                        if not total and last_level:
                            continue
                        if lastc >= 0:  # (label, nm) <= (label, nid) of v's last child
                            if lab > lastlab or (lab == lastlab and nm > lastnid):
                                continue
                        s = union & kb
                        if small:
                            if ((bad_cn if total else bad_grow) >> s) & 1:
                                continue
                        else:
                            ok = True
                            for w in range(size):
                                if total:  # every leaf of the CN keeps a keyword of its own
                                    leaf = deg[w] + (1 if w == v else 0) <= 1
                                else:      # the leaves off the path can no longer change
                                    leaf = deg[w] <= 1 and not onpath[w]
                                if leaf and (node_kb[wn[w]] & ~multi) & ~s == 0:
                                    ok = False
                                    break
                            if not ok:
                                continue
                    wn[size] = nm
                    wp[size] = v
                    wl[size] = lab
                    if above:
                        keep = path[depth + 1]  # the path to the new leaf: path[:depth + 1] + [size]
                        path[depth + 1] = size
                        good = _canonical_above(wn, wp, wl, size + 1, path, depth + 1, buf1, buf2)
                        path[depth + 1] = keep
                        if not good:
                            continue
                    if total:
                        if (repeated_root or nm == root) and not _root_is_canonical(wn, wp, wl, flip, size + 1):
                            continue
                        if nc >= cn_tree.shape[0]:
                            cn_tree = _grow_rows(cn_tree, nc + 1)
                            cn_node = _grow_rows(cn_node, nc + 1)
                            cn_ppos = _grow_rows(cn_ppos, nc + 1)
                            cn_lab = _grow_rows(cn_lab, nc + 1)
                        cn_tree[nc] = q
                        cn_node[nc] = nm
                        cn_ppos[nc] = v
                        cn_lab[nc] = lab
                        nc += 1
                        continue
                    if nt >= tsize.shape[0]:
                        tnode = _grow_rows(tnode, nt + 1)
                        tpar = _grow_rows(tpar, nt + 1)
                        tlab = _grow_rows(tlab, nt + 1)
                        tsize = _grow_rows(tsize, nt + 1)
                        tparent = _grow_rows(tparent, nt + 1)
                        tflag = _grow_rows(tflag, nt + 1)
                        treq = _grow_rows(treq, nt + 1)
                    for i in range(size + 1):
                        tnode[nt, i] = wn[i]
                        tpar[nt, i] = wp[i]
                        tlab[nt, i] = wl[i]
                    tsize[nt] = size + 1
                    tparent[nt] = q
                    tflag[nt] = new_elem
                    treq[nt] = rq
                    nt += 1
    return (tnode[:nt], tpar[:nt], tlab[:nt], tsize[:nt], tparent[:nt],
            cn_tree[:nc], cn_node[:nc], cn_ppos[:nc], cn_lab[:nc], tflag[:nt])
