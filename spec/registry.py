"""Engines are found through the entry-point group ``streamspec.engines``.

An entry point is named ``<problem>.<engine>`` and points at the engine class,
e.g. ``connectivity.bic = streamspec.engines.connectivity.bic:BicEngine``.  A third-party
package adds a backend with one such line in its own ``pyproject.toml``; it is
then listed by ``streamspec engines`` and checked by ``pytest --engine NAME``.

Classes can also be registered at run time (``Registry.register``), which the
conformance suite uses for its deliberately broken engines.
"""
from __future__ import annotations

from importlib.metadata import entry_points

from streamspec.spec.errors import UnknownEngine

GROUP = "streamspec.engines"


class Registry:
    _extra: dict[tuple[str, str], type] = {}

    @classmethod
    def _entry_points(cls) -> dict[tuple[str, str], object]:
        found = {}
        for ep in entry_points(group=GROUP):
            problem, _, name = ep.name.partition(".")
            found[(problem, name)] = ep
        return found

    @classmethod
    def register(cls, engine_cls: type) -> type:
        """Register an engine class at run time (usable as a decorator)."""
        cls._extra[(engine_cls.problem, engine_cls.name)] = engine_cls
        return engine_cls

    @classmethod
    def unregister(cls, engine_cls: type) -> None:
        cls._extra.pop((engine_cls.problem, engine_cls.name), None)

    @classmethod
    def names(cls, problem: str | None = None) -> list[tuple[str, str]]:
        keys = set(cls._entry_points()) | set(cls._extra)
        return sorted(k for k in keys if problem is None or k[0] == problem)

    @classmethod
    def get(cls, problem: str, name: str) -> type:
        if (problem, name) in cls._extra:
            return cls._extra[(problem, name)]
        ep = cls._entry_points().get((problem, name))
        if ep is None:
            known = ", ".join(n for p, n in cls.names(problem)) or "none"
            raise UnknownEngine(f"no engine {name!r} for problem {problem!r} (registered: {known})")
        engine_cls = ep.load()
        if engine_cls.problem != problem or engine_cls.name != name:
            raise UnknownEngine(
                f"entry point {problem}.{name} loads {engine_cls.__module__}.{engine_cls.__qualname__}, "
                f"which declares {engine_cls.problem}.{engine_cls.name}")
        return engine_cls

    @classmethod
    def engines(cls, problem: str | None = None) -> list[type]:
        return [cls.get(p, n) for p, n in cls.names(problem)]

    @classmethod
    def create(cls, problem: str, name: str, params, **options):
        return cls.get(problem, name)(params, **options)
