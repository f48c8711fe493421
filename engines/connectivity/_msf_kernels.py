"""Numba kernels of the maximum-spanning-forest engine (``streamspec.engines.connectivity.msf``).

The engine keeps, over the stream's edges so far, a rooted forest with the
same *bottlenecks* as their maximum spanning forest for edge time: for every
pair, the oldest edge on its tree path has the time of the oldest edge on the
pair's path in that forest (the largest ``t`` such that the edges at or after
``t`` connect the pair).  The trees are an Anti-Monopoly tree (AM-tree; "New
Algorithms for Incremental Minimum Spanning Trees and Temporal Graph
Applications", public code at github.com/ucrparlay/AM-tree: its lazy
variant with stitch linking; issue 13 of the tracker), mirrored from minimum weights and path maxima to newest times
and path minima.  Records and state slots: ``_msf_layout``; the kernels
below ``msf_run`` take the records flat, ``W = V.reshape(-1)``, and address
them with ``_msf_layout.at`` (an unsigned index with a constant stride: the
walks are chains of dependent loads, and a 2-d signed index put a multiply by
the row length and a negative-index fix-up into every link of them).

- The ancestor search needs no marks: a vertex's strict ancestors have larger
  subtrees, so stepping up from the end with the smaller subtree never passes
  the lowest common ancestor, and the walk stops where the two ends meet (or
  one reaches its root: other trees).
- Balance, lazily (``maintain_upward``): before an insert both endpoints walk
  to their roots, and a vertex holding more than ``1 / ALPHA`` of its
  parent's subtree is rotated above it (the parent's edge is kept when it is
  not older: a shortcut to the grandparent; else the two swap places and
  edge times).  Rotations keep every bottleneck; the paper's bound is
  O(log n) amortized depth, so a ring or a chain stays shallow.
- Insert (``insert_edge``): inside a tree, the oldest edge of the path u..v
  leaves if it is older than the new edge (the cycle property), its subtree
  becoming a tree of its own; then the two root paths of u and v are
  *stitched* like two sorted lists: the edge in hand (first the new one)
  hangs the end with the smaller subtree below the other once the edges
  above both ends are older than it, and the edge this displaces is carried
  up from there.  Each step keeps every bottleneck.
- Query (``answer``): the same walk over the edges at or after the window's
  start; an older edge on the path answers false at once.
- The driver (``msf_run``) enters edge times floored to the slide grid (every
  window start is on it: exact, see there), so a cycle closed within one
  slide changes nothing, and prefetches the records of the endpoints a few
  edges ahead (``_msf_prefetch``): the inserts are bound by those first misses.

The insert and its parts are inlined into ``msf_run`` at numba's IR level
(``inline="always"``): a call between compiled functions passes every array
as its seven fields and checks a status on return, about a tenth of an
insert on the 10M-edge R-MAT stream (issue 13).  And every kernel here is
compiled without numba's runtime (``_nrt=False``, as numba's own
allocation-free helpers are, e.g. ``numba.misc.mergesort``): with it, each
array handed to an inlined function or made by ``reshape`` is reference
counted, an atomic increment and decrement of its meminfo (``lock incq``,
``lock decq``) several times per edge, about a quarter of an insert (94 ->
74 ns/edge on that stream).  Nothing here allocates (numba refuses to
compile an allocation without the runtime); the link-cut kernels it calls
see arrays without a meminfo and count nothing.

Nothing is amortized across calls and nothing is deferred: every edge is
fully applied in its own call.  The link-cut fallback
(``_msf_link_cut_kernels``) stays as a guard: past ``st[SWITCH]`` search
steps per insert on average (``SWITCH_STEPS``, far beyond what the AM-tree's
depth bound lets happen) the forest moves there for good.
Only ``@njit`` functions over numpy arrays and scalars live here.
"""
from __future__ import annotations

from streamspec.spec._connectivity_kernels import feed_one, same_row, windows_due
from streamspec.spec._numba import njit

