"""Hypothesis strategies for S-KWS streams (public; the model of ``streamspec.spec.kws``).

Streams are valid by construction (no ``.filter``): the builder tracks the
schema and the alive tuples while it draws.  Small on purpose so joins and
ties are frequent: up to 3 relations ``R, S, T`` with attributes ``a, b``
(join values from ``{0, 1, 2, None}``) and ``s`` (text drawn from a
vocabulary of 3 keywords plus noise, in mixed case and punctuation); random
join edges, which cover chains, stars, cycles, parallel edges and self joins;
both lifespan models (window 1..6 or deletions); int tids (from 0, or sparse,
negative, crossing 9 -> 10), str tids or both; time steps of 0 (ties) to 7
(gaps longer than the window) and of exactly the window (an arrival at a
tuple's end); optional schema changes; int or str tids.

- ``cases(schema_changes=True)``: a ``streamspec.conformance.kws.Case`` with chunking.
- ``random_case(seed)``: the same builder driven by ``random.Random`` (Spark fuzzing).
- ``invalid_cases()``: ``(case, position, bad_record, error_type)``.
"""
from __future__ import annotations

import random

from hypothesis import strategies as st

from streamspec.spec.errors import InvalidRecord, MalformedRecord, OutOfOrder
from streamspec.spec.kws import (AddEdge, AddRelation, Delete, Insert, Params, RemoveEdge,
                      RemoveRelation)
from streamspec.spec.kws_schema import JoinEdge, Relation, Schema

VOCAB = ("k0", "k1", "k2")
WORDS = ("k0", "K1", "k2!", "zz", "k0-k1", "Kk", "k1,k2")
VALUES = (0, 1, 1, 2, None)
STEPS = (0, 0, 0, 1, 1, 1, 2, 3, 7)
NAMES = ("R", "S", "T", "U")
ATTRS = ("a", "b", "s")


def _relation(name):
    return Relation(name, ATTRS)


