"""Top-k join conformance: step-by-step comparison with the oracle, and the invariants.

``check(engine_cls, case)`` feeds the case's stream to a fresh engine in the
case's chunks and, after every chunk, checks that

- exactly the windows the spec makes due have been emitted, in order, with the
  oracle's ``window``/``start``/``tau``;
- when the case falls under one of the engine's ``exact_when`` conditions
  (``conditions(case)``: ``static``, ``full_list``, ``unlimited``; the oracle
  declares ``changing`` too), each evaluation equals the oracle's (ids and
  scores, in rank order);
- always (notes/topkjoin.md, "Conformance"): at most ``budget`` fetches per
  evaluation (unless the engine is unbounded) and one counted evaluation per
  evaluation; answers of ``min(K, n)`` distinct ids of the window, ranked by
  ``(score desc, id asc)``; reported scores equal ``F`` of the engine's replica
  value and a streaming score it may use (the exact one, or ``S_min`` under
  ``latest``); the list's window marks agree with the rebuild formulation.

An engine that raises (e.g. ``BudgetExceeded``) is a mismatch.  Quality
metrics of approximate engines are measured by ``quality_of`` (reported by the
tests, not asserted).
"""
from __future__ import annotations

import json

import attrs

from streamspec.conformance.runner import Mismatch, check_rejection
from streamspec.conformance.strategies.topkjoin import cases, invalid_cases, random_case  # noqa: F401
from streamspec.reference.topkjoin import aggregate, evaluate
from streamspec.spec.errors import StreamspecError
from streamspec.spec.topkjoin import Item, Params, rank_key
from streamspec.spec.topkjoin_quality import Quality, quality
from streamspec.spec.topkjoin_remote import TimelineDataset
from streamspec.spec.windows import SlidingWindows

PROBLEM = "topkjoin"


@attrs.frozen
class Case:
    params: Params
    items: list
    chunks: list
    scenario: str = "changing"


def _windows(case: Case) -> SlidingWindows | None:
    if not case.items:
        return None
    t0 = case.params.t0 if case.params.t0 is not None else case.items[0].ts
    return SlidingWindows(case.params.omega, case.params.beta, t0)


def window_sizes(case: Case) -> list[int]:
    w = _windows(case)
    if w is None:
        return []
    return [len({it.id for it in case.items if w.start(i) <= it.ts < w.end(i)})
            for i in range(w.started_by(case.items[-1].ts))]


def conditions(case: Case) -> set[str]:
    """The note's exactness conditions this case satisfies (recomputed from the data)."""
    p, w = case.params, _windows(case)
    out = {"changing"}
    t0 = w.t0 if w else p.t0
    remote = p.remote
    if isinstance(remote, TimelineDataset) and (t0 is None or all(t < t0 for _, t, _ in remote.rows())):
        out.add("static")
    widest = max(window_sizes(case), default=0)
    if p.k + p.n >= widest:
        out.add("full_list")
        if p.budget >= widest:
            out.add("unlimited")
    return out


def must_be_exact(engine_cls, case: Case) -> bool:
    return bool(set(engine_cls.exact_when) & conditions(case))


def run_engine(engine_cls, case: Case):
    """All evaluations of ``engine_cls`` on ``case`` (chunk by chunk, then flush)."""
    engine = engine_cls(case.params)
    out, pos = [], 0
    for size in case.chunks:
        out.extend(engine.process(case.items[pos:pos + size]))
        pos += size
    out.extend(engine.flush())
    return out


def quality_of(engine_cls, case: Case) -> Quality:
    return quality(run_engine(engine_cls, case), evaluate(case.items, case.params), case.params.k)


def check(engine_cls, case: Case) -> Mismatch | None:
    expected = evaluate(case.items, case.params)
    exact = must_be_exact(engine_cls, case)
    windows = _windows(case)
    got, pos = [], 0
    try:
        engine = engine_cls(case.params)
        for size in case.chunks:
            chunk = case.items[pos:pos + size]
            pos += size
            out = list(engine.process(chunk))
            step = f"after item {pos - 1} (ts={chunk[-1].ts})"
            problem = _compare(engine, case, got, out, expected, windows.due_before(chunk[-1].ts),
                               exact, step)
            if problem:
                return problem
            got.extend(out)
        out = list(engine.flush())
        return _compare(engine, case, got, out, expected, len(expected), exact, "flush")
    except StreamspecError as err:
        return Mismatch(f"evaluation {len(got)} (after item {pos - 1})",
                        f"engine raised {type(err).__name__}: {err}")


