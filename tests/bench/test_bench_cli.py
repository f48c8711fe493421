"""`streamspec bench`: interleaved rounds, paired ratios, JSON, floors, --compare, typed errors."""
from __future__ import annotations

import json
import statistics

import pytest

from streamspec.bench import ratios, standard, workloads
from streamspec.engines.connectivity.msf import MsfEngine
from streamspec.pipeline.cli import main
from streamspec.spec.registry import Registry

TINY = ["--scale", "0.01", "--repeats", "3", "--processes", "1", "--quiet"]


class MsfTwice(MsfEngine):
    """MSF doing all its work twice (a shadow MSF fed the same input): a 2x slower engine."""

    name = "msf-twice"
    description = "msf, every call done twice (test of the regression gate)"

    def __init__(self, params, **options):
        super().__init__(params, **options)
        self._shadow = MsfEngine(params, **options)

    def process(self, events):
        for _ in self._shadow.process(events):
            pass
        return super().process(events)

    def flush(self):
        self._shadow.flush()
        return super().flush()


@pytest.fixture
def twice():
    Registry.register(MsfTwice)
    yield MsfTwice.name
    Registry.unregister(MsfTwice)


def bench(*argv) -> int:
    return main(["bench", "connectivity", *argv])


def test_json_holds_every_run_and_paired_ratios(tmp_path, capsys):
    out = tmp_path / "msf.json"
    assert bench("--engine", "msf", "--baseline", "bic", "--baseline", "scipy", *TINY,
                 "--json", str(out)) == 0
    doc = json.loads(out.read_text())
    assert doc["format"] == standard.FORMAT and doc["group"] == "bench-connectivity-rmat"
    assert doc["engine"] == "msf" and doc["baselines"] == ["bic", "scipy"]
    assert doc["workload_params"]["edges"] == 100_000 and doc["workload_params"]["scale"] == 0.01
    assert {"python", "streamspec", "machine", "cpus", "git_commit"} <= set(doc["environment"])
    assert len(doc["load_average_before"]) == 3
    runs = doc["runs"]
    assert len(runs) == (1 + 3) * 3                          # one warm-up round, three rounds
    assert [r["subject"] for r in runs if r["round"] == 1] == ["scipy", "bic", "msf"]   # ABBA
    assert len({r["outputs"] for r in runs}) == 1           # every engine answers every window
    for base in ("bic", "scipy"):
        per_round = [next(r["cpu_s"] for r in runs if r["round"] == i and r["subject"] == base)
                     / next(r["cpu_s"] for r in runs if r["round"] == i and r["subject"] == "msf")
                     for i in range(3)]
        assert doc["ratios"][base]["per_round"] == pytest.approx(per_round)
        assert doc["ratios"][base]["median"] == pytest.approx(statistics.median(per_round))
    printed = capsys.readouterr().out
    assert "ratio bic/msf" in printed and "median cpu" in printed
    # also pytest-benchmark-shaped: the ratios script reads the file
    table = ratios.medians(doc)
    assert set(table["bench-connectivity-rmat"]) == {"msf", "bic", "scipy"}


def test_stepwise_pieces_are_the_whole_run_cut_up():
    case = workloads.get("connectivity", "rmat").prepare(0.01)
    for name in ("msf", "bic"):
        pieces = case.stepwise(name)
        assert len(pieces) == workloads.STEPS
        assert sum(p() for p in pieces) == case.setup(name)() == 200
    run = standard._stepwise_round(case, ["bic", "msf"], 3)
    assert [(r.round, r.subject, r.outputs) for r in run] == [(3, "bic", 200), (3, "msf", 200)]
    assert all(r.cpu_s > 0 for r in run)


def test_rounds_shared_among_fresh_processes(tmp_path, capsys):
    out = tmp_path / "p2.json"
    assert bench("--engine", "msf", "--baseline", "bic", "--scale", "0.01", "--repeats", "5",
                 "--processes", "2", "--json", str(out)) == 0
    doc = json.loads(out.read_text())
    assert doc["processes"] == 2 and doc["repeats"] == 5
    runs = doc["runs"]
    warm = [(r["process"], r["subject"]) for r in runs if r["round"] < 0]
    assert warm == [(0, "msf"), (0, "bic"), (1, "msf"), (1, "bic")]   # each process warms up
    counted = [(r["process"], r["round"], r["subject"]) for r in runs if r["round"] >= 0]
    assert counted == [(0, 0, "msf"), (0, 0, "bic"), (0, 1, "bic"), (0, 1, "msf"),
                       (0, 2, "msf"), (0, 2, "bic"),                  # shares of 5: 3 and 2
                       (1, 3, "bic"), (1, 3, "msf"), (1, 4, "msf"), (1, 4, "bic")]   # flipped
    assert len(doc["ratios"]["bic"]["per_round"]) == 5
    assert "p2 round 4" in capsys.readouterr().out


