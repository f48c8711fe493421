"""Numba kernels of BIC (Zhang, Bonifati, Oezsu, PVLDB 17(10) 2024; TR Sections 4-6).

Plain ``@njit`` functions over flat numpy arrays (analysis note Section 8.1);
``engines.connectivity.bic.BicEngine`` owns the arrays and calls ``run``.

Layout (column constants below; records are vertex- or edge-major so that one
vertex or edge touches one cache line, which is what the random accesses cost):

- ``st`` int64 scalars: current slot, deferred rollover, epochs, counters.
- ``V`` int32 ``(vcap, 8)``: per vertex (one 32-byte record), the forward
  buffer F (union-find with path halving) with the head of an F-root's BFBG
  edge list, and the backward buffer B (union by size, no compression, edge
  labels and vertex labels, TR Section 5 / note Section 4).  Stamps equal to
  the epoch mean "present"; B's sizes borrow the edge-list column while B is
  built (F is discarded right after).
- ``C`` int32 ``(3, ccap)``: the raw edges of the current chunk and their slot
  (while a backward build is deferred, ``st[C_OLD]`` edges of the completed
  chunk come first: ``rollover`` and ``settle``).
- ``E`` int32 ``(ecap, 4)`` + ``M`` uint64 ``(ecap, W)``: BFBG edges ``(x_B, y_F)``
  with their index bitsets (note Section 5) in one list per F-root; ``H``
  int64 ``(hcap, 2)``: an open-addressing pair index ``(x, y) -> edge`` for
  F-roots larger than ``T_SMALL`` (small roots scan their own list), so a
  registration adds bits to an existing pair.
- Moves (note Section 5.3) re-point the absorbed root's edges and splice its
  list, without looking for an existing ``(x, n)`` pair to merge into: a
  duplicate pair is harmless to the union-find over the BFBG, and on random
  streams fewer than 3% of moved edges would merge, while the lookups were a
  third of the kernel's time.  Keys of absorbed roots go stale and are never
  looked up again (F-roots never come back within a chunk): no deletions.
- ``U`` int32 ``(2 vcap, 2)``: the once-per-window union-find over BFBG edges
  valid at ``j`` (note Section 6, last bullet): rows ``< vcap`` are B-nodes,
  row ``vcap + y`` holds F-root ``y``'s representative B-node.  ``settle``
  borrows its stamps to mark the vertices it has replayed.

Slots are time driven (note Section 8.4): slot ``sigma = (t - t0) div g``,
``g = gcd(r, s)``, chunks of ``K = r/g`` slots, window ``n`` spans slots
``n*m .. n*m + K - 1`` and is evaluated when slot ``n*m + K - 1`` is closed.
"""
from __future__ import annotations

import numpy as np
from numba import njit

# st
CUR, PEND, COUNT, F_EP, B_EP, B_NV, E_CNT, H_USED, U_EP, NW, RESUME, C_OLD, REPLAY, DEFER = \
    range(14)
N_ST = 14
# V columns
F_STAMP, F_PARENT, F_SIZE, HF_HEAD, B_STAMP, B_PARENT, B_ELABEL, B_VLABEL = range(8)
B_SIZE = HF_HEAD   # only while B is built
N_V = 8
# C rows
CU, CV, CP = range(3)
# E columns
EB, EF, ENEXT = range(3)
N_E = 4
# U columns
U_STAMP, U_PARENT = range(2)

# room kept free in E and the pair index before an edge is applied: two
# registrations of at most (depth of B + 1) <= 33 edges each
EDGE_HEADROOM = 80
# F-roots of at most T_SMALL vertices find their pairs by scanning their own
# (short, cache-warm) edge list; larger roots use the pair index, filled when
# a root first grows past T_SMALL (its list then holds at most 2 T_SMALL
# registrations' edges)
T_SMALL = 8
H_HEADROOM = EDGE_HEADROOM + 2 * T_SMALL * 34
# default st[DEFER]: the backward build of a completed chunk waits until the
# next chunk holds this many edges (or a slot closes, or an ad-hoc query or
# inspection needs B), so the call whose edge completes the chunk, which also
# answers the chunk's last window, does not pay it (see ``rollover``)
BUILD_DEFER = 1024
ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
ONE = np.uint64(1)
ZERO = np.uint64(0)


