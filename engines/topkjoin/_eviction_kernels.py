"""Numba kernel of ``acquatop.AcquaTopEngine._compact``: evict the ids that left, in one pass.

Plain ``@njit`` functions over numpy arrays and scalars (no validation, no
Python objects).  Issue 15 (state bounded by the ids live in the window):
with fresh ids the engine evicts about once per slide, and the eviction was
some thirty numpy calls over the per-key arrays, the blocks and the list (a
fifth of an AcquaTop engine's CPU time at 600 items per slide); here it is one
pass over the dense ids and one over each column of dense ids.
"""
from __future__ import annotations

from streamspec.spec._numba import njit


@njit(cache=True)
def evict(live, held, t0, column, replica, last_refresh, changes_seen, acc_val, acc_ts,
          acc_mark, tie, w_mark, touched, nt, buf_id, used, l_dense, m, remap,
          out_key, out_val, out_last, out_changes):
    """Keep the dense ids ``d`` with ``live[d]``, renumbered ``0..`` in their order
    (``remap[d]``, ``-1`` for the others), in place: the external ids (``column``), the
    replica cells and slot aggregates of ids ``< held``, and the dense ids in the open
    slot (``touched[:nt]``), the blocks (``buf_id[:used]``) and the list (``l_dense[:m]``).
    The departed ids whose cell was fetched (``last_refresh != t0``) are written to
    ``out_*`` (for ``DepartedEntries``).  Returns ``(ids kept, cells kept, departed out)``.

    In place is safe: ``d``'s new number is at most ``d``, and ``d``'s cells are read
    before any later id's are written over them."""
    k = 0
    kc = 0
    f = 0
    for d in range(live.size):
        if live[d]:
            remap[d] = k
            column[k] = column[d]
            k += 1
            if d < held:
                replica[kc] = replica[d]
                last_refresh[kc] = last_refresh[d]
                changes_seen[kc] = changes_seen[d]
                acc_val[kc] = acc_val[d]
                acc_ts[kc] = acc_ts[d]
                acc_mark[kc] = acc_mark[d]
                tie[kc] = tie[d]
                kc += 1
        else:
            remap[d] = -1
            if d < held and last_refresh[d] != t0:
                out_key[f] = column[d]
                out_val[f] = replica[d]
                out_last[f] = last_refresh[d]
                out_changes[f] = changes_seen[d]
                f += 1
    for d in range(kc, acc_mark.size):      # beyond the ids held: the fill ``grow_keys`` gives
        acc_mark[d] = 0
        tie[d] = d
    for d in range(w_mark.size):            # the window merge's scratch: rewritten later
        w_mark[d] = -1
    for q in range(nt):
        touched[q] = remap[touched[q]]
    for q in range(used):
        buf_id[q] = remap[buf_id[q]]
    for q in range(m):
        l_dense[q] = remap[l_dense[q]]
    return k, kc, f
