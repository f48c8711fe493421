"""Quality of an approximate top-k join answer against the oracle: nDCG@k and precision@k.

Normative (this docstring); paper Section 6.1 (its worked example gives 0.754
and 0.288, reproduced by ``ndcg_at_k`` with relevances 6..1, see
tests/topkjoin/test_quality.py).

- ``precision@k = |A ∩ O| / min(K, |O|)``.
- ``nDCG@k``: the relevance of an id is ``depth - rank_O(id) + 1`` for the
  oracle's first ``depth`` ids (``depth = K`` by default), 0 otherwise;
  ``DCG = sum_i (2^rel(A_i) - 1) / log2(i + 1)`` over the answer's first k
  positions, divided by the oracle's own DCG.
- Cumulative metric = sum over evaluations; the mean is reported too.

Decisions the paper leaves open: an evaluation whose oracle answer is
empty (empty window) scores 1 when the engine's answer is empty too and 0
otherwise; an evaluation the engine did not emit scores 0 ("no output
counts 0").
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import attrs


def relevance(oracle_ids: Sequence, depth: int) -> dict:
    """Graded relevance from the oracle ranking: ``depth - rank + 1`` for its first ``depth`` ids."""
    return {key: depth - r for r, key in enumerate(oracle_ids[:depth])}


def dcg(ids: Sequence, rel: dict, k: int) -> float:
    return sum((2.0 ** rel.get(key, 0) - 1.0) / math.log2(i + 2) for i, key in enumerate(ids[:k]))


def ndcg_at_k(answer_ids: Sequence, oracle_ids: Sequence, k: int, depth: int | None = None) -> float:
    """nDCG@k of ``answer_ids`` against the oracle's ranking (relevance graded to ``depth``)."""
    oracle_ids = list(oracle_ids)
    if not oracle_ids:
        return 1.0 if not answer_ids else 0.0
    rel = relevance(oracle_ids, k if depth is None else depth)
    ideal = dcg(oracle_ids, rel, k)
    return dcg(list(answer_ids), rel, k) / ideal


def precision_at_k(answer_ids: Sequence, oracle_ids: Sequence, k: int) -> float:
    """``|A ∩ O| / min(K, |O|)`` over the first k of each."""
    o = set(list(oracle_ids)[:k])
    if not o:
        return 1.0 if not answer_ids else 0.0
    return len(set(list(answer_ids)[:k]) & o) / min(k, len(o))


@attrs.frozen
class Quality:
    """Cumulative and mean nDCG@k and precision@k over ``evaluations`` evaluations."""

    evaluations: int
    ndcg: float
    precision: float

    @property
    def mean_ndcg(self) -> float:
        return self.ndcg / self.evaluations if self.evaluations else 1.0

    @property
    def mean_precision(self) -> float:
        return self.precision / self.evaluations if self.evaluations else 1.0

    def __str__(self) -> str:
        return (f"{self.evaluations} evaluations: cumulative nDCG@k {self.ndcg:.3f} "
                f"(mean {self.mean_ndcg:.4f}), cumulative precision@k {self.precision:.3f} "
                f"(mean {self.mean_precision:.4f})")


def quality(answers, oracle, k: int) -> Quality:
    """Compare ``answers`` with ``oracle`` (``Evaluation`` sequences), matched by window."""
    by_window = {e.window: e for e in answers}
    nd = pr = 0.0
    for o in oracle:
        a = by_window.get(o.window)
        if a is None:
            continue  # a missing evaluation scores 0
        nd += ndcg_at_k(a.ids, o.ids, k)
        pr += precision_at_k(a.ids, o.ids, k)
    return Quality(len(oracle), nd, pr)
