"""``streamspec new-engine PROBLEM NAME DIR``: a new engine package, installable, passing the suite.

Writes into ``DIR`` (created if missing; it must be empty) a package named
``streamspec-NAME`` holding the minimal engine of ``PROBLEM`` (the template
module ``streamspec.pipeline.templates.<problem>``, which the contract page
``docs/engines/<problem>.md`` quotes verbatim) with ``name = "NAME"``:

- ``pyproject.toml``: the entry point ``"PROBLEM.NAME" =
  "streamspec_NAME.engine:Class"`` in the group ``streamspec.engines``;
- ``streamspec_NAME/engine.py``: the engine;
- ``tests/test_conformance.py``: loads the engine through its entry point and
  runs the conformance suite on it (``STREAMSPEC_EXAMPLES`` examples per check);
- ``README.md``: the commands to install it and run the suite.

A ``DIR`` that is a file or not empty, an unknown ``PROBLEM`` and a bad
``NAME`` (lowercase letters, digits, ``-`` and ``_``, starting with a letter;
not the name of an engine already registered for the problem) are
``InvalidParameter`` errors (exit code 2); nothing is written then.
"""
from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from streamspec.pipeline.templates import CLASSES, NAME_LINE, PROBLEMS
from streamspec.spec.errors import InvalidParameter

NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}\Z")

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "{dist}"
version = "0.1.0"
description = "The {problem} engine {name!r} for streamspec"
requires-python = ">=3.11"
dependencies = ["streamspec"]

# how streamspec finds the engine: `streamspec engines {problem}` lists it once installed
[project.entry-points."streamspec.engines"]
"{problem}.{name}" = "{package}.engine:{cls}"

[tool.setuptools]
packages = ["{package}"]
"""

INIT = '''\
"""The {problem} engine {name!r} for streamspec (``{package}.engine.{cls}``)."""
'''

TEST = '''\
"""The streamspec conformance suite on this engine, loaded through its entry point.

``pytest tests`` runs it (``STREAMSPEC_EXAMPLES=N``: examples per check, default 100);
``pytest --pyargs streamspec.conformance --engine {name}`` runs the shipped suite itself.
"""
import os

from streamspec.conformance import runner
from streamspec.spec.registry import Registry

from {package}.engine import {cls}

EXAMPLES = int(os.environ.get("STREAMSPEC_EXAMPLES", "100"))


def test_the_entry_point_loads_this_engine():
    assert Registry.get("{problem}", "{name}") is {cls}


def test_the_engine_passes_the_conformance_suite():
    report = runner.run(Registry.get("{problem}", "{name}"), examples=EXAMPLES)
    assert report is None, report
'''

README = """\
# {dist}

The {problem} engine `{name}` for streamspec: `{package}/engine.py`, class `{cls}`, registered
by the entry point `"{problem}.{name}"` in `pyproject.toml` (group `streamspec.engines`).
It started as streamspec's minimal {problem} engine (`streamspec new-engine {problem} {name} DIR`);
its contract, hook by hook, is `docs/engines/{problem}.md` in the streamspec package.

```
pip install -e .                                          # install it beside streamspec
streamspec engines {problem}                                  # lists {problem}.{name}
pytest tests                                              # the suite through the entry point
pytest --pyargs streamspec.conformance --engine {name}       # the shipped suite, every check
streamspec conform {problem} --engine {name} --examples 500  # the same from the command line
STREAMSPEC_PROFILE=ci pytest --pyargs streamspec.conformance --engine {name}   # 1000 examples
```

A failure prints the shrunk stream and the command that replays it
(`streamspec conform {problem} --engine {name} --replay FILE`).
"""


def check_name(problem: str, name: str) -> None:
    """``InvalidParameter`` unless ``name`` can name a new ``problem`` engine."""
    if problem not in PROBLEMS:
        raise InvalidParameter(f"unknown problem {problem!r}: expected one of {', '.join(PROBLEMS)}")
    if not isinstance(name, str) or not NAME.match(name):
        raise InvalidParameter(f"engine name {name!r}: expected lowercase letters, digits, '-' and "
                               f"'_', starting with a letter, at most 40 characters")
    from streamspec.spec.registry import Registry
    taken = [n for _, n in Registry.names(problem)]
    if name in taken:
        raise InvalidParameter(f"engine name {name!r}: {problem}.{name} is registered already "
                               f"(registered: {', '.join(taken)})")


def template(problem: str) -> str:
    """The minimal engine of ``problem`` as shipped (``name = "mine"``)."""
    if problem not in PROBLEMS:
        raise InvalidParameter(f"unknown problem {problem!r}: expected one of {', '.join(PROBLEMS)}")
    return resources.files("streamspec.pipeline.templates").joinpath(f"{problem}.py").read_text()


def render(problem: str, name: str) -> dict[str, str]:
    """The files of the package (relative path -> text)."""
    check_name(problem, name)
    package = "streamspec_" + name.replace("-", "_")
    fields = dict(problem=problem, name=name, package=package, cls=CLASSES[problem],
                  dist="streamspec-" + name.replace("_", "-"))
    source = template(problem)
    if source.count(NAME_LINE) != 1:
        raise AssertionError(f"the {problem} template must declare {NAME_LINE.strip()!r} once")
    return {
        "pyproject.toml": PYPROJECT.format(**fields),
        "README.md": README.format(**fields),
        f"{package}/__init__.py": INIT.format(**fields),
        f"{package}/engine.py": source.replace(NAME_LINE, f'    name = "{name}"\n'),
        "tests/test_conformance.py": TEST.format(**fields),
    }


def write(problem: str, name: str, directory) -> list[Path]:
    """Write the package into ``directory`` (created; must be empty); the files written."""
    root = Path(directory)
    if root.exists() and not root.is_dir():
        raise InvalidParameter(f"{root}: not a directory")
    if root.is_dir() and any(root.iterdir()):
        raise InvalidParameter(f"{root}: not empty (new-engine writes into a new or empty directory)")
    files = render(problem, name)       # every check before the first file is written
    written = []
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    return written


def add_arguments(parser) -> None:
    parser.description = (
        "Write an installable package into DIR (new or empty): pyproject.toml with the entry "
        "point PROBLEM.NAME, streamspec_NAME/engine.py holding the minimal engine of PROBLEM "
        "(the one docs/engines/PROBLEM.md quotes) named NAME, tests/test_conformance.py running "
        "the conformance suite on it, and a README with the commands. A bad PROBLEM or NAME, "
        "a NAME already registered for PROBLEM, or a non-empty DIR exits 2 and writes nothing.")
    parser.add_argument("problem", metavar="PROBLEM", help="connectivity, simjoin, kws or topkjoin")
    parser.add_argument("name", metavar="NAME",
                        help="the engine's name (the entry point is PROBLEM.NAME)")
    parser.add_argument("directory", metavar="DIR", help="where to write the package (new or empty)")


def main(args) -> int:
    written = write(args.problem, args.name, args.directory)
    root = Path(args.directory)
    for path in written:
        print(f"wrote {path}")
    print(f"next: pip install -e {root} && pytest {root / 'tests'}\n"
          f"      pytest --pyargs streamspec.conformance --engine {args.name}")
    return 0
