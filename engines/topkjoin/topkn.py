"""Topk+N, the push variant (paper §4, Algorithm 1): every remote change is notified.

The remote side notifies every change, so no budget applies: at each
evaluation, every key of the current window or of the list whose remote value
differs from the replica is a changed object (notifications are read through
the dataset directly, not through the fetch counter).  Changes of other keys
do not join; their replica entries are brought up to date when the key next
joins, which is observably the same as applying each notification at once.
Exact when every change moves an object within the list or keeps it outside
(Theorem 1), e.g. when K+N covers every window.  Driver and memory: ``acquatop``.
"""
from __future__ import annotations

import numpy as np

from streamspec.engines.topkjoin.acquatop import AcquaTopEngine
from streamspec.engines.topkjoin.key_index import KeyIndex
from streamspec.spec.topkjoin_remote import values as remote_values


class TopkNEngine(AcquaTopEngine):
    """Topk+N with change notifications for every key (push)."""

    name = "topkn"
    description = "Topk+N push variant: every remote change notified (no budget)"
    exact_when = ("static", "full_list", "unlimited")

    def _refresh(self, window, start, tau, ids, tsd):
        sl, aggs = self.slist, self.aggs
        listed = sl.dense[:sl.m]
        # after the arrivals the list holds ids of this window only: then the window's ids
        # are every key to read (in any order: their changes are re-inserted in id order)
        keys = ids if (aggs.w_mark[listed] == aggs.stamp).all() else np.union1d(ids, listed)
        self.last_refresh[keys] = tau
        # the notifications read in one call of the dataset (``values``), not counted; int
        # keys straight from the index's column (no Python int per key)
        ext = (self.keys.externals(0, self.keys.size)[keys] if isinstance(self.keys, KeyIndex)
               else [self.keys.external(d) for d in keys.tolist()])
        got = remote_values(self.params.remote, ext, tau)
        diff = got != self.replica[keys]
        hit = keys[diff]
        self.replica[hit] = got[diff]
        self.changes_seen[hit] += 1
        return hit
