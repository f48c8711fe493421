"""Numba kernels of BIC (Zhang, Bonifati, Oezsu, PVLDB 17(10) 2024; TR Sections 4-6).

Plain ``@njit`` functions over flat numpy arrays (analysis note Section 8.1);
``engines.connectivity.bic.BicEngine`` owns the arrays and calls ``run``.

Layout (row constants below):

- ``st`` int64 scalars: current slot, deferred rollover, epochs, counters.
- ``V`` int32 ``(10, vcap)``: per vertex, the forward buffer F (union-find with
  path halving), the backward buffer B (union by size, no compression, edge
  labels and vertex labels, TR Section 5 / note Section 4) and the heads of the
  BFBG edge lists of F-roots.  Stamps equal to the epoch mean "present".
- ``C`` int32 ``(3, ccap)``: the raw edges of the current chunk and their slot.
- ``E`` int32 ``(4, ecap)`` + ``M`` uint64 ``(ecap, W)``: BFBG edges ``(x_B, y_F)``
  with their index bitsets (note Section 5); ``HK``/``HV``: an open-addressing
  pair index ``(x, y) -> edge``.  Keys of absorbed F-roots go stale and are
  never looked up again (F-roots never come back within a chunk), so the table
  needs no deletions.
- ``U`` int32 ``(2, 2 vcap)``: the once-per-window union-find over BFBG edges
  valid at ``j`` (note Section 6, last bullet); B-node ``x`` is ``x``, F-node
  ``y`` is ``vcap + y``.

Slots are time driven (note Section 8.4): slot ``sigma = (t - t0) div g``,
``g = gcd(r, s)``, chunks of ``K = r/g`` slots, window ``n`` spans slots
``n*m .. n*m + K - 1`` and is evaluated when slot ``n*m + K - 1`` is closed.
"""
from __future__ import annotations

import numpy as np
from numba import njit

# st
CUR, PEND, COUNT, F_EP, B_EP, BF_EP, B_NV, E_CNT, H_USED, U_EP, NW, RESUME = range(12)
N_ST = 12
# V rows
F_STAMP, F_PARENT, F_SIZE, B_STAMP, B_PARENT, B_SIZE, B_ELABEL, B_VLABEL, HF_STAMP, HF_HEAD = range(10)
N_V = 10
# C rows
CU, CV, CP = range(3)
# E rows
EB, EF, ENEXT, EALIVE = range(4)
# U rows
U_STAMP, U_PARENT = range(2)

# room kept free in E and the pair index before an edge is applied: two
# registrations of at most (depth of B + 1) <= 33 edges each
EDGE_HEADROOM = 80
ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
ONE = np.uint64(1)
ZERO = np.uint64(0)


@njit(cache=True)
def f_find(f_parent, x):
    """Root of ``x`` in F, halving the path (F is only ever queried live)."""
    while f_parent[x] != x:
        f_parent[x] = f_parent[f_parent[x]]
        x = f_parent[x]
    return x


@njit(cache=True)
def b_find_at(V, b_epoch, x, j):
    """Root of ``x`` in snapshot ``b[j]`` (TR Lemma 5.6: labels never increase
    upwards, so stop at the first tree edge labelled below ``j``); -1 if absent."""
    if V[B_STAMP, x] != b_epoch or V[B_VLABEL, x] < j:
        return -1
    while V[B_PARENT, x] != -1 and V[B_ELABEL, x] >= j:
        x = V[B_PARENT, x]
    return x


@njit(cache=True)
def _slot(x, y, mask):
    h = np.int64(x) * 2654435761 + np.int64(y) * 2246822519   # < 2**63: no overflow
    h ^= h >> 29
    return h & mask


@njit(cache=True)
def pair_get(HK, HV, x, y):
    mask = HK.shape[0] - 1
    key = (np.int64(x) << 32) | np.int64(y)
    i = _slot(x, y, mask)
    while HK[i] != -1:
        if HK[i] == key:
            return HV[i]
        i = (i + 1) & mask
    return -1


@njit(cache=True)
def pair_put(HK, HV, x, y, e):
    mask = HK.shape[0] - 1
    key = (np.int64(x) << 32) | np.int64(y)
    i = _slot(x, y, mask)
    while HK[i] != -1 and HK[i] != key:
        i = (i + 1) & mask
    HK[i] = key
    HV[i] = e


