"""The full mesh built from compiled CNGen, its CN joins kept as rows (paper Sections 3.3, 4.1).

FM's mesh (Section 4.1) is built whole before processing: every tree CNGen grows that
leads to a CN gets its join operator (``operators.Op``), children before parents, as
``operators.grow_mesh`` makes them, and every CN gets its CN join.  What differs is how
the CN joins are held: most operators of a large mesh are CN joins (5.37M of 5.65M at
|K| = 5, T_max = 4), and a CN join whose right source has never held a tuple has done
nothing and holds nothing: it is asleep under demand-driven execution, its buffer is
empty, and a running one (``demand_driven=False``) probes an empty source.  So a CN join
is first a row of ``CnJoinRows`` (its left operator, its right node, the position it
joins, its label), grouped by right node, and becomes an ``Op`` (``materialise``), in
the state it would have had all along (not running under demand-driven execution, an
empty buffer), when the first tuple of its right node arrives, before that tuple is
processed (``MeshEngine._route``).  The engine's ``ops`` makes every row an operator
first; a removal from the schema does too (``migration``).  This defers work out of the
engine's construction into the processing of the first tuple of each right node: the
initialisation benchmark (``bench/kws/init.py``) reports the construction with and
without making every CN join an operator.  A schema change keeps some of its new CN joins
as rows keyed by another node (``_migration_grow``: an empty node of their left chain),
their right nodes in ``CnJoinRows.right``.
"""
from __future__ import annotations

from itertools import repeat

import numpy as np

# compiled_cngen is looked up here at call time: the initialisation benchmark times it
# under this module's name (bench/kws/init.py)
from streamspec.engines.kws.cngen import CnArrays, compiled_cngen, expanded_schema
from streamspec.engines.kws.operators import Op, cn_join_ops

FAR = 1 << 30   # hops to a relation no new edge reaches


def compiled_search(xs, n_keywords: int, t_max: int, new_labels=None, new_nodes=(), dist=None,
                    forbidden=None, required=None, req_need=None):
    """CNGen over the expanded schema ``xs`` compiled (``_cngen_kernels.cngen_search``, the
    same search as ``cngen.compiled_cngen``): ``(CnArrays, tflag)``.  With ``new_labels``
    (a schema change, Section 4.4): only the trees that hold a new label or a node of
    ``new_nodes`` or can still take one (``dist``: hops from each relation to an endpoint of
    a new edge), and only the CNs that hold one; ``tflag`` tells which trees hold one.
    ``forbidden`` and ``required`` (boolean arrays by nid, with ``req_need``) narrow it to
    the CNs without a forbidden node that hold a required one (``_migration_grow``).  The
    build and the migrations call the same compiled function with the same argument types,
    so a migration runs the machine code the build already loaded (loading another kernel
    costs more than most migrations)."""
    from streamspec.engines.kws import _cngen_kernels as _kernels   # numba: FM only
    nid, adjacency, rbit = xs[1:]
    nodes = by_nid(xs)
    per_node = [_entry_arrays(adj) for adj in adjacency]
    counts = np.array([len(adj) for adj in adjacency], np.int64)
    adj_m = np.concatenate([e[1] for e in per_node]) if per_node else np.zeros(0, np.int64)
    adj_kb = np.concatenate([e[2] for e in per_node]) if per_node else np.zeros(0, np.int64)
    gid = np.concatenate([e[3] for e in per_node]) if per_node else np.zeros(0, np.int64)
    labels = {_LABELS[g] for g in np.unique(gid).tolist()}
    labels = tuple(sorted(labels | {(e, not left) for e, left in labels}))
    rank = np.full(len(_LABELS) + 2 * len(labels), -1, np.int64)
    for i, label in enumerate(labels):
        rank[_label_id(label)] = i
    adj_lab = rank[gid]
    restricted = new_labels is not None
    if restricted:
        fresh = np.zeros(len(nodes), np.bool_)
        fresh[[nid[n] for n in new_nodes]] = True
        new_ids = [_LABEL_ID[label] for label in new_labels if label in _LABEL_ID]
        adj_new = np.isin(gid, new_ids) | fresh[adj_m]
        node_new = fresh
        node_dist = np.array([(dist or {}).get(n[0], FAR) if n is not None else FAR for n in nodes],
                             np.int64)
    else:
        adj_new = node_new = np.zeros(0, np.bool_)
        node_dist = np.zeros(0, np.int64)
    if forbidden is not None:   # no tree holds a forbidden node: not a root, no entry to or from it
        owner = np.repeat(np.arange(len(adjacency)), counts)
        keep = ~forbidden[adj_m] & ~forbidden[owner]
        adj_m, adj_kb, adj_lab = adj_m[keep], adj_kb[keep], adj_lab[keep]
        if restricted:
            adj_new = adj_new[keep]
        counts = np.bincount(owner[keep], minlength=len(adjacency))
    ptr = np.zeros(len(adjacency) + 1, np.int64)
    ptr[1:] = np.cumsum(counts)
    arrays = _kernels.cngen_search(
        np.array([i for i, n in enumerate(nodes)
                  if n is not None and n[1] & rbit and (forbidden is None or not forbidden[i])], np.int64),
        np.array([n[1] if n is not None else 0 for n in nodes], np.int64), ptr, adj_m, adj_kb, adj_lab,
        np.array([labels.index((e, not left)) for e, left in labels], np.int64),
        (1 << n_keywords) - 1, rbit, t_max, adj_new, node_new, node_dist, restricted,
        np.zeros(0, np.bool_) if required is None else required,
        np.zeros(0, np.int64) if req_need is None else req_need)
    return CnArrays(*arrays[:9], labels), arrays[9]