@njit(cache=True)
def f_find(V, x):
    """Root of ``x`` in F, halving the path (F is only ever queried live)."""
    while V[x, F_PARENT] != x:
        V[x, F_PARENT] = V[V[x, F_PARENT], F_PARENT]
        x = V[x, F_PARENT]
    return x


@njit(cache=True)
def b_find_at(V, b_epoch, x, j):
    """Root of ``x`` in snapshot ``b[j]`` (TR Lemma 5.6: labels never increase
    upwards, so stop at the first tree edge labelled below ``j``); -1 if absent."""
    if V[x, B_STAMP] != b_epoch or V[x, B_VLABEL] < j:
        return -1
    while V[x, B_PARENT] != -1 and V[x, B_ELABEL] >= j:
        x = V[x, B_PARENT]
    return x


@njit(cache=True)
def _slot(x, y, mask):
    h = np.int64(x) * 2654435761 + np.int64(y) * 2246822519   # < 2**63: no overflow
    h ^= h >> 29
    return h & mask


@njit(cache=True)
def pair_get(H, x, y):
    mask = H.shape[0] - 1
    key = (np.int64(x) << 32) | np.int64(y)
    i = _slot(x, y, mask)
    while H[i, 0] != -1:
        if H[i, 0] == key:
            return H[i, 1]
        i = (i + 1) & mask
    return -1


@njit(cache=True)
def pair_put(H, x, y, e):
    mask = H.shape[0] - 1
    key = (np.int64(x) << 32) | np.int64(y)
    i = _slot(x, y, mask)
    while H[i, 0] != -1 and H[i, 0] != key:
        i = (i + 1) & mask
    H[i, 0] = key
    H[i, 1] = e


@njit(cache=True)
def rehash(E, e_cnt, H):
    """Fill an empty (all -1) pair index with the edges' current pairs."""
    for e in range(e_cnt):
        pair_put(H, E[e, EB], E[e, EF], e)
    return e_cnt


@njit(cache=True)
def _set_bits(M, e, a, hi):
    """Index set of edge ``e`` |= {a..hi} (built per 64-bit word, no ``1 << 64``)."""
    for k in range(M.shape[1]):
        lo_b = max(a - 64 * k, 0)
        hi_b = min(hi - 64 * k, 63)
        if lo_b <= hi_b:
            M[e, k] |= (ALL_ONES >> np.uint64(63 - (hi_b - lo_b))) << np.uint64(lo_b)


@njit(cache=True)
def _find_pair(V, E, H, x, y):
    """The BFBG edge ``(x_B, y_F)`` of F-root ``y``, or -1."""
    e = V[y, HF_HEAD]
    if e == -1:
        return -1
    if V[y, F_SIZE] <= T_SMALL:
        while e != -1:
            if E[e, EB] == x:
                return e
            e = E[e, ENEXT]
        return -1
    return pair_get(H, x, y)


@njit(cache=True)
def index_pairs(st, V, E, H, y):
    """F-root ``y`` grew past T_SMALL: put its edges into the pair index."""
    e = V[y, HF_HEAD]
    while e != -1:
        pair_put(H, E[e, EB], y, e)
        st[H_USED] += 1
        e = E[e, ENEXT]


@njit(cache=True)
def _add_bits(st, V, E, M, H, x, y, a, hi):
    """BFBG edge ``(x_B, y_F)`` gets the indices ``a..hi`` (created if new)."""
    e = _find_pair(V, E, H, x, y)
    if e < 0:
        e = st[E_CNT]
        st[E_CNT] += 1
        E[e, EB] = x
        E[e, EF] = y
        M[e, :] = ZERO
        E[e, ENEXT] = V[y, HF_HEAD]
        V[y, HF_HEAD] = e
        if V[y, F_SIZE] > T_SMALL:
            pair_put(H, x, y, e)
            st[H_USED] += 1
    _set_bits(M, e, a, hi)


