"""Hypothesis strategies for simjoin streams (the SWOOP paper's model, as ``streamspec.spec.simjoin`` states it).

``cases()`` draws a whole conformance case: the join kind (self or R-S), any
of the five similarity functions, ``k`` from 1 to 4, an int or float window,
records over a tiny token alphabet (1 to 6 tokens, int or str) so equal
scores, equal end times and identical sets are the rule, with empty sets and
duplicate tokens in the input; time steps that mix ties and bursts (step 0),
ordinary steps and gaps longer than the window; a few ``Advance`` events; and
the cut of the stream into ``process`` calls.  Everything is valid by
construction (no ``.filter``).

``invalid_cases()`` draws a valid case plus one bad event to slip in, with the
typed error the spec demands for it.
"""
from __future__ import annotations

import random

from hypothesis import strategies as st

from streamspec.spec.errors import InvalidRecord, MalformedRecord, OutOfOrder
from streamspec.spec.simjoin import SIMILARITIES, Advance, Params, Record

WINDOWS = (1, 2, 3, 5, 2.5)


def _case_type():
    from streamspec.conformance.simjoin import Case
    return Case


def _token(i: int, kind: type):
    return i if kind is int else "abcdefgh"[i]


@st.composite
def params(draw, lateness: tuple = ("error", "error", "error", "drop")) -> Params:
    return Params(k=draw(st.integers(1, 4)), w=draw(st.sampled_from(WINDOWS)),
                  similarity=draw(st.sampled_from(SIMILARITIES)),
                  join=draw(st.sampled_from(["self", "self", "rs"])),
                  lateness=draw(st.sampled_from(lateness)))


@st.composite
def cases(draw, max_events: int = 24, lateness: tuple = ("error", "error", "error", "drop")):
    """One list of event records, each ``(step, half, advance, tokens, side)``: hypothesis
    deletes whole events and shrinks steps, tokens and sides toward the first choice, so a
    failure shrinks to the few events it needs.  A quarter of the cases have
    ``lateness="drop"`` and late events (a step back), which the engine must drop.  ``half`` halves the step on a float
    window (float times); ``advance == 9`` (one in ten) makes the event an ``Advance``."""
    p = draw(params(lateness))
    kind = draw(st.sampled_from([int, str]))
    alphabet = draw(st.integers(1, 6))
    t = draw(st.integers(-5, 5))
    id_kind = draw(st.sampled_from([int, str]))
    steps = [st.just(0), st.integers(1, 2), st.integers(4, 12)]
    if p.lateness == "drop":
        steps.append(st.integers(-6, -1))       # a late event: dropped, time stays
    record = st.tuples(st.one_of(*steps), st.booleans(),
                       st.integers(0, 9),
                       st.lists(st.integers(0, alphabet - 1), max_size=5),    # duplicates collapse
                       st.sampled_from("RS") if p.join == "rs" else st.none())
    events = []
    for i, (step, half, advance, toks, side) in enumerate(draw(st.lists(record, max_size=max_events))):
        late = i and step < 0
        if half and isinstance(p.w, float):
            at = t + step / 2 if i else t
        else:
            at = t + step if i else t
        t = t if late else at               # a late event leaves the stream's time where it was
        if advance == 9:               # (not 0: a failure shrinks toward records)
            events.append(Advance(at))
            continue
        rid = i if id_kind is int else f"r{i}"
        events.append(Record(rid, [_token(x, kind) for x in toks], at, side))
    n = len(events)
    cuts = sorted(draw(st.sets(st.integers(1, max(n - 1, 1)), max_size=5))) if n > 1 else []
    bounds = [0] + [c for c in cuts if c < n] + [n]
    chunks = [b - a for a, b in zip(bounds, bounds[1:]) if b > a]
    return _case_type()(p, events, chunks)


def _last_time(events) -> float | None:
    times = [e.t if isinstance(e, Advance) else e.ts for e in events]
    return max(times) if times else None


@st.composite
def invalid_cases(draw):
    """``(case, position, bad_event, error_type)``: offer ``bad_event`` before event ``position``."""
    case = draw(cases(max_events=10, lateness=("error",)))     # the error policy's contract
    position = draw(st.integers(0, len(case.events)))
    before = case.events[:position]
    last = _last_time(before)
    ids = [e.id for e in before if isinstance(e, Record)]
    kinds = [type(x) for e in before if isinstance(e, Record) for x in e.tokens]
    side = "R" if case.params.join == "rs" else None
    t = last if last is not None else 0
    options = [
        (Record("bad-nan", [1], float("nan"), side), MalformedRecord),
        (Record("bad-inf", [1], float("inf"), side), MalformedRecord),
        (Record("bad-tokens", "abc", t, side), MalformedRecord),
        (Record(True, [], t, side), MalformedRecord),
        (Record("bad-bool", [True], t, side), InvalidRecord),
        (Record("bad-side", [], t, None if side else "R"), InvalidRecord),
        (Advance(float("nan")), MalformedRecord),
    ]
    if last is not None:
        options.append((Record("bad-late", [], last - 1, side), OutOfOrder))
        options.append((Advance(last - 0.5), OutOfOrder))
    if ids:
        options.append((Record(draw(st.sampled_from(ids)), [], t, side), InvalidRecord))
    if kinds:
        other = "x" if kinds[0] is int else 7
        options.append((Record("bad-kind", [other], t, side), InvalidRecord))
    bad, error = draw(st.sampled_from(options))
    return case, position, bad, error


def random_case(seed: int, max_events: int = 40):
    """A plain random case (no hypothesis): for Spark fuzzing and benchmarks of the suite."""
    rng = random.Random(seed)
    join = rng.choice(["self", "self", "rs"])
    p = Params(k=rng.randint(1, 5), w=rng.choice(WINDOWS), similarity=rng.choice(SIMILARITIES), join=join)
    n = rng.randint(0, max_events)
    t, events = rng.randint(-5, 5), []
    for i in range(n):
        t += rng.choice([0, 0, 1, 2, rng.randint(4, 12)]) if i else 0
        if rng.random() < 0.1:
            events.append(Advance(t))
            continue
        toks = [rng.randint(0, 5) for _ in range(rng.randint(0, 5))]
        events.append(Record(i, toks, t, rng.choice("RS") if join == "rs" else None))
    cuts = sorted({rng.randint(1, max(n - 1, 1)) for _ in range(rng.randint(0, 4))}) if n > 1 else []
    bounds = [0] + [c for c in cuts if c < n] + [n]
    return _case_type()(p, events, [b - a for a, b in zip(bounds, bounds[1:]) if b > a])
