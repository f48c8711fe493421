"""Candidate network generation, CNGen (paper Section 3.2, Figure 3.4).

The expanded schema has a node ``R{K}`` for every relation ``R`` and every
subset ``K`` of the query keywords (``K`` as a bitmask); a tuple belongs to
exactly the node of its relation and keyword set.  Two nodes are adjacent by
a *label* ``(edge_id, parent_plays_left)`` for every join edge between their
relations (a self join gives both orientations).

A candidate network (CN) is a labelled tree of expanded-schema nodes with at
most ``t_max`` nodes, total (the union of its keyword sets is every keyword)
and minimal (every leaf, or the single node, holds a keyword no other node
holds).  Nodes may repeat; MTJNTs of the data are exactly the embeddings of
CNs with distinct tuples, each MTJNT in one CN once (a CN has no non-trivial
automorphism: it would map a leaf onto another leaf with the same keywords).

CNGen, as in the paper: ``InitCNGen`` takes the nodes holding the root
keyword in ``nid`` order, grows every tree from each and then removes it from
the expanded schema (no isomorphic duplicates across roots).  Within one
root, trees grow only on the rightmost path (pre-order generation).  Where
the paper omits the details (the third kind of duplicate, repeated nodes),
we use canonical ordered trees: children ordered by non-increasing
``(label, subtree code)``; removing the rightmost leaf of a canonical tree
leaves a canonical tree, so growing canonical trees on the rightmost path
generates every rooted tree exactly once.  A CN in which the root node
occurs several times is output only from the occurrence whose rooted code is
largest.  Pruning (line 10): a tree is kept only if it has fewer than
``t_max`` nodes and every leaf off the rightmost path holds a unique keyword;
also a total tree that is not a CN (no expansion of it can be minimal).

Cost: every check is incremental (``_grow``: subtree codes on the rightmost
path, keyword unions and the keywords held twice as bitmasks, leaf
uniqueness as a bitmap over kbits), and the last level only tries nodes that
hold every missing keyword, so the work is about linear in the number of
CNs (5.4M CNs at |K| = 5, T_max = 4 on the 15-relation benchmark schema).
The last level's candidate lists are shared by the trees whose keyword
state and last child agree (``Cluster._last_level``): most trees append
their CNs' last positions by one list extension.  The output is the same
tuple as the plain algorithm's, in the same order
(``streamspec.reference.kws_cngen`` keeps the algorithm before that cache).

``cngen`` (and the full mesh, ``streamspec.engines.kws.cn_joins``) run the same search
compiled over integer arrays (``compiled_cngen``, ``_cngen_kernels``: 1.7-1.8 CPU-s for the
5.37M CNs at |K| = 5 against about 8 s here); ``Cluster`` stays the partial mesh's TreeGen
and the plain migration search (``migration.grow_full_mesh``, Section 4.4), one expansion at
a time; the full mesh's migrations run the compiled search restricted to the new element
(``_cngen_kernels.cngen_search``).

Node order ``nid`` (Section 3.3, selective sources first): more keywords
first, then the relation's position in the schema, then the bitmask.  The
root keyword is the first query keyword unless ``root_keyword`` names
another (the rarest one is the best choice).

A CN is returned as a tuple of positions in pre-order (= the order of the
left-deep operator tree): ``(relation, kbits, parent_position, label)``, the
root with parent ``-1`` and label ``None``.
"""
from __future__ import annotations

import functools
import gc
from collections import deque
from contextlib import contextmanager
from typing import NamedTuple

import numpy as np


def expanded_nodes(schema, n_keywords: int) -> list[tuple[str, int]]:
    """Expanded-schema nodes ``(relation, kbits)`` in ``nid`` order."""
    sid = {r.name: i for i, r in enumerate(schema.relations)}
    nodes = [(r.name, k) for r in schema.relations for k in range(1 << n_keywords)]
    return sorted(nodes, key=lambda n: (-bin(n[1]).count("1"), sid[n[0]], n[1]))


def labels_between(schema, parent_rel: str, child_rel: str) -> list[tuple[str, bool]]:
    """Labels ``(edge_id, parent_plays_left)`` joining a parent and a child relation."""
    out = []
    for e in schema.edges:
        if e.left == parent_rel and e.right == child_rel:
            out.append((e.id, True))
        if e.right == parent_rel and e.left == child_rel:
            out.append((e.id, False))
    return out