@njit(cache=True)
def rehash(E, e_cnt, HK, HV):
    """Fill an empty (all -1) pair index with the live edges; returns the key count."""
    n = 0
    for e in range(e_cnt):
        if E[EALIVE, e]:
            pair_put(HK, HV, E[EB, e], E[EF, e], e)
            n += 1
    return n


@njit(cache=True)
def _set_bits(M, e, a, hi):
    """Index set of edge ``e`` |= {a..hi} (built per 64-bit word, no ``1 << 64``)."""
    for k in range(M.shape[1]):
        lo_b = max(a - 64 * k, 0)
        hi_b = min(hi - 64 * k, 63)
        if lo_b <= hi_b:
            M[e, k] |= (ALL_ONES >> np.uint64(63 - (hi_b - lo_b))) << np.uint64(lo_b)


@njit(cache=True)
def _add_bits(st, V, E, M, HK, HV, x, y, a, hi):
    """BFBG edge ``(x_B, y_F)`` gets the indices ``a..hi`` (created if new)."""
    e = pair_get(HK, HV, x, y)
    if e < 0:
        e = st[E_CNT]
        st[E_CNT] += 1
        E[EB, e] = x
        E[EF, e] = y
        E[EALIVE, e] = 1
        M[e, :] = ZERO
        if V[HF_STAMP, y] != st[BF_EP]:
            V[HF_STAMP, y] = st[BF_EP]
            V[HF_HEAD, y] = -1
        E[ENEXT, e] = V[HF_HEAD, y]
        V[HF_HEAD, y] = e
        pair_put(HK, HV, x, y, e)
        st[H_USED] += 1
    _set_bits(M, e, a, hi)


@njit(cache=True)
def register(st, V, E, M, HK, HV, w, y, j):
    """First appearance of ``w`` in F (root ``y``) at snapshot index ``j``:
    one upward walk in B gives w's root in every ``b[k]``, ``j <= k <= L(w)``
    (note Section 4.3, edge-label derivation: correct with self-loops)."""
    if V[B_STAMP, w] != st[B_EP]:
        return
    hi = V[B_VLABEL, w]
    x = w
    while hi >= j:
        par = V[B_PARENT, x]
        lab = V[B_ELABEL, x]
        lo = 1 if par == -1 else lab + 1
        a = max(lo, j)
        if a <= hi:
            _add_bits(st, V, E, M, HK, HV, x, y, a, hi)
        if par == -1 or lab < j:
            return
        hi = lab
        x = par


@njit(cache=True)
def move(st, V, E, M, HK, HV, o, n):
    """F-root ``o`` was absorbed by ``n``: re-point o's BFBG edges to ``n``,
    OR-ing into an existing ``(x, n)`` edge (note Section 5.3)."""
    bfe = st[BF_EP]
    if V[HF_STAMP, o] != bfe:
        return
    e = V[HF_HEAD, o]
    V[HF_HEAD, o] = -1
    if V[HF_STAMP, n] != bfe:
        V[HF_STAMP, n] = bfe
        V[HF_HEAD, n] = -1
    while e != -1:
        nxt = E[ENEXT, e]
        x = E[EB, e]
        e2 = pair_get(HK, HV, x, n)
        if e2 >= 0:
            for k in range(M.shape[1]):
                M[e2, k] |= M[e, k]
            E[EALIVE, e] = 0
        else:
            E[EF, e] = n
            pair_put(HK, HV, x, n, e)
            st[H_USED] += 1
            E[ENEXT, e] = V[HF_HEAD, n]
            V[HF_HEAD, n] = e
        e = nxt