def build(pick, schema_changes: bool = True, max_events: int = 16, shapes: bool = True):
    """A valid (params, events, chunks) drawn with ``pick(sequence) -> element``.

    ``shapes`` adds the shapes the mutation gate asked for (cycles over three relations,
    joined keyword cases, a 12-unit window, sparse, negative and mixed tids); without it
    the builder draws exactly what it drew before them, so the seeded ``random_case``
    streams the Spark lane and the migration tests pin down stay the same."""
    from streamspec.conformance.kws import Case
    # dense cases: one relation joined with itself on two values, where tuples join
    # themselves and CNs repeat nodes (what the join's refusal is for, Figure 3.7)
    dense = pick((False, False, False, True))
    values_pool = (0, 1) if dense else VALUES
    n_rel = 1 if dense else pick((1, 1, 2, 2, 3, 3))
    rels = [_relation(n) for n in NAMES[:n_rel]]
    # (R.b = R.b joins every tuple with itself: CNs with repeated nodes meet
    # composites that could repeat a tuple)
    edges = [JoinEdge("e0", "R", pick(("a", "b")), "R", "b")] if dense else []
    for k in range(len(edges), len(edges) + pick((0, 1, 1, 1, 2, 2, 3, 4))):
        edges.append(JoinEdge(f"e{k}", pick(rels).name, pick(("a", "b")), pick(rels).name, pick(("a", "b"))))
    if shapes and n_rel == 3 and pick((False, False, True)):     # a cycle over the three relations
        for a, b in (("R", "S"), ("S", "T"), ("T", "R")):
            edges.append(JoinEdge(f"e{len(edges)}", a, pick(("a", "b")), b, pick(("a", "b"))))
    keywords = []
    for _ in range(pick((1, 2, 2, 3))):
        k = pick(VOCAB)
        if k not in keywords:
            keywords.append(k)
    window = pick((None, None, 1, 2, 3, 6, 6, 12) if shapes else (None, None, 1, 2, 2, 3, 6))
    # 4-node trees with 3 keywords over self joins give thousands of CNs: keep cases quick
    t_max = pick((1, 2, 3, 4, 4, 4) if len(keywords) <= 2 else (1, 2, 3, 3))
    # joined cases: two keywords spread over joined tuples under a window, so results of
    # several tuples (with different start times, so different ends; across pickle round
    # trips; expiring together after a gap) are the rule rather than a rarity.  "RS": R holds
    # k0, S holds k1, joined on R.a = S.a; "RR": one relation joined with itself on a, its
    # tuples holding k0, k1 or no keyword, CNs of up to 4 nodes with free ones in between
    # (where a tuple could meet itself: the join's refusal, Figure 3.7)
    joined = pick((None, None, None, "RS", "RR")) if shapes else None
    if joined == "RS":
        rels = [_relation("R"), _relation("S")]
        edges = [JoinEdge("e0", "R", "a", "S", "a")]
        keywords, window, t_max = ["k0", "k1"], pick((3, 6)), 2
    elif joined == "RR":
        rels = [_relation("R")]
        edges = [JoinEdge("e0", "R", "a", "R", "a")]
        keywords, window, t_max = ["k0", "k1"], pick((3, 6, None)), 4
    params = Params(Schema(tuple(rels), tuple(edges)), tuple(keywords), t_max, window)
    # int tids (sequence numbers from 0, or sparse, negative, crossing 9 -> 10 and 99 -> 100,
    # where ints and text sort apart), str tids, or both in one stream (ints sort first)
    if shapes:
        tid_kind = pick(("int", "int", "str", "mixed"))
        tid_base, tid_stride = pick((0, 0, 7, 96, -3)), pick((1, 1, 3))
    else:
        tid_kind, tid_base, tid_stride = ("str" if pick((False, False, True)) else "int"), 0, 1
    live_rels = {r.name for r in rels}
    live_edges = {e.id: e for e in edges}
    alive = []                     # (tid, relation, t_start)
    events, t, next_tid, next_edge = [], 0, 0, len(edges)
    # a step of exactly the window makes an arrival meet a tuple's end (t == t_start + w)
    steps = STEPS if window is None else STEPS + (window,)
    for _ in range(pick(tuple(range(max_events + 1)))):
        t += pick(steps)
        alive = [x for x in alive if x[1] in live_rels and (window is None or t < x[2] + window)]
        kinds = ["insert"] * 6 + (["delete"] * 2 if alive else [])
        if schema_changes:
            kinds += ["add_edge", "remove_edge", "add_rel", "remove_rel"]
        kind = pick(kinds)
        if kind == "insert" and live_rels:
            rel = pick(sorted(live_rels))
            values = {"a": pick(values_pool), "b": pick(values_pool)}
            words = [pick(WORDS) for _ in range(pick((0, 1, 1, 2)))]
            if joined == "RS":
                values["a"] = pick((0, 1))
                words = ["k0" if rel == "R" else "k1"]
            elif joined == "RR":
                values["a"] = pick((0, 1))
                words = [pick(("k0", "k1", "zz"))]
            if words or pick((True, False)):
                values["s"] = " ".join(words)
            as_str = tid_kind == "str" or (tid_kind == "mixed" and pick((False, True)))
            tid = f"t{next_tid}" if as_str else tid_base + tid_stride * next_tid
            next_tid += 1
            events.append(Insert(rel, tid, values, t))
            alive.append((tid, rel, t))
        elif kind == "delete" and alive:
            victim = pick(alive)
            alive.remove(victim)
            events.append(Delete(victim[0], t))
        elif kind == "add_edge" and live_rels:
            names = sorted(live_rels)
            e = JoinEdge(f"e{next_edge}", pick(names), pick(("a", "b")), pick(names), pick(("a", "b")))
            next_edge += 1
            live_edges[e.id] = e
            events.append(AddEdge(e, t))
        elif kind == "remove_edge" and live_edges:
            eid = pick(sorted(live_edges))
            del live_edges[eid]
            events.append(RemoveEdge(eid, t))
        elif kind == "add_rel" and len(live_rels) < len(NAMES):
            name = pick([n for n in NAMES if n not in live_rels])
            live_rels.add(name)
            events.append(AddRelation(_relation(name), t))
        elif kind == "remove_rel" and live_rels:
            name = pick(sorted(live_rels))
            live_rels.discard(name)
            live_edges = {k: e for k, e in live_edges.items() if name not in (e.left, e.right)}
            events.append(RemoveRelation(name, t))
    chunks, left = [], len(events)
    while left > 0:
        size = min(left, pick((1, 1, 2, 3, 5, 100)))
        chunks.append(size)
        left -= size
    return Case(params, events, chunks)