def _code(tree, nid, v, came_from=None) -> tuple:
    """Rooted code of the (unrooted) tree at position ``v``, away from ``came_from``.

    Labels are oriented from ``v`` towards each neighbour."""
    kids = []
    for c, (_, _, parent, label) in enumerate(tree):
        if parent == v and c != came_from:
            kids.append(((label[0], label[1]), _code(tree, nid, c, v)))
    p, label = tree[v][2], tree[v][3]
    if p >= 0 and p != came_from:
        kids.append(((label[0], not label[1]), _code(tree, nid, p, v)))
    kids.sort(reverse=True)
    return (nid[tree[v][:2]], tuple(kids))


def canonical_form(tree, nid) -> tuple:
    """Isomorphism-invariant code of a CN: the largest rooted code over all positions."""
    return max(_code(tree, nid, v) for v in range(len(tree)))


def _leaves_ok(tree, full: int) -> bool:
    """Every leaf (degree <= 1) holds a keyword no other node holds."""
    degree = [0] * len(tree)
    for c in range(1, len(tree)):
        degree[c] += 1
        degree[tree[c][2]] += 1
    for v, d in enumerate(tree):
        if degree[v] <= 1:
            others = 0
            for u, n in enumerate(tree):
                if u != v:
                    others |= n[1]
            if d[1] & ~others & full == 0:
                return False
    return True


def is_cn(tree, full: int) -> bool:
    """Total and minimal."""
    union = 0
    for n in tree:
        union |= n[1]
    return union == full and _leaves_ok(tree, full)


@functools.lru_cache(maxsize=8)
def expanded_schema(schema, n_keywords: int, t_max: int, root_keyword: int = 0) -> tuple:
    """``(nodes, nid, adjacency, root bit)`` of the expanded schema, shared by the clusters.

    ``adjacency[n]``: for every node ``m`` adjacent to node ``n`` by a label,
    in (m, label) order, ``(nid of m, kbits of m, the code key of m as a new
    leaf, the CN position tuple of m for every parent position)``."""
    nodes = expanded_nodes(schema, n_keywords)
    nid = {n: i for i, n in enumerate(nodes)}
    labels = {(a.name, b.name): labels_between(schema, a.name, b.name)
              for a in schema.relations for b in schema.relations}
    adjacency = []
    for n in nodes:
        adj = []
        for m in nodes:
            for label in labels[(n[0], m[0])]:
                adj.append((nid[m], m[1], (label, (nid[m], ())),
                            tuple((m[0], m[1], v, label) for v in range(max(t_max - 1, 0)))))
        adjacency.append(adj)
    return tuple(nodes), nid, tuple(adjacency), 1 << root_keyword


@functools.lru_cache(maxsize=128)
def cngen(schema, n_keywords: int, t_max: int, root_keyword: int = 0) -> tuple:
    """Every CN exactly once (up to isomorphism), clusters in root ``nid`` order.

    Computed by the compiled search (``compiled_cngen``); ``Cluster.cns`` is the same
    search in Python, one cluster at a time."""
    xs = expanded_schema(schema, n_keywords, t_max, root_keyword)
    with collector_off():
        return cn_tuples(xs, compiled_cngen(xs, n_keywords, t_max))


class CnArrays(NamedTuple):
    """CNGen's output as arrays (``_cngen_kernels.cngen_search``): the trees grown, one row
    each (``tnode``/``tpar``/``tlab``: nid, parent position and label rank by position;
    ``tsize``; ``tparent``: the tree grown from, -1 at a root), and the CNs in CNGen's
    order (``cn_tree``: the tree a CN grows from; ``cn_node``/``cn_ppos``/``cn_lab``: its
    last position, ``cn_node`` -1 for a one-node CN, the root tree itself); ``labels``:
    the label of every rank."""
    tnode: np.ndarray
    tpar: np.ndarray
    tlab: np.ndarray
    tsize: np.ndarray
    tparent: np.ndarray
    cn_tree: np.ndarray
    cn_node: np.ndarray
    cn_ppos: np.ndarray
    cn_lab: np.ndarray
    labels: tuple


def compiled_cngen(xs, n_keywords: int, t_max: int) -> CnArrays:
    """CNGen over the expanded schema ``xs`` (``expanded_schema``) as integer arrays: the
    same search as ``Cluster`` (Section 3.2), compiled (``cn_joins.compiled_search``
    unrestricted: the build and the migrations run one kernel).  Labels become ranks in the
    order of the ``(edge_id, parent_plays_left)`` tuples, so ranks compare as the labels do."""
    # imported here: cn_joins imports this module, and numba loads only where the compiled
    # search runs (not for PM)
    from streamspec.engines.kws.cn_joins import compiled_search
    return compiled_search(xs, n_keywords, t_max)[0]


