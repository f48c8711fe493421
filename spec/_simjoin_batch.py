"""One pass over a ``RecordBatch``'s columns for the common case of
``SimJoinEngine.process`` (``spec/simjoin.py``): the checks its vectorised path
makes with some twenty numpy calls, in one compiled loop.

A numpy call costs microseconds whatever the array's length (5-10 us each on the
development host), so on small batches the checks cost more than the sets:
at 80% load (SWOOP Section 7.3's latency experiment) a server takes the sets
queued since its last batch, ~100 at a time, and twenty numpy calls were ~0.2 ms
of each batch.  ``plain_batch`` answers whether a batch is the common case; only
then does ``process`` skip the vectorised checks, whose errors and late-record
handling it otherwise runs as before.
"""
from __future__ import annotations

from streamspec.spec._numba import njit

MAX_EXACT = 2 ** 53         # |time| above it is not exact in float64 (spec.simjoin's bound too)


@njit(cache=True)
def plain_batch(tf, t0, has_t0, ids, hi, has_hi, ptr, n_tok):
    """True when every time in ``tf`` is finite and exact (``|t| <= 2**53``) and none is
    earlier than its predecessor or than ``t0`` (``has_t0``), the ids increase, the
    first above ``hi`` (``has_hi``), and ``ptr`` does not decrease and spans ``n_tok``
    tokens (``ptr[-1] - ptr[0] == n_tok``)."""
    n = tf.size
    last = t0
    for i in range(n):
        x = tf[i]
        if not abs(x) <= MAX_EXACT:               # NaN, infinite or inexact
            return False
        if (i > 0 or has_t0) and not x >= last:
            return False
        last = x
    if n and has_hi and not ids[0] > hi:
        return False
    for i in range(1, n):
        if not ids[i] > ids[i - 1]:
            return False
    for i in range(1, ptr.size):
        if ptr[i] < ptr[i - 1]:
            return False
    return ptr[ptr.size - 1] - ptr[0] == n_tok
