"""Engine names with options, ``name:key=value,...`` (``streamspec.spec.registry``):
every plain name still resolves, options become class attributes of a subclass
named by the canonical spelling, and mistakes are typed errors naming the
engine (and the option)."""
import pickle

import pytest

from streamspec.spec.errors import InvalidParameter, StreamspecError, UnknownEngine
from streamspec.spec.registry import InvalidEngineOption, Registry, UnknownEngineOption


class Toy:
    """A registered engine with two options (registered for each test)."""

    problem = "toyproblem"
    name = "toy"
    description = "an engine with options"
    options = {"mode": ("fast", "exact"), "cache": (True, False), "depth": (1, 2, 3)}
    mode, cache, depth = "exact", True, 1

    def __init__(self, params):
        self.params = params


class Plain(Toy):
    name = "plain"
    options = {}


@pytest.fixture(autouse=True)
def registered():
    Registry.register(Toy)
    Registry.register(Plain)
    yield
    Registry.unregister(Toy)
    Registry.unregister(Plain)


def test_every_registered_name_still_resolves_to_its_class():
    for problem, name in Registry.names():
        cls = Registry.get(problem, name)
        assert cls.name == name and cls.problem == problem


def test_options_become_class_attributes_of_a_subclass():
    cls = Registry.get("toyproblem", "toy:mode=fast,cache=false,depth=3")
    assert issubclass(cls, Toy) and cls is not Toy
    assert (cls.mode, cls.cache, cls.depth) == ("fast", False, 3)
    assert (Toy.mode, Toy.cache, Toy.depth) == ("exact", True, 1)   # the base is untouched
    assert cls.base_name == "toy" and cls.configured == dict(mode="fast", cache=False, depth=3)
    assert cls.problem == "toyproblem" and "cache=false" in cls.description
    engine = Registry.create("toyproblem", "toy:depth=2", "params")
    assert engine.depth == 2 and engine.params == "params"


def test_one_class_per_canonical_spelling():
    a = Registry.get("toyproblem", "toy:mode=fast,cache=false")
    b = Registry.get("toyproblem", "toy: cache = No , mode=FAST")
    assert a is b
    assert a.name == "toy:cache=false,mode=fast"   # sorted keys, booleans spelled true/false
    assert Registry.get("toyproblem", a.name) is a
    assert Registry.get("toyproblem", "toy:cache=1").cache is True


def test_a_configured_engine_and_its_instances_pickle():
    cls = Registry.get("toyproblem", "toy:mode=fast")
    assert pickle.loads(pickle.dumps(cls)) is cls
    copy = pickle.loads(pickle.dumps(cls("p")))
    assert type(copy) is cls and copy.params == "p" and copy.mode == "fast"


def test_spark_ships_a_configured_engine_by_reference():
    """Spark's cloudpickle finds the class by name (an executor rebuilds it from the
    registry) instead of pickling the class body."""
    cloudpickle = pytest.importorskip("pyspark.cloudpickle")
    cls = Registry.get("kws", "fullmesh:purge=eager")
    blob = cloudpickle.dumps(cls)
    assert cloudpickle.loads(blob) is cls
    assert b"streamspec.spec.registry" in blob and len(blob) < 300


def test_kws_ablation_by_name():
    eager = Registry.get("kws", "fullmesh:purge=eager")
    assert eager.purge == "eager" and eager.demand_driven is True
    assert eager.name == "fullmesh:purge=eager"
    assert Registry.get("kws", "fullmesh").purge == "lazy"


def test_unknown_option_names_the_engine_and_the_option():
    with pytest.raises(UnknownEngineOption) as err:
        Registry.get("toyproblem", "toy:mode=fast,colour=red")
    assert err.value.engine == "toy" and err.value.option == "colour"
    assert "'toy'" in str(err.value) and "'colour'" in str(err.value)
    assert "cache, depth, mode" in str(err.value)   # the options it does have
    assert isinstance(err.value, UnknownEngine) and isinstance(err.value, StreamspecError)
    with pytest.raises(UnknownEngineOption, match="'plain' has no option 'mode' .options: none"):
        Registry.get("toyproblem", "plain:mode=fast")


@pytest.mark.parametrize("spec, option, fragment", [
    ("toy:mode=slow", "mode", "cannot be 'slow' (allowed: fast, exact)"),
    ("toy:cache=maybe", "cache", "cannot be 'maybe' (allowed: true, false)"),
    ("toy:depth=4", "depth", "cannot be '4' (allowed: 1, 2, 3)"),
    ("toy:depth=1.0", "depth", "cannot be '1.0'"),
    ("toy:mode", "mode", "'mode' is not key=value"),
    ("toy:mode=", "mode", "'mode=' is not key=value"),
    ("toy:mode=fast,,cache=true", None, "'' is not key=value"),
    ("toy:mode=fast,mode=exact", "mode", "'mode' given twice"),
    ("toy:", None, "no options after it"),
])
def test_bad_values_are_typed_errors_naming_the_engine(spec, option, fragment):
    with pytest.raises(InvalidEngineOption) as err:
        Registry.get("toyproblem", spec)
    assert err.value.engine == "toy" and err.value.option == option
    assert str(err.value).startswith("engine 'toy': ") and fragment in str(err.value)
    assert isinstance(err.value, InvalidParameter) and err.value.exit_code == 2


def test_unknown_engine_with_options_is_still_unknown_engine():
    with pytest.raises(UnknownEngine, match="no engine 'nosuch' for problem 'toyproblem'"):
        Registry.get("toyproblem", "nosuch:mode=fast")