from streamspec.engines.connectivity._msf_layout import (COUNT, EDGE, INF, LAST_T, MODE, N_V,
                                                         NEVER, PARENT, PTIME, QLAST, R,
                                                         RESUME, S, SEEN, SIZE, STEPS, SWITCH,
                                                         T0, at)
from streamspec.engines.connectivity._msf_link_cut_kernels import lct_answer, lct_insert_edge
from streamspec.engines.connectivity._msf_prefetch import prefetch_record

CHECK = 4096     # inserts between two looks at the mean search length
SWITCH_STEPS = 256   # the engine's default for st[SWITCH] (tests lower it)
# the anti-monopoly bound: a child holds at most 1/ALPHA of its parent's subtree,
# ALPHA = ALPHA_NUM / ALPHA_DEN (the paper's 1.5)
ALPHA_NUM = 3
ALPHA_DEN = 2
# how far ahead msf_run prefetches the endpoints' records (edges), their
# parents' (edges; the endpoints' records have arrived by then) and the
# queries' (pairs): far enough for a miss (~100-300 cycles) to land before use.
# Root paths are short (about 2 records per endpoint on the 10M R-MAT stream),
# the roots hot; a grandparent stage measured no gain
PREFETCH = 16
PREFETCH_PARENTS = 8
PREFETCH_QUERIES = 8


@njit(cache=True, _nrt=False, inline="always")
def rotate(W, x, y):
    """Lift ``x`` above its parent ``y``, keeping every bottleneck.

    When ``x``'s edge is not newer than ``y``'s, ``x`` hangs by it from ``y``'s
    parent (a shortcut: the path from ``x`` to ``y`` then runs over ``y``'s
    edge, not older).  Otherwise ``x`` takes ``y``'s place with ``y``'s edge and
    ``y`` hangs below ``x`` with ``x``'s.  A root's edge is ``NEVER``, so at a
    root only the swap happens.
    """
    if W[at(x, PTIME)] <= W[at(y, PTIME)]:
        W[at(y, SIZE)] -= W[at(x, SIZE)]
        W[at(x, PARENT)] = W[at(y, PARENT)]
    else:
        rest = W[at(y, SIZE)] - W[at(x, SIZE)]
        W[at(x, SIZE)] = W[at(y, SIZE)]
        W[at(y, SIZE)] = rest
        t = W[at(x, PTIME)]
        W[at(x, PTIME)] = W[at(y, PTIME)]
        W[at(y, PTIME)] = t
        W[at(x, PARENT)] = W[at(y, PARENT)]
        W[at(y, PARENT)] = x


@njit(cache=True, _nrt=False, inline="always")
def maintain_upward(W, a, b):
    """Walk from ``a`` and from ``b`` to their roots, rotating every vertex that
    holds more than ``1 / ALPHA`` of its parent's subtree (the lazy AM-tree's
    maintenance).  The two walks step in turn so that their cache misses overlap."""
    adone = False
    bdone = False
    while not (adone and bdone):
        if not adone:
            y = W[at(a, PARENT)]
            if y == -1:
                adone = True
            elif ALPHA_NUM * W[at(a, SIZE)] <= ALPHA_DEN * W[at(y, SIZE)]:
                a = y
            else:
                rotate(W, a, y)
        if not bdone:
            y = W[at(b, PARENT)]
            if y == -1:
                bdone = True
            elif ALPHA_NUM * W[at(b, SIZE)] <= ALPHA_DEN * W[at(y, SIZE)]:
                b = y
            else:
                rotate(W, b, y)


@njit(cache=True, _nrt=False, inline="always")
def oldest_on_path(W, st, a, b):
    """``(time, vertex)`` of the oldest edge on the tree path ``a``..``b``, the edge
    ``vertex``-parent (``(INF, -1)`` when ``a == b``); ``vertex == -2`` when ``a``
    and ``b`` are in different trees.  Steps up from the end with the smaller
    subtree (never an ancestor of the other end); counts steps in ``st[STEPS]``."""
    best, c, steps = _oldest_steps(W, a, b)
    st[STEPS] += steps
    return best, c


