"""The paper's synthetic S-KWS workload (Section 5, first paragraphs).

- Schema: ``|SR|`` streaming relations in a ternary tree (relation ``i`` has
  parent ``(i - 1) // 3``); the edge to the parent is one join attribute
  ``j<i>`` in both relations.
- Join values uniform in ``[1, sel]`` (``1/sel`` is the join selectivity).
- Each query keyword occurs in a tuple's text independently with frequency
  ``KWF``; other text is a filler token.
- One tuple per relation per second; ``seconds`` of stream; window ``w``
  seconds.  Seeded.
"""
from __future__ import annotations

import random

from streamspec.spec.kws import Insert, Params
from streamspec.spec.kws_schema import JoinEdge, Relation, Schema

DEFAULTS = dict(relations=15, keywords=2, t_max=4, kwf=0.01, sel=1000, window=20 * 60, seconds=5 * 3600)


def schema(n_rel: int) -> Schema:
    attrs = {i: ["text"] for i in range(n_rel)}
    edges = []
    for i in range(1, n_rel):
        p = (i - 1) // 3
        attrs[i].append(f"j{i}")
        attrs[p].append(f"j{i}")
        edges.append(JoinEdge(f"e{i}", f"R{p}", f"j{i}", f"R{i}", f"j{i}"))
    return Schema(tuple(Relation(f"R{i}", tuple(attrs[i]), ("text",)) for i in range(n_rel)), tuple(edges))


def keywords(n: int) -> tuple:
    return tuple(f"kw{i}" for i in range(n))


def params(relations=15, keywords_=2, t_max=4, window=1200) -> Params:
    return Params(schema(relations), keywords(keywords_), t_max, window)


def stream(p: Params, seconds: int, kwf: float, sel: int, seed: int = 0, period: int = 1):
    """The events, one tuple per relation per second (per ``period`` seconds: a lower
    event rate over the same duration, the tuples of the first ``seconds / period`` s)."""
    rng = random.Random(seed)
    rels = p.schema.relations
    tid = 0
    for t in range(0, seconds, period):
        for rel in rels:
            words = [k for k in p.keywords if rng.random() < kwf] or ["filler"]
            values = {"text": " ".join(words)}
            for a in rel.attributes:
                if a != "text":
                    values[a] = rng.randint(1, sel)
            yield Insert(rel.name, tid, values, t)
            tid += 1
