"""The MSF engine's array layout, shared by its kernel modules (``_msf_kernels``,
``_msf_link_cut_kernels``) and its class (``msf``).

Vertex records ``V[x]``: four int64 (32 bytes, two per 64-byte aligned cache
line), so that a step up a tree reads one record:

- ``PARENT``: parent vertex, ``-1`` at a root;
- ``PTIME``: time of the edge to the parent, ``NEVER`` at a root (a root
  hangs by an edge older than every edge: the AM-tree's rotations then need
  no case for it);
- ``SIZE``: the number of vertices of the subtree (the AM-tree's balance and
  its ancestor search);
- ``SEEN``: the last time the vertex was an endpoint (presence).

The kernels address the records flat (``W = V.reshape(-1)``) through ``at``.

The state vector ``st`` holds the scalars a kernel call carries over to the next.
"""
from __future__ import annotations

import numpy as np
from streamspec.spec._numba import njit

INF = np.iinfo(np.int64).max
NEVER = np.iinfo(np.int64).min
# columns of the vertex records V
PARENT = 0
PTIME = 1
SIZE = 2
SEEN = 3
N_V = 4
# slots of the state vector ``st``
SWITCH = 0       # mean search steps per insert past which the trees go link-cut
LAST_T = 1       # time of the last applied edge (NEVER before the first)
MODE = 2         # 0: parent-pointer trees; 1: link-cut trees (after a switch, for good)
STEPS = 3        # ancestor-search steps of the inserts since the last check
COUNT = 4        # inserts since the last check
RESUME = 5       # where msf_run stopped to ask for the switch (-1: it did not)
FRESH = 6        # link-cut: edge slots ever used
FREE_TOP = 7     # link-cut: height of the free stack of edge slots
T0 = 8           # the windows' origin, size and slide (set when the engine starts:
R = 9            # the kernels read them here rather than as arguments)
S = 10
EDGE = 11        # the fused one-edge call's scratch (``msf_trigger``): dense u, v, the time,
                 # two fresh ids (5 slots)
N_ST = 16
# rows of the query array ``Q``: the pairs' ends, their cached bottlenecks, and the
# answers the fused one-edge call last returned (0/1; 2: none yet)
QA = 0
QB = 1
QCACHE = 2
QLAST = 3
N_Q = 4


@njit(cache=True, inline="always")
def at(x, column):
    """Where column ``column`` of vertex ``x``'s record is in the flat records
    ``W = V.reshape(-1)``: ``x * N_V + column`` as an unsigned integer.

    numba indexes with a signed integer by first adding the length to a
    negative one (a select in each link of a walk's chain of dependent loads),
    and indexes a 2-d array by multiplying the row by its runtime length; an
    unsigned flat index with the constant ``N_V`` leaves a shift and the load:
    10-16% of an insert on the 10M-edge R-MAT stream (issue 13).  No caller
    passes a negative ``x`` (``-1``, no parent, is tested before any use), and
    nothing is bounds-checked either way (numba's default).
    """
    return np.uint64(x * N_V + column)