_SAMPLED: dict = {}


def _picker(draw):
    """``pick`` over hypothesis: one ``sampled_from`` per distinct sequence, reused (building
    a strategy per draw cost most of a case's generation); the choices drawn are the same.
    Keyed by the elements' types too: ``(False, True) == (0, 1)``, but they are different
    sequences to draw from."""
    def pick(seq):
        options = tuple(seq)
        try:
            key = tuple((type(x), x) for x in options)
            strategy = _SAMPLED.get(key)
            if strategy is None:
                if len(_SAMPLED) > 4096:
                    _SAMPLED.clear()
                strategy = _SAMPLED[key] = st.sampled_from(options)
        except TypeError:                       # an unhashable element: no reuse
            strategy = st.sampled_from(options)
        return draw(strategy)
    return pick


@st.composite
def cases(draw, schema_changes: bool = True, max_events: int = 16):
    return build(_picker(draw), schema_changes, max_events)


def random_case(seed: int, schema_changes: bool = True, max_events: int = 16, shapes: bool = False):
    rng = random.Random(seed)
    return build(lambda seq: rng.choice(list(seq)), schema_changes, max_events, shapes)


def _bad_records(case, position):
    """Bad records that fit the stream before ``position``, with their error types."""
    before = case.events[:position]
    t = before[-1].t if before else 0
    rel = case.params.schema.relations[0].name
    out = [
        (Insert("Nope", "fresh", {"a": 1}, t), InvalidRecord),
        (Insert(rel, "fresh", {"zzz": 1}, t), InvalidRecord),
        (Insert(rel, "fresh", {"a": [1]}, t), InvalidRecord),
        (Insert(rel, True, {"a": 1}, t), InvalidRecord),
        (Delete("never-seen", t), InvalidRecord),
        (RemoveEdge("no-such-edge", t), InvalidRecord),
        (AddEdge(JoinEdge("fresh-edge", rel, "nope", rel, "a"), t), InvalidRecord),
        (RemoveRelation("Nope", t), InvalidRecord),
        ("not an event", MalformedRecord),
        (Insert(rel, "fresh", {"a": 1}, "late"), MalformedRecord),
    ]
    if t > 0:
        out.append((Insert(rel, "fresh", {"a": 1}, t - 1), OutOfOrder))
    inserts = [e for e in before if isinstance(e, Insert)]
    if inserts:
        out.append((Insert(rel, inserts[0].tid, {}, t), InvalidRecord))
    deleted = [e.tid for e in before if isinstance(e, Delete)]
    if deleted:
        out.append((Delete(deleted[0], t), InvalidRecord))
    w = case.params.window
    if w is not None:
        dead = [e.tid for e in inserts if e.t + w <= t]
        if dead:
            out.append((Delete(dead[0], t), InvalidRecord))
    return out


@st.composite
def invalid_cases(draw):
    case = draw(cases(schema_changes=False, max_events=8))
    position = draw(st.integers(0, len(case.events)))
    record, error = draw(st.sampled_from(_bad_records(case, position)))
    return case, position, record, error