# the adjacency entries of the expanded schemas as arrays, per adjacency list (a migration's
# ``xs`` shares every list it does not extend with the one before: only those are converted);
# labels by a process-wide id, ranked per search.  ``_ENTRIES`` keeps each list it describes
# (an id is only reused once the list is gone) and is emptied when it grows large.
_LABEL_ID: dict = {}
_LABELS: list = []
_ENTRIES: dict = {}


def _label_id(label) -> int:
    i = _LABEL_ID.get(label)
    if i is None:
        i = _LABEL_ID[label] = len(_LABELS)
        _LABELS.append(label)
    return i


def _arrays_of(entries: list) -> tuple:
    """``(nids, kbits, label ids)`` of adjacency entries."""
    return (np.array([a[0] for a in entries], np.int64), np.array([a[1] for a in entries], np.int64),
            np.array([_label_id(a[2][0]) for a in entries], np.int64))


def _entry_arrays(adj: list) -> tuple:
    """``(adj, nids, kbits, label ids)`` of an adjacency list's entries."""
    hit = _ENTRIES.get(id(adj))
    if hit is not None and hit[0] is adj:
        return hit
    if len(_ENTRIES) > 1 << 16:
        _ENTRIES.clear()
    out = _ENTRIES[id(adj)] = (adj,) + _arrays_of(adj)
    return out


def extend_entries(old: list, new: list) -> None:
    """Describe ``new`` (``old`` with entries appended) from ``old``'s arrays, if known."""
    hit = _ENTRIES.get(id(old))
    if hit is None or hit[0] is not old:
        return
    tail = _arrays_of(new[len(old):])
    _ENTRIES[id(new)] = (new,) + tuple(np.concatenate((a, b)) for a, b in zip(hit[1:], tail))


def by_nid(xs) -> list:
    """The expanded schema's nodes by nid (``migration.remove`` keeps a removed node's slot,
    as None here; ``migration.add_relation`` puts new nodes after every slot)."""
    nodes, nid, adjacency = xs[:3]
    if len(nodes) == len(adjacency):
        return list(nodes)   # as built: nid order
    out = [None] * len(adjacency)
    for n in nodes:
        out[nid[n]] = n
    return out


