"""Operator trees and the operator mesh (paper Section 3.3, Figures 3.6-3.8).

Every CN (``streamspec.engines.kws.cngen``) maps to a left-deep operator tree: position
0 is the leaf source of the root node, position ``i`` a join of the tree of
positions ``0..i-1`` (left) with the source of node ``i`` (right) on the
label joining node ``i`` to its parent position.  A join refuses a right
tuple already in the left composite (Figure 3.7).

``build(cns, shared)``:
- ``shared=False``: the forest, one private chain of operators per CN;
- ``shared=True``: the mesh, one cluster per root node, joins shared by all
  CNs with the same prefix (the trees CNGen grew on the way), each join's
  output buffer the left input of all its parents (shared buffers).
``grow_mesh`` builds the same mesh while CNGen runs, as the paper does,
without listing the CNs (full-mesh initialisation).  Sources (one per
expanded-schema node) are shared in both: they are selections, the same for
every tree.

A composite is ``(t_end, rows)``: the tuples by position, and the earliest
window end (``INF`` in the positive-negative model).  ``Op.idx`` indexes an
output buffer for its parents' probes: ``(parent_pos, attribute) -> {join
value: composites}``, built on a parent's first probe and kept up to date as
composites arrive; ``None`` whenever ``out`` is replaced.
"""
from __future__ import annotations

from collections import deque

from streamspec.engines.kws.cngen import Cluster, collector_off, expanded_schema

INF = 1 << 62


class Op:
    """A source leaf (``left is None``) or a join of ``left`` with the source ``right``.

    ``out`` and ``parents`` start as the shared empty tuple and become lists
    on first use: most operators of a large mesh never hold anything, and a
    mesh at |K| = 5 has millions of them."""

    __slots__ = ("pos", "node", "parent_pos", "label", "left", "right", "parents", "cn",
                 "out", "idx", "running", "cond", "key", "end")

    def __init__(self, pos, node, parent_pos, label, left, running=True, cond=None, cn=False):
        # ``cn_join_ops`` sets the same slots without this call (hot loop): keep the two in step
        self.pos = pos
        self.node = node                 # (relation, kbits) of the newest position
        self.parent_pos = parent_pos     # position this node joins with (-1: leaf)
        self.label = label               # (edge_id, parent_plays_left) or None
        self.left = left                 # Op or None
        self.right = node if left is not None else None
        self.parents = ()
        self.cn = cn                     # feeds the output operator
        self.out = ()                    # composites (t_end, rows)
        self.end = INF                   # at most the earliest t_end in ``out`` (kept under eager purging)
        self.idx = None                  # hash indexes of ``out`` for the parents' probes
        self.running = running
        self.cond = cond                 # (parent attribute, new attribute) of a join
        self.key = None                  # the CN prefix it evaluates (partial mesh)

    @property
    def shape(self) -> tuple:
        """((parent_pos, label), ...) for positions 0..pos (walks the left chain)."""
        out, op = [], self
        while op is not None:
            out.append((op.parent_pos, op.label))
            op = op.left
        return tuple(reversed(out))

    def add_parent(self, q) -> None:
        if self.parents:
            self.parents.append(q)
        else:
            self.parents = [q]

    def __getstate__(self):
        return {k: getattr(self, k) for k in self.__slots__}

    def __setstate__(self, state):
        for k, v in state.items():
            setattr(self, k, v)


def cn_join_ops(specs) -> list[Op]:
    """``Op(left.pos + 1, right, parent_pos, label, left, running, cond, cn=True)`` for each
    ``(left, right, parent_pos, label, running, cond)`` of ``specs``, not yet among their
    left operators' parents (the build, ``CnJoinRows.materialise`` and the migrations).

    Most operators of a full mesh are these CN joins (5.37M of 5.65M at |K| = 5):
    the slots are set here without a call to ``Op.__init__`` per join (half the
    interpreter work per join on a small mesh), and the node tuples are shared
    (1281 -> 965 MiB max RSS for the |K| = 5 mesh).  Keep it in step with
    ``Op.__init__``."""
    alloc = object.__new__
    out = []
    append = out.append
    for left, right, parent_pos, label, running, cond in specs:
        op = alloc(Op)
        op.pos = left.pos + 1
        op.node = op.right = right
        op.parent_pos = parent_pos
        op.label = label
        op.left = left
        op.parents = ()
        op.cn = True
        op.out = ()
        op.end = INF
        op.idx = None
        op.running = running
        op.cond = cond
        op.key = None
        append(op)
    return out


