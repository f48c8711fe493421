"""Array kernels of the full mesh's layout (``streamspec.engines.kws.cn_joins``; paper
Section 3.3): which trees CNGen grew get an operator, and the CN joins grouped by right
node.  Only ``@njit`` functions over numpy arrays and scalars live here."""
from __future__ import annotations

import numpy as np

from streamspec.spec._numba import njit     # caches in the user cache directory


@njit(cache=True)
def trees_with_operators(tparent, cn_tree, cn_node):
    """Whether each tree gets a join operator: some CN grows from it or from a tree grown
    from it (a tree's parent tree comes before it)."""
    need = np.zeros(tparent.shape[0], np.bool_)
    for i in range(cn_tree.shape[0]):
        if cn_node[i] >= 0:
            need[cn_tree[i]] = True
    for q in range(tparent.shape[0] - 1, -1, -1):
        if need[q] and tparent[q] >= 0:
            need[tparent[q]] = True
    return need


@njit(cache=True)
def rows_by_right_node(cn_tree, cn_node, cn_ppos, cn_lab, tree_op, n_nodes):
    """The CN joins (``cn_node >= 0``) grouped by right node, in CNGen's order within a node
    (a counting sort): ``(ptr, left, ppos, label)``, the rows of node ``n`` at
    ``ptr[n]:ptr[n + 1]``, ``left`` the operator index of the tree each grows from."""
    ptr = np.zeros(n_nodes + 1, np.int64)
    for i in range(cn_node.shape[0]):
        if cn_node[i] >= 0:
            ptr[cn_node[i] + 1] += 1
    for n in range(n_nodes):
        ptr[n + 1] += ptr[n]
    total = ptr[n_nodes]
    left = np.empty(total, np.int32)
    ppos = np.empty(total, np.int8)
    label = np.empty(total, np.int32)
    fill = ptr[:-1].copy()
    for i in range(cn_node.shape[0]):
        n = cn_node[i]
        if n >= 0:
            k = fill[n]
            left[k] = tree_op[cn_tree[i]]
            ppos[k] = cn_ppos[i]
            label[k] = cn_lab[i]
            fill[n] = k + 1
    return ptr, left, ppos, label