def _compare(engine, case, got, out, expected, due, exact, step) -> Mismatch | None:
    if len(got) + len(out) != due:
        return Mismatch(step, f"{len(got) + len(out)} evaluations emitted, the spec makes {due} due",
                        [e.window for e in expected[len(got):due]], [e.window for e in out])
    for a, e in zip(out, expected[len(got):due]):
        where = f"{step}, window {e.window} [{e.start}, {e.tau})"
        if (a.window, a.start, a.tau) != (e.window, e.start, e.tau):
            return Mismatch(where, "wrong window", (e.window, e.start, e.tau), (a.window, a.start, a.tau))
        if exact and a != e:
            return Mismatch(where, "answer differs from the oracle (exact case)", e.answer, a.answer)
        problem = _answer_invariants(case, a, e, where)
        if problem:
            return problem
    return _engine_invariants(engine, case, len(got) + len(out), out, step)


def _answer_invariants(case, a, e, where) -> Mismatch | None:
    inside = [(it.id, it.x, it.ts) for it in case.items if e.start <= it.ts < e.tau]
    window_ids = {r[0] for r in inside}
    if len(a.answer) != len(e.answer):
        return Mismatch(where, f"answer has {len(a.answer)} ids, expected min(K, n) = {len(e.answer)}",
                        e.ids, a.ids)
    if len(set(a.ids)) != len(a.ids) or not set(a.ids) <= window_ids:
        return Mismatch(where, "answer ids must be distinct ids of the window", sorted(window_ids), a.ids)
    keys = [rank_key(s, k) for k, s in a.answer]
    if keys != sorted(keys):
        return Mismatch(where, "answer not ranked by (score desc, id asc)", sorted(keys), keys)
    return None


def _engine_invariants(engine, case, evaluations, out, step) -> Mismatch | None:
    p = case.params
    fetcher = getattr(engine, "fetcher", None)
    if fetcher is not None and evaluations:
        counts = fetcher.per_evaluation
        if len(counts) != evaluations:
            return Mismatch(step, "fetch counter: one counted evaluation per evaluation",
                            evaluations, len(counts))
        if not engine.unbounded and any(c > p.budget for c in counts):
            return Mismatch(step, f"more than {p.budget} fetches in an evaluation", p.budget, counts)
    slist = getattr(engine, "slist", None)
    if slist is not None and slist.marks() != slist.rebuilt_marks():
        return Mismatch(step, "window marks disagree with the rebuild formulation (§3.7)",
                        slist.rebuilt_marks(), slist.marks())
    replica = getattr(engine, "replica", None)
    if replica is not None and out:
        last = out[-1]
        inside = [(it.id, it.x, it.ts) for it in case.items if last.start <= it.ts < last.tau]
        svals = aggregate(inside, p.aggregate)
        dense = dict(zip(last.ids, engine.keys.lookup(list(last.ids)).tolist())) if last.ids else {}
        score = p.scoring()
        allowed_s = lambda k: {svals[k]} | ({engine.smin} if p.aggregate == "latest" else set())
        for k, s in last.answer:
            if s not in {score(sv, replica[dense[k]]) for sv in allowed_s(k)}:
                return Mismatch(step, f"score of {k!r} in window {last.window} is not F(s, replica value)",
                                [score(sv, replica[dense[k]]) for sv in allowed_s(k)], s)
    return None


def check_invalid(engine_cls, case: Case, position: int, bad, error: type) -> Mismatch | None:
    """Offer ``bad`` before item ``position``: the error must be ``error`` and change nothing."""
    return check_rejection(engine_cls, case.params, case.items[:position], case.items[position:],
                           bad, error, position, show=lambda e: e.answer)

def dump(case: Case) -> str:
    p = case.params
    head = {"problem": PROBLEM, "omega": p.omega, "beta": p.beta, "k": p.k, "n": p.n,
            "budget": p.budget, "aggregate": p.aggregate, "weights": list(p.weights),
            "stream_range": list(p.stream_range), "remote_range": list(p.remote_range),
            "t0": p.t0, "seed": p.seed, "scenario": case.scenario, "chunks": list(case.chunks),
            "timeline": [list(r) for r in p.remote.rows()]}
    lines = [json.dumps(head)] + [json.dumps([it.id, it.x, it.ts]) for it in case.items]
    return "\n".join(lines) + "\n"


def load(text: str) -> Case:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    h = json.loads(lines[0])
    params = Params(omega=h["omega"], beta=h["beta"], k=h["k"], n=h["n"], budget=h["budget"],
                    aggregate=h["aggregate"], weights=h["weights"], stream_range=h["stream_range"],
                    remote_range=h["remote_range"], t0=h["t0"], seed=h["seed"],
                    remote=TimelineDataset.from_rows(h["timeline"]))
    items = [Item(*json.loads(ln)) for ln in lines[1:]]
    return Case(params, items, h["chunks"], h.get("scenario", "changing"))
