"""One command-line vocabulary across the four jobs (streamspec.pipeline.flags), help text
that states every default in plain text, and the engines table's default marks."""
from __future__ import annotations

import argparse

import pytest

from streamspec.pipeline import flags
from streamspec.pipeline.cli import build_parser, main
from streamspec.pipeline.summary import sentence

PROBLEMS = ("connectivity", "kws", "simjoin", "topkjoin")
SHARED = ("--input", "--engine", "--output", "--overwrite", "--partitions", "--master",
          "--progress")
LATENESS = {"connectivity": True, "simjoin": True, "kws": False, "topkjoin": False}
WINDOW_ALIASES = {"connectivity": ("-r",), "simjoin": ("-w",), "kws": ("-w",),
                  "topkjoin": ("--omega",)}
SLIDE_ALIASES = {"connectivity": ("-s",), "topkjoin": ("--beta",)}


def subparsers(parser: argparse.ArgumentParser):
    """Every parser under ``parser`` (itself included), depth first."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from subparsers(child)


def job_parser(problem: str) -> argparse.ArgumentParser:
    run = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    jobs = next(a for a in run.choices["run"]._actions if isinstance(a, argparse._SubParsersAction))
    return jobs.choices[problem]


def options(parser) -> dict[str, argparse.Action]:
    return {s: a for a in parser._actions for s in a.option_strings}


@pytest.mark.parametrize("problem", PROBLEMS)
def test_every_job_speaks_the_shared_vocabulary(problem):
    opts = options(job_parser(problem))
    for flag in SHARED + ("--window",):
        assert flag in opts, flag
    assert ("--lateness" in opts) is LATENESS[problem]
    for alias in WINDOW_ALIASES[problem]:
        assert opts[alias] is opts["--window"]
    if problem in SLIDE_ALIASES:
        for alias in SLIDE_ALIASES[problem]:
            assert opts[alias] is opts["--slide"]
    assert opts["--engine"].default == flags.default_engine(problem, _preferred(problem))


def _preferred(problem):
    from streamspec.pipeline.cli import _jobs
    return _jobs()[problem].PREFERRED_ENGINES


def test_topkjoin_papers_names_are_aliases():
    argv = ["run", "topkjoin", "--stream", "items.csv", "--remote", "r.csv", "--omega", "6",
            "--beta", "4", "--k", "2", "--output", "out"]
    args = build_parser().parse_args(argv)
    assert (args.input, args.window, args.slide) == ("items.csv", 6, 4)


@pytest.mark.parametrize("problem", PROBLEMS)
def test_every_flag_states_its_default_or_that_it_is_required(problem):
    for action in job_parser(problem)._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        text = action.help or ""
        assert "default" in text or "required" in text, (problem, action.option_strings, text)


def test_no_markup_in_any_help():
    for parser in subparsers(build_parser()):
        text = parser.format_help()
        assert "``" not in text and ":func:" not in text and ":class:" not in text, parser.prog


def test_engines_marks_one_default_per_problem(capsys):
    assert main(["engines"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].split() == ["ENGINE", "KIND", "DEFAULT", "OPTIONS", "DESCRIPTION"]
    marked = {r.split()[0] for r in rows[1:] if r.split()[2] == "default"}
    assert marked == {"connectivity.bic", "kws.fullmesh", "simjoin.swoop", "topkjoin.at-tsm"}


def test_engines_shows_each_engines_options(capsys):
    """The OPTIONS column: ``key=default|other,...`` per engine (``-`` for none), and
    every value shown is one ``Registry.get`` accepts as ``NAME:key=value``."""
    from streamspec.spec.registry import Registry
    assert main(["engines", "kws"]) == 0
    rows = capsys.readouterr().out.splitlines()
    at = rows[0].index("OPTIONS")
    options = {r.split()[0]: r[at:].split()[0] for r in rows[1:]}
    assert options["kws.fullmesh"] == "purge=lazy|eager,demand_driven=true|false,index_buffers=true|false"
    assert options["kws.forest"] == "purge=eager|lazy"
    assert options["kws.oracle"] == "-"
    for label, text in options.items():
        problem, name = label.split(".", 1)
        for item in text.split(",") if text != "-" else ():
            key, values = item.split("=")
            for value in values.split("|"):
                spelled = f"{name}:{key}={value}"
                assert Registry.get(problem, spelled).name == spelled
    assert main(["engines", "connectivity"]) == 0
    rows = capsys.readouterr().out.splitlines()
    at = rows[0].index("OPTIONS")
    options = {r.split()[0]: r[at:].split()[0] for r in rows[1:]}
    assert options.pop("connectivity.bic") == "build=deferred|inside,prereduce=true|false"
    assert set(options.values()) == {"-"}


def test_summary_is_one_sentence():
    line = sentence("kws", "3 results", "12 events", "t_max=5", "fullmesh", "out/kws", 1.25)
    assert line == "kws: wrote 3 results from 12 events (t_max=5, engine fullmesh) to out/kws in 1.2 s."


@pytest.mark.parametrize("text, ok", [("local", True), ("local[*]", True), ("local[4]", True),
                                      ("local[4,2]", True), ("spark://h:7077", True),
                                      ("yarn", True), ("k8s://https://h", True),
                                      ("nosuch://x", False), ("local[x]", False), ("", False)])
def test_master_urls(text, ok):
    if ok:
        assert flags.master_url(text) == text
    else:
        with pytest.raises(argparse.ArgumentTypeError):
            flags.master_url(text)


def test_engines_piped_into_a_reader_that_quits_early_exits_quietly():
    """`streamspec engines | head -1`: a closed pipe is no traceback."""
    import subprocess
    import sys
    done = subprocess.run(f"'{sys.executable}' -m streamspec.pipeline.cli engines | head -1",
                          shell=True, capture_output=True, text=True)
    assert done.stdout.startswith("ENGINE") and "Traceback" not in done.stderr, done.stderr
