"""The documentation: README.md and the pages under docs/ (issue 31).

The pages build into a site with MkDocs in strict mode (any broken link, anchor or nav entry
fails the build), the plots they show land in the built site, every relative link of the README
and the pages names a file of the repository, nothing in them cites files outside it, the README
stays short, every page is in the nav, and the wheel's package data takes every page.
"""
from __future__ import annotations

import fnmatch
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README_LIMIT = 12 * 1024          # the README says what the project is; the rest is in docs/

FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def pages() -> list[Path]:
    """The project's own pages: docs/**/*.md, not the results READMEs seen through
    docs/results (a symlink to bench/results)."""
    return sorted(p for p in DOCS.rglob("*.md")
                  if not p.relative_to(DOCS).parts[0] == "results")


def links(path: Path) -> list[str]:
    text = CODE.sub("", FENCE.sub("", path.read_text()))
    return LINK.findall(text)


def relative_targets(path: Path) -> list[tuple[str, Path]]:
    out = []
    for target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue                                   # http:, mailto:, same-page anchors
        out.append((target, (path.parent / target.split("#")[0]).resolve()))
    return out


def nav_files(nav) -> list[str]:
    found = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        found += nav_files(value) if isinstance(value, list) else [value]
    return found


def test_the_pages_exist_and_results_link_into_the_repository():
    assert (DOCS / "index.md").is_file()
    assert {p.stem for p in (DOCS / "problems").glob("*.md")} >= {
        "connectivity", "simjoin", "kws", "topkjoin"}
    assert (DOCS / "results").resolve() == (ROOT / "bench" / "results").resolve()


@pytest.mark.parametrize("path", [ROOT / "README.md", *pages()],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_names_an_existing_file(path):
    targets = relative_targets(path)
    assert targets, f"{path.name} links nothing"
    missing = [t for t, resolved in targets if not resolved.exists()]
    assert not missing, f"{path.relative_to(ROOT)}: broken links {missing}"
    outside = [t for t, resolved in targets
               if not (resolved.is_relative_to(ROOT) or resolved.is_relative_to(ROOT.resolve()))]
    assert not outside, f"{path.relative_to(ROOT)}: links outside the repository {outside}"


@pytest.mark.parametrize("path", [ROOT / "README.md", *pages()],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_nothing_cites_files_outside_the_repository(path):
    text = path.read_text()
    for outside in ("../shared", "shared/data", "DESIGN.md", "STYLE.md", "notes/"):
        assert outside not in text, f"{path.relative_to(ROOT)} cites {outside}"


@pytest.mark.parametrize("problem", ["connectivity", "simjoin", "kws", "topkjoin"])
def test_each_problem_page_shows_its_figures_beside_their_results_files(problem):
    page = DOCS / "problems" / f"{problem}.md"
    results = [t for t, resolved in relative_targets(page)
               if resolved.is_relative_to((ROOT / "bench" / "results").resolve())]
    assert any(t.endswith((".csv", ".log", ".json")) for t in results), "no results file linked"
    assert any(t.endswith(".png") for t in results), "no plot shown"


def test_the_readme_is_short_and_keeps_the_ci_test_command():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.encode()) <= README_LIMIT, (
        f"README.md is {len(readme.encode())} bytes: move detail to docs/")
    lines = readme.splitlines()
    marker = lines.index("<!-- test-command -->")
    assert lines[marker + 1] == "```" and "pytest" in lines[marker + 2]
    for problem in ("connectivity", "simjoin", "kws", "topkjoin"):
        assert f"docs/problems/{problem}.md" in readme


def test_every_page_is_in_the_nav_and_in_the_wheel():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    nav = nav_files(config["nav"])
    rel = [str(p.relative_to(DOCS)) for p in pages()]
    assert sorted(set(rel) - set(nav)) == [], "pages missing from mkdocs.yml's nav"
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert setup["package-dir"]["streamspec.docs"] == "docs"
    patterns = setup["package-data"]["streamspec.docs"]
    unshipped = [r for r in rel if not any(fnmatch.fnmatch(r, pat) and
                                            r.count("/") == pat.count("/") for pat in patterns)]
    assert not unshipped, f"pages the wheel would leave out: {unshipped}"


def test_the_site_builds_strictly_with_the_plots(tmp_path):
    pytest.importorskip("mkdocs")
    site = tmp_path / "site"
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
         "-d", str(site)],
        cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (site / "index.html").is_file()
    for problem in ("connectivity", "simjoin", "kws", "topkjoin"):
        html = (site / "problems" / f"{problem}.html").read_text()
        images = re.findall(r'<img [^>]*src="([^"]+)"', html)
        assert images, f"{problem}: no plot in the built page"
        for src in images:
            assert (site / "problems" / src).resolve().is_file(), f"{problem}: {src} not in the site"
