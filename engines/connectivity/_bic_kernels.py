"""Numba kernels of BIC (Zhang, Bonifati, Oezsu, PVLDB 17(10) 2024; TR Sections 4-6):
slots, chunks and the backward build, window answers, and ``run``, the loop
``streamspec.engines.connectivity.bic.BicEngine`` calls.

Plain ``@njit`` functions over flat numpy arrays (the state of TR Sections 4-6 as arrays);
the arrays' layout is documented in ``streamspec.engines.connectivity._bic_layout``, the
BFBG operations are in ``streamspec.engines.connectivity._bic_bfbg``.

The entry points (``run``, ``settle``, ``answer_pair``) take the vertex records
``V`` as the engine holds them, ``(vcap, 8)``, and hand them on flat
(``V.reshape(-1)``, addressed through ``_bic_layout.at``: an unsigned index
with a constant stride, no negative-index fix-up or multiply by a runtime row
length in a find's dependent loads).  Every kernel is compiled without
numba's runtime (``_nrt=False``; ``answer_pair`` aside, which allocates its
one-query arrays): with it each array handed to a function is reference
counted, atomic increments and decrements several times per edge.  The
per-edge helpers (finds, registration, moves, the pre-reduction's steps) are
inlined into ``run``'s loop at numba's IR level (``inline="always"``).  These
are the MSF kernels' fixes (``_msf_kernels``).
"""
from __future__ import annotations

import numpy as np
from streamspec.spec._numba import njit

from streamspec.engines._prefetch import prefetch, prefetch_row
from streamspec.spec._connectivity_kernels import feed_one, same_row, windows_due
from streamspec.engines.connectivity._bic_bfbg import (f_find, b_find_at, index_pairs, register, move,
    _find_pair, u_find as _u_find, u_link, u_move)
from streamspec.engines.connectivity._bic_build import (build_backward, prereduce_start,
    prereduce_step, link_last_slot)
from streamspec.engines.connectivity._bic_layout import (CUR, PEND, COUNT, F_EP, B_EP, B_NV, E_CNT,
    H_USED, U_EP, NW, RESUME, C_OLD, REPLAY, DEFER, SEARCH, SEARCH_SHIFT, F_STAMP, F_PARENT, F_SIZE, HF_HEAD,
    CU, CV, CP, PRE_HI, PRE_POS, PRE_STEP, EB, EF, ENEXT, EBNEXT, U_STAMP, U_PARENT, J_AT, J_EP, J_WANT,
    EDGE, EDGE_STATUS, W_T0, W_G, W_K, W_M, W_END0, W_S,
    EDGE_HEADROOM, T_SMALL, H_HEADROOM, L_STEP, KEEP_STREAK, ONE, N_V, at)


# edges ahead whose vertex rows are asked for (``prefetch``): the V rows
# of a 1M-vertex stream do not stay cached across a slide, and each find is a
# chain of dependent misses
PREFETCH = 16


@njit(cache=True, _nrt=False, inline="always")
def rollover(st, V, C, H):
    """Chunk completed (the arrays are reused, not reallocated): empty F and the BFBG; B is built later
    (``settle``).  Until then the completed chunk's edges stay at the front of
    the chunk buffer, the new chunk's edges go in F only (no registration: B is
    not there yet) and are appended behind them.  The pair index ``H`` is
    emptied by ``settle`` too: nothing reads it before then, and clearing it
    (megabytes at a million vertices) here would land in the call that answers
    the chunk's last window, doubling that window's latency."""
    st[F_EP] += 1
    st[E_CNT] = 0
    st[C_OLD] = st[COUNT]                 # >= 0: a build is pending
    st[PEND] = 0
    st[J_AT] = -1                         # the kept union-find was the old chunk's


@njit(cache=True, _nrt=False)
def settle(st, V, U, A, W, C, E, M, H, BH, K):
    """``_settle`` on the engine's ``(vcap, 8)`` records (called from Python)."""
    return _settle(st, V.reshape(V.shape[0] * N_V), U, A, W, C, E, M, H, BH, K)


