"""The five well-behaved set similarity functions of SWOOP (paper Section 4,
Definition 2, Table 2; ``streamspec.spec.simjoin``) as numba functions.

Every function depends only on ``lr = |r|``, ``ls = |s|`` and ``o = |r & s|``.
They are compiled with ``numba.njit`` here, once, and called by the oracle (from
Python) and by every engine's kernels (from numba), so that all of them compute
exactly the same float64 scores and ties are identical bit for bit.  No
``fastmath``: division and ``sqrt`` stay correctly rounded, hence monotone.

Measures are named by small integer codes (``KIND``), the form numba needs.
"""
from __future__ import annotations

import math

from streamspec.spec._numba import njit

JACCARD, COSINE, DICE, OVERLAP, HAMMING = 0, 1, 2, 3, 4
KIND = {"jaccard": JACCARD, "cosine": COSINE, "dice": DICE, "overlap": OVERLAP, "hamming": HAMMING}
NO_BOUND = -math.inf   # the skyband lower bound when fewer than k pairs exist


@njit(cache=True)
def similarity(kind, lr, ls, o):
    """``sim(lr, ls, o)`` in float64; higher is more similar (Hamming is negated)."""
    if kind == JACCARD:
        d = lr + ls - o
        return o / d if d > 0 else 0.0
    if kind == COSINE:
        d = lr * ls
        return o / math.sqrt(d) if d > 0 else 0.0
    if kind == DICE:
        d = lr + ls
        return 2 * o / d if d > 0 else 0.0
    if kind == OVERLAP:
        return float(o)
    return -float(lr + ls - 2 * o)


@njit(cache=True)
def min_overlap(kind, lr, ls, tau):
    """Smallest ``o >= 1`` with ``similarity(kind, lr, ls, o) >= tau``;
    ``min(lr, ls) + 1`` when no overlap reaches ``tau``.

    The closed form of Table 2 is only a starting point: it is corrected by
    stepping against the float scores themselves, so a rounding error can
    neither drop a result pair nor admit one below ``tau``.
    """
    m = min(lr, ls)
    if tau == -math.inf:
        return 1
    if kind == JACCARD:
        x = tau / (1.0 + tau) * (lr + ls)
    elif kind == COSINE:
        x = tau * math.sqrt(lr * ls)
    elif kind == DICE:
        x = tau * (lr + ls) / 2.0
    elif kind == OVERLAP:
        x = tau
    else:
        x = (lr + ls + tau) / 2.0
    if not (x < m + 1):          # also catches NaN and +inf
        o = m + 1
    elif x <= 1.0:
        o = 1
    else:
        o = int(math.ceil(x))
    while o > 1 and similarity(kind, lr, ls, o - 1) >= tau:
        o -= 1
    while o <= m and similarity(kind, lr, ls, o) < tau:
        o += 1
    return o


@njit(cache=True)
def positional_upper_bound(kind, lr, rho):
    """``ub(|r|, rho) = sim(|r|, |r|-rho+1, |r|-rho+1)`` (Theorem 1, Section 5.3):
    a set first met in the ``rho``-th looked-up list (1-based) misses ``rho-1``
    tokens of ``r``, so it cannot be more similar than this."""
    x = lr - rho + 1
    return similarity(kind, lr, x, x)
