"""Simjoin conformance: step-by-step comparison with the oracle.

``check(engine_cls, case)`` feeds the case's events to a fresh engine in the
case's chunks and, after every chunk, checks that the ``TopK`` outputs it
yielded are exactly the oracle's (``streamspec.reference.simjoin.evaluate``) for the
events of that chunk: same lists, same order, same scores and end times bit
for bit, and none where the list did not change.  ``flush`` must emit nothing.

``check_invalid`` slips one bad event into the stream and checks the typed
error, and that the engine, having rejected it, goes on exactly as if it had
never been offered.
"""
from __future__ import annotations

import json

import attrs

from streamspec.conformance.runner import Mismatch, check_rejection
from streamspec.conformance.strategies.simjoin import cases, invalid_cases, random_case  # noqa: F401
from streamspec.reference.simjoin import evaluate
from streamspec.spec.simjoin import Advance, Params, Record

PROBLEM = "simjoin"


@attrs.frozen
class Case:
    params: Params
    events: list
    chunks: list


def check(engine_cls, case: Case) -> Mismatch | None:
    expected = evaluate(case.events, case.params)
    engine = engine_cls(case.params)
    pos = 0
    for size in case.chunks:
        chunk = case.events[pos:pos + size]
        want = [x for x in expected[pos:pos + size] if x is not None]
        pos += size
        got = list(engine.process(chunk))
        if got != want:
            last = chunk[-1]
            t = last.t if isinstance(last, Advance) else last.ts
            return Mismatch(f"after event {pos - 1} (t={t})",
                            f"top-k changes of events {pos - size}..{pos - 1} differ",
                            [_show(x) for x in want], [_show(x) for x in got])
    out = list(engine.flush())
    if out:
        return Mismatch("flush", "flush must emit nothing", [], [_show(x) for x in out])
    return None


def _show(topk) -> tuple:
    return (topk.ts, topk.pairs)


def check_invalid(engine_cls, case: Case, position: int, bad, error: type) -> Mismatch | None:
    """Offer ``bad`` before event ``position``: the error must be ``error``, name that
    record, and change nothing."""
    return check_rejection(engine_cls, case.params, case.events[:position], case.events[position:],
                           bad, error, position, check_index=True, show=_show, noun="event")

def _event_json(e) -> str:
    if isinstance(e, Advance):
        return json.dumps({"advance": e.t})
    row = {"id": e.id, "tokens": list(e.tokens), "ts": e.ts}
    if e.side is not None:
        row["side"] = e.side
    return json.dumps(row)


def dump(case: Case) -> str:
    p = case.params
    head = {"problem": PROBLEM, "k": p.k, "w": p.w, "similarity": p.similarity, "join": p.join,
            "lateness": p.lateness, "chunks": list(case.chunks)}
    return "\n".join([json.dumps(head)] + [_event_json(e) for e in case.events]) + "\n"


def load(text: str) -> Case:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    head = json.loads(lines[0])
    params = Params(k=head["k"], w=head["w"], similarity=head["similarity"], join=head["join"],
                    lateness=head.get("lateness", "error"))
    events = []
    for ln in lines[1:]:
        row = json.loads(ln)
        if "advance" in row:
            events.append(Advance(row["advance"]))
        else:
            events.append(Record(row["id"], row["tokens"], row["ts"], row.get("side")))
    return Case(params, events, head["chunks"])