@njit(cache=True, _nrt=False)
def _settle(st, V, U, A, W, C, E, M, H, BH, K):
    """Finish a deferred rollover: build B from the completed chunk's edges,
    then register the new chunk's vertices that F took in meanwhile, each at
    the snapshot index of its first appearance with its current F-root (what
    registering at insertion and moving on every later root change would have
    left, up to duplicate pairs).  Returns 0, or 2 when E or the pair index
    must grow first (it resumes from ``st[REPLAY]``; -1 = nothing to replay)."""
    if st[C_OLD] >= 0:
        if st[H_USED] > 0:                # the rollover's BFBG is empty: so is its pair index
            H[:, 0] = -1
            st[H_USED] = 0
        old = st[C_OLD]
        n_new = st[COUNT] - old
        build_backward(st, V, A, W, C, old)
        for e in range(n_new):
            C[CU, e] = C[CU, old + e]
            C[CV, e] = C[CV, old + e]
            C[CP, e] = C[CP, old + e]
        st[COUNT] = n_new
        st[C_OLD] = -1
        _next_u_epoch(st, U)              # U stamps mark vertices already replayed
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
                    # (no union-find is kept while a chunk settles: J unused, U in its place)
                    register(st, V, E, M, H, BH, U, w, f_find(V, w), j)
    st[REPLAY] = -1
    return 0


@njit(cache=True, _nrt=False, inline="always")
def _next_u_epoch(st, U):
    """A fresh stamp for ``U`` (int32): up to two searches per pending query
    take one each, so past 2**31 the stamps are cleared and restart at 1."""
    st[U_EP] += 1
    if st[U_EP] >= 0x7FFFFFFF:
        U[:, U_STAMP] = 0
        st[U_EP] = 1
    return st[U_EP]


@njit(cache=True, _nrt=False, inline="always")
def unsettled(st):
    """B of the last completed chunk not built yet, or its registrations not replayed."""
    return st[C_OLD] >= 0 or st[REPLAY] >= 0


@njit(cache=True, _nrt=False, inline="always")
def _bfbg_node(U, node, vcap, ep):
    """Set of a query's BFBG node at this window: a B-node's root, or the root
    of an F-root's representative; -1 for an F-root without valid edges (its
    component is its F-tree alone, which the intra-forward test already saw)."""
    if node < vcap:
        return _u_find(U, node, ep)
    if U[node, U_STAMP] != ep:
        return -1
    return _u_find(U, U[node, U_PARENT], ep)


# BFBG edges below which a window's union-find runs without searches first
SEARCH_MIN_EDGES = 1 << 15


@njit(cache=True, _nrt=False, inline="always")
def _link_bfbg_at(U, E, M, n, word, bit, vcap, ep):
    """The union-find ``U`` (or ``J``) of the BFBG edges ``0 .. n-1`` whose index
    set holds the window's ``j`` (``word``, ``bit``), epoch ``ep``: the scan of
    TR Section 6's query procedure.  E and M are read in order; the two U rows
    of each edge are random (2 x the vertex capacity rows, hundreds of MB on a
    10M-vertex stream), so those of the edge ``PREFETCH`` ahead are asked for
    first (Friendster's shape at scale 0.142: 2.5 ms a scan of 70K edges)."""
    for e in range(n):
        f = e + PREFETCH
        if f < n and (M[f, word] >> bit) & ONE:
            prefetch_row(U, E[f, EB])
            prefetch_row(U, vcap + E[f, EF])
        if (M[e, word] >> bit) & ONE:
            u_link(U, E[e, EB], E[e, EF] + vcap, ep)


