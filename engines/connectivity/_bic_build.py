"""BIC's backward buffer build (Zhang, Bonifati, Oezsu, PVLDB 17(10) 2024; TR
Sections 5.2-5.3 and 6.3): a reverse scan over the completed
chunk's slots ``K-1 .. 1``, and the pre-reduction that takes most of that scan
out of the call that must pay it.

**The build** (``build_backward``) writes the same forest as the paper's:
union by size (ties: the source's root stays), each new tree edge labelled
with its slot, each vertex labelled with the slot it is first met in, no path
compression in B (the labels encode every snapshot ``b[j]``).  Roots are
found in an auxiliary union-find ``W`` (int32 per vertex: 0 absent, ``p + 1``
a child of ``p``, ``-size`` a root) that links exactly as B does and
compresses its paths: its roots are B's roots, and its 4-byte entries (1.5 MB
at 387K vertices) stay in the L2 cache where B's walks through the 32-byte
vertex records did not.  ``W`` is zeroed when the pre-reduction ends (in an
insert call), or by the build itself when there was none.

**The pre-reduction** (``prereduce_step``).  The build must wait for the
chunk's last slot ``K-1``, which the scan reads first; but the rest of the
scan, slots ``K-2 .. 1``, reads edges that are all known once slot ``K-1``
starts.  Only the edges that matter to any snapshot survive a reverse scan
of those slots on their own: the edges that join two components or show a
vertex for the first time (a spanning forest of every suffix ``j .. K-2``,
plus the first sighting of every vertex, self-loops included).  Scanning the
last slot and then these survivors, in the same descending slot order, gives
every snapshot the same components and every vertex the same label (TR
Lemma 5.6 holds: labels still never increase upwards), so the forest answers
every ``b[j]`` as the full scan's does, though its shape may differ.  The
survivors are compacted in place at the top of the chunk buffer's first part
(``C[:, PRE_LO:PRE_HI]``, slot order kept), so no second edge buffer exists.

The pre-reduction runs while slot ``K-1``'s edges arrive, ``st[PRE_STEP]``
edges of it per inserted edge (de-amortised: no call does more than a few
microseconds of it), and the build finishes whatever is left.  On the
10M-edge stream a chunk of 1M edges keeps about 240K survivors, so the build
inside a window's triggering call scans ~290K edges instead of ~950K.
Chunks whose slots ``0 .. K-2`` hold fewer than ``st[PRE_MIN]`` edges are
built by the full scan (the worked example of tests/connectivity/test_bic.py keeps its forest).
A survivor stores the endpoint the reverse scan meets first as its source,
so the build's "new vertex" branches, which most survivors take for exactly
one endpoint, are predicted (the scan is branch-bound, not memory-bound:
W's entries are few and hot).

**The last slot, linked as it arrives** (``link_last_slot``).  The scan
reads slot ``K-1`` first, and every snapshot ``b[j]`` holds all of it, so
the order of its edges and the shape of its components inside B are free:
once the pre-reduction is done (W clean), each insert links ``L_STEP`` more
of the slot's edges in ``W`` (its own and some that arrived before), and
lists the vertices they show first.  The build then enters those vertices
as stars under their W-roots (``_enter_linked``: one write per vertex, no
test, no edge), scans only the slot's edges not linked yet, and goes on with
the survivors; union by size over W's sizes keeps B's depth logarithmic.
On the 10M-edge stream that is ~48K vertex writes instead of 50K edges of
finds at the boundary.
"""
from __future__ import annotations

# numba's cache keys a cached kernel by its own file only: ``_bic_kernels.run``
# and ``settle`` compile these functions into themselves, so after editing this
# file, clear the numba cache (or set NUMBA_CACHE_DIR) or they keep the old code

from streamspec.spec._numba import njit

from streamspec.engines._prefetch import prefetch, prefetch_row
from streamspec.engines.connectivity._bic_layout import (B_EP, B_NV, A_EP, PRE_HI, PRE_LO,
    PRE_POS, PRE_STEP, PRE_MIN, PRE_REST, PRE_STOP, W_DIRTY, L_POS, L_NV, B_STAMP, B_PARENT, B_ELABEL, B_VLABEL, CU, CV, CP,
    A_STAMP, A_PARENT, A_SIZE, A_LIST, at)

# edges ahead whose rows are asked for (``prefetch_row``), as in the insert loop
PREFETCH = 16

# As in ``_bic_bfbg``: the vertex records ``V`` come flat (``_bic_layout.at``),
# nothing is compiled with numba's runtime (``_nrt=False``), and what the
# insert loop calls for every edge of the last slot is inlined there.


@njit(cache=True, _nrt=False, inline="always")
def _a_find(A, x):
    """Root of ``x`` in the auxiliary union-find, halving the path."""
    while A[x, A_PARENT] != x:
        A[x, A_PARENT] = A[A[x, A_PARENT], A_PARENT]
        x = A[x, A_PARENT]
    return x


