"""The suite itself is tested: every deliberately broken engine must be caught."""
import pytest

from streamspec.conformance.testing import assert_broken_engine_is_caught, assert_pickling_breakage_is_caught
from streamspec.conformance.broken.connectivity import BROKEN, BROKEN_CONTRACT


@pytest.mark.parametrize("broken", BROKEN, ids=lambda c: c.name)
def test_broken_engine_is_caught(broken, tmp_path):
    assert_broken_engine_is_caught(broken, tmp_path)


@pytest.mark.parametrize("broken", BROKEN_CONTRACT, ids=lambda c: c.name)
def test_pickling_breakage_is_caught(broken):
    assert_pickling_breakage_is_caught(broken)