@njit(cache=True, _nrt=False, inline="always")
def _valid_pair(V, E, M, H, x, y, word, bit):
    """The stored BFBG edge ``(x_B, y_F)`` of F-root ``y`` holds ``j`` (False
    proves nothing: a duplicate pair left by a move may hold it)."""
    e = _find_pair(V, E, H, x, y)
    return e >= 0 and E[e, EB] == x and E[e, EF] == y and (M[e, word] >> bit) & ONE != 0


@njit(cache=True, _nrt=False, inline="always")
def _search(st, V, U, E, M, H, BH, Q, src, dst, vcap, word, bit, limit):
    """Breadth-first search of the BFBG at ``j`` (edges whose index set holds
    ``j``) from node ``src`` for node ``dst`` (a B-node, or ``vcap +`` an
    F-root), reading F-roots' lists (``HF_HEAD``) and B-nodes' lists (``BH``):
    ``(1, reads)`` found, ``(0, reads)`` not joined (``src``'s component
    read to its end), ``(-1, reads)`` gave up after ``limit <= st[SEARCH]``
    edges (``Q``, its queue, holds ``st[SEARCH] + 1`` nodes).  A node
    met on the other side from ``dst`` is first looked up with it in the pair
    index (``_valid_pair``): a path into a large component often ends in one
    edge of a long list."""
    ep = _next_u_epoch(st, U)
    fe = st[F_EP]
    U[src, U_STAMP] = ep
    Q[0] = src
    head = 0
    tail = 1
    reads = 0
    while head < tail:
        n = Q[head]
        head += 1
        if n >= vcap:
            e = V[at(n - vcap, HF_HEAD)]
        else:
            h = BH[n]
            e = h & 0xFFFFFFFF if (h >> 32) == fe else -1
        while e != -1:
            reads += 1
            if reads > limit:
                return -1, limit
            if (M[e, word] >> bit) & ONE:
                o = E[e, EB] if n >= vcap else E[e, EF] + vcap
                if o == dst:
                    return 1, reads
                if U[o, U_STAMP] != ep:
                    U[o, U_STAMP] = ep
                    if (o < vcap) != (dst < vcap):
                        if o < vcap and _valid_pair(V, E, M, H, o, dst - vcap, word, bit):
                            return 1, reads
                        if dst < vcap and _valid_pair(V, E, M, H, dst, o - vcap, word, bit):
                            return 1, reads
                    Q[tail] = o
                    tail += 1
            e = E[e, ENEXT] if n >= vcap else E[e, EBNEXT]
    return 0, reads


