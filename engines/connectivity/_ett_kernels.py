"""Numba kernels of the Euler-tour trees (``streamspec.engines.connectivity.ett``).

Euler-tour trees: Henzinger and King 1995 (BIC technical report Section 2 and
reference [48]); the module docstring of ``ett.py`` maps these functions to
the tree operations.  Only ``@njit`` functions over one int64 array ``N`` of
shape ``(FIELDS, capacity)``: row ``LEFT``, ``RIGHT``, ``PARENT`` (-1: none),
``PRIO`` (treap priority), ``CNT`` (nodes in the subtree), ``VCNT`` (vertex
nodes in the subtree), ``ISV`` (1: vertex node, 0: arc), ``OWN`` (the node's
flag bits), ``AGG`` (OR of the flags in the subtree), ``LABEL`` (vertex or
edge id).  Split and merge are iterative (a treap's depth is O(log n) in
expectation, but numba recursion returning tuples is fragile): the path is
kept on a small stack and the aggregates pulled bottom-up.
"""
from __future__ import annotations

import numpy as np

from streamspec.spec._numba import njit

LEFT, RIGHT, PARENT, PRIO, CNT, VCNT, ISV, OWN, AGG, LABEL = range(10)
FIELDS = 10


@njit(cache=True)
def pull(N, x):
    c = 1
    vc = N[ISV, x]
    a = N[OWN, x]
    y = N[LEFT, x]
    if y != -1:
        c += N[CNT, y]
        vc += N[VCNT, y]
        a |= N[AGG, y]
    y = N[RIGHT, x]
    if y != -1:
        c += N[CNT, y]
        vc += N[VCNT, y]
        a |= N[AGG, y]
    N[CNT, x] = c
    N[VCNT, x] = vc
    N[AGG, x] = a


@njit(cache=True)
def merge(N, a, b):
    """The tour ``a`` followed by ``b`` (roots; -1 is empty); returns the root."""
    if a == -1:
        if b != -1:
            N[PARENT, b] = -1
        return b
    if b == -1:
        N[PARENT, a] = -1
        return a
    stack = np.empty(128, np.int64)
    depth = 0
    root = -1
    hook = -1
    hook_right = False
    while a != -1 and b != -1:
        if N[PRIO, a] > N[PRIO, b]:
            node = a            # a's left subtree stays; its right merges with b
            a = N[RIGHT, a]
            nxt_right = True
        else:
            node = b            # b's right subtree stays; a merges with its left
            b = N[LEFT, b]
            nxt_right = False
        if hook == -1:
            root = node
            N[PARENT, node] = -1
        else:
            if hook_right:
                N[RIGHT, hook] = node
            else:
                N[LEFT, hook] = node
            N[PARENT, node] = hook
        if depth == stack.shape[0]:
            bigger = np.empty(2 * depth, np.int64)
            bigger[:depth] = stack
            stack = bigger
        stack[depth] = node
        depth += 1
        hook = node
        hook_right = nxt_right
    rest = a if a != -1 else b
    if hook_right:
        N[RIGHT, hook] = rest
    else:
        N[LEFT, hook] = rest
    if rest != -1:
        N[PARENT, rest] = hook
    for i in range(depth - 1, -1, -1):
        pull(N, stack[i])
    return root