@njit(cache=True)
def build_backward(st, V, C):
    """B of the completed chunk by a reverse scan over slots K-1..1: union by
    size (ties: the source's root stays), each new tree edge labelled with its
    slot, each vertex labelled with the slot it is first met in; no path
    compression (TR Section 5.2, note Section 4)."""
    st[B_EP] += 1
    bep = st[B_EP]
    nv = 0
    e = st[COUNT] - 1
    while e >= 0 and C[CP, e] >= 1:
        j = C[CP, e]
        x = C[CU, e]
        y = C[CV, e]
        for w in (x, y):
            if V[B_STAMP, w] != bep:
                V[B_STAMP, w] = bep
                V[B_PARENT, w] = -1
                V[B_SIZE, w] = 1
                V[B_VLABEL, w] = j
                nv += 1
        while V[B_PARENT, x] != -1:
            x = V[B_PARENT, x]
        while V[B_PARENT, y] != -1:
            y = V[B_PARENT, y]
        if x != y:
            if V[B_SIZE, x] < V[B_SIZE, y]:
                x, y = y, x
            V[B_PARENT, y] = x
            V[B_ELABEL, y] = j
            V[B_SIZE, x] += V[B_SIZE, y]
        e -= 1
    st[B_NV] = nv


@njit(cache=True)
def rollover(st, V, C, HK):
    """Chunk completed (note Section 8.3): build B in place, empty F, the BFBG
    and the chunk buffer."""
    build_backward(st, V, C)
    st[F_EP] += 1
    st[BF_EP] += 1
    st[E_CNT] = 0
    if st[H_USED] > 0:
        HK[:] = -1
        st[H_USED] = 0
    st[COUNT] = 0
    st[PEND] = 0


@njit(cache=True)
def _u_find(U, x, ep):
    if U[U_STAMP, x] != ep:
        U[U_STAMP, x] = ep
        U[U_PARENT, x] = x
        return x
    while U[U_PARENT, x] != x:
        U[U_PARENT, x] = U[U_PARENT, U[U_PARENT, x]]
        x = U[U_PARENT, x]
    return x


@njit(cache=True)
def answer_window(st, V, U, E, M, qa, qb, j, out, row, pend):
    """Answers of one window, query procedure of note Section 6: ``j == 0`` is
    the final forward buffer alone; otherwise ``b[j] (+) f[j-1]`` with the F-root
    and B-root early exits, then one union-find over the BFBG edges whose index
    set holds ``j``, built only if some query needs it."""
    f_parent = V[F_PARENT]
    fe = st[F_EP]
    if j == 0:
        for q in range(qa.shape[0]):
            a = qa[q]
            b = qb[q]
            if V[F_STAMP, a] == fe and V[F_STAMP, b] == fe:
                out[row, q] = f_find(f_parent, a) == f_find(f_parent, b)
        return
    bep = st[B_EP]
    vcap = V.shape[1]
    npend = 0
    for q in range(qa.shape[0]):
        a = qa[q]
        b = qb[q]
        aF = f_find(f_parent, a) if V[F_STAMP, a] == fe else -1
        bF = f_find(f_parent, b) if V[F_STAMP, b] == fe else -1
        aB = -2
        bB = -2
        if aF == -1:
            aB = b_find_at(V, bep, a, j)
            if aB == -1:
                continue
        if bF == -1:
            bB = b_find_at(V, bep, b, j)
            if bB == -1:
                continue
        if aF != -1 and aF == bF:
            out[row, q] = True
            continue
        if aB == -2:
            aB = b_find_at(V, bep, a, j)
        if bB == -2:
            bB = b_find_at(V, bep, b, j)
        if aB != -1 and aB == bB:
            out[row, q] = True
            continue
        # an endpoint in both buffers is registered at j, which bridges its roots
        pend[0, npend] = q
        pend[1, npend] = aF + vcap if aF != -1 else aB
        pend[2, npend] = bF + vcap if bF != -1 else bB
        npend += 1
    if npend == 0:
        return
    st[U_EP] += 1
    ep = st[U_EP]
    word = j >> 6
    bit = np.uint64(j & 63)
    for e in range(st[E_CNT]):
        if E[EALIVE, e] and (M[e, word] >> bit) & ONE:
            x = _u_find(U, E[EB, e], ep)
            y = _u_find(U, E[EF, e] + vcap, ep)
            if x != y:
                U[U_PARENT, x] = y
    for k in range(npend):
        out[row, pend[0, k]] = _u_find(U, pend[1, k], ep) == _u_find(U, pend[2, k], ep)


