"""Mesh engine options (the ablations) against the oracle, picklable state, and
demand-driven sleeping seen from outside."""
import pickle

import pytest

from streamspec.conformance import kws as suite
from streamspec.engines.kws.forest import ForestEngine, ForestSharedEngine
from streamspec.engines.kws.fullmesh import FullMeshEngine
from streamspec.engines.kws.partialmesh import PartialMeshEngine
from streamspec.spec.kws import Insert, Params
from streamspec.spec.kws_schema import JoinEdge, Relation, Schema

OPTIONS = [dict(purge="eager"), dict(demand_driven=False), dict(shared=False, demand_driven=True),
           dict(purge="eager", demand_driven=False), dict(index_buffers=False),
           dict(index_buffers=False, shared=False, demand_driven=False)]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_mesh_options_match_oracle(options):
    class Variant(FullMeshEngine):
        pass
    for k, v in options.items():
        setattr(Variant, k, v)
    for seed in range(150):
        case = suite.random_case(seed)
        mismatch = suite.check(Variant, case)
        assert mismatch is None, f"seed {seed}: {mismatch}\n{suite.dump(case)}"


@pytest.mark.parametrize("base, options", [(PartialMeshEngine, dict(purge="lazy")),
                                           (PartialMeshEngine, dict(index_buffers=False)),
                                           (ForestSharedEngine, dict(index_buffers=False)),
                                           (ForestSharedEngine, dict(purge="lazy")),
                                           (ForestEngine, dict(purge="lazy"))],
                         ids=lambda x: getattr(x, "name", str(x)))
def test_partial_mesh_and_forest_options_match_oracle(base, options):
    variant = type("Variant", (base,), dict(options))
    for seed in range(100):
        case = suite.random_case(seed)
        mismatch = suite.check(variant, case)
        assert mismatch is None, f"seed {seed}: {mismatch}\n{suite.dump(case)}"


@pytest.mark.parametrize("cls", [ForestEngine, ForestSharedEngine, FullMeshEngine, PartialMeshEngine],
                         ids=lambda c: c.name)
def test_state_pickles_mid_stream(cls):
    case = suite.random_case(7)
    half = len(case.events) // 2
    a = cls(case.params)
    out = list(a.process(case.events[:half]))
    b = pickle.loads(pickle.dumps(a))
    rest_a = list(a.process(case.events[half:])) + a.flush()
    rest_b = list(b.process(case.events[half:])) + b.flush()
    assert rest_a == rest_b
    assert out + rest_a == suite.evaluate(case.params, case.events)


def test_demand_driven_joins_sleep_without_right_input():
    rels = tuple(Relation(n, ("a", "s")) for n in "RST")
    schema = Schema(rels, (JoinEdge("rs", "R", "a", "S", "a"), JoinEdge("st", "S", "a", "T", "a")))
    eng = FullMeshEngine(Params(schema, "x,y", 3, 10))
    list(eng.process([Insert("R", 1, {"a": 1, "s": "x"}, 0)]))
    assert not any(op.running for op in eng.ops if op.left is not None)
    list(eng.process([Insert("S", 2, {"a": 1}, 1)]))
    # R{x} join S{} has right input, but its parents (join T{y}) have none: it sleeps
    assert not any(op.running for op in eng.ops if op.left is not None)
    out = list(eng.process([Insert("T", 3, {"a": 1, "s": "y"}, 2)])) + eng.flush()
    assert [o.tids for o in out] == [(1, 2, 3)]
    assert any(op.running and op.out for op in eng.ops if op.left is not None and not op.cn)
    pm = PartialMeshEngine(Params(schema, "x,y", 3, 10))
    list(pm.process([Insert("T", 3, {"a": 1, "s": "q"}, 0)]))
    assert all(op.left is None for op in pm.ops), "no join exists before its left input has output"