@njit(cache=True, _nrt=False, inline="always")
def _oldest_steps(W, a, b):
    """``oldest_on_path``'s walk: ``(time, vertex, steps)``."""
    best = INF
    c = -1
    x = a
    y = b
    steps = 0
    while x != y:
        if W[at(x, SIZE)] > W[at(y, SIZE)]:
            x, y = y, x
        p = W[at(x, PARENT)]
        if p == -1:
            c = -2
            break
        steps += 1
        if W[at(x, PTIME)] < best:
            best = W[at(x, PTIME)]
            c = x
        x = p
    return best, c, steps


@njit(cache=True, _nrt=False, inline="always")
def cut(W, c):
    """Remove the edge from ``c`` to its parent: ``c`` roots its subtree."""
    size = W[at(c, SIZE)]
    y = W[at(c, PARENT)]
    while y != -1:
        W[at(y, SIZE)] -= size
        y = W[at(y, PARENT)]
    W[at(c, PARENT)] = -1
    W[at(c, PTIME)] = NEVER


@njit(cache=True, _nrt=False, inline="always")
def stitch(W, u, v, t):
    """Join the trees of ``u`` and ``v`` (different) by the edge ``(u, v, t)``, ``t``
    newer than or as new as every edge there, merging their root paths.

    ``x`` and ``y`` climb from ``u`` and ``v`` holding edge time ``w``: an end
    whose own edge is not older than ``w`` steps up (the held edge may as well
    join its parent: the path over the end's edge is not older); otherwise
    the end with the smaller subtree hangs below the other by ``w``, and the
    edge it hung by is held from its old parent on.  ``dx`` and ``dy`` are the
    size changes owed to the vertices above each end, paid as they climb;
    what is left after a root was hung is paid up the other side.
    """
    x = u
    y = v
    w = t
    dx = 0
    dy = 0
    while x != -1:
        if w <= W[at(x, PTIME)]:
            p = W[at(x, PARENT)]
            W[at(p, SIZE)] += dx
            x = p
        elif w <= W[at(y, PTIME)]:
            p = W[at(y, PARENT)]
            W[at(p, SIZE)] += dy
            y = p
        else:
            if W[at(x, SIZE)] > W[at(y, SIZE)]:
                x, y = y, x
                dx, dy = dy, dx
            size = W[at(x, SIZE)]
            dx -= size
            dy += size
            W[at(y, SIZE)] += size
            up = W[at(x, PARENT)]
            held = W[at(x, PTIME)]
            W[at(x, PARENT)] = y
            W[at(x, PTIME)] = w
            w = held
            if up != -1:
                W[at(up, SIZE)] += dx
            x = up
    y = W[at(y, PARENT)]
    while y != -1:
        W[at(y, SIZE)] += dy
        y = W[at(y, PARENT)]


@njit(cache=True, _nrt=False, inline="always")
def insert_edge(W, st, u, v, t):
    """``_insert`` counting its ancestor-search steps in ``st[STEPS]``."""
    st[STEPS] += _insert(W, u, v, t)


@njit(cache=True, _nrt=False, inline="always")
def _insert(W, u, v, t):
    """Add edge ``(u, v, t)`` (``t`` >= every time in the forest), keeping the
    bottlenecks of the maximum spanning forest of all edges so far.

    Inside a tree the new edge closes a cycle with the path u..v: when the
    oldest edge of the path is older than ``t`` it leaves (equal times: either
    edge gives a maximum forest, the old one stays and nothing changes) and
    the new edge joins the two trees this leaves; between two trees it joins
    them.  A repeat of a tree edge only renews its time (the cycle is the two
    copies).  Self-loops only count for presence.  Returns the ancestor
    search's steps (0 without one).
    """
    if u == v:
        return 0
    if W[at(u, PARENT)] == v:
        if W[at(u, PTIME)] < t:
            W[at(u, PTIME)] = t
        return 0
    if W[at(v, PARENT)] == u:
        if W[at(v, PTIME)] < t:
            W[at(v, PTIME)] = t
        return 0
    maintain_upward(W, u, v)
    oldest, c, steps = _oldest_steps(W, u, v)
    if c != -2:
        if oldest >= t:
            return steps
        cut(W, c)
    stitch(W, u, v, t)
    return steps


