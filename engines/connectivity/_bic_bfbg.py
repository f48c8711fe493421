"""BIC's forward/backward buffer finds and the bidirectional bridging graph (BFBG):
the pair index, index bitsets, registration and moves (BIC TR Section 6
and its appendix "Computing BFBGs").  Layout in ``streamspec.engines.connectivity._bic_layout``.

The functions here take the vertex records flat (``V.reshape(-1)``, addressed
through ``_bic_layout.at``), are compiled without numba's runtime
(``_nrt=False``: nothing here allocates, and with it every array handed to a
function is reference counted, atomic increments and decrements per call)
and are inlined into their callers at numba's IR level (``inline="always"``:
a call between compiled functions passes each array as its seven fields and
checks a status on return), the three fixes that made the MSF kernels fast
(``_msf_kernels``).
"""
from __future__ import annotations

import numpy as np
from streamspec.spec._numba import njit

from streamspec.engines.connectivity._bic_layout import (B_EP, E_CNT, H_USED, F_PARENT, F_SIZE, HF_HEAD,
    B_STAMP, B_PARENT, B_ELABEL, B_VLABEL, EB, EF, ENEXT, EBNEXT, F_EP, J_AT, J_EP, U_STAMP, U_PARENT,
    N_V, T_SMALL, ALL_ONES, ZERO, at)


@njit(cache=True, _nrt=False, inline="always")
def f_find(V, x):
    """Root of ``x`` in F, halving the path (F is only ever queried live)."""
    while True:
        p = V[at(x, F_PARENT)]
        if p == x:
            return x
        g = V[at(p, F_PARENT)]
        V[at(x, F_PARENT)] = g
        x = g


@njit(cache=True, _nrt=False, inline="always")
def b_find_at(V, b_epoch, x, j):
    """Root of ``x`` in snapshot ``b[j]`` (TR Lemma 5.6: labels never increase
    upwards, so stop at the first tree edge labelled below ``j``); -1 if absent."""
    if V[at(x, B_STAMP)] != b_epoch or V[at(x, B_VLABEL)] < j:
        return -1
    while True:
        p = V[at(x, B_PARENT)]
        if p == -1 or V[at(x, B_ELABEL)] < j:
            return x
        x = p


@njit(cache=True, _nrt=False, inline="always")
def u_find(U, x, ep):
    """Find in a union-find laid out as ``U`` or ``J`` (``_bic_layout``): a row
    whose stamp is not ``ep`` is a fresh singleton; parent < 0: a root of size
    -parent."""
    if U[x, U_STAMP] != ep:
        U[x, U_STAMP] = ep
        U[x, U_PARENT] = -1
        return x
    r = x
    while U[r, U_PARENT] >= 0:
        r = U[r, U_PARENT]
    while U[x, U_PARENT] >= 0 and U[x, U_PARENT] != r:   # full path compression
        nxt = U[x, U_PARENT]
        U[x, U_PARENT] = r
        x = nxt
    return r


@njit(cache=True, _nrt=False, inline="always")
def u_union(U, x, y, ep):
    """Union by size of the sets of rows ``x`` and ``y``."""
    x = u_find(U, x, ep)
    y = u_find(U, y, ep)
    if x != y:
        if U[x, U_PARENT] > U[y, U_PARENT]:
            x, y = y, x
        U[x, U_PARENT] += U[y, U_PARENT]
        U[y, U_PARENT] = x


@njit(cache=True, _nrt=False, inline="always")
def u_link(U, x, fy, ep):
    """BFBG edge from B-node ``x`` to the F-root of row ``fy`` in a union-find
    laid out as ``U``: an F-root's row holds a representative B-node (the first
    one linked to it) and is never part of the forest, so an F-root with a
    single edge costs one store and no find."""
    if U[fy, U_STAMP] != ep:
        U[fy, U_STAMP] = ep
        U[fy, U_PARENT] = x
        return
    u_union(U, x, U[fy, U_PARENT], ep)


@njit(cache=True, _nrt=False, inline="always")
def u_move(U, fo, fn, ep):
    """F-root row ``fo`` absorbed by row ``fn`` (``move``): their representatives join."""
    if U[fo, U_STAMP] != ep:
        return
    if U[fn, U_STAMP] != ep:
        U[fn, U_STAMP] = ep
        U[fn, U_PARENT] = U[fo, U_PARENT]
        return
    u_union(U, U[fo, U_PARENT], U[fn, U_PARENT], ep)


@njit(cache=True, _nrt=False, inline="always")
def _slot(x, y, mask):
    h = np.int64(x) * 2654435761 + np.int64(y) * 2246822519   # < 2**63: no overflow
    h ^= h >> 29
    return h & mask


@njit(cache=True, _nrt=False, inline="always")
def pair_get(H, x, y):
    mask = H.shape[0] - 1
    key = (np.int64(x) << 32) | np.int64(y)
    i = _slot(x, y, mask)
    while H[i, 0] != -1:
        if H[i, 0] == key:
            return H[i, 1]
        i = (i + 1) & mask
    return -1