def build(cns, shared: bool, running: bool = True, conds=None) -> list[Op]:
    """The operators of the forest (``shared=False``) or the mesh, children before parents.

    Joins start ``running`` and get their condition from ``conds`` (label ->
    ``join_condition``) when given.

    The mesh shares the operator of every common CN prefix: a join is found
    by (its left operator, its position tuple).  CNGen emits the CNs grown
    from one tree consecutively, so the prefix shared with the previous CN
    is taken from its chain without a lookup."""
    ops: list[Op] = []
    index: dict = {}
    chain: list = []     # the previous CN's operators, by position
    last = ()
    with collector_off():
        for cn in cns:
            same = 0
            if shared:
                n = min(len(cn), len(last)) - 1
                while same < n and cn[same] == last[same]:
                    same += 1
                del chain[same:]
            else:
                chain = []
            prev = chain[-1] if chain else None
            top = len(cn) - 1
            for i in range(same, len(cn)):
                entry = cn[i]
                # a CN is no other CN's prefix: its top operator is never shared
                op = index.get((prev, entry)) if shared and i < top else None
                if op is None:
                    label = entry[3]
                    op = Op(i, (entry[0], entry[1]), entry[2], label, prev, running,
                            conds[label] if conds is not None and prev is not None else None)
                    if shared and i < top:
                        index[(prev, entry)] = op
                    ops.append(op)
                    if prev is not None:
                        prev.add_parent(op)
                chain.append(op)
                prev = op
            prev.cn = True
            last = cn
    return ops


def grow_mesh(schema, n_keywords: int, t_max: int, running: bool = True, conds=None,
              root_keyword: int = 0) -> list[Op]:
    """The mesh built in parallel with CNGen (paper Section 3.3): the same
    operators, in the same order, as ``build(cngen(...), shared=True)``,
    without the list of CNs.

    Every tree CNGen grows gets a record ``[op, parent record, entry, pos]``;
    its join is made when the first CN grows from it (a tree no CN grows from
    has no operator), and each CN found by expanding a tree becomes a join on
    that tree's operator."""
    nodes, nid, adjacency, rbit = expanded_schema(schema, n_keywords, t_max, root_keyword)
    ops: list[Op] = []
    append = ops.append

    def materialise(rec) -> Op:
        chain = []
        while rec is not None and rec[0] is None:
            chain.append(rec)
            rec = rec[1]
        prev = rec[0] if rec is not None else None
        for r in reversed(chain):
            e = r[2]
            if prev is None:
                op = Op(0, (e[0], e[1]), -1, None, None, running)
            else:
                label = e[3]
                op = Op(r[3], (e[0], e[1]), e[2], label, prev, running,
                        conds[label] if conds is not None else None)
                prev.add_parent(op)
            append(op)
            r[0] = prev = op
        return prev

    # (node, parent position, label, condition) of every CN position CNGen can emit, by
    # the entry's identity: the node tuples are the expanded schema's own (shared by
    # millions of joins at |K| = 5), and nothing is hashed per join
    leaf_args = {id(e): (nodes[a[0]], e[2], e[3], conds[e[3]] if conds is not None else None)
                 for adj in adjacency for a in adj for e in a[3]}
    with collector_off():
        for root in nodes:
            if not root[1] & rbit:
                continue
            cluster = Cluster(root, nid, adjacency, n_keywords, t_max, rbit)
            first = cluster.first()
            if root[1] == cluster.full:  # the one-node CN
                append(Op(0, root, -1, None, None, running, cn=True))
                continue
            queue = deque([(first, [None, None, first[0][0], 0])])
            found: list = []
            while queue:
                state, rec = queue.popleft()
                grown: list = []
                cluster.expand(state, found, grown, leaves=True)
                if found:  # the last positions of the CNs grown from this tree
                    prev = rec[0] or materialise(rec)
                    new = cn_join_ops((prev, n, pp, lab, running, c)
                                      for n, pp, lab, c in (leaf_args[id(e)] for e in found))
                    ops.extend(new)
                    if prev.parents:
                        prev.parents.extend(new)
                    else:
                        prev.parents = new
                    found.clear()
                for g in grown:
                    queue.append((g, [None, rec, g[0][-1], rec[3] + 1]))
    return ops


def join_condition(schema, label):
    """(attribute of the parent-position tuple, attribute of the new tuple) for a label."""
    edge_id, parent_plays_left = label
    e = next(e for e in schema.edges if e.id == edge_id)
    return (e.left_attr, e.right_attr) if parent_plays_left else (e.right_attr, e.left_attr)