@njit(cache=True, _nrt=False)
def answer_window(st, V, U, J, E, M, H, BH, Q, qa, qb, j, out, row, pend, counts):
    """Answers of one window, query procedure of TR Section 6: ``j == 0`` is
    the final forward buffer alone; otherwise ``b[j] (+) f[j-1]`` with the F-root
    and B-root early exits, then a bounded search of the BFBG per query left
    (``_search``), and one union-find over the BFBG edges whose index set
    holds ``j`` only for the queries no search decided.  Writes every answer
    of ``out[row]`` (the engine reuses one row buffer between calls).
    ``counts``: a window's real answer, which updates ``st[J_WANT]`` (the
    windows in a row that needed the union-find); a dry (pre-warm) or ad-hoc
    answer leaves it."""
    out[row, :] = False
    fe = st[F_EP]
    if j == 0:
        for q in range(qa.shape[0]):
            a = qa[q]
            b = qb[q]
            if V[at(a, F_STAMP)] == fe and V[at(b, F_STAMP)] == fe:
                out[row, q] = f_find(V, a) == f_find(V, b)
        return
    bep = st[B_EP]
    vcap = V.shape[0] // N_V
    npend = 0
    for q in range(qa.shape[0]):
        a = qa[q]
        b = qb[q]
        aF = f_find(V, a) if V[at(a, F_STAMP)] == fe else -1
        bF = f_find(V, b) if V[at(b, F_STAMP)] == fe else -1
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
    # a union-find is worth keeping for the next window when this one needs one
    # (``keep_window_uf``): the count of windows in a row that did, this one's
    # whatever decides it below
    streak = st[J_WANT]
    if counts:
        st[J_WANT] = 0
    if npend == 0:
        return
    if st[J_AT] == j:
        # the union-find of the BFBG at j, kept since the last call
        # (``keep_window_uf``): two finds a query, no search, no scan (so the
        # streak that had it built stands)
        if counts:
            st[J_WANT] = max(streak, 1)
        ep = st[J_EP]
        for k in range(npend):
            a = _bfbg_node(J, pend[1, k], vcap, ep)
            b = _bfbg_node(J, pend[2, k], vcap, ep)
            out[row, pend[0, k]] = a >= 0 and a == b
        return
    # A search from either node (``_search``) decides most queries reading a
    # few BFBG edges: a small component is read to its end, a path into a
    # large one is short.  The union-find below reads every BFBG edge of the
    # chunk (hundreds of thousands at a 400K-edge window: milliseconds), and
    # runs only for the queries the searches left (then answers them as before).
    word = j >> 6
    bit = np.uint64(j & 63)
    # The searches of a window read at most an eighth (``st[SEARCH_SHIFT]``)
    # as many edges as the union-find would (their reads are random, its are
    # mostly sequential); below ``SEARCH_MIN_EDGES`` BFBG edges the union-find
    # is cheaper than the searches (FS: 26K-edge windows) and decides alone.
    if st[SEARCH_SHIFT] < 0:
        total = 2 * npend * st[SEARCH]
    elif st[E_CNT] >= SEARCH_MIN_EDGES:
        total = st[E_CNT] >> st[SEARCH_SHIFT]
    else:
        total = 0
    left = 0
    for k in range(npend):
        found = -1
        for side in range(2):
            lim = min(st[SEARCH], total)
            if found >= 0 or lim <= 0:
                break
            src = pend[1 + side, k]
            dst = pend[2 - side, k]
            found, reads = _search(st, V, U, E, M, H, BH, Q, src, dst, vcap, word, bit, lim)
            total -= reads
        if found >= 0:
            out[row, pend[0, k]] = found == 1
        else:
            pend[0, left] = pend[0, k]
            pend[1, left] = pend[1, k]
            pend[2, left] = pend[2, k]
            left += 1
    if left == 0:
        return
    if counts:
        st[J_WANT] = min(streak + 1, KEEP_STREAK)
    npend = left
    # Union-find over the B-nodes only: an F-root is represented by the first
    # B-node seen with it (rows vcap + y), so an F-root with a single valid edge
    # costs one store and no find.
    ep = _next_u_epoch(st, U)
    _link_bfbg_at(U, E, M, st[E_CNT], word, bit, vcap, ep)
    for k in range(npend):
        a = _bfbg_node(U, pend[1, k], vcap, ep)
        b = _bfbg_node(U, pend[2, k], vcap, ep)
        out[row, pend[0, k]] = a >= 0 and a == b


@njit(cache=True, _nrt=False)
def keep_window_uf(st, V2, J, E, M, K, m):
    """Build the union-find ``J`` of the BFBG at the next window's index ``j``
    (TR Section 6, query processing: the union-find over the BFBG edges whose
    index set holds ``j``) between calls, when the last window needed a
    union-find (``KEEP_STREAK`` windows in a row when the BFBG holds
    ``SEARCH_MIN_EDGES`` edges or more: above that the bounded searches run
    first and decide most windows on most streams, and on the Orkut-shaped
    stream building ahead after each window they left open cost ~15% of the
    throughput for no lower P95; below it every window with an open query runs
    the union-find) and the next window is evaluated in the current chunk; ``run``
    then applies every later registration (``_bic_bfbg._add_bits``) and move
    to it, so it stays the BFBG's at ``j`` until that window's triggering call
    reads it.  The same scan the triggering call would run, moved out of it
    (Figure 8's P95 on streams whose window leaves queries to the union-find;
    the throughput counts it where it lands).  Returns 1 if it built ``J``."""
    a = st[NW] * m
    j = a % K
    cur = st[CUR]
    if (st[J_WANT] == 0 or j == 0 or st[J_AT] == j or st[PEND] or unsettled(st)
            or st[B_NV] == 0 or cur // K != (a + K - 1) // K or cur > a + K - 1
            or (st[E_CNT] >= SEARCH_MIN_EDGES and st[J_WANT] < KEEP_STREAK)):
        return 0
    vcap = V2.shape[0]
    st[J_EP] += 1
    if st[J_EP] >= 0x7FFFFFFF:            # int32 stamps: clear and restart
        J[:, U_STAMP] = 0
        st[J_EP] = 1
    ep = st[J_EP]
    _link_bfbg_at(J, E, M, st[E_CNT], j >> 6, np.uint64(j & 63), vcap, ep)
    st[J_AT] = j
    return 1


