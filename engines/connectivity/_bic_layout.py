"""Array layout of the BIC kernels (Zhang, Bonifati, Oezsu, PVLDB 17(10) 2024; TR Sections 4-6).

Plain ``@njit`` functions over flat numpy arrays (the state of TR Sections 4-6 as arrays);
``streamspec.engines.connectivity.bic.BicEngine`` owns the arrays and calls ``run``.

Layout (column constants below; records are vertex- or edge-major so that one
vertex or edge touches one cache line, which is what the random accesses cost):

- ``st`` int64 scalars: current slot, deferred rollover, epochs, counters.
- ``V`` int32 ``(vcap, 8)``: per vertex (one 32-byte record, 64-byte aligned
  so that no record straddles two cache lines; the kernels address it flat
  through ``at``), the forward
  buffer F (union-find with path halving) with the head of an F-root's BFBG
  edge list, and the backward buffer B (union by size, no compression, edge
  labels and vertex labels, TR Sections 5 and 6.3).  Stamps equal to
  the epoch mean "present".
- ``A`` int32 ``(vcap, 4)``: the pre-reduction's union-find (stamp, parent,
  size; ``_bic_build``), its last column a list of the last slot's vertices
  linked in ``W`` (``st[L_NV]`` entries); ``W`` int32 ``(vcap,)``: the backward build's
  auxiliary union-find (0 absent, ``p + 1`` a child of ``p``, ``-size`` a
  root), whose compressed paths find B's roots without walking B.
- ``C`` int32 ``(3, ccap)``: the raw edges of the current chunk and their slot
  (while a backward build is deferred, ``st[C_OLD]`` edges of the completed
  chunk come first: ``rollover`` and ``settle``; once the last slot has
  started, the pre-reduction compacts the survivors of slots ``< K-1`` into
  ``C[:, PRE_LO:PRE_HI]``, ``_bic_build``).
- ``E`` int32 ``(ecap, 4)`` + ``M`` uint64 ``(ecap, W)``: BFBG edges ``(x_B, y_F)``
  with their index bitsets (TR Section 6.1) in one list per F-root; ``H``
  int64 ``(hcap, 2)``: an open-addressing pair index ``(x, y) -> edge`` for
  F-roots larger than ``T_SMALL`` (small roots scan their own list), so a
  registration adds bits to an existing pair.  Every edge is also in its
  B-node's list (``E[:, EBNEXT]``; ``BH`` int64 ``(vcap,)``: the head, as
  ``F_EP << 32 | edge``, stale once the chunk rolls over), so a query's
  search walks the BFBG from either side (``_bic_kernels.answer_window``).
- Moves (TR Section 6.1, root changes in the forward buffer) re-point the absorbed root's edges and splice its
  list, without looking for an existing ``(x, n)`` pair to merge into: a
  duplicate pair is harmless to the union-find over the BFBG, and on random
  streams fewer than 3% of moved edges would merge, while the lookups were a
  third of the kernel's time.  Keys of absorbed roots go stale and are never
  looked up again (F-roots never come back within a chunk): no deletions.
- ``U`` int32 ``(2 vcap, 2)``: the once-per-window union-find over BFBG edges
  valid at ``j`` (TR Section 6 and its appendix "Query processing"): rows ``< vcap`` are B-nodes,
  row ``vcap + y`` holds F-root ``y``'s representative B-node.  ``settle``
  borrows its stamps to mark the vertices it has replayed.
- ``J`` int32 ``(2 vcap, 2)``, laid out as ``U``: the union-find of the BFBG
  at the next window's index ``st[J_AT]``, kept between calls
  (``_bic_kernels.keep_window_uf``), rows as in ``U``; every registration and
  move of the inserts that follow is applied to it (``_bic_bfbg.u_link``,
  ``u_move``), so the window's trigger answers its open queries with two
  finds each.

Slots are time driven (``streamspec.spec.windows``): slot ``sigma = (t - t0) div g``,
``g = gcd(r, s)``, chunks of ``K = r/g`` slots, window ``n`` spans slots
``n*m .. n*m + K - 1`` and is evaluated when slot ``n*m + K - 1`` is closed.
"""
from __future__ import annotations

import numpy as np
from streamspec.spec._numba import njit

# st
CUR, PEND, COUNT, F_EP, B_EP, B_NV, E_CNT, H_USED, U_EP, NW, RESUME, C_OLD, REPLAY, DEFER = \
    range(14)
