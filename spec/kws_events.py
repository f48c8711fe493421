"""S-KWS events and outputs (paper Section 3.1; the contract is ``streamspec.spec.kws``).

Input events: ``Insert``, ``Delete`` and the schema changes ``AddRelation``,
``RemoveRelation``, ``AddEdge``, ``RemoveEdge``.  Outputs: ``Appear`` and
``End``, in the canonical order of ``output_key`` (time, then sorted tids,
then sorted labelled edges); ``Result`` is a result's identity; ``Row`` is a
validated tuple as engines see it.
"""
from __future__ import annotations

from collections.abc import Mapping

import attrs

from streamspec.spec.kws_schema import JoinEdge, Relation


def _pairs(values) -> tuple:
    if isinstance(values, Mapping):
        return tuple(values.items())
    return tuple(tuple(p) for p in values)


@attrs.frozen
class Insert:
    relation: str
    tid: int | str
    values: tuple = attrs.field(converter=_pairs)
    t: int


@attrs.frozen
class Delete:
    tid: int | str
    t: int


@attrs.frozen
class AddRelation:
    relation: Relation
    t: int


@attrs.frozen
class RemoveRelation:
    name: str
    t: int


@attrs.frozen
class AddEdge:
    edge: JoinEdge
    t: int


@attrs.frozen
class RemoveEdge:
    edge_id: str
    t: int


EVENTS = (Insert, Delete, AddRelation, RemoveRelation, AddEdge, RemoveEdge)
SCHEMA_EVENTS = (AddRelation, RemoveRelation, AddEdge, RemoveEdge)


def tid_key(tid):
    """Sort key of a tid: ints (numerically) before strs."""
    return (0, tid, "") if isinstance(tid, int) else (1, 0, tid)


def edge_key(edge):
    eid, left, right = edge
    return (eid, tid_key(left), tid_key(right))


@attrs.frozen
class Result:
    """A result's identity: sorted tids and sorted labelled edges."""

    tids: tuple
    edges: tuple

    @classmethod
    def of(cls, tids, edges) -> "Result":
        return cls(tuple(sorted(tids, key=tid_key)), tuple(sorted(edges, key=edge_key)))

    def key(self):
        return (tuple(map(tid_key, self.tids)), tuple(map(edge_key, self.edges)))


@attrs.frozen
class Appear:
    time: int
    tids: tuple
    edges: tuple
    end: int | None


@attrs.frozen
class End:
    time: int
    tids: tuple
    edges: tuple


def output_key(o):
    """The canonical order of outputs: time, then tids, then edges."""
    return (o.time, tuple(map(tid_key, o.tids)), tuple(map(edge_key, o.edges)))


@attrs.frozen
class Row:
    """A validated tuple as engines see it: ``kbits`` bit i set iff it contains keyword i."""

    seq: int
    tid: int | str
    relation: str
    values: dict = attrs.field(eq=False, hash=False)
    t_start: int
    t_end: int | None
    kbits: int