@njit(cache=True)
def split(N, t, k):
    """The first ``k`` positions of tour ``t`` and the rest (two roots, -1 empty)."""
    stack = np.empty(128, np.int64)
    depth = 0
    lroot = -1
    rroot = -1
    lhook = -1      # the last node of the left part's right spine
    rhook = -1      # the last node of the right part's left spine
    while t != -1:
        y = N[LEFT, t]
        lc = N[CNT, y] if y != -1 else 0
        if depth == stack.shape[0]:
            bigger = np.empty(2 * depth, np.int64)
            bigger[:depth] = stack
            stack = bigger
        stack[depth] = t
        depth += 1
        if k <= lc:             # t and its right subtree go right
            if rhook == -1:
                rroot = t
                N[PARENT, t] = -1
            else:
                N[LEFT, rhook] = t
                N[PARENT, t] = rhook
            rhook = t
            t = y
        else:                   # t and its left subtree go left
            if lhook == -1:
                lroot = t
                N[PARENT, t] = -1
            else:
                N[RIGHT, lhook] = t
                N[PARENT, t] = lhook
            lhook = t
            k -= lc + 1
            t = N[RIGHT, t]
    if lhook != -1:
        N[RIGHT, lhook] = -1
    if rhook != -1:
        N[LEFT, rhook] = -1
    for i in range(depth - 1, -1, -1):
        pull(N, stack[i])
    return lroot, rroot


@njit(cache=True)
def position(N, x):
    """(index of ``x`` in its tour, the tour's root)."""
    y = N[LEFT, x]
    i = N[CNT, y] if y != -1 else 0
    p = N[PARENT, x]
    while p != -1:
        if N[RIGHT, p] == x:
            y = N[LEFT, p]
            i += (N[CNT, y] if y != -1 else 0) + 1
        x = p
        p = N[PARENT, p]
    return i, x


@njit(cache=True)
def root(N, x):
    p = N[PARENT, x]
    while p != -1:
        x = p
        p = N[PARENT, p]
    return x


@njit(cache=True)
def reroot(N, x):
    i, t = position(N, x)
    if i == 0:
        return t
    a, b = split(N, t, i)
    return merge(N, b, a)


@njit(cache=True)
def link(N, xu, xv, a1, a2):
    tu = reroot(N, xu)
    tv = reroot(N, xv)
    return merge(N, merge(N, merge(N, tu, a1), tv), a2)


@njit(cache=True)
def cut(N, a1, a2):
    i1, t = position(N, a1)
    i2, _ = position(N, a2)
    if i1 > i2:
        i1, i2 = i2, i1
    x, rest = split(N, t, i1)
    _, rest = split(N, rest, 1)
    y, rest = split(N, rest, i2 - i1 - 1)
    _, z = split(N, rest, 1)
    return merge(N, x, z), y


@njit(cache=True)
def set_own(N, x, bits):
    N[OWN, x] = bits
    while x != -1:
        pull(N, x)
        x = N[PARENT, x]


@njit(cache=True)
def find_flag(N, t, bit):
    if t == -1 or not N[AGG, t] & bit:
        return -1
    while True:
        y = N[LEFT, t]
        if y != -1 and N[AGG, y] & bit:
            t = y
        elif N[OWN, t] & bit:
            return t
        else:
            t = N[RIGHT, t]


@njit(cache=True)
def tour_vertices(N, t, out):
    """Write the vertices of tour ``t`` into ``out``; returns how many."""
    if t == -1:
        return 0
    stack = np.empty(128, np.int64)
    stack[0] = t
    depth = 1
    k = 0
    while depth:
        depth -= 1
        x = stack[depth]
        if N[ISV, x]:
            out[k] = N[LABEL, x]
            k += 1
        for y in (N[LEFT, x], N[RIGHT, x]):
            if y != -1:
                if depth == stack.shape[0]:
                    bigger = np.empty(2 * depth, np.int64)
                    bigger[:depth] = stack
                    stack = bigger
                stack[depth] = y
                depth += 1
    return k


@njit(cache=True)
def init_node(N, x, prio, is_vertex, label):
    """Node ``x`` as a one-node tour."""
    N[LEFT, x] = -1
    N[RIGHT, x] = -1
    N[PARENT, x] = -1
    N[PRIO, x] = prio
    N[CNT, x] = 1
    N[VCNT, x] = is_vertex
    N[ISV, x] = is_vertex
    N[OWN, x] = 0
    N[AGG, x] = 0
    N[LABEL, x] = label
