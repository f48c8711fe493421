"""What ships cites only what ships: no docstring, comment or page may send a reader to
files outside the repository (the project's design and style notes, the per-problem
notes and their analysis notes, the shared data folder beside a checkout).  Citations
go to the papers by section (BIC PVLDB 2024 and its technical report, SWOOP PVLDB,
S-KWS SIGMOD 2007, Topk+N / AcquaTop), to a shipped module or page, or carry the
content themselves."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ("spec", "reference", "engines", "pipeline", "conformance", "bench", "docs")
TOP = ("README.md", "pyproject.toml", "tox.ini", "mkdocs.yml")
SUFFIXES = {".py", ".md", ".toml", ".txt", ".yml", ".yaml", ".cfg", ".ini"}
# the tests are not shipped but are read as documentation too; these two name the
# forbidden citations on purpose
EXEMPT = {"tests/packaging/test_citations.py", "tests/packaging/test_docs.py"}

OUTSIDE = re.compile(
    r"DESIGN\.md|STYLE\.md|\bnotes/|\.\./shared|"
    r"\banalysis\s+note|\banalysis\s+§|\bnote\s+§|\bnote\s+Sections?\s+\d")


def _files():
    for name in TOP:
        if (ROOT / name).is_file():
            yield ROOT / name
    for folder in (*SHIPPED, "tests"):
        for path in sorted((ROOT / folder).rglob("*")):
            rel = path.relative_to(ROOT)
            results = rel.parts[:2] == ("bench", "results")   # (not shipped: its pages only)
            if (path.suffix in ({".md"} if results else SUFFIXES) and path.is_file()
                    and "__pycache__" not in rel.parts and rel.as_posix() not in EXEMPT):
                yield path


def citations(text: str) -> list[tuple[int, str]]:
    """``(line, matched text)`` of every citation of an outside file in ``text``."""
    return [(text.count("\n", 0, m.start()) + 1, " ".join(m.group(0).split()))
            for m in OUTSIDE.finditer(text)]


@pytest.mark.parametrize("text, found", [
    ("Normative semantics: ``notes/kws.md``.", ["notes/"]),
    ("(DESIGN.md, \"Spark pipeline\")", ["DESIGN.md"]),
    ("rule (STYLE.md)", ["STYLE.md"]),
    ("beside the checkout (``<repo>/../shared/data``)", ["../shared"]),
    ("(analysis\nnote Section 8.2)", ["analysis note"]),
    ("the rebuild (analysis §3.7)", ["analysis §"]),
    ("query procedure of note Section 6", ["note Section 6"]),
    ("BIC TR Section 7.1; paper §5; ``streamspec.spec.windows``; docs/pipeline.md", []),
])
def test_the_pattern_finds_outside_citations_only(text, found):
    assert [m for _, m in citations(text)] == found


def test_nothing_cites_files_outside_the_repository():
    found = [f"{path.relative_to(ROOT)}:{line}: {what}"
             for path in _files() for line, what in citations(path.read_text(errors="replace"))]
    assert not found, "cite the paper by section or a shipped file instead:\n" + "\n".join(found)
