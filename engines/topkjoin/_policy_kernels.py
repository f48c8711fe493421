"""Numba kernel of the WBM election (``policies.wbm``): the first gamma without ranking all.

Plain ``@njit`` functions over numpy arrays and scalars (no validation, no
Python objects).  Paper §5 and the ACQUA WBM ranker (``min(L, V)``: remaining life time and
normalised renewed best-before time, the paper's Section 3 recalls ACQUA); issue
15: a WSJ engine's candidates are every id of the window, and the numpy form
of the ranker (``policies.wbm_ranked``: some twenty array operations and two
lexsorts per evaluation) was a fifth of WSJ-WBM's CPU time at 600 items per
slide.  Here the same numbers, in the same operation order (IEEE float64,
no fast-math: equal to numpy's), and the first gamma picked by one scan each.
"""
from __future__ import annotations

import numpy as np

from streamspec.spec._numba import njit


@njit(cache=True)
def wbm_first(c, last_refresh, changes_seen, last_ts, t0, beta, start, tau, gamma, out):
    """The first ``gamma`` of ``wbm_ranked``'s stale-then-fresh ranking of candidates ``c``
    into ``out``; returns how many (``min(gamma, c.size)``).

    Possibly stale (best-before ``<= tau``) first, by WBM score descending, best-before
    ascending, candidate position; then the others by best-before, candidate position."""
    n = c.size
    bb = np.empty(n, np.float64)
    score = np.empty(n, np.float64)
    stale = np.empty(n, np.bool_)
    for i in range(n):
        d = c[i]
        lr = last_refresh[d]
        rate = (changes_seen[d] + 1) / (lr - t0 + beta)      # ``policies.rate``
        interval = 1.0 / rate
        bb[i] = lr + interval
        stale[i] = bb[i] <= tau
        life = (last_ts[d] - start) // beta + 1
        current_bb = lr + np.ceil((tau - lr) / interval) * interval
        renewed = np.ceil((current_bb + interval - tau) / beta)
        score[i] = min(float(life), renewed)
    taken = np.zeros(n, np.bool_)
    k = 0
    for phase in range(2):          # 0: the possibly stale ones, 1: the others
        while k < gamma:
            best = -1
            for i in range(n):
                if taken[i] or stale[i] != (phase == 0):
                    continue
                if best < 0:
                    best = i
                elif phase == 0 and (score[i] > score[best] or (
                        score[i] == score[best] and bb[i] < bb[best])):
                    best = i        # earlier positions win the remaining ties
                elif phase == 1 and bb[i] < bb[best]:
                    best = i
            if best < 0:
                break
            taken[best] = True
            out[k] = c[best]
            k += 1
    return k