def test_no_process_starts_after_the_budget_once_there_are_six_rounds(tmp_path, monkeypatch):
    ticks = iter(range(0, 10**6, 100))                   # 100 s pass between two looks
    monkeypatch.setattr(standard, "_now", lambda: next(ticks))
    out = tmp_path / "b.json"
    assert bench("--engine", "msf", "--baseline", "bic", "--scale", "0.01", "--processes", "8",
                 "--quiet", "--json", str(out)) == 0
    runs = json.loads(out.read_text())["runs"]
    # each process: at least 1, at most 30 // 8 = 3 rounds (its own clock: its share of 60 s
    # is never used up at this size); two processes make six rounds, then the budget is spent
    assert sorted({r["process"] for r in runs}) == [0, 1]
    assert max(r["round"] for r in runs) == 5


def test_an_engine_only_this_process_knows_needs_processes_1(twice, capsys):
    assert bench("--engine", twice, "--baseline", "bic", "--scale", "0.01", "--repeats", "2",
                 "--processes", "2", "--quiet") == 2
    assert "--processes 1 measures in this one" in capsys.readouterr().err


def test_an_engine_twice_as_slow_fails_compare(tmp_path, twice, capsys):
    normal = tmp_path / "normal.json"
    assert bench("--engine", "msf", "--baseline", "bic", *TINY, "--scale", "0.02",
                 "--json", str(normal)) == 0
    capsys.readouterr()
    slow = tmp_path / "slow.json"
    assert bench("--engine", twice, "--baseline", "bic", *TINY, "--scale", "0.02",
                 "--compare", str(normal), "--max-regression", "20", "--json", str(slow)) == 1
    printed = capsys.readouterr()
    assert "[FAIL] compare msf-twice over bic" in printed.out and "gate failed" in printed.err
    verdict = json.loads(slow.read_text())["compare"]["verdicts"][0]
    assert verdict["change_pct"] < -20 and not verdict["ok"]


