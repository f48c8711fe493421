"""The suite itself is tested: every deliberately broken simjoin engine must be caught."""
import pytest

from streamspec.conformance.testing import assert_broken_engine_is_caught
from streamspec.conformance.broken.simjoin import BROKEN


@pytest.mark.parametrize("broken", BROKEN, ids=lambda c: c.name)
def test_broken_engine_is_caught(broken, tmp_path):
    assert_broken_engine_is_caught(broken, tmp_path)
