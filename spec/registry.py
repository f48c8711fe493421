"""Engines are found through the entry-point group ``streamspec.engines``.

An entry point is named ``<problem>.<engine>`` and points at the engine class,
e.g. ``connectivity.bic = streamspec.engines.connectivity.bic:BicEngine``.  A third-party
package adds a backend with one such line in its own ``pyproject.toml``; it is
then listed by ``streamspec engines`` and checked by ``pytest --engine NAME``.

Classes can also be registered at run time (``Registry.register``), which the
conformance suite uses for its deliberately broken engines.

An engine name may carry options, ``name:key=value,key=value`` (e.g.
``fullmesh:purge=eager``, an ablation of the paper's experiments): the engine
class declares them in ``options``, a dict from option name to its allowed
values (``{"purge": ("lazy", "eager"), "demand_driven": (True, False)}``), and
``get`` returns a subclass with those class attributes set, named by the
canonical spelling (options sorted by key, booleans ``true``/``false``).  The
subclass is found again by pickle (``__getattr__`` of this module), so engine
state pickles and Spark ships it like any registered engine.  An unknown
option is an ``UnknownEngineOption``, a value not allowed or a malformed list
an ``InvalidEngineOption``; both name the engine.
"""
from __future__ import annotations

from importlib.metadata import entry_points

from streamspec.spec.errors import InvalidParameter, UnknownEngine

GROUP = "streamspec.engines"
_CONFIGURED = "_configured_"   # prefix of a configured class's name in this module (hex of its spec)
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


class UnknownEngineOption(UnknownEngine):
    """An engine name carries an option its engine does not declare."""

    def __init__(self, engine: str, option: str, known):
        self.engine, self.option = engine, option
        listed = ", ".join(sorted(known)) or "none"
        super().__init__(f"engine {engine!r} has no option {option!r} (options: {listed})")


class InvalidEngineOption(InvalidParameter):
    """An engine option with a value it does not allow, or a malformed option list."""

    def __init__(self, engine: str, option: str | None, message: str):
        self.engine, self.option = engine, option
        super().__init__(f"engine {engine!r}: {message}")


def _text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _parse_value(engine: str, option: str, text: str, allowed: tuple):
    low = text.strip().lower()
    for choice in allowed:
        if isinstance(choice, bool):
            if (low in _TRUE and choice) or (low in _FALSE and not choice):
                return choice
        elif _text(choice).lower() == low:
            return choice
    raise InvalidEngineOption(engine, option, f"option {option!r} cannot be {text!r} "
                                              f"(allowed: {', '.join(_text(c) for c in allowed)})")


def parse_options(base: type, name: str, text: str) -> dict:
    """The options of ``name:text`` checked against ``base.options``."""
    declared = getattr(base, "options", None) or {}
    found: dict = {}
    for item in text.split(","):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key or not value.strip():
            raise InvalidEngineOption(name, key or None, f"option {item!r} is not key=value")
        if key not in declared:
            raise UnknownEngineOption(name, key, declared)
        if key in found:
            raise InvalidEngineOption(name, key, f"option {key!r} given twice")
        found[key] = _parse_value(name, key, value, tuple(declared[key]))
    return found


class Registry:
    _extra: dict[tuple[str, str], type] = {}
    _configured: dict[tuple[str, str], type] = {}   # (problem, canonical name with options) -> class

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
        """The engine class of ``name``, or of ``name:key=value,...`` (see the module docstring)."""
        base_name, colon, text = name.partition(":")
        base = cls._base(problem, base_name.strip())
        if not colon:
            return base
        if not text.strip():
            raise InvalidEngineOption(base_name, None, "':' with no options after it")
        return cls.configure(base, parse_options(base, base_name, text))

    @classmethod
    def _base(cls, problem: str, name: str) -> type:
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
    def configure(cls, base: type, options: dict) -> type:
        """``base`` with ``options`` (already checked) as class attributes, one class per spelling."""
        spelled = ",".join(f"{k}={_text(v)}" for k, v in sorted(options.items()))
        name = f"{base.name}:{spelled}"
        key = (base.problem, name)
        found = cls._configured.get(key)
        if found is None:
            qualname = _CONFIGURED + f"{base.problem}.{name}".encode().hex()
            found = type(base.__name__, (base,), dict(
                options, name=name, base_name=base.name, configured=dict(options),
                description=f"{base.description} ({spelled})",
                __module__=__name__, __qualname__=qualname))
            cls._configured[key] = found
        return found

    @classmethod
    def engines(cls, problem: str | None = None) -> list[type]:
        return [cls.get(p, n) for p, n in cls.names(problem)]

    @classmethod
    def create(cls, problem: str, name: str, params, **options):
        return cls.get(problem, name)(params, **options)


def __getattr__(attr: str):
    """A configured engine class by its name in this module (how pickle finds it again)."""
    if attr.startswith(_CONFIGURED):
        try:
            problem, _, name = bytes.fromhex(attr[len(_CONFIGURED):]).decode().partition(".")
        except ValueError:
            raise AttributeError(attr) from None
        return Registry.get(problem, name)
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
