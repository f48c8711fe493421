"""The paper's ablations (Section 5, Figures 5.7 and 5.8: demand-driven execution
and lazy purging; the forest's purging; nested-loop probes), selected by engine
name as a user selects them (``fullmesh:purge=eager``, ``streamspec.spec.registry``),
fuzzed against the oracle step by step and pickled mid-stream like the
registered engines (``tests/kws/test_conformance.py`` runs those at the
profile's full count; the variants here at most ``EXAMPLES`` each)."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamspec.conformance import contracts, profiles, runner
from streamspec.spec.registry import Registry, UnknownEngineOption

ABLATIONS = [
    "fullmesh:purge=eager",                       # FM-D-!L (Figure 5.8)
    "fullmesh:demand_driven=false",               # FM-!D-L (Figure 5.7)
    "fullmesh:demand_driven=false,purge=eager",   # FM-!D-!L
    "fullmesh:index_buffers=false",               # the paper's nested-loop probes
    "forest:purge=lazy",
    "forest-shared:purge=lazy",
    "forest-shared:index_buffers=false",
    "partialmesh:purge=lazy",
    "partialmesh:index_buffers=false",
]
EXAMPLES = 200
suite = runner.suite("kws")
capped = settings(profiles.suite_settings(),
                  max_examples=min(profiles.suite_settings().max_examples, EXAMPLES))


def test_ablation_names_are_canonical():
    """Each name resolves to a class of that name: a failure's replay command
    (``streamspec conform kws --engine NAME --replay FILE``) names it back."""
    for name in ABLATIONS:
        assert Registry.get("kws", name).name == name


by_name = pytest.mark.parametrize("ablation", [Registry.get("kws", n) for n in ABLATIONS], ids=ABLATIONS)


@by_name
@capped
@given(case=suite.cases())
def test_ablation_matches_oracle_step_by_step(ablation, case):
    try:
        runner.assert_conforms(ablation, case)
    except runner.ConformanceFailure as failure:
        raise AssertionError(runner.describe_failure(ablation, failure)) from None


@by_name
@settings(capped, max_examples=min(capped.max_examples, 40))
@given(case=suite.cases(), cut=st.integers(0, 8))
def test_ablation_state_survives_pickling_mid_stream(ablation, case, cut):
    mismatch = contracts.check_pickling(ablation, case, cut)
    assert mismatch is None, f"{runner.engine_label(ablation)}: {mismatch}"


@pytest.mark.parametrize("name, attributes", [
    ("fullmesh:purge=eager", dict(purge="eager", demand_driven=True)),
    ("fullmesh:demand_driven=false", dict(purge="lazy", demand_driven=False)),
    ("forest:purge=lazy", dict(purge="lazy")),
    ("forest-shared:index_buffers=false", dict(index_buffers=False, shared=False)),
])
def test_ablation_sets_the_option_and_keeps_the_rest(name, attributes):
    cls = Registry.get("kws", name)
    base = Registry.get("kws", name.partition(":")[0])
    assert issubclass(cls, base) and cls is not base
    for k, v in attributes.items():
        assert getattr(cls, k) == v


def test_paper_forest_declares_no_mesh_options():
    """The paper's forest has no shared buffers to index and no demand-driven execution."""
    for option in ("demand_driven", "index_buffers"):
        with pytest.raises(UnknownEngineOption, match=f"'forest'.*'{option}'"):
            Registry.get("kws", f"forest:{option}=false")


def test_bench_engine_lists_keep_option_lists_together():
    from streamspec.bench.kws.run import engine_list
    assert engine_list("forest,fullmesh:demand_driven=false,purge=eager,partialmesh:purge=lazy,oracle") == [
        "forest", "fullmesh:demand_driven=false,purge=eager", "partialmesh:purge=lazy", "oracle"]
    assert engine_list("forest,fullmesh") == ["forest", "fullmesh"]
