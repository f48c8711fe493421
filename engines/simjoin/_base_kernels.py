"""Baseline kernels (numba): SWOOP Section 3's "Baseline", the stock S holding every
valid pair with overlap > 0 in the canonical order.  One ``run_ops`` call processes
a whole batch of operations; ``streamspec.engines.simjoin.base`` keeps the state
arrays, and its ``BaseEngine(compiled=False)`` is the readable reference this follows.

- A new set is paired with every valid set of the window (the other side's, for the
  R-S join); the overlap is a merge of the two sorted token arrays, and each pair
  with overlap > 0 goes into S.
- S is the paper's binary search tree as a sorted list of blocks (the layout of
  ``sortedcontainers.SortedList``, which the reference uses): blocks of at most
  ``BLOCK`` keys, each sorted, their ids in key order in ``blk``; an insertion or a
  deletion is a binary search over the blocks' last keys, then one inside a block
  and a shift within it, O(log |S| + BLOCK); a full block splits in two.
- ``topk`` reads the first k keys of S after every operation.
- Expired pairs are removed when their older set leaves the window (the pairs ending
  then), as the reference does with the keys it lists per set: here each set heads a
  linked list, in the pair arena, of (score, newer seq) of its pairs, from which the
  keys are rebuilt (``e`` is the older set's ``ts + w``).  Freed arena entries are
  reused through a free list.

Data layout (numpy, so the engine pickles): window records by row ``L`` (``r_seq``,
``r_ts``, ``r_side``, sorted distinct tokens ``p_tok[r_ptr[L]:r_ptr[L + 1]]``, the head
of its pair list ``r_head``); S as ``s_sc``, ``s_e``, ``s_i``, ``s_j`` (rows = blocks)
with ``s_len`` and the block order ``blk``; the arena ``a_sc``, ``a_i``, ``a_next``.
"""
from __future__ import annotations


from streamspec.engines.simjoin._static_kernels import _before, _insert_tokens, _overlap
from streamspec.spec._numba import njit
from streamspec.spec._simjoin_similarity import similarity

# meta fields: rows in use, oldest valid row, tokens in use, output events and rows,
# size of the last top-k list, blocks in S's order, blocks allocated, pairs in S,
# top of the arena, head of its free list, largest S so far, pairs inserted, free blocks,
# window sets paired with a new set (the paper's pre-candidates of Base, Section 7.1)
N_REC, OLDEST, N_POST, OUT_EV, OUT_ROW, N_LAST, N_BLK, BLK_TOP, NS, A_TOP, A_FREE, \
    MAX_STOCK, INSERTED, FREE_BLK, PRECAND, META = range(16)
NEED_OUT, NEED_ROOM = 1, 2       # statuses: grow the output buffers / the stock and arena
BLOCK = 512


