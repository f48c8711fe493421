"""``streamspec conform``: bad arguments are typed errors, exit code 2 and a message
naming what is known (problems, engines) or what to do; never a traceback."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from streamspec.spec.registry import Registry

from streamspec.pipeline.cli import main

NO_HYPOTHESIS_CONFORM = '''
import sys


class NoHypothesis:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "hypothesis":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoHypothesis())
from streamspec.pipeline.cli import main
sys.exit(main(["conform", "connectivity", "--engine", "bic"]))
'''


@pytest.mark.parametrize("argv, message", [
    (["conform", "nosuchproblem"],
     "unknown problem 'nosuchproblem': expected one of connectivity, kws, simjoin, topkjoin"),
    (["conform", "connectivity", "--engine", "nosuch"],
     "no engine 'nosuch' for problem 'connectivity' (registered: "
     + ", ".join(n for _, n in Registry.names("connectivity")) + ")"),
    (["conform", "connectivity", "--engine", "bic", "--examples", "0"],
     "--examples 0: expected a positive number of examples"),
    (["conform", "simjoin", "--examples", "-5"],
     "--examples -5: expected a positive number of examples"),
    (["conform", "kws", "--engine", "forest", "--replay", "no/such/file.jsonl"],
     "--replay no/such/file.jsonl: no such file"),
    (["conform", "connectivity", "--check", "nosuch"],
     "unknown check 'nosuch': expected one of step_by_step, bad_records, watermark"),
])
def test_bad_arguments_exit_2_with_a_message(argv, message, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert captured.out == ""          # nothing ran


def test_a_good_run_exits_0(capsys):
    assert main(["conform", "connectivity", "--engine", "rwc", "--examples", "3"]) == 0
    out = capsys.readouterr().out
    for check in ("step_by_step", "bad_records", "watermark"):      # every check, as pytest runs
        assert f"ok   connectivity.rwc ({check}, 3 examples" in out


@pytest.mark.parametrize("mutant", ["broken-open-start", "broken-closed-end", "broken-whole-slides"])
def test_a_window_boundary_bug_writes_one_minimal_reproducer_that_replays(mutant, tmp_path,
                                                                          monkeypatch, capsys):
    """A window-boundary bug (start, end, r not a multiple of s): exit 1, one reproducer
    file of at most 3 edges, the printed command replays it to a failure (the same check),
    and the oracle passes it."""
    from streamspec.conformance import runner
    monkeypatch.setattr(runner, "FAILURES_DIR", tmp_path)
    assert main(["conform", "connectivity", "--engine", mutant, "--examples", "300"]) == 1
    captured = capsys.readouterr()
    files = list(tmp_path.glob("*.jsonl"))
    assert len(files) == 1, files
    lines = files[0].read_text().splitlines()
    assert len(lines) - 2 <= 3, lines               # header, the case's head, the edges
    assert f"--engine {mutant} --replay {files[0]}" in captured.err
    assert main(["conform", "connectivity", "--engine", mutant, "--replay", str(files[0])]) == 1
    assert main(["conform", "connectivity", "--engine", "oracle", "--replay", str(files[0])]) == 0


def test_a_pickling_bug_is_caught_and_named(tmp_path, monkeypatch, capsys):
    from streamspec.conformance import runner
    monkeypatch.setattr(runner, "FAILURES_DIR", tmp_path)
    assert main(["conform", "connectivity", "--engine", "broken-pickles-without-pending",
                 "--examples", "300"]) == 1
    err = capsys.readouterr().err
    assert "without the pickle round trips the engine passes" in err
    assert len(list(tmp_path.glob("*.jsonl"))) == 1


def test_without_hypothesis_it_says_what_to_install(tmp_path):
    script = tmp_path / "conform_without_hypothesis.py"
    script.write_text(textwrap.dedent(NO_HYPOTHESIS_CONFORM))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "streamspec conform needs hypothesis: pip install 'hypothesis>=6.100'" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("content, message", [
    (b"", "not a streamspec connectivity reproducer"),
    (b"{not json\n", ":1: not a streamspec reproducer line (JSON"),
    (b"\xff\xfe\x00garbage", "not a streamspec reproducer (not UTF-8 text at byte 0)"),
    (b'{"problem": "connectivity"}\n', "not a streamspec connectivity reproducer (missing field 'r')"),
    (b'{"problem": "connectivity", "r": 2, "s": 1, "t0": null, "workload": [], "chunks": [1]}\n[1, 2]\n',
     "not a streamspec connectivity reproducer"),
    (b'{"problem": "simjoin", "k": 1}\n', "it is a simjoin case, not a connectivity one"),
    (b"[" * 100000 + b"\n", ":1: not a streamspec reproducer line"),
])
def test_a_file_that_is_not_a_reproducer_is_exit_2_naming_it(content, message, tmp_path, capsys):
    path = tmp_path / "case.jsonl"
    path.write_bytes(content)
    assert main(["conform", "connectivity", "--engine", "bic", "--replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and message in err, err
    assert "Traceback" not in err