@njit(cache=True, _nrt=False, inline="always")
def prereduce_start(st, C, cnt, K):
    """Slot ``K-1``'s first edge goes to ``C[:, cnt]``: the pre-reduction of
    ``C[:, :cnt]`` (slots ``0 .. K-2``) may start, if the chunk is big enough."""
    if K >= 3 and cnt >= st[PRE_MIN] and st[PRE_HI] < 0:
        st[PRE_HI] = cnt
        st[PRE_POS] = cnt - 1           # next edge read (descending)
        st[PRE_LO] = cnt                # survivors so far: C[:, PRE_LO:PRE_HI]
        st[L_POS] = cnt                 # last-slot edges linked in W: none yet
        st[L_NV] = 0
        st[PRE_REST] = 0
        st[A_EP] += 1
        st[PRE_STEP] = 2 * (K - 1)      # ~ (K-2) slots read during one: a 2x margin


@njit(cache=True, _nrt=False, inline="always")
def prereduce_step(st, A, W, C, budget):
    """Read up to ``budget`` edges of the pre-reduction; True when it is done."""
    ep = st[A_EP]
    e = st[PRE_POS]
    w = st[PRE_LO]
    stop = max(e - budget, -1)
    while e > stop and C[CP, e] >= 1:
        if e >= PREFETCH:
            prefetch_row(A, C[CU, e - PREFETCH])
            prefetch_row(A, C[CV, e - PREFETCH])
        x0 = C[CU, e]
        y0 = C[CV, e]
        new_x = A[x0, A_STAMP] != ep
        if new_x:
            A[x0, A_STAMP] = ep
            A[x0, A_PARENT] = x0
            A[x0, A_SIZE] = 1
        new_y = A[y0, A_STAMP] != ep
        if new_y:
            A[y0, A_STAMP] = ep
            A[y0, A_PARENT] = y0
            A[y0, A_SIZE] = 1
        keep = new_x or new_y
        if new_y and not new_x:         # the first sighting goes first: see below
            x0, y0 = y0, x0
        x = _a_find(A, x0)
        y = _a_find(A, y0)
        if x != y:
            if A[x, A_SIZE] < A[y, A_SIZE]:
                x, y = y, x
            A[y, A_PARENT] = x
            A[x, A_SIZE] += A[y, A_SIZE]
            keep = True
        # A survivor stores the endpoint it shows first as its source, so the
        # build's "new vertex" tests, which most survivors pass for one
        # endpoint, are predictable (a fifth of the bare union-find's time)
        if keep:                        # w > e: the slot was read already
            w -= 1
            C[CU, w] = x0
            C[CV, w] = y0
            C[CP, w] = C[CP, e]
        e -= 1
    st[PRE_LO] = w
    done = e > stop or e < 0            # met slot 0 or the buffer's start
    # Worth it only where few edges survive.  Once 3/8 of slots 0..K-2 are
    # read, a scan that kept more than 7/8 of them stops: the build scans
    # the survivors and then the unread C[:, :e+1] in full (the same reverse
    # order, so the same forest as a finished pre-reduction whose later
    # reads kept everything).  On the Table 1 streams the survivors are
    # 77-83% of a chunk (the reduction cost more than the build it saved);
    # a chunk that keeps 1/4 (the 10M-edge stream) never stops here.
    read = st[PRE_HI] - 1 - e
    if not done and st[PRE_STOP] and 8 * read >= 3 * st[PRE_HI] and 8 * (st[PRE_HI] - w) > 7 * read:
        st[PRE_REST] = e + 1
        done = True
    if done:
        st[PRE_POS] = -1
        if st[W_DIRTY]:                 # clean W here, not in the build's call
            W[:] = 0
            st[W_DIRTY] = 0
        return True
    st[PRE_POS] = e
    return False


@njit(cache=True, _nrt=False, inline="always")
def _w_find(W, x):
    """Root of present ``x`` in the build's union-find ``W``, halving the path."""
    while True:
        p = W[x]
        if p <= 0:
            return x
        q = W[p - 1]
        if q <= 0:
            return p - 1
        W[x] = q
        x = q - 1


@njit(cache=True, _nrt=False, inline="always")
def link_last_slot(st, A, W, C, end, budget):
    """Link up to ``budget`` more of the last slot's edges ``C[:, L_POS:end]``
    in ``W``, as the build's scan would (union by size, ties: the source's
    root stays).  Only once the pre-reduction is done: it leaves ``W`` clean,
    and nothing else writes ``W`` before the build, which then starts from
    these components instead of reading those edges again.  The vertices
    they show first are listed in ``A[:, A_LIST]`` (the pre-reduction, done,
    no longer needs A), so the build enters each once without a test."""
    if st[W_DIRTY]:                     # slots 0..K-2 empty: no pre-reduction step cleaned it
        W[:] = 0
        st[W_DIRTY] = 0
    e = st[L_POS]
    n = st[L_NV]
    stop = min(end, e + budget)
    while e < stop:
        x = C[CU, e]
        y = C[CV, e]
        if W[x] == 0:
            W[x] = -1
            A[n, A_LIST] = x
            n += 1
        if W[y] == 0:
            W[y] = -1
            A[n, A_LIST] = y
            n += 1
        x = _w_find(W, x)
        y = _w_find(W, y)
        if x != y:
            if W[x] > W[y]:
                x, y = y, x
            W[x] += W[y]
            W[y] = x + 1
        e += 1
    st[L_POS] = e
    st[L_NV] = n