@njit(cache=True)
def _find_block(blk, n_blk, s_len, s_sc, s_e, s_i, s_j, sc, e, i, j):
    """Position in ``blk`` of the first block whose last key is not before the key
    (the last block when every block ends before it)."""
    lo, hi = 0, n_blk - 1
    while lo < hi:
        mid = (lo + hi) // 2
        b = blk[mid]
        t = s_len[b] - 1
        if _before(s_sc[b, t], s_e[b, t], s_i[b, t], s_j[b, t], sc, e, i, j):
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _find_in(b, n, s_sc, s_e, s_i, s_j, sc, e, i, j):
    """First slot of block ``b`` (``n`` keys) whose key is not before the key."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if _before(s_sc[b, mid], s_e[b, mid], s_i[b, mid], s_j[b, mid], sc, e, i, j):
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def stock_add(meta, blk, s_len, s_sc, s_e, s_i, s_j, free_blk, sc, e, i, j):
    n_blk = meta[N_BLK]
    if n_blk == 0:
        b = _new_block(meta, free_blk)
        blk[0] = b
        s_len[b] = 0
        meta[N_BLK] = 1
        n_blk = 1
    p = _find_block(blk, n_blk, s_len, s_sc, s_e, s_i, s_j, sc, e, i, j)
    b = blk[p]
    n = s_len[b]
    x = _find_in(b, n, s_sc, s_e, s_i, s_j, sc, e, i, j)
    for y in range(n, x, -1):
        s_sc[b, y], s_e[b, y], s_i[b, y], s_j[b, y] = s_sc[b, y - 1], s_e[b, y - 1], s_i[b, y - 1], s_j[b, y - 1]
    s_sc[b, x], s_e[b, x], s_i[b, x], s_j[b, x] = sc, e, i, j
    n += 1
    s_len[b] = n
    meta[NS] += 1
    if n == BLOCK:          # full: its upper half moves to a new block right after it
        c = _new_block(meta, free_blk)
        h = n // 2
        s_sc[c, :n - h] = s_sc[b, h:n]
        s_e[c, :n - h] = s_e[b, h:n]
        s_i[c, :n - h] = s_i[b, h:n]
        s_j[c, :n - h] = s_j[b, h:n]
        s_len[c] = n - h
        s_len[b] = h
        for q in range(n_blk, p + 1, -1):
            blk[q] = blk[q - 1]
        blk[p + 1] = c
        meta[N_BLK] = n_blk + 1


@njit(cache=True)
def _new_block(meta, free_blk):
    if meta[FREE_BLK] > 0:
        meta[FREE_BLK] -= 1
        return free_blk[meta[FREE_BLK]]
    b = meta[BLK_TOP]
    meta[BLK_TOP] = b + 1
    return b


@njit(cache=True)
def stock_remove(meta, blk, s_len, s_sc, s_e, s_i, s_j, free_blk, sc, e, i, j):
    """Remove the key, which S holds."""
    n_blk = meta[N_BLK]
    p = _find_block(blk, n_blk, s_len, s_sc, s_e, s_i, s_j, sc, e, i, j)
    b = blk[p]
    n = s_len[b]
    x = _find_in(b, n, s_sc, s_e, s_i, s_j, sc, e, i, j)
    for y in range(x, n - 1):
        s_sc[b, y], s_e[b, y], s_i[b, y], s_j[b, y] = s_sc[b, y + 1], s_e[b, y + 1], s_i[b, y + 1], s_j[b, y + 1]
    s_len[b] = n - 1
    meta[NS] -= 1
    if n == 1:              # empty: out of the order, onto the free stack
        for q in range(p, n_blk - 1):
            blk[q] = blk[q + 1]
        meta[N_BLK] = n_blk - 1
        free_blk[meta[FREE_BLK]] = b
        meta[FREE_BLK] += 1


@njit(cache=True)
def blocks_needed(meta, window):
    """Blocks S may have allocated after one more insert into a window of ``window`` sets:
    its at most ``window`` keys reach at most ``min(blocks, window)`` blocks, each of which
    may split once, and a half block needs ``BLOCK / 2`` keys to split again."""
    return meta[BLK_TOP] + min(meta[N_BLK], window) + 2 * window // BLOCK + 2


@njit(cache=True)
def run_ops(start, op, ts, side, seq, tok_ptr, tok, kind, k, w, two, meta, r_seq, r_ts, r_side,
            r_ptr, r_head, p_tok, blk, s_len, s_sc, s_e, s_i, s_j, free_blk, a_sc, a_i, a_next,
            last_i, last_j, last_sc, last_e, out_pos, out_ptr, out_i, out_j, out_sc, out_e):
    """Operations ``start..`` of a batch.  Returns ``(next position, 0)`` when done, or
    ``(position, NEED_OUT | NEED_ROOM)`` before an operation the buffers may not hold
    (nothing of it happened yet): the engine grows them and calls again."""
    for pos in range(start, op.shape[0]):
        window = meta[N_REC] - meta[OLDEST]
        if meta[OUT_EV] + 1 > out_pos.shape[0] or meta[OUT_ROW] + k > out_i.shape[0]:
            return pos, NEED_OUT
        # an insert adds at most ``window`` pairs: at most one split per block it reaches,
        # then one per BLOCK / 2 more keys (``blocks_needed``)
        if op[pos] == 0 and (meta[A_TOP] + window > a_sc.shape[0]
                             or blocks_needed(meta, window) > min(s_len.shape[0], s_sc.shape[0])):
            return pos, NEED_ROOM
        t = ts[pos]
        while meta[OLDEST] < meta[N_REC] and not (t < r_ts[meta[OLDEST]] + w):
            o_row = meta[OLDEST]
            e = r_ts[o_row] + w
            sj = r_seq[o_row]
            x = r_head[o_row]
            while x >= 0:
                stock_remove(meta, blk, s_len, s_sc, s_e, s_i, s_j, free_blk, a_sc[x], e, a_i[x], sj)
                nxt = a_next[x]
                a_next[x] = meta[A_FREE]
                meta[A_FREE] = x
                x = nxt
            meta[OLDEST] += 1
        if op[pos] == 0:
            r = meta[N_REC]
            g = meta[N_POST]
            n = _insert_tokens(p_tok, g, tok, tok_ptr[pos], tok_ptr[pos + 1])
            si, my_side = seq[pos], side[pos]
            if n > 0:
                paired = 0
                for q in range(meta[OLDEST], r):
                    if two and r_side[q] == my_side:
                        continue
                    paired += 1
                    # overlap by a merge of the sorted token arrays
                    o = _overlap(p_tok, g, n, r_ptr[q], r_ptr[q + 1] - r_ptr[q])
                    if o == 0:
                        continue
                    sc = similarity(kind, n, r_ptr[q + 1] - r_ptr[q], o)
                    stock_add(meta, blk, s_len, s_sc, s_e, s_i, s_j, free_blk, sc, r_ts[q] + w, si, r_seq[q])
                    meta[INSERTED] += 1
                    x = meta[A_FREE]
                    if x >= 0:
                        meta[A_FREE] = a_next[x]
                    else:
                        x = meta[A_TOP]
                        meta[A_TOP] = x + 1
                    a_sc[x], a_i[x], a_next[x] = sc, si, r_head[q]
                    r_head[q] = x
                meta[PRECAND] += paired
            r_seq[r], r_ts[r], r_side[r], r_head[r] = si, t, my_side, -1
            r_ptr[r + 1] = g + n
            meta[N_REC] = r + 1
            meta[N_POST] = g + n
            if meta[NS] > meta[MAX_STOCK]:
                meta[MAX_STOCK] = meta[NS]
        # the first k keys of S, against the last list emitted
        nb = 0
        same = True
        q = 0
        while q < meta[N_BLK] and nb < k:
            b = blk[q]
            y = 0
            while y < s_len[b] and nb < k:
                if nb >= meta[N_LAST] or (s_i[b, y] != last_i[nb] or s_j[b, y] != last_j[nb]
                                          or s_sc[b, y] != last_sc[nb] or s_e[b, y] != last_e[nb]):
                    same = False
                    last_i[nb], last_j[nb], last_sc[nb], last_e[nb] = s_i[b, y], s_j[b, y], s_sc[b, y], s_e[b, y]
                nb += 1
                y += 1
            q += 1
        if nb != meta[N_LAST]:
            same = False
        if same:
            continue
        ev, row = meta[OUT_EV], meta[OUT_ROW]
        out_pos[ev] = pos
        out_ptr[ev] = row
        for x in range(nb):
            out_i[row + x], out_j[row + x], out_sc[row + x], out_e[row + x] = last_i[x], last_j[x], last_sc[x], last_e[x]
        meta[N_LAST] = nb
        meta[OUT_EV] = ev + 1
        meta[OUT_ROW] = row + nb
    return op.shape[0], 0