@njit(cache=True)
def register(st, V, E, M, H, w, y, j):
    """First appearance of ``w`` in F (root ``y``) at snapshot index ``j``:
    one upward walk in B gives w's root in every ``b[k]``, ``j <= k <= L(w)``
    (note Section 4.3, edge-label derivation: correct with self-loops)."""
    if V[w, B_STAMP] != st[B_EP]:
        return
    hi = V[w, B_VLABEL]
    x = w
    while hi >= j:
        par = V[x, B_PARENT]
        lab = V[x, B_ELABEL]
        lo = 1 if par == -1 else lab + 1
        a = max(lo, j)
        if a <= hi:
            _add_bits(st, V, E, M, H, x, y, a, hi)
        if par == -1 or lab < j:
            return
        hi = lab
        x = par


@njit(cache=True)
def move(V, E, o, n):
    """F-root ``o`` was absorbed by ``n``: re-point o's BFBG edges to ``n`` and
    splice o's list into n's (note Section 5.3; no merging, see above)."""
    e = V[o, HF_HEAD]
    if e == -1:
        return
    while True:
        E[e, EF] = n
        nxt = E[e, ENEXT]
        if nxt == -1:
            break
        e = nxt
    E[e, ENEXT] = V[n, HF_HEAD]
    V[n, HF_HEAD] = V[o, HF_HEAD]
    V[o, HF_HEAD] = -1


@njit(cache=True)
def build_backward(st, V, C, end):
    """B of the completed chunk (edges ``C[:, :end]``) by a reverse scan over
    slots K-1..1: union by size (ties: the source's root stays), each new tree
    edge labelled with its slot, each vertex labelled with the slot it is first
    met in; no path compression (TR Section 5.2, note Section 4)."""
    st[B_EP] += 1
    bep = st[B_EP]
    nv = 0
    e = end - 1
    while e >= 0 and C[CP, e] >= 1:
        j = C[CP, e]
        x = C[CU, e]
        y = C[CV, e]
        for w in (x, y):
            if V[w, B_STAMP] != bep:
                V[w, B_STAMP] = bep
                V[w, B_PARENT] = -1
                V[w, B_SIZE] = 1
                V[w, B_VLABEL] = j
                nv += 1
        while V[x, B_PARENT] != -1:
            x = V[x, B_PARENT]
        while V[y, B_PARENT] != -1:
            y = V[y, B_PARENT]
        if x != y:
            if V[x, B_SIZE] < V[y, B_SIZE]:
                x, y = y, x
            V[y, B_PARENT] = x
            V[y, B_ELABEL] = j
            V[x, B_SIZE] += V[y, B_SIZE]
        e -= 1
    st[B_NV] = nv


@njit(cache=True)
def rollover(st, V, C, H):
    """Chunk completed (note Section 8.3): empty F and the BFBG; B is built later
    (``settle``).  Until then the completed chunk's edges stay at the front of
    the chunk buffer, the new chunk's edges go in F only (no registration: B is
    not there yet) and are appended behind them."""
    st[F_EP] += 1
    st[E_CNT] = 0
    if st[H_USED] > 0:
        H[:, 0] = -1
        st[H_USED] = 0
    st[C_OLD] = st[COUNT]                 # >= 0: a build is pending
    st[PEND] = 0


@njit(cache=True)
def settle(st, V, U, C, E, M, H, K):
    """Finish a deferred rollover: build B from the completed chunk's edges,
    then register the new chunk's vertices that F took in meanwhile, each at
    the snapshot index of its first appearance with its current F-root (what
    registering at insertion and moving on every later root change would have
    left, up to duplicate pairs).  Returns 0, or 2 when E or the pair index
    must grow first (it resumes from ``st[REPLAY]``; -1 = nothing to replay)."""
    if st[C_OLD] >= 0:
        old = st[C_OLD]
        n_new = st[COUNT] - old
        build_backward(st, V, C, old)
        for e in range(n_new):
            C[CU, e] = C[CU, old + e]
            C[CV, e] = C[CV, old + e]
            C[CP, e] = C[CP, old + e]
            V[C[CU, e], HF_HEAD] = -1     # B_SIZE borrowed the column while B was built
            V[C[CV, e], HF_HEAD] = -1
        st[COUNT] = n_new
        st[C_OLD] = -1
        st[U_EP] += 1                     # U stamps mark vertices already replayed
        st[REPLAY] = 0 if st[B_NV] > 0 and n_new > 0 else -1
    if st[REPLAY] < 0:
        return 0
    ep = st[U_EP]
    for e in range(st[REPLAY], st[COUNT]):
        if (st[E_CNT] + EDGE_HEADROOM > E.shape[0]
                or 2 * (st[H_USED] + H_HEADROOM) > H.shape[0]):
            st[REPLAY] = e
            return 2
        j = C[CP, e] + 1
        for w in (C[CU, e], C[CV, e]):
            if U[w, U_STAMP] != ep:
                U[w, U_STAMP] = ep
                if j <= K - 1:
                    register(st, V, E, M, H, w, f_find(V, w), j)
    st[REPLAY] = -1
    return 0


