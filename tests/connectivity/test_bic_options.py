"""BIC as the paper's Section 5 describes it, selected by engine name
(``streamspec.spec.registry``): ``bic:build=inside`` builds a completed chunk's
backward buffer in the triggering call (TR Section 5.2), ``bic:prereduce=false``
builds it by the full reverse scan, and ``bic:build=inside,prereduce=false`` is
both.  Each is fuzzed against the oracle step by step and pickled mid-stream
like the registered engines (``tests/connectivity/test_conformance.py`` runs
plain ``bic`` at the profile's full count; the variants here at most
``EXAMPLES`` each: the options move work between calls, never an answer).

The suite's chunks are far smaller than ``BicEngine.prereduce_min``, so on them
``prereduce`` changes nothing; two test-only subclasses with ``prereduce_min = 0``
(every chunk of at least 3 slots pre-reduced: ``PREREDUCED``) put the shipped
pre-reduction, both placements, through the same checks, pickled mid-stream
included (26 of the 200 engine runs of the first 100 derandomized cases pre-reduce a
chunk: the suite's streams are short).  The pre-reduced path against the full scan on large chunks is checked in
``tests/connectivity/test_bic.py`` (``test_prereduction_spreads_over_the_last_slot``
runs ``bic:prereduce=false`` as its reference).
"""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamspec.conformance import contracts, profiles, runner
from streamspec.engines.connectivity import _bic_layout as lay
from streamspec.engines.connectivity.bic import BicEngine
from streamspec.spec.connectivity import Params
from streamspec.spec.registry import InvalidEngineOption, Registry

VARIANTS = ["bic:build=inside", "bic:prereduce=false", "bic:build=inside,prereduce=false"]
EXAMPLES = 100
suite = runner.suite("connectivity")
capped = settings(profiles.suite_settings(),
                  max_examples=min(profiles.suite_settings().max_examples, EXAMPLES))


class PrereducedDeferred(BicEngine):
    """``bic`` pre-reducing every chunk of at least 3 slots (test only)."""
    name = "bic[prereduce_min=0]"
    prereduce_min = 0


class PrereducedInside(Registry.get("connectivity", "bic:build=inside")):
    """``bic:build=inside`` pre-reducing every chunk of at least 3 slots (test only)."""
    name = "bic:build=inside[prereduce_min=0]"
    prereduce_min = 0


class Unsearched(BicEngine):
    """``bic`` whose window queries skip the BFBG search (``search_reads = 0``):
    every query the buffers leave open goes to the window's union-find over
    all BFBG edges, which the suite's small BFBGs otherwise never reach
    (test only; the search decides each of them on the shipped engine)."""
    name = "bic[search_reads=0]"
    search_reads = 0


class Searched(BicEngine):
    """``bic`` whose window queries are all searched (``search_shift = -1``: the
    searches' share of the BFBG unbounded), which the suite's small BFBGs
    otherwise leave to the union-find (test only)."""
    name = "bic[search_shift=-1]"
    search_shift = -1


PREREDUCED = [PrereducedDeferred, PrereducedInside]
TEST_ONLY = PREREDUCED + [Unsearched, Searched]
by_name = pytest.mark.parametrize(
    "variant", [Registry.get("connectivity", n) for n in VARIANTS] + TEST_ONLY,
    ids=VARIANTS + [c.name for c in TEST_ONLY])


@by_name
@capped
@given(case=suite.cases())
def test_variant_matches_oracle_step_by_step(variant, case):
    try:
        runner.assert_conforms(variant, case)
    except runner.ConformanceFailure as failure:
        raise AssertionError(runner.describe_failure(variant, failure)) from None


@by_name
@settings(capped, max_examples=min(capped.max_examples, 30))
@given(case=suite.cases(), cut=st.integers(0, 8))
def test_variant_state_survives_pickling_mid_stream(variant, case, cut):
    mismatch = contracts.check_pickling(variant, case, cut)
    assert mismatch is None, f"{runner.engine_label(variant)}: {mismatch}"


@pytest.mark.parametrize("name, build, prereduce, defer, pre_min", [
    ("bic", "deferred", True, lay.BUILD_DEFER, lay.PREREDUCE_MIN),
    ("bic:build=inside", "inside", True, 0, lay.PREREDUCE_MIN),
    ("bic:prereduce=false", "deferred", False, lay.BUILD_DEFER, lay.NO_PREREDUCE),
    ("bic:prereduce=false,build=inside", "inside", False, 0, lay.NO_PREREDUCE),
])
def test_option_reaches_the_kernel_state(name, build, prereduce, defer, pre_min):
    cls = Registry.get("connectivity", name)
    assert issubclass(cls, BicEngine) and (cls.build, cls.prereduce) == (build, prereduce)
    assert cls.name == ("bic" if name == "bic" else
                        "bic:" + ",".join(sorted(name.partition(":")[2].split(","))))
    engine = cls(Params(4, 2, [(0, 1)]), hold_back=False)
    engine._init_vertices(int)
    engine._set_origin(0)           # the driver's start, as on the first edge
    assert (int(engine._st[lay.DEFER]), int(engine._st[lay.PRE_MIN])) == (defer, pre_min)


def test_values_outside_the_declared_ones_are_refused():
    with pytest.raises(InvalidEngineOption, match="'bic'.*allowed: deferred, inside"):
        Registry.get("connectivity", "bic:build=later")
    with pytest.raises(InvalidEngineOption, match="'bic'.*allowed: true, false"):
        Registry.get("connectivity", "bic:prereduce=sometimes")