def tree_positions(xs, arrays: CnArrays, q: int) -> tuple:
    """The CN positions ``(relation, kbits, parent_position, label)`` of tree ``q``."""
    nodes, labels = xs[0], arrays.labels
    out = []
    for i in range(int(arrays.tsize[q])):
        rel, kbits = nodes[arrays.tnode[q, i]]
        out.append((rel, kbits, -1, None) if i == 0 else
                   (rel, kbits, int(arrays.tpar[q, i]), labels[arrays.tlab[q, i]]))
    return tuple(out)


def cn_tuples(xs, arrays: CnArrays) -> tuple:
    """The CNs of ``arrays`` as ``cngen`` returns them (tuples of positions, in order)."""
    nodes, labels = xs[0], arrays.labels
    trees: dict = {}
    out = []
    for q, nm, pp, lab in zip(arrays.cn_tree.tolist(), arrays.cn_node.tolist(),
                              arrays.cn_ppos.tolist(), arrays.cn_lab.tolist()):
        tree = trees.get(q)
        if tree is None:
            tree = trees[q] = tree_positions(xs, arrays, q)
        if nm < 0:
            out.append(tree)
        else:
            rel, kbits = nodes[nm]
            out.append(tree + ((rel, kbits, pp, labels[lab]),))
    return tuple(out)


