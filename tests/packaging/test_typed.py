"""PEP 561: every layer of streamspec ships a ``py.typed`` marker (type checkers then read
the package's annotations), and pyproject.toml's package-data puts it in the wheel."""
from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("spec", "reference", "engines", "pipeline", "conformance", "bench")


@pytest.mark.parametrize("layer", LAYERS)
def test_each_layer_ships_py_typed(layer):
    assert (ROOT / layer / "py.typed").is_file()
    assert (ROOT / layer / "py.typed").read_bytes() == b""     # a marker: not partial
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    globs = data["package-data"].get(f"streamspec.{layer}", [])
    assert any(fnmatch.fnmatch("py.typed", g) for g in globs), globs
