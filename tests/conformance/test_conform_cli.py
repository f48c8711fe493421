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
])
def test_bad_arguments_exit_2_with_a_message(argv, message, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert captured.out == ""          # nothing ran


def test_a_good_run_exits_0(capsys):
    assert main(["conform", "connectivity", "--engine", "rwc", "--examples", "3"]) == 0
    assert "ok   connectivity.rwc (3 examples" in capsys.readouterr().out


def test_without_hypothesis_it_says_what_to_install(tmp_path):
    script = tmp_path / "conform_without_hypothesis.py"
    script.write_text(textwrap.dedent(NO_HYPOTHESIS_CONFORM))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "streamspec conform needs hypothesis: pip install 'hypothesis>=6.100'" in done.stderr
    assert "Traceback" not in done.stderr
