"""Operator trees and the operator mesh (paper Section 3.3, Figures 3.6-3.8).

Every CN (``engines.kws.cngen``) maps to a left-deep operator tree: position
0 is the leaf source of the root node, position ``i`` a join of the tree of
positions ``0..i-1`` (left) with the source of node ``i`` (right) on the
label joining node ``i`` to its parent position.  A join refuses a right
tuple already in the left composite (Figure 3.7).

``build(cns, shared)``:
- ``shared=False``: the forest, one private chain of operators per CN;
- ``shared=True``: the mesh, one cluster per root node, joins shared by all
  CNs with the same prefix (the trees CNGen grew on the way), each join's
  output buffer the left input of all its parents (shared buffers).
Sources (one per expanded-schema node) are shared in both: they are
selections, the same for every tree.

A composite is ``(t_end, rows)``: the tuples by position, and the earliest
window end (``INF`` in the positive-negative model).
"""
from __future__ import annotations

INF = 1 << 62


class Op:
    """A source leaf (``left is None``) or a join of ``left`` with the source ``right``."""

    __slots__ = ("pos", "node", "parent_pos", "label", "left", "right", "parents", "cn",
                 "out", "running", "shape", "cond", "key")

    def __init__(self, pos, node, parent_pos, label, left, shape):
        self.pos = pos
        self.node = node                 # (relation, kbits) of the newest position
        self.parent_pos = parent_pos     # position this node joins with (-1: leaf)
        self.label = label               # (edge_id, parent_plays_left) or None
        self.left = left                 # Op or None
        self.right = node if left is not None else None
        self.parents: list = []
        self.cn = False                  # feeds the output operator
        self.out: list = []              # composites (t_end, rows)
        self.running = True
        self.shape = shape               # ((parent_pos, label), ...) for positions 0..pos
        self.cond = None                 # (parent attribute, new attribute), set by the engine
        self.key = None                  # the CN prefix it evaluates (partial mesh)

    def __getstate__(self):
        return {k: getattr(self, k) for k in self.__slots__}

    def __setstate__(self, state):
        for k, v in state.items():
            setattr(self, k, v)


def build(cns, shared: bool) -> list[Op]:
    """The operators of the forest (``shared=False``) or the mesh, children before parents."""
    ops: list[Op] = []
    index: dict = {}
    for k, cn in enumerate(cns):
        prev = None
        for i, (rel, kbits, parent_pos, label) in enumerate(cn):
            key = (cn[: i + 1] if shared else (k, i))
            op = index.get(key)
            if op is None:
                shape = (prev.shape if prev else ()) + ((parent_pos, label),)
                op = Op(i, (rel, kbits), parent_pos, label, prev, shape)
                index[key] = op
                ops.append(op)
                if prev is not None:
                    prev.parents.append(op)
            prev = op
        prev.cn = True
    return ops


def join_condition(schema, label):
    """(attribute of the parent-position tuple, attribute of the new tuple) for a label."""
    edge_id, parent_plays_left = label
    e = next(e for e in schema.edges if e.id == edge_id)
    return (e.left_attr, e.right_attr) if parent_plays_left else (e.right_attr, e.left_attr)