@njit(cache=True, _nrt=False, inline="always")
def pair_put(H, x, y, e):
    mask = H.shape[0] - 1
    key = (np.int64(x) << 32) | np.int64(y)
    i = _slot(x, y, mask)
    while H[i, 0] != -1 and H[i, 0] != key:
        i = (i + 1) & mask
    H[i, 0] = key
    H[i, 1] = e


@njit(cache=True, _nrt=False)
def rehash(E, e_cnt, H):
    """Fill an empty (all -1) pair index with the edges' current pairs."""
    for e in range(e_cnt):
        pair_put(H, E[e, EB], E[e, EF], e)
    return e_cnt


@njit(cache=True, _nrt=False, inline="always")
def _set_bits(M, e, a, hi):
    """Index set of edge ``e`` |= {a..hi} (built per 64-bit word, no ``1 << 64``)."""
    for k in range(M.shape[1]):
        lo_b = max(a - 64 * k, 0)
        hi_b = min(hi - 64 * k, 63)
        if lo_b <= hi_b:
            M[e, k] |= (ALL_ONES >> np.uint64(63 - (hi_b - lo_b))) << np.uint64(lo_b)


@njit(cache=True, _nrt=False, inline="always")
def _find_pair(V, E, H, x, y):
    """The BFBG edge ``(x_B, y_F)`` of F-root ``y``, or -1."""
    e = V[at(y, HF_HEAD)]
    if e == -1:
        return -1
    if V[at(y, F_SIZE)] <= T_SMALL:
        while e != -1:
            if E[e, EB] == x:
                return e
            e = E[e, ENEXT]
        return -1
    return pair_get(H, x, y)


@njit(cache=True, _nrt=False, inline="always")
def index_pairs(st, V, E, H, y):
    """F-root ``y`` grew past T_SMALL: put its edges into the pair index."""
    e = V[at(y, HF_HEAD)]
    while e != -1:
        pair_put(H, E[e, EB], y, e)
        st[H_USED] += 1
        e = E[e, ENEXT]


@njit(cache=True, _nrt=False, inline="always")
def _add_bits(st, V, E, M, H, BH, J, x, y, a, hi):
    """BFBG edge ``(x_B, y_F)`` gets the indices ``a..hi`` (created if new);
    the kept union-find ``J`` gets the edge if it holds an index among them."""
    jk = st[J_AT]
    if a <= jk <= hi:
        u_link(J, x, V.shape[0] // N_V + y, st[J_EP])
    e = _find_pair(V, E, H, x, y)
    if e < 0:
        e = st[E_CNT]
        st[E_CNT] += 1
        E[e, EB] = x
        E[e, EF] = y
        M[e, :] = ZERO
        E[e, ENEXT] = V[at(y, HF_HEAD)]
        V[at(y, HF_HEAD)] = e
        fe = st[F_EP]                   # x's list (heads of past chunks are stale)
        h = BH[x]
        E[e, EBNEXT] = h & 0xFFFFFFFF if (h >> 32) == fe else -1
        BH[x] = (fe << 32) | e
        if V[at(y, F_SIZE)] > T_SMALL:
            pair_put(H, x, y, e)
            st[H_USED] += 1
    _set_bits(M, e, a, hi)


@njit(cache=True, _nrt=False, inline="always")
def register(st, V, E, M, H, BH, J, w, y, j):
    """First appearance of ``w`` in F (root ``y``) at snapshot index ``j``:
    one upward walk in B gives w's root in every ``b[k]``, ``j <= k <= L(w)``
    (TR Section 6.3, augmented UFTs; the edge-label derivation is correct with self-loops)."""
    if V[at(w, B_STAMP)] != st[B_EP]:
        return
    hi = V[at(w, B_VLABEL)]
    x = w
    while hi >= j:
        par = V[at(x, B_PARENT)]
        lab = V[at(x, B_ELABEL)]
        lo = 1 if par == -1 else lab + 1
        a = max(lo, j)
        if a <= hi:
            _add_bits(st, V, E, M, H, BH, J, x, y, a, hi)
        if par == -1 or lab < j:
            return
        hi = lab
        x = par


@njit(cache=True, _nrt=False, inline="always")
def move(V, E, o, n):
    """F-root ``o`` was absorbed by ``n``: re-point o's BFBG edges to ``n`` and
    splice o's list into n's (TR Section 6.1; no merging, see above)."""
    e = V[at(o, HF_HEAD)]
    if e == -1:
        return
    while True:
        E[e, EF] = n
        nxt = E[e, ENEXT]
        if nxt == -1:
            break
        e = nxt
    E[e, ENEXT] = V[at(n, HF_HEAD)]
    V[at(n, HF_HEAD)] = V[at(o, HF_HEAD)]
    V[at(o, HF_HEAD)] = -1