@njit(cache=True)
def unsettled(st):
    """B of the last completed chunk not built yet, or its registrations not replayed."""
    return st[C_OLD] >= 0 or st[REPLAY] >= 0


@njit(cache=True)
def _u_find(U, x, ep):
    """Find in the per-window union-find (parent < 0: a root of size -parent)."""
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


@njit(cache=True)
def _bfbg_node(U, node, vcap, ep):
    """Set of a query's BFBG node at this window: a B-node's root, or the root
    of an F-root's representative; -1 for an F-root without valid edges (its
    component is its F-tree alone, which the intra-forward test already saw)."""
    if node < vcap:
        return _u_find(U, node, ep)
    if U[node, U_STAMP] != ep:
        return -1
    return _u_find(U, U[node, U_PARENT], ep)


@njit(cache=True)
def answer_window(st, V, U, E, M, qa, qb, j, out, row, pend):
    """Answers of one window, query procedure of note Section 6: ``j == 0`` is
    the final forward buffer alone; otherwise ``b[j] (+) f[j-1]`` with the F-root
    and B-root early exits, then one union-find over the BFBG edges whose index
    set holds ``j``, built only if some query needs it."""
    fe = st[F_EP]
    if j == 0:
        for q in range(qa.shape[0]):
            a = qa[q]
            b = qb[q]
            if V[a, F_STAMP] == fe and V[b, F_STAMP] == fe:
                out[row, q] = f_find(V, a) == f_find(V, b)
        return
    bep = st[B_EP]
    vcap = V.shape[0]
    npend = 0
    for q in range(qa.shape[0]):
        a = qa[q]
        b = qb[q]
        aF = f_find(V, a) if V[a, F_STAMP] == fe else -1
        bF = f_find(V, b) if V[b, F_STAMP] == fe else -1
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
    # Union-find over the B-nodes only: an F-root is represented by the first
    # B-node seen with it (rows vcap + y), so an F-root with a single valid edge
    # costs one store and no find.
    st[U_EP] += 1
    ep = st[U_EP]
    word = j >> 6
    bit = np.uint64(j & 63)
    for e in range(st[E_CNT]):
        if (M[e, word] >> bit) & ONE:
            fy = E[e, EF] + vcap
            if U[fy, U_STAMP] != ep:
                U[fy, U_STAMP] = ep
                U[fy, U_PARENT] = E[e, EB]
                continue
            x = _u_find(U, E[e, EB], ep)
            y = _u_find(U, U[fy, U_PARENT], ep)
            if x != y:                              # union by size
                if U[x, U_PARENT] > U[y, U_PARENT]:
                    x, y = y, x
                U[x, U_PARENT] += U[y, U_PARENT]
                U[y, U_PARENT] = x
    for k in range(npend):
        a = _bfbg_node(U, pend[1, k], vcap, ep)
        b = _bfbg_node(U, pend[2, k], vcap, ep)
        out[row, pend[0, k]] = a >= 0 and a == b


