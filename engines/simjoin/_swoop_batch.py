"""A batch's shape for ``SwoopEngine._reserve`` (``engines/simjoin/swoop.py``) in one compiled call.

``_reserve`` sizes the rings and the per-insert scratch before each ``run_ops`` call
from the batch's insert count and longest set; as numpy expressions (``(op == 0).sum()``,
``np.diff(tok_ptr).max()``) and numpy scalar arithmetic on ``meta`` those were some
tens of microseconds a call whatever the batch's length, which at 80% load (SWOOP
Section 7.3; a server takes the ~100-400 sets queued since its last batch) is a
visible share of a batch.
"""
from __future__ import annotations

from streamspec.spec._numba import njit

from streamspec.engines.simjoin._swoop_kernels import N_POST, N_REC, OLDEST, POST_BASE


@njit(cache=True)
def batch_shape(op, tok_ptr, meta):
    """``(inserts, longest, live, posts)``: the number of inserts (``op == 0``), the
    largest ``tok_ptr[p + 1] - tok_ptr[p]`` (0 for an empty batch), the records in the
    window (``N_REC - OLDEST``) and the token slots they span (``N_POST - POST_BASE``)."""
    n = op.size
    ins = 0
    longest = 0
    for p in range(n):
        if op[p] == 0:
            ins += 1
    if n:
        longest = tok_ptr[1] - tok_ptr[0]
        for p in range(1, n):
            d = tok_ptr[p + 1] - tok_ptr[p]
            if d > longest:
                longest = d
    return ins, longest, meta[N_REC] - meta[OLDEST], meta[N_POST] - meta[POST_BASE]