@njit(cache=True)
def close_to(st, V, U, C, E, M, HK, qa, qb, target, K, m, nw0, out, pend):
    """Close slots ``cur .. target-1``, evaluating each window whose last slot
    closes and rolling the chunk over lazily (the rollover after a ``j = 0``
    window waits for the next slot or edge, so that window stays queryable).
    Once everything is empty at a chunk start, the windows ending before
    ``target`` are empty: their rows stay all false and ``cur`` jumps."""
    while st[CUR] < target:
        if st[PEND]:
            rollover(st, V, C, HK)
        cur = st[CUR]
        if cur % K == 0 and st[COUNT] == 0 and st[B_NV] == 0:
            n_hi = (target - K) // m + 1 if target >= K else 0
            if n_hi > st[NW]:
                st[NW] = n_hi
            st[CUR] = target
            return
        a = cur + 1 - K
        if a >= 0 and a % m == 0:
            n = a // m
            answer_window(st, V, U, E, M, qa, qb, a % K, out, n - nw0, pend)
            st[NW] = n + 1
        if (cur + 1) % K == 0:
            st[PEND] = 1
        st[CUR] = cur + 1


@njit(cache=True)
def run(st, V, U, C, E, M, HK, HV, qa, qb, sigma, u, v, i0, target, K, m, nw0, out):
    """Apply edges ``i0..`` (slots ``sigma``, dense ids ``u``, ``v``) in one loop,
    closing slots and evaluating windows on the way, then close up to slot
    ``target``.  Returns 0 when done, or 1 (chunk buffer) / 2 (BFBG arrays) when
    an array must grow first: ``st[RESUME]`` is the edge to resume from."""
    pend = np.empty((3, max(qa.shape[0], 1)), dtype=np.int64)
    f_parent = V[F_PARENT]
    for i in range(i0, sigma.shape[0]):
        s = sigma[i]
        if st[CUR] < s:
            close_to(st, V, U, C, E, M, HK, qa, qb, s, K, m, nw0, out, pend)
        if st[PEND]:
            rollover(st, V, C, HK)
        p = s % K
        j = p + 1
        bfbg = j <= K - 1 and st[B_NV] > 0   # the last slot feeds a j = 0 window: F only
        cnt = st[COUNT]
        if cnt >= C.shape[1]:
            st[RESUME] = i
            return 1
        if bfbg and (st[E_CNT] + EDGE_HEADROOM > E.shape[1]
                     or 2 * (st[H_USED] + st[E_CNT] + EDGE_HEADROOM) > HK.shape[0]):
            st[RESUME] = i
            return 2
        x = u[i]
        y = v[i]
        C[CU, cnt] = x
        C[CV, cnt] = y
        C[CP, cnt] = p
        st[COUNT] = cnt + 1
        # forward buffer: union by size; "new in F" is the register-once test
        fe = st[F_EP]
        new_x = V[F_STAMP, x] != fe
        if new_x:
            V[F_STAMP, x] = fe
            V[F_PARENT, x] = x
            V[F_SIZE, x] = 1
        new_y = V[F_STAMP, y] != fe
        if new_y:
            V[F_STAMP, y] = fe
            V[F_PARENT, y] = y
            V[F_SIZE, y] = 1
        rx = f_find(f_parent, x)
        ry = f_find(f_parent, y)
        root = rx
        absorbed = -1
        if rx != ry:
            if V[F_SIZE, rx] >= V[F_SIZE, ry]:
                absorbed = ry
            else:
                root = ry
                absorbed = rx
            V[F_PARENT, absorbed] = root
            V[F_SIZE, root] += V[F_SIZE, absorbed]
        if bfbg:
            if absorbed != -1:
                move(st, V, E, M, HK, HV, absorbed, root)
            if new_x:
                register(st, V, E, M, HK, HV, x, root, j)
            if new_y:
                register(st, V, E, M, HK, HV, y, root, j)
    close_to(st, V, U, C, E, M, HK, qa, qb, target, K, m, nw0, out, pend)
    return 0


@njit(cache=True)
def answer_pair(st, V, U, E, M, a, b, j):
    """``Q(a, b)`` on the current state at window offset ``j`` (ad-hoc query)."""
    qa = np.empty(1, dtype=np.int64)
    qb = np.empty(1, dtype=np.int64)
    qa[0] = a
    qb[0] = b
    out = np.zeros((1, 1), dtype=np.bool_)
    pend = np.empty((3, 1), dtype=np.int64)
    answer_window(st, V, U, E, M, qa, qb, j, out, 0, pend)
    return out[0, 0]
