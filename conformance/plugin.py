"""pytest plugin (entry point ``pytest11``): ``--engine NAME`` and the report header."""
from __future__ import annotations


def pytest_addoption(parser):
    group = parser.getgroup("streamspec")
    group.addoption("--engine", action="append", default=[],
                    help="run the conformance suite only on these engines (repeatable; default: all registered)")
