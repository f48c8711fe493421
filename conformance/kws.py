"""S-KWS conformance: step-by-step comparison with the oracle (notes/kws.md).

``check(engine_cls, case)`` feeds the case's events to a fresh engine in the
case's chunks.  After a chunk whose last event is at time ``T``, exactly the
oracle's outputs (``streamspec.reference.kws.evaluate``) with ``time < T`` must have
been emitted, in canonical order (the instant ``T`` is still open); after
``flush``, all of them.

``check_invalid`` offers one bad record and checks the typed error and that
the engine then goes on exactly as if it had never seen it.
"""
from __future__ import annotations

import json

import attrs

from streamspec.conformance.runner import Mismatch, check_rejection
from streamspec.conformance.strategies.kws import cases, invalid_cases, random_case  # noqa: F401
from streamspec.reference.kws import evaluate
from streamspec.spec.kws import (AddEdge, AddRelation, Appear, Delete, End, Insert, Params,
                      RemoveEdge, RemoveRelation)
from streamspec.spec.kws_schema import JoinEdge, Relation, Schema

PROBLEM = "kws"


@attrs.frozen
class Case:
    params: Params
    events: list
    chunks: list


def check(engine_cls, case: Case) -> Mismatch | None:
    expected = evaluate(case.params, case.events)
    try:
        return _check(engine_cls, case, expected)
    except Exception as exc:  # an engine crash on a valid stream is a mismatch too
        return Mismatch("while processing", f"the engine raised {type(exc).__name__}: {exc}")


def _check(engine_cls, case: Case, expected: list) -> Mismatch | None:
    engine = engine_cls(case.params)
    got, pos = [], 0
    for size in case.chunks:
        chunk = case.events[pos:pos + size]
        pos += size
        got.extend(engine.process(chunk))
        t = chunk[-1].t
        want = [o for o in expected if o.time < t]
        if got != want:
            return _mismatch(f"after event {pos - 1} (t={t})", want, got)
    got.extend(engine.flush())
    if got != expected:
        return _mismatch("flush", expected, got)
    return None


def _mismatch(step, want, got) -> Mismatch:
    for i, (w, g) in enumerate(zip(want, got)):
        if w != g:
            return Mismatch(step, f"output {i} differs", w, g)
    if len(want) > len(got):
        return Mismatch(step, f"missing outputs from {len(got)} on", want[len(got):], None)
    return Mismatch(step, f"extra outputs from {len(want)} on", None, got[len(want):])


def check_invalid(engine_cls, case: Case, position: int, bad, error: type) -> Mismatch | None:
    """Offer ``bad`` before event ``position``: the error must be ``error``, name that
    record, and change nothing (the rejected record still counts in the index of later
    records, so outputs are compared, not indices)."""
    return check_rejection(engine_cls, case.params, case.events[:position], case.events[position:],
                           bad, error, position, check_index=True)


# -- reproducers: JSON lines -----------------------------------------------------------
def _rel(r: Relation) -> dict:
    return {"name": r.name, "attributes": list(r.attributes),
            "text": None if r.text is None else list(r.text)}


def _edge(e: JoinEdge) -> list:
    return [e.id, e.left, e.left_attr, e.right, e.right_attr]


def event_to_json(ev) -> dict:
    if isinstance(ev, Insert):
        return {"insert": ev.relation, "tid": ev.tid, "values": dict(ev.values), "t": ev.t}
    if isinstance(ev, Delete):
        return {"delete": ev.tid, "t": ev.t}
    if isinstance(ev, AddRelation):
        return {"add_relation": _rel(ev.relation), "t": ev.t}
    if isinstance(ev, RemoveRelation):
        return {"remove_relation": ev.name, "t": ev.t}
    if isinstance(ev, AddEdge):
        return {"add_edge": _edge(ev.edge), "t": ev.t}
    if isinstance(ev, RemoveEdge):
        return {"remove_edge": ev.edge_id, "t": ev.t}
    raise TypeError(f"not a kws event: {ev!r}")


def event_from_json(d: dict):
    t = d["t"]
    if "insert" in d:
        return Insert(d["insert"], d["tid"], d["values"], t)
    if "delete" in d:
        return Delete(d["delete"], t)
    if "add_relation" in d:
        return AddRelation(Relation(**d["add_relation"]), t)
    if "remove_relation" in d:
        return RemoveRelation(d["remove_relation"], t)
    if "add_edge" in d:
        return AddEdge(JoinEdge(*d["add_edge"]), t)
    return RemoveEdge(d["remove_edge"], t)


def dump(case: Case) -> str:
    p = case.params
    head = {"problem": PROBLEM, "keywords": list(p.keywords), "t_max": p.t_max, "window": p.window,
            "relations": [_rel(r) for r in p.schema.relations],
            "edges": [_edge(e) for e in p.schema.edges], "chunks": list(case.chunks)}
    lines = [json.dumps(head)] + [json.dumps(event_to_json(e)) for e in case.events]
    return "\n".join(lines) + "\n"


def load(text: str) -> Case:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    head = json.loads(lines[0])
    schema = Schema(tuple(Relation(**r) for r in head["relations"]),
                    tuple(JoinEdge(*e) for e in head["edges"]))
    params = Params(schema, tuple(head["keywords"]), head["t_max"], head["window"])
    return Case(params, [event_from_json(json.loads(ln)) for ln in lines[1:]], head["chunks"])


__all__ = ["Case", "Appear", "End", "check", "check_invalid", "dump", "load", "cases",
           "invalid_cases", "random_case"]