@njit(cache=True, _nrt=False)
def close_to(st, V, U, J, A, W, C, E, M, H, BH, Q, qa, qb, target, K, m, nw0, out, pend):
    """Close slots ``cur .. target-1``, evaluating each window whose last slot
    closes and rolling the chunk over lazily (the rollover after a ``j = 0``
    window waits for the next slot or edge, so that window stays queryable;
    a deferred backward build is finished before any slot closes).
    Once everything is empty at a chunk start, the windows ending before
    ``target`` are empty: their rows are set all false and ``cur`` jumps.
    Returns 0, or 2 when the arrays must grow first (re-entrant)."""
    while st[CUR] < target:
        if st[PEND]:
            rollover(st, V, C, H)
        if unsettled(st) and _settle(st, V, U, A, W, C, E, M, H, BH, K):
            return 2
        cur = st[CUR]
        if cur % K == 0 and st[COUNT] == 0 and st[B_NV] == 0:
            n_hi = (target - K) // m + 1 if target >= K else 0
            for n in range(max(st[NW], nw0), min(n_hi, nw0 + out.shape[0])):
                out[n - nw0, :] = False     # all false (the row buffer may be reused)
            if n_hi > st[NW]:
                st[NW] = n_hi
            st[CUR] = target
            return 0
        a = cur + 1 - K
        if a >= 0 and a % m == 0:
            n = a // m
            answer_window(st, V, U, J, E, M, H, BH, Q, qa, qb, a % K, out, n - nw0, pend, True)
            st[NW] = n + 1
            st[J_AT] = -1                 # read: no later window has this j in this chunk
        if (cur + 1) % K == 0:
            st[PEND] = 1
        st[CUR] = cur + 1
    return 0