@contextmanager
def collector_off():
    """Python's cyclic collector paused: CNGen and the mesh build create
    millions of tuples and operators with no cycles among them, so collecting
    while they are made only costs time.

    On leaving, a large build (``PROMOTE`` new tracked objects or more) is
    moved to the oldest generation unexamined (``gc.freeze()`` then
    ``gc.unfreeze()``, documented to put the frozen objects back into the
    oldest generation): otherwise the first young collection after
    ``gc.enable()`` walks every new operator, once per generation on the way
    up (about 2 CPU-s for the 5.65M operators at |K| = 5), to find them all
    alive.  They are walked by the full collections that come anyway.  A
    process that froze objects of its own (``gc.get_freeze_count() > 0``)
    keeps them frozen: the promotion is skipped then."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            # not when the process froze objects itself (gc.unfreeze would thaw them too)
            if gc.get_count()[0] >= PROMOTE and gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


PROMOTE = 1 << 20   # new tracked objects (gc.get_count()[0]) from which a build is promoted


class Cluster:
    """CNGen from one root node: the trees grown from it and their CNs.

    A tree's *state* is ``(tree, nids, codes, path, degrees, union, multi)``:
    beside the tree, the nid and the rooted subtree code of every position,
    its rightmost path (root first), the degree of every position, the union
    of its keyword sets and the keywords held by two nodes or more.  The
    canonical order, totality and minimality are checked incrementally for
    each one-node expansion (``expand``, which is also the partial mesh's
    TreeGen).  Pruning beyond the paper's line 10, which changes no output:
    a total tree that is not a CN is dropped (the node added last to any
    expansion would hold no keyword of its own), and the last level only
    tries nodes holding every keyword still missing."""

    __slots__ = ("root", "root_nid", "nid", "adjacency", "full", "t_max", "rbit", "kept", "finals")

    def __init__(self, root, nid, adjacency, n_keywords, t_max, rbit):
        self.root, self.root_nid, self.nid, self.adjacency = root, nid[root], nid, adjacency
        self.full, self.t_max, self.rbit = (1 << n_keywords) - 1, t_max, rbit
        self.kept: dict = {}    # nid -> adjacency without the removed nodes (the roots before
                                # this one, removed from the expanded schema with their clusters)
        self.finals: dict = {}  # (nid, missing keywords) -> kept adjacency entries holding them

    def first(self) -> tuple:
        """The state of the one-node tree of the root."""
        root = self.root
        return (((root[0], root[1], -1, None),), (self.root_nid,), ((self.root_nid, ()),),
                (0,), (0,), root[1], 0)

    def cns(self) -> list[tuple]:
        """Every CN of the cluster, in breadth-first (growth) order."""
        first = self.first()
        if self.root[1] == self.full:
            return [first[0]]
        found: list = []
        queue = deque([first])
        while queue:
            self.expand(queue.popleft(), found, queue)
        return found

    def expand(self, state, found: list, grown, leaves: bool = False) -> None:
        """One CNGen step: append the CNs one node larger than ``state`` to
        ``found`` and the states of the trees to grow further to ``grown``.
        ``leaves``: append only each CN's last position (the mesh's new join)."""
        tree, nids, codes, path, deg, union, multi = state
        root_nid, full, nid = self.root_nid, self.full, self.nid
        size = len(tree)
        if size >= self.t_max:
            return
        last_level = size + 1 == self.t_max
        repeated_root = root_nid in nids[1:]
        for depth in range(len(path) - 1, -1, -1):
            v = path[depth]
            nv = nids[v]
            kids_v = codes[v][1]
            last_key = kids_v[-1] if kids_v else None
            on_path = path[: depth + 1]
            # A leaf w keeps a keyword of its own after adding a node with kbits kb iff
            # its own keywords u_w are not all in union & kb: bad[s] is set for the
            # s = union & kb that leave some leaf without one (off the path: bad_grow;
            # any leaf, for a CN: bad_cn).
            off = [kb_w & ~multi for w, (_, kb_w, _, _) in enumerate(tree)
                   if deg[w] <= 1 and w not in on_path]
            stay = off + [tree[w][1] & ~multi for w in on_path if deg[w] + (w == v) <= 1]
            bad_cn = _supersets(tuple(stay), union)
            # the order above v can only break where a node of the path has a left sibling
            above = any(len(codes[path[i - 1]][1]) > 1 for i in range(1, depth + 1))
            if last_level:  # every candidate is total (it holds every missing keyword)
                ents_v, roots, ok = self._last_level(nv, v, union, bad_cn, last_key)
                if leaves and not repeated_root and not above:
                    if roots is None:  # most trees: the cached entries are the CNs' last positions
                        found.extend(ents_v)
                    else:
                        found.extend(e for e, r in zip(ents_v, roots)
                                     if not r or _root_is_canonical(tree + (e,), nid))
                    continue
                for e, (nm, _, leaf_key, _) in zip(ents_v, ok):
                    if above and not _canonical_above(tree, codes, path, depth, leaf_key, kids_v):
                        continue
                    new = tree + (e,)
                    if (repeated_root or nm == root_nid) and not _root_is_canonical(new, nid):
                        continue
                    found.append(e if leaves else new)
                continue
            adj = self._kept(nv)
            bad_grow = _supersets(tuple(off), union)
            for nm, kb, leaf_key, ents in adj:
                if last_key is not None and last_key < leaf_key:
                    continue  # not canonical at v
                total = union | kb == full
                if total:
                    # the new leaf holds a missing keyword of its own: union != full
                    if bad_cn >> (union & kb) & 1:
                        continue
                    if above and not _canonical_above(tree, codes, path, depth, leaf_key, kids_v):
                        continue
                    new = tree + (ents[v],)
                    if not (repeated_root or nm == root_nid) or _root_is_canonical(new, nid):
                        found.append(new[-1] if leaves else new)
                    continue  # a CN never grows into another CN
                if bad_grow >> (union & kb) & 1:
                    continue
                new_codes = _extend(tree, codes, path, depth, leaf_key, nm, kids_v)
                if new_codes is None:
                    continue  # not canonical above v
                d = list(deg)
                d[v] += 1
                d.append(1)
                grown.append((tree + (ents[v],), nids + (nm,), new_codes, on_path + (size,), tuple(d),
                              union | kb, multi | (union & kb)))

    def leads_to_cn(self, state) -> bool:
        """Whether some CN grows from ``state`` (its CNGen subtree is not a dead end)."""
        found: list = []
        grown: list = []
        self.expand(state, found, grown)
        return bool(found) or any(self.leads_to_cn(g) for g in grown)

    def _last_level(self, nv, v, union, bad_cn, last_key) -> tuple:
        """The last-level candidates below position ``v`` (node ``nv``) of a tree with
        keyword union ``union``: the adjacency entries, in order, that hold every
        missing keyword, keep the children of ``v`` canonical (``leaf_key <=
        last_key``) and leave every leaf a keyword of its own (``bad_cn``), as
        ``(their CN positions, which are the root's node or None, the entries)``.
        The key holds ``(nv, v, union, bad_cn)`` and the last child's label and node.

        These conditions depend on the tree only through the key, and keys recur
        (about half the lookups hit at |K| = 4; 5.4M CNs from 0.34M trees at
        |K| = 5), so the list is made once per key and most trees extend
        ``found`` by it as it is.  The cache shares ``finals`` (its keys are longer): whoever
        clears ``finals`` (the partial mesh, between growths) clears it too."""
        # leaf_key = (label, (nm, ())) <= last_key = (label', (nid', kids')) iff
        # (label, nm) <= (label', nid'): the key needs only the last child's label and node
        key = (nv, v, union, bad_cn) if last_key is None else (nv, v, union, bad_cn, last_key[0], last_key[1][0])
        hit = self.finals.get(key)
        if hit is not None:
            return hit
        missing = self.full & ~union
        adj = self.finals.get((nv, missing))
        if adj is None:
            adj = self.finals[(nv, missing)] = [a for a in self._kept(nv) if a[1] & missing == missing]
        if last_key is None:
            ok = [a for a in adj if not bad_cn >> (union & a[1]) & 1]
        else:
            bound = (last_key[0], last_key[1][0])
            ok = [a for a in adj if (a[2][0], a[0]) <= bound and not bad_cn >> (union & a[1]) & 1]
        root_nid = self.root_nid
        roots = [a[0] == root_nid for a in ok] if any(a[0] == root_nid for a in ok) else None
        hit = self.finals[key] = ([a[3][v] for a in ok], roots, ok)
        return hit

    def _kept(self, nv) -> list:
        adj = self.kept.get(nv)
        if adj is None:
            rbit, root_nid = self.rbit, self.root_nid
            adj = self.kept[nv] = [a for a in self.adjacency[nv] if not (a[1] & rbit and a[0] < root_nid)]
        return adj


def _supersets(owns: tuple, within: int) -> int:
    """Bitmap over s within ``within``: bit s set iff s holds all of some ``owns``."""
    key = (owns, within)
    bad = _SUPERSETS.get(key)
    if bad is not None:  # few distinct keyword-bitmask cases, met by every expansion
        return bad
    bad = 0
    for s in range(within + 1):
        if s & within == s:
            for u in owns:
                if u & s == u:
                    bad |= 1 << s
                    break
    if len(_SUPERSETS) < 1 << 16:
        _SUPERSETS[key] = bad
    return bad


_SUPERSETS: dict = {}


def _canonical_above(tree, codes, path, depth, leaf_key, kids_v) -> bool:
    """Whether adding a leaf below ``path[depth]`` keeps the order of siblings
    above it (``_extend`` without building the codes)."""
    code = (codes[path[depth]][0], kids_v + (leaf_key,))
    for i in range(depth, 0, -1):
        u, p = path[i], path[i - 1]
        kids = codes[p][1]
        key = (tree[u][3], code)
        if len(kids) > 1 and kids[-2] < key:
            return False
        code = (codes[p][0], kids[:-1] + (key,))
    return True


def _extend(tree, codes, path, depth, leaf_key, nm, kids_v):
    """Subtree codes after adding a leaf below ``path[depth]``, or None when the
    tree is no longer canonical.  Only the codes on the path to the new leaf
    change, and only the last child of each of its nodes can break the order
    of its siblings (the rest of the tree was canonical)."""
    codes = list(codes)
    codes.append((nm, ()))
    v = path[depth]
    codes[v] = (codes[v][0], kids_v + (leaf_key,))
    for i in range(depth, 0, -1):
        u, p = path[i], path[i - 1]
        kids = codes[p][1]
        key = (tree[u][3], codes[u])
        if len(kids) > 1 and kids[-2] < key:
            return None
        codes[p] = (codes[p][0], kids[:-1] + (key,))
    return tuple(codes)


def _root_is_canonical(tree, nid) -> bool:
    """Of the positions holding the root's node, the root has the largest rooted code."""
    mine = _code(tree, nid, 0)
    return all(_code(tree, nid, v) <= mine for v in range(1, len(tree)) if tree[v][:2] == tree[0][:2])


def brute_force_cns(schema, n_keywords: int, t_max: int) -> set:
    """Canonical forms of every CN, from all labelled trees up to ``t_max`` nodes
    (for the property test; exponential)."""
    nodes = expanded_nodes(schema, n_keywords)
    nid = {n: i for i, n in enumerate(nodes)}
    full = (1 << n_keywords) - 1
    layer = {canonical_form(((n[0], n[1], -1, None),), nid): ((n[0], n[1], -1, None),) for n in nodes}
    found = set()
    while layer:
        nxt = {}
        for form, tree in layer.items():
            if is_cn(tree, full):
                found.add(form)
            if len(tree) == t_max:
                continue
            for v in range(len(tree)):
                for m in nodes:
                    for label in labels_between(schema, tree[v][0], m[0]):
                        new = tree + ((m[0], m[1], v, label),)
                        nxt.setdefault(canonical_form(new, nid), new)
        layer = nxt
    return found