class CnJoinRows:
    """The CN joins not yet made operators, by the node whose first tuple makes them.

    ``rows[node] = (start, end)`` into the arrays ``left`` (index into ``lefts``, the
    operators they join), ``ppos`` (the position the new node joins) and ``label``
    (index into ``labels``).  The build's rows are keyed by their right node (``right`` is
    None); a migration's waiting rows (``_migration_grow``) by an empty node of their left
    chain, their right nodes in ``right`` (index into ``nodes``)."""

    def __init__(self, nodes, labels, lefts, left, ppos, label, rows, right=None):
        self.nodes, self.labels, self.lefts = nodes, labels, lefts
        self.left, self.ppos, self.label, self.rows = left, ppos, label, rows
        self.right = right

    @classmethod
    def empty(cls, nodes, keyed_by_right: bool = True) -> "CnJoinRows":
        return cls(nodes, (), [], None, None, None, {}, None if keyed_by_right else np.zeros(0, np.int32))

    def _arrays(self) -> tuple:
        return (self.left, self.ppos, self.label) + (() if self.right is None else (self.right,))

    def _set_arrays(self, arrays) -> None:
        self.left, self.ppos, self.label = arrays[:3]
        if self.right is not None:
            self.right = arrays[3] if arrays[3] is not None else np.zeros(0, np.int32)

    def label_index(self, labels) -> np.ndarray:
        """The index in ``self.labels`` of each of ``labels`` (a search's label ranks); the
        labels not there yet are appended."""
        index = {lab: i for i, lab in enumerate(self.labels)}
        extra = tuple(lab for lab in labels if lab not in index)
        for i, lab in enumerate(extra, len(self.labels)):
            index[lab] = i
        self.labels += extra
        return np.array([index[lab] for lab in labels], np.int32)

    def add(self, nodes, ptr, left, ppos, label, right=None) -> None:
        """Take new rows grouped by key node (``ptr`` over ``nodes``, as
        ``_cn_join_kernels.rows_by_right_node`` groups them; ``left`` indexes
        ``self.lefts``; ``right`` the right nodes of waiting rows), after the rows each node
        holds already."""
        ptr = ptr.tolist()
        fresh = {nodes[n]: (ptr[n], ptr[n + 1]) for n in range(len(nodes)) if ptr[n + 1] > ptr[n]}
        if not fresh:
            return
        old = self._arrays()
        new = (left, ppos, label) + (() if self.right is None else (right,))
        pieces = tuple([] for _ in old)
        rows, at = {}, 0
        for node in list(self.rows) + [n for n in fresh if n not in self.rows]:
            start = at
            for arrays, span in ((old, self.rows.get(node)), (new, fresh.get(node))):
                if span is not None:
                    for piece, a in zip(pieces, arrays):
                        piece.append(a[span[0]:span[1]])
                    at += span[1] - span[0]
            rows[node] = (start, at)
        self._set_arrays([np.concatenate(p) for p in pieces])
        self.rows, self.nodes = rows, nodes

    def __len__(self) -> int:
        return sum(end - start for start, end in self.rows.values())

    def right_inputs(self) -> set:
        """``(node, label)`` of every CN join still a row (the build's rows, keyed by right node:
        for the engine's source indexes)."""
        out = set()
        for node, (start, end) in self.rows.items():
            for lab in np.unique(self.label[start:end]).tolist():
                out.add((node, self.labels[lab]))
        return out

    def remove(self, edge_ids: set, rel, is_dead, nodes=None) -> list:
        """Drop the rows keyed by ``nodes`` (default: every node) whose label is on a removed
        edge, whose key node is of the removed relation ``rel`` or whose left operator
        ``is_dead`` (a predicate, or a boolean array over ``lefts``; Section 4.4's removal:
        CN joins hold nothing, so no result ends with them); the left operators of the rows
        dropped.  A node's rows kept move to the front of its span, in place (the next
        ``add`` rebuilds the arrays)."""
        keys = [n for n in (self.rows if nodes is None else nodes) if n in self.rows]
        if not keys:
            return []
        arrays = self._arrays()
        left, label = arrays[0], arrays[2]
        bad_label = np.array([lab[0] in edge_ids for lab in self.labels] or [False], np.bool_)
        spans = [self.rows[n] for n in keys]
        if isinstance(is_dead, np.ndarray):
            dead_left = is_dead
        else:
            used = _distinct(np.concatenate([left[s:e] for s, e in spans]), len(self.lefts))
            dead_left = np.zeros(len(self.lefts), np.bool_)
            dead_left[used] = [is_dead(self.lefts[i]) for i in used]
        # a waiting row's right node of ``rel`` is on a removed edge: its label goes too
        hit = []
        for node, (start, end) in zip(keys, spans):
            if node[0] == rel:
                gone = np.ones(end - start, np.bool_)
            else:
                gone = bad_label[label[start:end]] | dead_left[left[start:end]]
            if not gone.any():
                continue
            hit.append(left[start:end][gone])
            keep = ~gone
            kept = int(keep.sum())
            for a in arrays:
                a[start:start + kept] = a[start:end][keep]   # (the mask makes a copy first)
            if kept:
                self.rows[node] = (start, start + kept)
            else:
                del self.rows[node]
        if not self.rows:
            self._set_arrays([None] * len(arrays))
        return [self.lefts[i] for i in _distinct(np.concatenate(hit), len(self.lefts))] if hit else []

    def left_ops(self) -> list:
        """The operators some row joins (its left operator)."""
        if not self.rows:
            return []
        used = _distinct(np.concatenate([self.left[s:e] for s, e in self.rows.values()]), len(self.lefts))
        return [self.lefts[i] for i in used]

    def materialise(self, node, running: bool, conds) -> list[Op]:
        """Make the rows keyed by ``node`` operators (their left operators' parents); the
        new operators, in row order."""
        start, end = self.rows.pop(node)
        lefts, labels = self.lefts, self.labels
        left = [lefts[i] for i in self.left[start:end].tolist()]
        label = [labels[i] for i in self.label[start:end].tolist()]
        rights = repeat(node) if self.right is None else \
            [self.nodes[r] for r in self.right[start:end].tolist()]
        out = cn_join_ops(zip(left, rights, self.ppos[start:end].tolist(), label, repeat(running),
                              [conds[lab] for lab in label] if conds is not None else repeat(None)))
        for op in out:
            op.left.add_parent(op)
        if not self.rows:  # nothing left: the arrays can go
            self._set_arrays([None] * len(self._arrays()))
        return out