@njit(cache=True, _nrt=False)
def run(st, V2, U, J, A, W, C, E, M, H, BH, Q, qa, qb, t, u, v, t0, g, i0, target, K, m, nw0, out, pend):
    """Apply edges ``i0..`` (times ``t``, slot ``(t - t0) // g``; dense ids ``u``,
    ``v``) in one loop,
    closing slots and evaluating windows on the way, then close up to slot
    ``target``.  Returns 0 when done, or 1 (chunk buffer) / 2 (BFBG arrays) when
    an array must grow first: ``st[RESUME]`` is the edge to resume from.
    ``pend`` is scratch of shape ``(3, max(queries, 1))`` (the caller's: nothing
    here allocates)."""
    V = V2.reshape(V2.shape[0] * N_V)   # the records, flat (``_bic_layout.at``)
    n_edges = t.shape[0]
    for i in range(i0, n_edges):
        if i + PREFETCH < n_edges:
            # the endpoints' rows two strides ahead, their F-parents' rows one
            # stride ahead (read from rows asked for a stride ago): the finds'
            # first two dependent misses overlap with this edge's work
            prefetch(V, at(u[i + PREFETCH], 0))
            prefetch(V, at(v[i + PREFETCH], 0))
            h = i + PREFETCH // 2
            prefetch(V, at(V[at(u[h], F_PARENT)], 0))
            prefetch(V, at(V[at(v[h], F_PARENT)], 0))
        s = (t[i] - t0) // g
        if st[CUR] < s and close_to(st, V, U, J, A, W, C, E, M, H, BH, Q, qa, qb, s, K, m, nw0, out, pend):
            st[RESUME] = i
            return 2
        if st[PEND]:
            rollover(st, V, C, H)
        if (st[C_OLD] >= 0 and st[COUNT] - st[C_OLD] >= st[DEFER]) or st[REPLAY] >= 0:
            if _settle(st, V, U, A, W, C, E, M, H, BH, K):
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
        # the chunk's last slot: slots 0..K-2 are complete, so the backward
        # build's reverse scan over them can be pre-reduced now, a few edges
        # per insert, and once that is done the last slot's own edges linked
        # in the build's union-find as they arrive (``_bic_build``)
        if p == K - 1 and st[C_OLD] < 0:
            if st[PRE_HI] < 0 and (cnt == 0 or C[CP, cnt - 1] != p):
                prereduce_start(st, C, cnt, K)
            if st[PRE_POS] >= 0:
                prereduce_step(st, A, W, C, st[PRE_STEP])
            elif st[PRE_HI] >= 0:
                link_last_slot(st, A, W, C, cnt + 1, L_STEP)
        # forward buffer: union by size; "new in F" is the register-once test
        fe = st[F_EP]
        new_x = V[at(x, F_STAMP)] != fe
        if new_x:
            V[at(x, F_STAMP)] = fe
            V[at(x, F_PARENT)] = x
            V[at(x, F_SIZE)] = 1
            V[at(x, HF_HEAD)] = -1
        new_y = V[at(y, F_STAMP)] != fe
        if new_y:
            V[at(y, F_STAMP)] = fe
            V[at(y, F_PARENT)] = y
            V[at(y, F_SIZE)] = 1
            V[at(y, HF_HEAD)] = -1
        rx = f_find(V, x)
        ry = f_find(V, y)
        root = rx
        absorbed = -1
        if rx != ry:
            if V[at(rx, F_SIZE)] >= V[at(ry, F_SIZE)]:
                absorbed = ry
            else:
                root = ry
                absorbed = rx
            V[at(absorbed, F_PARENT)] = root
            V[at(root, F_SIZE)] += V[at(absorbed, F_SIZE)]
        if bfbg:
            if absorbed != -1:
                if st[J_AT] >= 0:
                    # the kept union-find joins the two F-roots as move joins their lists
                    u_move(J, V2.shape[0] + absorbed, V2.shape[0] + root, st[J_EP])
                move(V, E, absorbed, root)
                if V[at(root, F_SIZE)] > T_SMALL >= V[at(root, F_SIZE)] - V[at(absorbed, F_SIZE)]:
                    index_pairs(st, V, E, H, root)
            if new_x:
                register(st, V, E, M, H, BH, J, x, root, j)
            if new_y:
                register(st, V, E, M, H, BH, J, y, root, j)
    if close_to(st, V, U, J, A, W, C, E, M, H, BH, Q, qa, qb, target, K, m, nw0, out, pend):
        st[RESUME] = t.shape[0]
        return 2
    return 0


@njit(cache=True, _nrt=False)
def warm(st, V2, U, J, E, M, H, BH, Q, qa, qb, K, m, out, pend):
    """Answer the next window dry into the scratch row ``out[0]`` when the slot
    its trigger closes is the current one and nothing is pending (no build, no
    rollover): the query rows, their F- and B-roots and the BFBG edges the
    window reads are then in cache for the triggering call.  Returns 1 if it
    answered, else 0.  Changes no answer (finds halve paths, searches take U
    stamps)."""
    a = st[NW] * m
    if st[CUR] != a + K - 1 or st[PEND] or unsettled(st):
        return 0
    answer_window(st, V2.reshape(V2.shape[0] * N_V), U, J, E, M, H, BH, Q, qa, qb, a % K, out, 0, pend,
                  False)
    return 1