def test_floors_gate(tmp_path, capsys):
    floors = tmp_path / "floors.toml"
    floors.write_text('[[floor]]\ngroup = "bench-connectivity-rmat"\nsubject = "msf"\n'
                      'baseline = "scipy"\nmin_ratio = 1e6\nwhy = "unreachable"\n'
                      '[[floor]]\ngroup = "bench-connectivity-rmat"\nsubject = "bic"\n'
                      'baseline = "scipy"\nmin_ratio = 1e6\n')     # not this run's engine
    assert bench("--engine", "msf", "--baseline", "scipy", *TINY, "--floors", str(floors)) == 1
    out = capsys.readouterr().out
    assert "[FAIL] floor msf over scipy" in out and "< floor 1e+06" in out
    assert "floor bic" not in out
    floors.write_text('[[floor]]\ngroup = "bench-connectivity-rmat"\nsubject = "msf"\n'
                      'baseline = "scipy"\nmin_ratio = 1e-6\n')
    assert bench("--engine", "msf", "--baseline", "scipy", *TINY, "--floors", str(floors)) == 0
    assert "[ok  ] floor msf over scipy" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["bench", "nosuch", "--engine", "x"], "unknown problem 'nosuch'"),
    (["bench", "connectivity", "--engine", "nosuch"], "no engine 'nosuch'"),
    (["bench", "connectivity", "--engine", "msf", "--baseline", "nosuch"], "no engine 'nosuch'"),
    (["bench", "connectivity", "--engine", "msf", "--workload", "nosuch"], "known: rmat, powerlaw"),
    (["bench", "connectivity", "--engine", "rwc"], "also a baseline"),
    (["bench", "connectivity", "--engine", "msf", "--repeats", "0"], "--repeats 0"),
    (["bench", "connectivity", "--engine", "msf", "--scale", "0"], "--scale 0"),
    (["bench", "connectivity", "--engine", "msf", "--budget", "0"], "--budget 0"),
    (["bench", "connectivity", "--engine", "msf", "--budget", "9", "--repeats", "3"],
     "give one"),
    (["bench", "connectivity", "--engine", "msf", "--processes", "0"], "--processes 0"),
    (["bench", "connectivity", "--engine", "msf", "--processes", "3", "--repeats", "2"],
     "at least one round per process"),
    (["bench", "connectivity", "--engine", "msf", "--max-regression", "5"], "needs --compare"),
    (["bench", "connectivity", "--engine", "msf:nosuch=1"], "has no option 'nosuch'"),
    (["bench", "connectivity", "--engine", "msf", "--compare", "/nonexistent.json"], "--compare"),
    (["bench", "connectivity", "--engine", "msf", "--floors", "/nonexistent.toml"], "--floors"),
])
def test_bad_arguments_exit_2(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


class _Clock:
    """A wall clock that a fake engine run advances by a fixed step."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


@pytest.mark.parametrize("step, budget, rounds", [
    (1.0, 60.0, 30),      # 2 s per round (two subjects): 30 rounds fit 60 s, the most there are
    (2.0, 60.0, 14),      # 4 s per round: pairs while the next pair still fits 60 s
    (10.0, 60.0, 6),      # 20 s per round: never fewer than six (three ABBA pairs)
    (1.0, 11.0, 6),
])
def test_budget_decides_the_rounds_in_whole_pairs(monkeypatch, step, budget, rounds):
    clock = _Clock()

    def run():
        clock.now += step
        return 1

    class Case:
        def setup(self, name):
            return run

    monkeypatch.setattr(standard, "_now", clock)
    runs = standard.measure(Case(), ["a", "b"], None, 1, budget=budget)
    counted = [r for r in runs if r.round >= 0]
    assert 1 + max(r.round for r in counted) == rounds
    assert len(counted) == 2 * rounds and len(runs) == 2 * (rounds + 1)
    assert [r.subject for r in counted[:4]] == ["a", "b", "b", "a"]         # ABBA


def test_compare_refuses_another_workload_and_floors_that_apply_to_nothing(tmp_path, capsys):
    prev = tmp_path / "prev.json"
    assert bench("--engine", "msf", "--baseline", "bic", *TINY, "--json", str(prev)) == 0
    assert bench("--engine", "msf", "--baseline", "bic", *TINY, "--scale", "0.012",
                 "--compare", str(prev)) == 2
    assert "differs from this run's" in capsys.readouterr().err
    assert bench("--engine", "msf", "--baseline", "scipy", *TINY, "--compare", str(prev)) == 2
    assert "no ratio to baseline 'scipy'" in capsys.readouterr().err
    floors = tmp_path / "f.toml"
    floors.write_text('[[floor]]\ngroup = "bench-kws-defaults"\nsubject = "msf"\n'
                      'baseline = "bic"\nmin_ratio = 1\n')
    assert bench("--engine", "msf", "--baseline", "bic", *TINY, "--floors", str(floors)) == 2
    assert "no floor applies" in capsys.readouterr().err


def test_compare_and_exact_printing():
    doc = {"problem": "p", "workload": "w", "workload_params": {"a": 1},
           "ratios": {"b": {"median": 0.9}}}
    prev = dict(doc, engine="e", ratios={"b": {"median": 1.0}})
    ok, = standard.compare(prev, doc, 10.0)
    assert ok["ok"] and ok["change_pct"] == pytest.approx(-10.0)
    bad, = standard.compare(prev, dict(doc, ratios={"b": {"median": 0.8999}}), 10.0)
    assert not bad["ok"]
    # a failing ratio never prints as its floor
    assert standard.exact(0.0967, 0.1) == "0.0967"
    assert standard.exact(0.09999999, 0.1) not in ("0.1", "0.1000")
    assert float(standard.exact(0.09999999, 0.1)) < 0.1


@pytest.mark.parametrize("problem", sorted(workloads.WORKLOADS))
def test_every_workload_runs_tiny(problem):
    work = workloads.get(problem)
    case = work.prepare(0.25 if problem == "kws" else 0.01)   # kws: results from ~10 min on
    call = case.setup(work.baseline)
    assert call() > 0 and case.params


def test_shipped_suites_take_engine_and_register_their_marks(tmp_path):
    # an installed streamspec's suites, run from elsewhere: no pyproject declares the marks
    import subprocess
    import sys

    def collect(*extra):
        done = subprocess.run([sys.executable, "-m", "pytest", "--pyargs", "streamspec.bench",
                               "--collect-only", "-q", "-p", "no:cacheprovider", "--strict-markers",
                               "-W", "error::pytest.PytestUnknownMarkWarning", *extra],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        return [line.split("/")[-1] for line in done.stdout.splitlines() if "::" in line]

    default = collect()
    assert "test_connectivity_bench.py::test_stream[bic]" in default
    assert "test_kws_bench.py::test_kws_stream[kws-ci-k3-forest]" in default
    chosen = collect("--engine", "dtree")
    stream = [t for t in chosen if "::test_stream[" in t]
    # the chosen engine beside the suite's baselines, not the default engines
    assert stream == [f"test_connectivity_bench.py::test_stream[{n}]"
                      for n in ("dtree", "rwc", "scipy")]
    assert "test_connectivity_bench.py::test_small[networkx]" in chosen
    assert "test_simjoin_bench.py::test_tweet_stream[none]" in chosen       # skipped, with why


def test_shipped_floors_name_standard_workloads_and_registered_engines(capsys):
    floors = standard.load_floors("default")
    assert floors
    groups = {standard.group(p, w): p for p, ws in workloads.WORKLOADS.items() for w in ws}
    for f in floors:
        problem = groups[f["group"]]                      # a standard workload's group
        Registry.get(problem, f["subject"])
        Registry.get(problem, f["baseline"])
    assert standard.applicable(floors, "bench-connectivity-rmat", "bic", ["rwc"])
    # a run the shipped floors say nothing about: refused before it runs
    assert bench("--engine", "msf", "--baseline", "scipy", *TINY, "--floors", "default") == 2
    assert "no floor applies" in capsys.readouterr().err
