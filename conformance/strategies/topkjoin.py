"""Hypothesis strategies for top-k join cases (the model of ``streamspec.spec.topkjoin``).

``cases()`` draws a whole case: window parameters (``omega``, ``beta`` from 1
to 10, so overlapping, tumbling and hopping windows all occur), K, N, the
budget, the aggregate, weights and ranges; a stream over a small id alphabet
with streaming values in ``{0, 0.5, 1, 2, 3}`` (sums are exact, scores tie
often) and time steps mixing bursts (step 0), ordinary progress and gaps
longer than the window (empty windows); a remote dataset; and the cut of the
stream into ``process`` calls.

The scenario decides which exactness property of ``streamspec.spec.topkjoin`` the case falls
under, by construction (``streamspec.conformance.topkjoin.conditions`` recomputes it):

- ``static``: every key's value is fixed before ``t0`` (every engine is exact);
- ``full_list``: K+N covers the alphabet (``topkn`` and ``at-asm`` are exact);
- ``unlimited``: also a budget covering the alphabet (every AcquaTop policy
  and every WSJ baseline is exact);
- ``changing``: anything (only the oracle must be exact; the invariants hold).

``invalid_cases()`` adds one bad record and the typed error it must raise;
``random_case(seed)`` is the same shape drawn with ``random`` (Spark fuzzing).
"""
from __future__ import annotations

import random

from hypothesis import strategies as st

from streamspec.spec.errors import InvalidRecord, MalformedRecord, OutOfOrder
from streamspec.spec.topkjoin import Item, Params
from streamspec.spec.topkjoin_remote import TimelineDataset

SCENARIOS = ("static", "full_list", "unlimited", "changing")
VALUES = (0.0, 0.5, 1.0, 2.0, 3.0)
MAX_ALPHABET = 7
MAX_WINDOW = 10


def _case_type():
    from streamspec.conformance.topkjoin import Case
    return Case


def _build(scenario, omega, beta, k, n, budget, aggregate, weights, alphabet, ids, xs, steps,
           first, origin_back, timelines_raw, chunk_cuts, seed):
    """Assemble a case from raw draws (shared by the strategy and ``random_case``)."""
    if scenario in ("full_list", "unlimited"):
        n = max(n, alphabet - k)
    if scenario == "unlimited":
        budget = max(budget, alphabet)
    t, items = first, []
    for i, (key, x) in enumerate(zip(ids, xs)):
        t += steps[i] if i else 0
        items.append(Item(key, x, t))
    t0 = first - origin_back if origin_back is not None else None
    t0_eff = t0 if t0 is not None else first
    timelines = {}
    for key, entries in timelines_raw.items():
        if scenario == "static":
            entries = entries[:1]
            timelines[key] = [(t0_eff - 1 - dt % 3, v) for dt, v in entries]
        else:
            timelines[key] = [(t0_eff - 2 + dt, v) for dt, v in entries]
    params = Params(omega=omega, beta=beta, k=k, n=n, budget=budget, aggregate=aggregate,
                    weights=weights, stream_range=(0.0, 6.0), remote_range=(0.0, 3.0), t0=t0,
                    remote=TimelineDataset(timelines), seed=seed)
    cuts = sorted(c for c in set(chunk_cuts) if 0 < c < len(items))
    bounds = [0] + cuts + [len(items)]
    chunks = [b - a for a, b in zip(bounds, bounds[1:]) if b > a]
    return _case_type()(params, items, chunks, scenario)


@st.composite
def cases(draw, max_items: int = 30, scenario: str | None = None):
    scenario = scenario or draw(st.sampled_from(SCENARIOS))
    omega = draw(st.integers(1, MAX_WINDOW))
    beta = draw(st.integers(1, MAX_WINDOW))
    k, n, budget = draw(st.tuples(st.integers(1, 4), st.integers(0, 4), st.integers(0, 4)))
    aggregate = draw(st.sampled_from(["sum", "latest"]))
    weights = draw(st.sampled_from([(0.7, 0.3), (0.5, 0.5), (1.0, 0.0), (0.0, 1.0)]))
    alphabet = draw(st.integers(1, MAX_ALPHABET))
    # steps: bursts (0), progress within a slide, and a gap longer than the window
    step = st.sampled_from([0, 0, 1, 1, max(beta // 2, 1), beta, omega + beta + 1])
    rows = draw(st.lists(st.tuples(st.integers(0, alphabet - 1), st.sampled_from(VALUES), step),
                         max_size=max_items))
    ids, xs, steps = ([r[i] for r in rows] for i in range(3))
    first = draw(st.integers(-20, 20))
    origin_back = draw(st.one_of(st.none(), st.integers(0, 2 * beta)))
    span = sum(steps[1:]) + omega + 4
    entry = st.tuples(st.integers(0, span), st.sampled_from([0.0, 1.0, 2.0, 3.0]))
    timelines = dict(enumerate(draw(st.lists(st.lists(entry, max_size=4), max_size=alphabet + 1))))
    cuts = draw(st.lists(st.integers(1, max(len(rows) - 1, 1)), max_size=5))
    seed = draw(st.integers(0, 3))
    return _build(scenario, omega, beta, k, n, budget, aggregate, weights, alphabet, ids, xs,
                  steps, first, origin_back, timelines, cuts, seed)


def random_case(seed: int, max_items: int = 200):
    """A plain random case (no shrinking), e.g. for Spark fuzzing."""
    r = random.Random(seed)
    scenario = r.choice(SCENARIOS)
    omega, beta = r.randint(1, MAX_WINDOW), r.randint(1, MAX_WINDOW)
    alphabet = r.randint(1, MAX_ALPHABET)
    count = r.randint(0, max_items)
    steps = [r.choice([0, 0, 1, r.randint(1, beta), r.randint(omega, 2 * (omega + beta))])
             for _ in range(count)]
    span = sum(steps[1:]) + omega + 4
    timelines = {key: [(r.randint(0, span), float(r.randint(0, 3))) for _ in range(r.randint(0, 5))]
                 for key in range(alphabet + 1)}
    return _build(scenario, omega, beta, r.randint(1, 4), r.randint(0, 4), r.randint(0, 4),
                  r.choice(["sum", "latest"]), r.choice([(0.7, 0.3), (0.5, 0.5)]), alphabet,
                  [r.randrange(alphabet) for _ in range(count)],
                  [r.choice(VALUES) for _ in range(count)], steps, r.randint(-20, 20),
                  r.choice([None, 0, r.randint(0, 2 * beta)]), timelines,
                  [r.randint(1, max(count - 1, 1)) for _ in range(r.randint(0, 6))], seed % 4)


@st.composite
def invalid_cases(draw):
    """``(case, position, bad_record, error_type)``: insert ``bad_record`` before item ``position``."""
    case = draw(cases(max_items=12))
    position = draw(st.integers(0, len(case.items)))
    prev_t = case.items[position - 1].ts if position else (case.items[0].ts if case.items else 0)
    kinds = ["nan", "malformed", "time"] + (["type", "late"] if position > 0 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "late" and (case.params.t0 is None or prev_t - 1 >= case.params.t0):
        return case, position, Item(0, 1.0, prev_t - 1), OutOfOrder
    if kind == "malformed":
        return case, position, (0, 1.0), MalformedRecord
    if kind == "time":
        return case, position, (0, 1.0, float(prev_t)), MalformedRecord
    if kind == "type":
        return case, position, Item("zero", 1.0, prev_t), InvalidRecord
    return case, position, Item(0, float("nan"), prev_t), InvalidRecord
