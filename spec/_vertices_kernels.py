"""The direct-table pass of ``streamspec.spec.vertices.IdIndex.add`` (dense ids by first
appearance, which the BIC engine's flat arrays index), as one numba function over numpy arrays.

A slide of a large stream is mostly ids seen before: the pass gathers their
dense ids and collects the fresh ones in the same sweep, so the cost is one
random read per id (the table outgrows the caches at a million vertices, and
this read is most of the boundary's cost per edge) plus a sort of the fresh
ids only.
"""
from __future__ import annotations

from streamspec.spec._numba import njit


@njit(cache=True)
def direct_add(a, b, table, size, out, fresh):
    """Dense ids of the ids ``a`` then ``b`` (two columns, so a caller with
    edge ends need not concatenate them) into ``out``, numbering the fresh ones
    ``size, size + 1, ...`` in increasing value (``table``: external id ->
    dense id or -1).  Returns the number of fresh ids, which ``fresh[:n]``
    holds in increasing order; or -1 when some id is outside the table, with
    the table unchanged."""
    cap = table.size
    na = a.size
    nf = 0
    for i in range(na + b.size):
        x = a[i] if i < na else b[i - na]
        if x < 0 or x >= cap:
            for k in range(nf):         # undo the marks: nothing changed
                table[fresh[k]] = -1
            return -1
        d = table[x]
        if d == -1:
            table[x] = -2               # seen fresh once in this call
            fresh[nf] = x
            nf += 1
        out[i] = d
    if nf == 0:
        return 0
    fresh[:nf].sort()                   # increasing value, as the general path numbers
    for k in range(nf):
        table[fresh[k]] = size + k
    for i in range(na + b.size):
        if out[i] < 0:
            out[i] = table[a[i] if i < na else b[i - na]]
    return nf