# the backward build's auxiliary union-find epoch and the pre-reduction
# (``_bic_build``): start of the last slot in C (-1: not started), survivors'
# start, next edge read (-1: done), edges read per insert, smallest chunk
A_EP, PRE_HI, PRE_LO, PRE_POS, PRE_STEP, PRE_MIN = range(14, 20)
W_DIRTY = 20       # the build's union-find W holds a past build (not all zero)
# the last slot's edges C[:, PRE_HI:L_POS] are already linked in W (-1: none;
# ``_bic_build.link_last_slot``)
L_POS = 21
L_NV = 22          # vertices those edges showed first, listed in A[:L_NV, A_LIST]
SEARCH = 23        # BFBG edges a query's search may read (``_bic_kernels._search``)
SEARCH_SHIFT = 24  # a window's searches read at most E_CNT >> this (-1: no bound but SEARCH)
# a pre-reduction that stopped early (``_bic_build.prereduce_step``) left C[:, :PRE_REST]
# unread: the build scans those edges in full (0: none)
PRE_REST = 25
PRE_STOP = 26      # 1: a pre-reduction that keeps most of what it reads may stop early (0: tests)
# the kept union-find ``J`` (``_bic_kernels.keep_window_uf``): the index j it
# holds the BFBG at (-1: none kept), its epoch, and how many windows in a row
# left queries to a union-find (0: the last one did not; so the next one is worth
# keeping)
J_AT, J_EP, J_WANT = range(27, 30)
# the fused triggering call's edge (``_bic_kernels.trigger``): dense u, dense v, time,
# two fresh ids, and the status ``run`` stopped with (an array to grow first)
EDGE = 30
EDGE_STATUS = 35
N_ST = 36
# the fused call's window scalars (``BicEngine._win``): origin, slot length, slots a
# chunk and a slide, the first window's end, the slide
W_T0, W_G, W_K, W_M, W_END0, W_S = range(6)
# V columns
F_STAMP, F_PARENT, F_SIZE, HF_HEAD, B_STAMP, B_PARENT, B_ELABEL, B_VLABEL = range(8)
N_V = 8
# A columns (the backward build's auxiliary union-find, ``_bic_build``)
A_STAMP, A_PARENT, A_SIZE = range(3)
A_LIST = 3         # a list, not per vertex: the last slot's linked vertices (``_bic_build``)
N_A = 4
# C rows
CU, CV, CP = range(3)
# E columns
EB, EF, ENEXT = range(3)
EBNEXT = 3         # next edge of the same B-node (``BH``: the B-side lists)
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
# default st[PRE_MIN]: chunks whose slots 0..K-2 hold fewer edges are built by
# the full reverse scan (the pre-reduction saves nothing worth its bookkeeping
# there, and small examples keep the paper's forest)
PREREDUCE_MIN = 1 << 14
# st[PRE_MIN] of ``bic:prereduce=false``: no chunk reaches it, every build is the full scan
NO_PREREDUCE = 1 << 62
# default st[SEARCH]: BFBG edges a query's search reads from one side before
# it gives up and the window's union-find over every BFBG edge decides
SEARCH_READS = 4096
# default st[SEARCH_SHIFT]: a window's searches read at most an eighth of its BFBG edges
SEARCH_SHIFT_DEFAULT = 3
# a call of at least this many inserts that answers no window builds the next
# window's union-find (when the last one needed one) and asks the driver for a
# pre-warm (``bic.BicEngine._run``).  On table1's scaled FS (1,300-edge slides)
# the two lowered the trigger's P95 ~3x for 10-18% of the throughput; on the
# scaled SC (300-edge slides) by ~20% for ~25% of it
# (bench/results/connectivity/bic-kept-uf-s38.log)
KEEP_MIN_EDGES = 1024
# ... and, on a BFBG of ``_bic_kernels.SEARCH_MIN_EDGES`` edges or more (where
# bounded searches run first), only once this many windows in a row left queries
# to the union-find: on the Orkut-shaped stream 2% of the windows do, alone or
# two in a row (building after each cost ~15% of the throughput there for no
# lower P95); on Friendster's shape at scale 0.142 (426K-edge windows, 70K BFBG
# edges, 94.5% of the queries false) nearly every window does, each running the
# failed searches and then the scan in its trigger (P50 3.7 ms;
# bench/results/connectivity/bic-kept-uf-s39.log)
KEEP_STREAK = 3
# last-slot edges linked in W per insert once the pre-reduction is done: one
# for the edge itself, the rest to catch up with the edges that arrived before
L_STEP = 4
ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
ONE = np.uint64(1)
ZERO = np.uint64(0)


@njit(cache=True, inline="always", _nrt=False)
def at(x, column):
    """Where column ``column`` of vertex ``x``'s record is in the flat records
    ``V.reshape(-1)``: ``x * N_V + column`` as an unsigned integer.

    numba indexes with a signed integer by first adding the length to a
    negative one (a select in every link of a find's chain of dependent
    loads), and indexes a 2-d array by multiplying the row by its runtime
    length; an unsigned flat index with the constant ``N_V`` leaves a shift
    and the load (the MSF kernels' fix, ``_msf_layout.at``).  No caller passes
    a negative ``x`` (``-1``, no parent or no root, is tested before any use).
    """
    return np.uint64(x * N_V + column)
