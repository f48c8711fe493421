"""MinTopK (Yang et al., EDBT 2011) joined with the replica, never refreshed.

The super-top-k list with K slots per window (``N`` is ignored: Topk+N with
N = 0) over the replica loaded at ``t0``.  Exact when the remote data never
changes (``streamspec.spec.topkjoin``); the paper's recommendation when there
is no join or the join is static (its cost analysis: Topk+N adds a small
constant over MinTopK).  Driver and memory: ``acquatop``.
"""
from __future__ import annotations

from streamspec.engines.topkjoin import policies
from streamspec.engines.topkjoin.acquatop import AcquaTopEngine


class MinTopKEngine(AcquaTopEngine):
    """MinTopK: K slots per window, replica never refreshed."""

    name = "mintopk"
    description = "MinTopK (K slots per window) over the replica loaded at t0, no refresh"
    policy = staticmethod(policies.nothing)
    use_n = False
    exact_when = ("static",)