@njit(cache=True, _nrt=False)
def answer(W, a, b, start, cache, q):
    """``Q(a, b)`` on the window starting at ``start`` (every applied edge is before its end).

    The tree edges at or after ``start`` connect what the window's edges
    connect (the bottlenecks are the maximum spanning forest's, whose cycle
    property says so), so the walk of ``oldest_on_path`` answers false at the
    first older edge.  ``cache[q]`` holds the pair's bottleneck found by an
    earlier true answer, which only grows as edges arrive: a cached value at
    or after ``start`` already answers true.  The trees are not changed.
    """
    if W[at(a, SEEN)] < start or W[at(b, SEEN)] < start:
        return False
    if a == b or cache[q] >= start:
        return True
    low = INF
    x = a
    y = b
    while x != y:
        if W[at(x, SIZE)] > W[at(y, SIZE)]:
            x, y = y, x
        p = W[at(x, PARENT)]
        pt = W[at(x, PTIME)]
        if p == -1 or pt < start:
            return False
        if pt < low:
            low = pt
        x = p
    cache[q] = low
    return True


@njit(cache=True, _nrt=False, inline="always")
def _close_empty(st, ti, w, upto, first_window, last, out):
    """Windows from ``w`` on that start after the last applied edge are empty,
    and so is every later one up to the next edge's (time ``ti``; ``last``: no
    next edge): their rows all false, one fill instead of a loop per window.
    Returns the next window to evaluate."""
    t0 = st[T0]
    due = upto if last else min(upto, (ti - t0 - st[R]) // st[S] + 1)
    out[w - first_window:due - first_window, :] = False
    return due


@njit(cache=True, _nrt=False)
def msf_run(V, st, u, v, t, Q, out, first_window, upto):
    """Apply edges ``(u, v, t)`` in order, evaluating windows ``first_window..upto-1``
    (the AM-tree; ``msf_run_link_cut`` once the forest has moved to link-cut trees).

    Window ``w`` (``[t0 + w*s, t0 + w*s + r)``, ``t0, r, s`` in ``st[T0], st[R],
    st[S]``) is answered before the first edge with ``t >= end(w)`` is
    inserted, so every edge in the forest then is before its end; windows left
    after the last edge are answered at the end.  Row ``w - first_window`` of
    ``out`` receives the answers (every cell is written); a window that starts
    after the last applied edge is empty, its row all false.  The queries are
    the rows of ``Q``: ends ``Q[0]``, ``Q[1]``, cached bottlenecks ``Q[2]``
    (``answer``).  Few arguments on purpose: a window's triggering call comes
    on caches the slide before it evicted, and numba's dispatcher reads every
    array argument's object (type, unboxing) before the kernel starts.

    Edge times enter the forest floored to the slide grid, ``on_grid(t) = t0 +
    s * floor((t - t0) / s)``.  Exact: every start a query compares with is
    on that grid, and for a grid point ``g``, ``t >= g`` iff ``on_grid(t) >=
    g``; ``on_grid`` is non-decreasing, so the bottleneck (a max over paths of
    a min over edges) of the floored times is the floored bottleneck, and the
    answers are those of the exact times.  What it buys: an edge closing a
    cycle whose oldest edge came in the same slide changes nothing
    (``insert_edge``'s equal-time case: no cut, no stitch), 17% of the 10M-edge
    R-MAT stream's edges.

    The records of the endpoints ``PREFETCH`` edges ahead are prefetched
    (``_msf_prefetch``), their parents' ``PREFETCH_PARENTS`` ahead, and the
    queries' ``PREFETCH_QUERIES`` ahead: the first read of a record is the
    miss every walk waits for.

    Every ``CHECK`` inserts the mean ancestor-search length is looked at; past
    ``st[SWITCH]`` the call stops before edge ``st[RESUME]`` and returns
    ``-1 - w`` (windows up to ``w`` answered) so that the caller moves the
    forest into link-cut trees (``to_link_cut``) and goes on with
    ``msf_run_link_cut``; otherwise it returns ``upto``'s window reached.
    """
    w = first_window
    W = V.reshape(V.shape[0] * N_V)     # the records, flat (``_msf_layout.at``)
    qa = Q[0]
    qb = Q[1]
    cache = Q[2]
    t0 = st[T0]
    r = st[R]
    s = st[S]
    nq = qa.shape[0]
    n = u.shape[0]
    # the per-edge state in locals, stored back on return: ``st`` and the
    # records are both int64 arrays, so the compiler must assume that every
    # store to one may change the other and reload
    last_t = st[LAST_T]
    count = st[COUNT]
    steps = st[STEPS]
    # the slide grid point of the edge times: one division per slide, not per edge
    tg = NEVER
    next_grid = NEVER
    for i in range(n + 1):
        ti = t[i] if i < n else INF
        while w < upto and ti >= t0 + w * s + r:
            start = t0 + w * s
            if last_t < start:
                w = _close_empty(st, ti, w, upto, first_window, i == n, out)
                continue
            row = w - first_window
            for q in range(min(nq, PREFETCH_QUERIES)):
                prefetch_record(V, qa[q])
                prefetch_record(V, qb[q])
            for q in range(nq):
                if q + PREFETCH_QUERIES < nq:
                    prefetch_record(V, qa[q + PREFETCH_QUERIES])
                    prefetch_record(V, qb[q + PREFETCH_QUERIES])
                out[row, q] = answer(W, qa[q], qb[q], start, cache, q)
            w += 1
        if i == n:
            break
        a = u[i]
        b = v[i]
        if ti >= next_grid:             # (times never decrease)
            tg = ti - (ti - t0) % s
            next_grid = tg + s
        if i + PREFETCH < n:
            prefetch_record(V, u[i + PREFETCH])
            prefetch_record(V, v[i + PREFETCH])
        if i + PREFETCH_PARENTS < n:
            # those records have arrived by now: their parents next
            p = W[at(u[i + PREFETCH_PARENTS], PARENT)]
            if p >= 0:
                prefetch_record(V, p)
            p = W[at(v[i + PREFETCH_PARENTS], PARENT)]
            if p >= 0:
                prefetch_record(V, p)
        if count >= CHECK:
            if steps > st[SWITCH] * count:
                st[RESUME] = i
                st[LAST_T] = last_t
                st[COUNT] = count
                st[STEPS] = steps
                return -1 - w
            count = 0
            steps = 0
        count += 1
        steps += _insert(W, a, b, tg)
        W[at(a, SEEN)] = ti
        W[at(b, SEEN)] = ti
        last_t = ti
    st[LAST_T] = last_t
    st[COUNT] = count
    st[STEPS] = steps
    return w


@njit(cache=True, _nrt=False)
def msf_run_link_cut(V, st, LT, ET, u, v, t, Q, out, first_window, upto):
    """``msf_run`` on the link-cut trees (``_msf_link_cut_kernels``), where the
    forest stays once moved there: the same windows, answers and grid."""
    w = first_window
    qa = Q[0]
    qb = Q[1]
    cache = Q[2]
    t0 = st[T0]
    r = st[R]
    s = st[S]
    nq = qa.shape[0]
    n = u.shape[0]
    for i in range(n + 1):
        ti = t[i] if i < n else INF
        while w < upto and ti >= t0 + w * s + r:
            start = t0 + w * s
            if st[LAST_T] < start:
                w = _close_empty(st, ti, w, upto, first_window, i == n, out)
                continue
            row = w - first_window
            for q in range(nq):
                out[row, q] = lct_answer(LT, ET, V, qa[q], qb[q], start, cache, q)
            w += 1
        if i == n:
            break
        a = u[i]
        b = v[i]
        lct_insert_edge(LT, ET, st, a, b, ti - (ti - t0) % s)
        V[a, SEEN] = ti
        V[b, SEEN] = ti
        st[LAST_T] = ti
    return w


@njit(cache=True, _nrt=False)
def msf_trigger(V, st, Q, out, u, v, t, last_t, check_last, table, size, first_window, dry):
    """A one-edge ``process`` call of an eager engine in one compiled call (issue 28: a
    window's triggering call comes on caches the slide before it evicted, where each
    further call from Python, and each array argument, costs microseconds), when it
    makes exactly window ``first_window`` due: the driver's ``feed_one`` (time check,
    dense ids through the direct ``table``, fresh ids numbered from ``size``), into
    ``st[EDGE:EDGE + 5]``, then ``msf_run`` on the edge: the window's answers into
    ``out`` (one row), then the edge.

    Returns ``(status, fresh ids, fresh id 0, fresh id 1, last time, upto,
    answered)``: ``status`` as ``feed_one``'s, or ``-3`` (not here: ``V`` has no
    room for two fresh vertices, link-cut trees, or not exactly one window due);
    unless ``status == -1`` nothing has changed.  The fresh ids in increasing value;
    ``upto = first_window + 1``; ``answered`` 1 when ``out`` is the same row as at
    the last return of 1 or 2 (``Q[QLAST]`` holds that row as 0/1, 2 initially), 2
    when it is a new row (``Q[QLAST]`` updated), 3 when ``msf_run`` asked for
    link-cut trees before the edge (``out`` holds the answers; the caller inserts
    the edge, ``st[EDGE:EDGE + 3]``).

    ``dry``: the driver's pre-warm after a large batch (``ConnectivityEngine``):
    window ``first_window`` answered into ``out`` on the forest as it is, which is
    the forest its triggering call will answer on (the edge goes in after the
    answers), and ``Q[QLAST]`` read as the compare reads it; no edge, no time
    check, no id numbered.  Returns status ``-4`` (``-3`` on link-cut trees).
    Nothing changes but ``out`` and the answers' cached bottlenecks (``Q[2]``,
    lower bounds that only grow: the triggering call would cache the same)."""
    if dry:
        if st[MODE] == 1:
            return -3, 0, 0, 0, last_t, first_window, 0
        none = st[EDGE:EDGE]
        msf_run(V, st, none, none, none, Q, out, first_window, first_window + 1)
        same = same_row(out, Q[QLAST], False)
        return -4, 0, 0, 0, last_t, first_window + 1, same
    ti = t[0]
    upto = windows_due(ti, st[T0] + st[R], st[S], first_window)
    if upto != first_window + 1 or size + 2 > V.shape[0] or st[MODE] == 1:
        return -3, 0, 0, 0, last_t, upto, 0
    gu = st[EDGE:EDGE + 1]
    gv = st[EDGE + 1:EDGE + 2]
    gt = st[EDGE + 2:EDGE + 3]
    status, nf, tl = feed_one(u, v, t, last_t, check_last, table, size, gu, gv, gt,
                              st[EDGE + 3:EDGE + 5])
    if status != -1:
        return status, 0, 0, 0, tl, upto, 0
    f0 = st[EDGE + 3]
    f1 = st[EDGE + 4]
    done = msf_run(V, st, gu, gv, gt, Q, out, first_window, upto)
    if done < 0:
        return status, nf, f0, f1, tl, upto, 3
    return status, nf, f0, f1, tl, upto, 1 if same_row(out, Q[QLAST], True) else 2
