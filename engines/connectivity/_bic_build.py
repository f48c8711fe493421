"""BIC's backward buffer build (Zhang, Bonifati, Oezsu, PVLDB 17(10) 2024; TR
Section 5.2, analysis note Section 4): a reverse scan over the completed
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
built by the full scan (the analysis note's worked example keeps its forest).
"""
from __future__ import annotations

# numba's cache keys a cached kernel by its own file only: ``_bic_kernels.run``
# and ``settle`` compile these functions into themselves, so after editing this
# file, clear the numba cache (or set NUMBA_CACHE_DIR) or they keep the old code

from streamspec.spec._numba import njit

from streamspec.engines._prefetch import prefetch, prefetch_row
from streamspec.engines.connectivity._bic_layout import (B_EP, B_NV, A_EP, PRE_HI, PRE_LO,
    PRE_POS, PRE_STEP, PRE_MIN, W_DIRTY, B_STAMP, B_PARENT, B_ELABEL, B_VLABEL, CU, CV, CP, A_STAMP, A_PARENT,
    A_SIZE)

# edges ahead whose rows are asked for (``prefetch_row``), as in the insert loop
PREFETCH = 16


@njit(cache=True)
def _a_find(A, x):
    """Root of ``x`` in the auxiliary union-find, halving the path."""
    while A[x, A_PARENT] != x:
        A[x, A_PARENT] = A[A[x, A_PARENT], A_PARENT]
        x = A[x, A_PARENT]
    return x


@njit(cache=True)
def prereduce_start(st, C, cnt, K):
    """Slot ``K-1``'s first edge goes to ``C[:, cnt]``: the pre-reduction of
    ``C[:, :cnt]`` (slots ``0 .. K-2``) may start, if the chunk is big enough."""
    if K >= 3 and cnt >= st[PRE_MIN] and st[PRE_HI] < 0:
        st[PRE_HI] = cnt
        st[PRE_POS] = cnt - 1           # next edge read (descending)
        st[PRE_LO] = cnt                # survivors so far: C[:, PRE_LO:PRE_HI]
        st[A_EP] += 1
        st[PRE_STEP] = 2 * (K - 1)      # ~ (K-2) slots read during one: a 2x margin


@njit(cache=True)
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
    if e > stop or e < 0:               # met slot 0 or the buffer's start
        st[PRE_POS] = -1
        if st[W_DIRTY]:                 # clean W here, not in the build's call
            W[:] = 0
            st[W_DIRTY] = 0
        return True
    st[PRE_POS] = e
    return False


@njit(cache=True)
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


@njit(cache=True)
def build_backward(st, V, A, W, C, end):
    """B of the completed chunk ``C[:, :end]``: the pre-reduction finished if it
    started (then the scan is the last slot and the survivors), else the full
    reverse scan over slots ``K-1 .. 1``."""
    lo = 0
    if st[PRE_HI] >= 0:
        while st[PRE_POS] >= 0:
            prereduce_step(st, A, W, C, 1 << 30)
        lo = st[PRE_LO]
        st[PRE_HI] = -1
    if st[W_DIRTY]:
        W[:] = 0
    st[W_DIRTY] = 1
    st[B_EP] += 1
    bep = st[B_EP]
    nv = 0
    e = end - 1
    while e >= lo and C[CP, e] >= 1:
        if e - lo >= PREFETCH:          # B's rows and W's entries a few edges ahead,
            x = C[CU, e - PREFETCH]     # then the W-parents of nearer edges' endpoints
            y = C[CV, e - PREFETCH]
            prefetch_row(V, x)
            prefetch_row(V, y)
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
            V[x, B_STAMP] = bep
            V[x, B_PARENT] = -1
            V[x, B_VLABEL] = j
            nv += 1
        new_y = W[y] == 0
        if new_y:
            W[y] = -1
            V[y, B_STAMP] = bep
            V[y, B_PARENT] = -1
            V[y, B_VLABEL] = j
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
            V[y, B_PARENT] = x
            V[y, B_ELABEL] = j
        e -= 1
    st[B_NV] = nv