@njit(cache=True, _nrt=False)
def _enter_linked(V, A, W, n, j, bep):
    """B rows of the ``n`` vertices the linked last-slot edges showed first
    (``A[:n, A_LIST]``): present since that slot (label ``j``), each a child
    of its W-root through an edge of that label (a star per component: every
    snapshot holds the whole slot, so its shape inside it is free), the roots
    linked later as the scan links them."""
    for i in range(n):
        if i + PREFETCH < n:
            prefetch(V, at(A[i + PREFETCH, A_LIST], 0))
            prefetch(W, A[i + PREFETCH, A_LIST])
        z = A[i, A_LIST]
        r = _w_find(W, z)
        V[at(z, B_STAMP)] = bep
        V[at(z, B_VLABEL)] = j
        V[at(z, B_PARENT)] = -1 if r == z else r
        V[at(z, B_ELABEL)] = j


@njit(cache=True, _nrt=False)
def _scan(V, W, C, hi, lo, bep):
    """The reverse scan over ``C[:, lo:hi]`` (down to slot 1); returns the
    number of vertices it met first."""
    nv = 0
    e = hi - 1
    while e >= lo and C[CP, e] >= 1:
        if e - lo >= PREFETCH:          # B's rows and W's entries a few edges ahead,
            x = C[CU, e - PREFETCH]     # then the W-parents of nearer edges' endpoints
            y = C[CV, e - PREFETCH]
            prefetch(V, at(x, 0))
            prefetch(V, at(y, 0))
            prefetch(W, x)
            prefetch(W, y)
            h = e - PREFETCH // 2
            if W[C[CU, h]] > 0:
                prefetch(W, W[C[CU, h]] - 1)
            if W[C[CV, h]] > 0:
                prefetch(W, W[C[CV, h]] - 1)
        j = C[CP, e]
        x = C[CU, e]
        y = C[CV, e]
        # most edges left after the pre-reduction show a vertex first: a root
        # of size 1, no find needed
        new_x = W[x] == 0
        if new_x:
            W[x] = -1
            V[at(x, B_STAMP)] = bep
            V[at(x, B_PARENT)] = -1
            V[at(x, B_VLABEL)] = j
            nv += 1
        new_y = W[y] == 0
        if new_y:
            W[y] = -1
            V[at(y, B_STAMP)] = bep
            V[at(y, B_PARENT)] = -1
            V[at(y, B_VLABEL)] = j
            nv += 1
        if not new_x:
            x = _w_find(W, x)
        if not new_y:
            y = _w_find(W, y)
        if x != y:
            if W[x] > W[y]:             # -size: x is the smaller
                x, y = y, x
            W[x] += W[y]
            W[y] = x + 1
            V[at(y, B_PARENT)] = x
            V[at(y, B_ELABEL)] = j
        e -= 1
    return nv


@njit(cache=True, _nrt=False)
def build_backward(st, V, A, W, C, end):
    """B of the completed chunk ``C[:, :end]``: the pre-reduction finished if it
    started (then the scan is the last slot's edges not linked yet and the
    survivors, after entering the linked ones), else the full reverse scan
    over slots ``K-1 .. 1``."""
    pre = st[PRE_HI]
    lo = 0
    linked = -1
    rest = 0
    if pre >= 0:
        while st[PRE_POS] >= 0:
            prereduce_step(st, A, W, C, 1 << 30)
        lo = st[PRE_LO]
        linked = st[L_POS]
        rest = st[PRE_REST]
        st[PRE_HI] = -1
        st[L_POS] = -1
        st[PRE_REST] = 0
    if st[W_DIRTY]:                     # never with linked edges: the pre-reduction cleaned W
        W[:] = 0
    st[W_DIRTY] = 1
    st[B_EP] += 1
    bep = st[B_EP]
    if pre < 0:
        st[B_NV] = _scan(V, W, C, end, 0, bep)
        return
    nv = 0
    if linked > pre:
        nv = st[L_NV]
        _enter_linked(V, A, W, nv, C[CP, pre], bep)
    nv += _scan(V, W, C, end, linked, bep)
    nv += _scan(V, W, C, pre, lo, bep)
    if rest > 0:                        # the pre-reduction stopped early: the rest in full
        nv += _scan(V, W, C, rest, 0, bep)
    st[B_NV] = nv
