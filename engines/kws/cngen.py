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
``t_max`` nodes and every leaf off the rightmost path holds a unique keyword.

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
from collections import deque


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


def _rightmost_path(tree) -> list[int]:
    path, v = [], len(tree) - 1
    while v >= 0:
        path.append(v)
        v = tree[v][2]
    return path


def _leaves_ok(tree, full: int, only_off_path: bool) -> bool:
    degree = [0] * len(tree)
    for c in range(1, len(tree)):
        degree[c] += 1
        degree[tree[c][2]] += 1
    on_path = set(_rightmost_path(tree)) if only_off_path else set()
    for v, d in enumerate(tree):
        if degree[v] <= 1 and v not in on_path:
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
    return union == full and _leaves_ok(tree, full, only_off_path=False)


@functools.lru_cache(maxsize=128)
def cngen(schema, n_keywords: int, t_max: int, root_keyword: int = 0) -> tuple:
    """Every CN exactly once (up to isomorphism), clusters in root ``nid`` order."""
    nodes = expanded_nodes(schema, n_keywords)
    nid = {n: i for i, n in enumerate(nodes)}
    full = (1 << n_keywords) - 1
    adjacency = {}
    for n in nodes:
        adjacency[n] = [(label, m) for m in nodes for label in labels_between(schema, n[0], m[0])]
    removed = set()
    out = []
    for root in nodes:
        if not root[1] >> root_keyword & 1:
            continue
        out.extend(_grow(root, adjacency, removed, nid, full, t_max))
        removed.add(root)
    return tuple(out)


def _grow(root, adjacency, removed, nid, full, t_max) -> list[tuple]:
    first = ((root[0], root[1], -1, None),)
    if is_cn(first, full):
        return [first]
    found = []
    # each queued tree carries the subtree code of every position
    queue = deque([(first, ((nid[root], ()),))]) if t_max > 1 else deque()
    while queue:
        old, codes = queue.popleft()
        for v in _rightmost_path(old):
            for label, node in adjacency[old[v][:2]]:
                if node in removed:
                    continue
                new = old + ((node[0], node[1], v, label),)
                new_codes = _extend_codes(new, codes, nid)
                if new_codes is None:
                    continue  # not canonical
                if is_cn(new, full):
                    if _root_is_canonical(new, nid):
                        found.append(new)
                    continue  # a CN never grows into another CN
                if len(new) < t_max and _leaves_ok(new, full, only_off_path=True):
                    queue.append((new, new_codes))
    return found


def _extend_codes(tree, codes, nid):
    """Subtree codes after adding the last leaf, or None when the tree is not canonical.

    Only the codes on the rightmost path change, and only the last child of
    each node on it can break the order (the rest of the tree was canonical)."""
    codes = list(codes)
    leaf = len(tree) - 1
    codes.append((nid[tree[leaf][:2]], ()))
    u = leaf
    while tree[u][2] >= 0:
        p = tree[u][2]
        kids = [c for c in range(p + 1, len(tree)) if tree[c][2] == p]
        if len(kids) > 1:
            prev = kids[-2]
            if (tree[prev][3], codes[prev]) < (tree[u][3], codes[u]):
                return None
        keys = sorted(((tree[c][3], codes[c]) for c in kids), reverse=True)
        codes[p] = (nid[tree[p][:2]], tuple(keys))
        u = p
    return codes


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