@njit(cache=True, _nrt=False)
def trigger(st, V2, U, J, A, W, C, E, M, H, BH, Q, qa, qb, pend, out, last, win,
            u, v, t, last_t, check_last, table, size, first_window, dry):
    """A window's triggering call in one compiled call (``ConnectivityEngine``'s
    fused one-edge call, as ``_msf_kernels.msf_trigger``): the driver's
    ``feed_one`` (time check, dense ids through the direct ``table``, fresh ids
    numbered from ``size``) into ``st[EDGE:EDGE + 5]``, then ``run`` on the edge,
    which answers window ``first_window`` into ``out`` and applies the edge.

    Returns ``(status, fresh ids, fresh id 0, fresh id 1, last time, upto,
    answered)``: ``status`` as ``feed_one``'s, or ``-3`` (not here, nothing
    done: not exactly one window due, no room in ``V`` for two fresh vertices,
    a backward build or rollover pending, or an array that might have to grow);
    ``answered`` 1 when ``out`` equals the last real row (``last``), 2 when it
    is a new one, 3 when ``run`` stopped for an array to grow
    (``st[EDGE_STATUS]``: the engine's ``_trigger_rest`` grows it and resumes).
    ``dry``: the next window answered on the state as it is (``warm``), nothing
    applied, status ``-4`` (``-3`` where ``warm`` declines)."""
    K = win[W_K]
    m = win[W_M]
    if dry:
        if warm(st, V2, U, J, E, M, H, BH, Q, qa, qb, K, m, out, pend) == 0:
            return -3, 0, 0, 0, last_t, first_window, 0
        return -4, 0, 0, 0, last_t, first_window + 1, same_row(out, last, False)
    ti = t[0]
    upto = windows_due(ti, win[W_END0], win[W_S], first_window)
    if (upto != first_window + 1 or size + 2 > V2.shape[0] or st[PEND] or unsettled(st)
            or st[COUNT] + 1 >= C.shape[1] or st[E_CNT] + EDGE_HEADROOM > E.shape[0]
            or 2 * (st[H_USED] + H_HEADROOM) > H.shape[0]):
        return -3, 0, 0, 0, last_t, upto, 0
    gu = st[EDGE:EDGE + 1]
    gv = st[EDGE + 1:EDGE + 2]
    gt = st[EDGE + 2:EDGE + 3]
    status, nf, tl = feed_one(u, v, t, last_t, check_last, table, size, gu, gv, gt,
                              st[EDGE + 3:EDGE + 5])
    if status != -1:
        return status, 0, 0, 0, tl, upto, 0
    f0 = st[EDGE + 3]
    f1 = st[EDGE + 4]
    done = run(st, V2, U, J, A, W, C, E, M, H, BH, Q, qa, qb, gt, gu, gv, win[W_T0], win[W_G], 0,
               first_window * m + K, K, m, first_window, out, pend)
    if done != 0:
        st[EDGE_STATUS] = done
        return status, nf, f0, f1, tl, upto, 3
    return status, nf, f0, f1, tl, upto, 1 if same_row(out, last, True) else 2


@njit(cache=True)
def answer_pair(st, V, U, J, E, M, H, BH, Q, a, b, j):
    """``Q(a, b)`` on the current state at window offset ``j`` (ad-hoc query)."""
    qa = np.empty(1, dtype=np.int64)
    qb = np.empty(1, dtype=np.int64)
    qa[0] = a
    qb[0] = b
    out = np.zeros((1, 1), dtype=np.bool_)
    pend = np.empty((3, 1), dtype=np.int64)
    answer_window(st, V.reshape(V.shape[0] * N_V), U, J, E, M, H, BH, Q, qa, qb, j, out, 0, pend, False)
    return out[0, 0]
