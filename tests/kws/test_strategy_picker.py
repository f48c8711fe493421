"""The kws strategy's ``pick`` reuses one ``sampled_from`` per sequence: the cases drawn
must be exactly those of a fresh ``sampled_from`` per draw (what it replaced)."""
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from streamspec.conformance.strategies import kws


@st.composite
def _fresh_cases(draw):
    return kws.build(lambda seq: draw(st.sampled_from(list(seq))))


def _drawn(strategy, n=300):
    out = []

    @settings(max_examples=n, derandomize=True, database=None, phases=[Phase.generate])
    @given(strategy)
    def collect(case):
        out.append(repr(case))

    collect()
    return out


def test_reused_strategies_draw_the_same_cases():
    assert _drawn(kws.cases()) == _drawn(_fresh_cases())


@given(st.data())
def test_equal_sequences_of_other_types_are_not_confused(data):
    pick = kws._picker(data.draw)
    assert type(pick((False, True))) is bool and type(pick((0, 1))) is int
    assert type(pick((0.0, 1.0))) is float and type(pick((False, True))) is bool