@njit(cache=True)
def close_to(st, V, U, C, E, M, H, qa, qb, target, K, m, nw0, out, pend):
    """Close slots ``cur .. target-1``, evaluating each window whose last slot
    closes and rolling the chunk over lazily (the rollover after a ``j = 0``
    window waits for the next slot or edge, so that window stays queryable;
    a deferred backward build is finished before any slot closes).
    Once everything is empty at a chunk start, the windows ending before
    ``target`` are empty: their rows stay all false and ``cur`` jumps.
    Returns 0, or 2 when the arrays must grow first (re-entrant)."""
    while st[CUR] < target:
        if st[PEND]:
            rollover(st, V, C, H)
        if unsettled(st) and settle(st, V, U, C, E, M, H, K):
            return 2
        cur = st[CUR]
        if cur % K == 0 and st[COUNT] == 0 and st[B_NV] == 0:
            n_hi = (target - K) // m + 1 if target >= K else 0
            if n_hi > st[NW]:
                st[NW] = n_hi
            st[CUR] = target
            return 0
        a = cur + 1 - K
        if a >= 0 and a % m == 0:
            n = a // m
            answer_window(st, V, U, E, M, qa, qb, a % K, out, n - nw0, pend)
            st[NW] = n + 1
        if (cur + 1) % K == 0:
            st[PEND] = 1
        st[CUR] = cur + 1
    return 0


@njit(cache=True)
def run(st, V, U, C, E, M, H, qa, qb, t, u, v, t0, g, i0, target, K, m, nw0, out):
    """Apply edges ``i0..`` (times ``t``, slot ``(t - t0) // g``; dense ids ``u``,
    ``v``) in one loop,
    closing slots and evaluating windows on the way, then close up to slot
    ``target``.  Returns 0 when done, or 1 (chunk buffer) / 2 (BFBG arrays) when
    an array must grow first: ``st[RESUME]`` is the edge to resume from."""
    pend = np.empty((3, max(qa.shape[0], 1)), dtype=np.int64)
    for i in range(i0, t.shape[0]):
        s = (t[i] - t0) // g
        if st[CUR] < s and close_to(st, V, U, C, E, M, H, qa, qb, s, K, m, nw0, out, pend):
            st[RESUME] = i
            return 2
        if st[PEND]:
            rollover(st, V, C, H)
        if (st[C_OLD] >= 0 and st[COUNT] - st[C_OLD] >= st[DEFER]) or st[REPLAY] >= 0:
            if settle(st, V, U, C, E, M, H, K):
                st[RESUME] = i
                return 2
        p = s % K
        j = p + 1
        # the last slot feeds a j = 0 window: F only; while B is deferred, F only
        bfbg = j <= K - 1 and st[B_NV] > 0 and st[C_OLD] < 0
        cnt = st[COUNT]
        if cnt >= C.shape[1]:
            st[RESUME] = i
            return 1
        if bfbg and (st[E_CNT] + EDGE_HEADROOM > E.shape[0]
                     or 2 * (st[H_USED] + H_HEADROOM) > H.shape[0]):
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
        new_x = V[x, F_STAMP] != fe
        if new_x:
            V[x, F_STAMP] = fe
            V[x, F_PARENT] = x
            V[x, F_SIZE] = 1
            V[x, HF_HEAD] = -1
        new_y = V[y, F_STAMP] != fe
        if new_y:
            V[y, F_STAMP] = fe
            V[y, F_PARENT] = y
            V[y, F_SIZE] = 1
            V[y, HF_HEAD] = -1
        rx = f_find(V, x)
        ry = f_find(V, y)
        root = rx
        absorbed = -1
        if rx != ry:
            if V[rx, F_SIZE] >= V[ry, F_SIZE]:
                absorbed = ry
            else:
                root = ry
                absorbed = rx
            V[absorbed, F_PARENT] = root
            V[root, F_SIZE] += V[absorbed, F_SIZE]
        if bfbg:
            if absorbed != -1:
                move(V, E, absorbed, root)
                if V[root, F_SIZE] > T_SMALL >= V[root, F_SIZE] - V[absorbed, F_SIZE]:
                    index_pairs(st, V, E, H, root)
            if new_x:
                register(st, V, E, M, H, x, root, j)
            if new_y:
                register(st, V, E, M, H, y, root, j)
    if close_to(st, V, U, C, E, M, H, qa, qb, target, K, m, nw0, out, pend):
        st[RESUME] = t.shape[0]
        return 2
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
