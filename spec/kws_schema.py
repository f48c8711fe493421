"""S-KWS streaming schema, keyword normalisation and attribute values.

This docstring is the normative semantics of the schema and keywords; paper: Markowetz, Yang, Papadias, "Keyword Search on Relational Data Streams"
(SIGMOD 2007), Section 3.1.

- A streaming relation has a name and attribute names.  Its text attributes
  (searched for keywords) are ``text`` when given, else every attribute whose
  value in a tuple is a ``str``.
- A join edge ``JoinEdge(id, left, left_attr, right, right_attr)`` is the
  equality ``left.left_attr == right.right_attr``.  Parallel edges and self
  joins (``left == right``) are allowed; joins are many-to-many.
- Tokens: casefold, then maximal runs of ``[0-9a-z]``.

Decisions the paper leaves open:

- Attribute values are ``None``, ``str``, ``int`` or ``float``; a float NaN
  is null (what a CSV reader gives for an empty cell); ``bool`` and other
  types are rejected.  Equality is Python's (``1 == 1.0`` joins, ``"1"`` and
  ``1`` do not).
- Duplicate query keywords (after normalisation) count once; their order is
  the order of first occurrence.
"""
from __future__ import annotations

import math
import re

import attrs

from streamspec.spec.errors import InvalidParameter

_TOKEN = re.compile(r"[0-9a-z]+")


def tokens(text: str) -> list[str]:
    """The tokens of ``text``: maximal runs of ``[0-9a-z]`` after casefolding."""
    return _TOKEN.findall(text.casefold())


def normalise_keyword(k) -> str:
    """The single token of a query keyword (``InvalidParameter``, a ValueError, otherwise)."""
    if not isinstance(k, str):
        raise InvalidParameter(f"keyword must be a str, got {k!r}")
    found = tokens(k)
    if len(found) != 1:
        raise InvalidParameter(f"keyword {k!r} must normalise to exactly one token, got {found}")
    return found[0]


def _name(kind):
    def check(instance, attribute, value):
        if not isinstance(value, str) or not value:
            raise InvalidParameter(f"{kind} must be a non-empty str, got {value!r}")
    return check


def _names(value) -> tuple:
    if isinstance(value, str):
        raise InvalidParameter(f"expected a list of names, got the str {value!r}")
    return tuple(value)


@attrs.frozen
class Relation:
    """A streaming relation: name, attribute names, optional text attributes."""

    name: str = attrs.field(validator=_name("relation name"))
    attributes: tuple = attrs.field(converter=_names)
    text: tuple | None = attrs.field(default=None, converter=attrs.converters.optional(_names))

    def __attrs_post_init__(self):
        for a in self.attributes:
            if not isinstance(a, str) or not a:
                raise InvalidParameter(f"relation {self.name}: bad attribute name {a!r}")
        if len(set(self.attributes)) != len(self.attributes):
            raise InvalidParameter(f"relation {self.name}: duplicate attribute names")
        for a in self.text or ():
            if a not in self.attributes:
                raise InvalidParameter(f"relation {self.name}: text attribute {a!r} is not an attribute")


@attrs.frozen
class JoinEdge:
    """Join edge ``id``: ``left.left_attr == right.right_attr`` (``left == right``: self join)."""

    id: str = attrs.field(validator=_name("edge id"))
    left: str = attrs.field(validator=_name("relation name"))
    left_attr: str = attrs.field(validator=_name("attribute name"))
    right: str = attrs.field(validator=_name("relation name"))
    right_attr: str = attrs.field(validator=_name("attribute name"))


@attrs.frozen
class Schema:
    """Relations and join edges; validated (unique names, edges over known attributes)."""

    relations: tuple = attrs.field(converter=tuple, factory=tuple)
    edges: tuple = attrs.field(converter=tuple, factory=tuple)

    def __attrs_post_init__(self):
        rels = {}
        for r in self.relations:
            if not isinstance(r, Relation):
                raise InvalidParameter(f"expected a Relation, got {r!r}")
            if r.name in rels:
                raise InvalidParameter(f"duplicate relation {r.name!r}")
            rels[r.name] = r
        ids = set()
        for e in self.edges:
            if not isinstance(e, JoinEdge):
                raise InvalidParameter(f"expected a JoinEdge, got {e!r}")
            if e.id in ids:
                raise InvalidParameter(f"duplicate edge id {e.id!r}")
            ids.add(e.id)
            check_edge(e, rels)

    def relation(self, name: str) -> Relation | None:
        for r in self.relations:
            if r.name == name:
                return r
        return None

    def with_relation(self, rel: Relation) -> "Schema":
        return Schema(self.relations + (rel,), self.edges)

    def without_relation(self, name: str) -> "Schema":
        """Removing a relation removes the edges that touch it."""
        return Schema(tuple(r for r in self.relations if r.name != name),
                      tuple(e for e in self.edges if name not in (e.left, e.right)))

    def with_edge(self, edge: JoinEdge) -> "Schema":
        return Schema(self.relations, self.edges + (edge,))

    def without_edge(self, edge_id: str) -> "Schema":
        return Schema(self.relations, tuple(e for e in self.edges if e.id != edge_id))


def check_edge(e: JoinEdge, rels: dict) -> None:
    """``InvalidParameter`` unless both ends name known relations and attributes."""
    for rel, attr in ((e.left, e.left_attr), (e.right, e.right_attr)):
        if rel not in rels:
            raise InvalidParameter(f"edge {e.id}: unknown relation {rel!r}")
        if attr not in rels[rel].attributes:
            raise InvalidParameter(f"edge {e.id}: relation {rel!r} has no attribute {attr!r}")


def clean_value(v):
    """The value as stored: NaN becomes ``None``; ``ValueError`` for an unsupported type."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, bool):
        raise ValueError(f"boolean attribute values are not supported: {v!r}")
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return None if math.isnan(v) else v
    # numpy scalars and the like: convert through their Python value
    item = getattr(v, "item", None)
    if item is not None:
        return clean_value(item())
    raise ValueError(f"unsupported attribute value {v!r} of type {type(v).__name__}")


def keyword_bits(rel: Relation, values: dict, keywords: tuple) -> int:
    """Bitmask of the query keywords (bit i: ``keywords[i]``) a tuple contains."""
    attrs_ = rel.text if rel.text is not None else rel.attributes
    found = set()
    for a in attrs_:
        v = values.get(a)
        if isinstance(v, str):
            found.update(tokens(v))
    bits = 0
    for i, k in enumerate(keywords):
        if k in found:
            bits |= 1 << i
    return bits
