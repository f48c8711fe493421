"""Hypothesis strategies for connectivity streams (the model of ``streamspec.spec.connectivity``).

``cases()`` draws a whole conformance case: parameters (any ``r``, ``s`` from
1 to 8, so ``r < s``, ``r == s`` and ``r`` not a multiple of ``s`` all occur),
a workload over a 7-vertex alphabet of which one vertex never appears in the
stream (absent vertices, ``Q(x, x)``), an edge stream over 6 vertices (self
loops and duplicate edges are frequent) whose time steps mix ties and bursts
(step 0), steps inside one slide, and gaps longer than the window (empty
windows, whole chunks skipped), an origin at or before the first edge, the
cut of the stream into ``process`` calls, and ad-hoc probe pairs.

``invalid_cases()`` draws a valid case plus one bad record to slip in, with the
typed error the spec demands for it.
"""
from __future__ import annotations

import random

from hypothesis import strategies as st

from streamspec.spec.connectivity import Edge, Params
from streamspec.spec.errors import InvalidRecord, MalformedRecord, OutOfOrder

N_STREAM_VERTICES = 6   # vertices that occur in edges
N_QUERY_VERTICES = 7    # one more: a vertex that is never present
MAX_RS = 8


def vertex_name(i: int, kind: type):
    return i if kind is int else "abcdefghij"[i]


def _case_type():
    from streamspec.conformance.connectivity import Case
    return Case


def step(r: int, s: int, late: bool = False):
    """The increment before an edge: a tie (0, what it shrinks to), progress within a
    slide, or a gap longer than the window; with ``late`` (``lateness="drop"``) also a
    step back, a late edge the engine must drop (the stream's time stays where it was)."""
    steps = [
        st.just(0),                                   # ties and bursts
        st.integers(1, s),                            # ordinary progress
        st.integers(r, 2 * (r + s) + 1),              # a gap as long as the window or longer
    ]
    if late:
        steps.append(st.integers(-(r + s), -1))       # a late edge
    return st.one_of(*steps)


@st.composite
def cases(draw, max_edges: int = 30, lateness: tuple = ("error", "error", "error", "drop")):
    """One list of edge records, each ``(u, v, step)``: hypothesis deletes whole edges
    and shrinks ids and steps toward 0 (a failure shrinks to the few edges it needs).
    Duplicate edges come from the small vertex alphabet; a tenth of the records copy
    the ends of the edge before them.  A quarter of the cases have ``lateness="drop"``
    and late edges (``lateness`` gives the policies to draw from)."""
    kind = draw(st.sampled_from([int, int, str]))
    r = draw(st.integers(1, MAX_RS))
    s = draw(st.integers(1, MAX_RS))
    lateness = draw(st.sampled_from(lateness))
    qv = st.integers(0, N_QUERY_VERTICES - 1).map(lambda i: vertex_name(i, kind))
    workload = draw(st.lists(st.tuples(qv, qv), max_size=6))
    ev = st.integers(0, N_STREAM_VERTICES - 1)
    records = draw(st.lists(st.tuples(ev, ev, step(r, s, lateness == "drop"), st.integers(0, 9)),
                            max_size=max_edges))
    first = draw(st.integers(-20, 20))
    t, edges = first, []
    for i, (a, b, d, copy) in enumerate(records):
        if copy == 9 and edges:              # a duplicate of the edge before
            a, b = edges[-1][0], edges[-1][1]
        if i and d < 0:                      # late: dropped, the stream's time stays
            edges.append((a, b, t + d))
            continue
        t += d if i else 0
        edges.append((a, b, t))
    edges = [Edge(vertex_name(a, kind), vertex_name(b, kind), tt) for a, b, tt in edges]
    n = len(edges)
    origin = draw(st.one_of(st.none(), st.integers(0, 2 * s).map(lambda d: first - d)))
    cuts = sorted(draw(st.sets(st.integers(1, max(n - 1, 1)), max_size=6))) if n > 1 else []
    bounds = [0] + [c for c in cuts if c < n] + [n]
    chunks = [b - a for a, b in zip(bounds, bounds[1:]) if b > a]
    probes = draw(st.lists(st.tuples(qv, qv), max_size=3))
    return _case_type()(Params(r=r, s=s, workload=workload, t0=origin, lateness=lateness),
                        edges, chunks, probes)


@st.composite
def invalid_cases(draw):
    """``(case, position, bad_record, error_type)``: insert ``bad_record`` before edge ``position``."""
    case = draw(cases(max_edges=12, lateness=("error",)))   # the error policy's contract
    edges = case.edges
    kind = type(edges[0].u) if edges else (int if not case.params.workload else type(case.params.workload[0][0]))
    pos = draw(st.integers(0, len(edges)))
    t_here = edges[pos - 1].t if pos > 0 else (edges[0].t if edges else 0)
    other = "zz" if kind is int else 99
    choices = [
        ((vertex_name(0, kind), vertex_name(1, kind)), MalformedRecord),     # two fields
        ((vertex_name(0, kind), vertex_name(1, kind), "soon"), MalformedRecord),
        ((vertex_name(0, kind), vertex_name(1, kind), 1.5), MalformedRecord),
        ((other, vertex_name(1, kind), t_here), InvalidRecord),
    ]
    if pos > 0:
        choices.append(((vertex_name(0, kind), vertex_name(1, kind), t_here - 1), OutOfOrder))
    bad, error = draw(st.sampled_from(choices))
    return case, pos, bad, error


def random_case(seed: int, max_edges: int = 40):
    """A case from a plain seeded ``random.Random`` (Spark executors fuzz with these)."""
    rng = random.Random(seed)
    kind = int if rng.random() < 0.7 else str
    r, s = rng.randint(1, MAX_RS), rng.randint(1, MAX_RS)
    q = lambda: vertex_name(rng.randrange(N_QUERY_VERTICES), kind)  # noqa: E731
    workload = [(q(), q()) for _ in range(rng.randint(0, 6))]
    n = rng.randint(0, max_edges)
    t = first = rng.randint(-20, 20)
    edges = []
    for i in range(n):
        if i:
            kind_of_step = rng.random()
            t += 0 if kind_of_step < 0.3 else rng.randint(1, s) if kind_of_step < 0.9 else rng.randint(r, 2 * (r + s) + 1)
        if edges and rng.random() < 0.15:
            a, b = edges[rng.randrange(len(edges))].u, edges[rng.randrange(len(edges))].v
        else:
            a = vertex_name(rng.randrange(N_STREAM_VERTICES), kind)
            b = a if rng.random() < 0.15 else vertex_name(rng.randrange(N_STREAM_VERTICES), kind)
        edges.append(Edge(a, b, t))
    origin = None if rng.random() < 0.5 else first - rng.randint(0, 2 * s)
    chunks, left = [], n
    while left:
        c = rng.randint(1, left)
        chunks.append(c)
        left -= c
    probes = [(q(), q()) for _ in range(rng.randint(0, 3))]
    return _case_type()(Params(r=r, s=s, workload=workload, t0=origin), edges, chunks, probes)