def _distinct(index: np.ndarray, n: int) -> list:
    """The distinct values of ``index`` (ints in ``[0, n)``), ascending: a count, not
    ``np.unique``'s sort or hash (3 ms for a store's 168K rows)."""
    return np.flatnonzero(np.bincount(index, minlength=n)).tolist()


def compact_mesh(schema, n_keywords: int, t_max: int, running: bool = True, conds=None,
                 root_keyword: int = 0, xs=None) -> tuple[list[Op], CnJoinRows]:
    """The full mesh of ``schema`` (``grow_mesh``'s operators) with its CN joins as rows:
    ``(the other operators, children before parents; the CN join rows)``; ``xs``: its
    expanded schema, if the caller has it."""
    from streamspec.engines.kws import _cn_join_kernels as _layout   # numba: FM only
    if xs is None:
        xs = expanded_schema(schema, n_keywords, t_max, root_keyword)
    nodes = xs[0]
    a = compiled_cngen(xs, n_keywords, t_max)
    labels = a.labels
    # a tree gets an operator iff some CN grows from it or from a tree grown from it
    trees = np.flatnonzero(_layout.trees_with_operators(a.tparent, a.cn_tree, a.cn_node))
    index = np.full(len(a.tsize), -1, np.int32)
    index[trees] = np.arange(len(trees))
    ops: list[Op] = []
    append = ops.append
    last = a.tsize[trees].astype(np.int64) - 1          # each tree's newest position
    node = a.tnode[trees, last].tolist()
    ppos = a.tpar[trees, last].tolist()
    lab = a.tlab[trees, last].tolist()
    left = index[a.tparent[trees]].tolist()
    for pos, n, pp, lb, li in zip(last.tolist(), node, ppos, lab, left):
        if pos == 0:
            append(Op(0, nodes[n], -1, None, None, running))
            continue
        label = labels[lb]
        prev = ops[li]
        op = Op(pos, nodes[n], pp, label, prev, running, conds[label] if conds is not None else None)
        prev.add_parent(op)
        append(op)
    # the one-node CNs (a root holding every keyword)
    for q in a.cn_tree[a.cn_node < 0].tolist():
        append(Op(0, nodes[a.tnode[q, 0]], -1, None, None, running, cn=True))
    ptr, left, ppos, label = _layout.rows_by_right_node(a.cn_tree, a.cn_node, a.cn_ppos, a.cn_lab,
                                                        index, len(nodes))
    ptr = ptr.tolist()
    rows = {nodes[n]: (ptr[n], ptr[n + 1]) for n in range(len(nodes)) if ptr[n + 1] > ptr[n]}
    return ops, CnJoinRows(nodes, labels, list(ops), left, ppos, label, rows)
