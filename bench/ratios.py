"""Speed-up ratios within one benchmark run, checked against committed floors.

pytest-benchmark's author advises against comparing timings with stored runs
from other machines or jobs; networkx gates on a factor with base and head
measured in the same job.  So every benchmark group holds an engine and its baselines, measured in the same
process run, and CI checks only ratios of their medians:

    ratio(subject over baseline) = median(baseline) / median(subject)

For timings that is the subject's speed-up; a group may also hold other
"lower is better" quantities (``streamspec.bench.connectivity.targets`` writes P95
latencies and peak memory in bytes as medians), read the same way.

Each benchmark is identified within its group by its *subject*:
``extra_info["subject"]`` when the benchmark set it, else the parametrize id
(``test_x[bic]`` -> ``bic``), else the test name.

Floors file (TOML), one table per floor::

    [[floor]]
    group = "connectivity-ci-stream"    # pytest-benchmark group
    subject = "bic"                     # expected to be faster
    baseline = "rwc"                    # its baseline in the same group
    min_ratio = 1.5                     # median(baseline) / median(subject) >= this
    why = "how the number was chosen"

A floor whose group is absent from the results is reported as *not run* (a
CI lane that does not run the full-size group is not a failure); a floor whose
group ran but lacks one of its subjects is *missing* and fails, unless
``--allow-missing`` (a gap is shown, never skipped silently).

CLI: ``python -m streamspec.bench.ratios RESULTS.json --floors bench/ratio_floors.toml``;
exit 0 when every floor holds, 1 when one is broken or missing, 2 on bad input.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from pathlib import Path

import attrs

STATUS_OK, STATUS_BROKEN, STATUS_MISSING, STATUS_NOT_RUN = "ok", "BROKEN", "MISSING", "not run"


@attrs.frozen
class Floor:
    group: str
    subject: str
    baseline: str
    min_ratio: float
    why: str = ""


@attrs.frozen
class Verdict:
    floor: Floor
    subject_median: float | None
    baseline_median: float | None
    status: str

    @property
    def ratio(self) -> float | None:
        if self.subject_median is None or self.baseline_median is None or self.subject_median <= 0:
            return None
        return self.baseline_median / self.subject_median


def subject(bench: dict) -> str:
    """The name of a benchmark within its group (see the module docstring)."""
    extra = bench.get("extra_info") or {}
    if extra.get("subject"):
        return str(extra["subject"])
    name = bench.get("name", "")
    match = re.search(r"\[(.+)\]$", name)
    return match.group(1) if match else name


def medians(results: dict) -> dict[str, dict[str, float]]:
    """``{group: {subject: median seconds}}`` from a pytest-benchmark JSON document."""
    table: dict[str, dict[str, float]] = {}
    for bench in results.get("benchmarks", []):
        group = bench.get("group") or bench.get("name", "")
        who = subject(bench)
        if who in table.setdefault(group, {}):
            raise ValueError(f"group {group!r} has two benchmarks named {who!r}")
        table[group][who] = float(bench["stats"]["median"])
    return table


def ratios(table: dict[str, dict[str, float]], baseline: str | None = None):
    """Every ratio within each group against ``baseline`` (default: the slowest subject).

    Yields ``(group, subject, baseline, ratio)``, the informative table that
    is printed beside the verdicts.
    """
    for group, by_subject in sorted(table.items()):
        if not by_subject:
            continue
        base = baseline if baseline in by_subject else max(by_subject, key=by_subject.get)
        for who, median in sorted(by_subject.items(), key=lambda kv: kv[1]):
            yield group, who, base, (by_subject[base] / median if median > 0 else float("inf"))


def load_floors(path) -> list[Floor]:
    with open(path, "rb") as handle:
        doc = tomllib.load(handle)
    floors = []
    for i, entry in enumerate(doc.get("floor", [])):
        try:
            floor = Floor(group=str(entry["group"]), subject=str(entry["subject"]),
                          baseline=str(entry["baseline"]), min_ratio=float(entry["min_ratio"]),
                          why=str(entry.get("why", "")))
        except KeyError as missing:
            raise ValueError(f"{path}: floor {i} lacks {missing}") from None
        if floor.min_ratio <= 0:
            raise ValueError(f"{path}: floor {i} has min_ratio <= 0")
        floors.append(floor)
    return floors


def check(table: dict[str, dict[str, float]], floors: list[Floor]) -> list[Verdict]:
    verdicts = []
    for floor in floors:
        group = table.get(floor.group)
        if group is None:
            verdicts.append(Verdict(floor, None, None, STATUS_NOT_RUN))
            continue
        mine, base = group.get(floor.subject), group.get(floor.baseline)
        if mine is None or base is None:
            verdicts.append(Verdict(floor, mine, base, STATUS_MISSING))
            continue
        ok = mine > 0 and base / mine >= floor.min_ratio
        verdicts.append(Verdict(floor, mine, base, STATUS_OK if ok else STATUS_BROKEN))
    return verdicts


def exit_code(verdicts: list[Verdict], allow_missing: bool = False) -> int:
    bad = {STATUS_BROKEN} | (set() if allow_missing else {STATUS_MISSING})
    return 1 if any(v.status in bad for v in verdicts) else 0


def _fmt(median: float | None) -> str:
    return "-" if median is None else f"{median:.4g}"


def exact(x: float, *others: float) -> str:
    """``x`` with as many significant digits as it takes to differ from each of ``others``
    (at least 4): a ratio of 0.0967 against a floor of 0.1 prints 0.0967, never 0.10."""
    for digits in range(4, 18):
        text = f"{x:.{digits}g}"
        if all(x == o or text != f"{o:.{digits}g}" for o in others):
            return text
    return repr(x)


def report(table, verdicts: list[Verdict]) -> str:
    lines = ["ratios within each group: median of the slowest / median "
             "(medians in seconds; bytes in memory groups)"]
    for group, who, base, ratio in ratios(table):
        lines.append(f"  {group:34} {who:12} {_fmt(table[group][who]):>14}   "
                     f"x{exact(ratio):>10} vs {base}")
    lines.append("floors:")
    for v in verdicts:
        f = v.floor
        got = "-" if v.ratio is None else f"x{exact(v.ratio, f.min_ratio)}"
        floor = exact(f.min_ratio, v.ratio) if v.ratio is not None else f"{f.min_ratio:g}"
        lines.append(f"  [{v.status:7}] {f.group:34} {f.subject} over {f.baseline}: {got} "
                     f"(floor x{floor}; {_fmt(v.subject_median)} vs {_fmt(v.baseline_median)})")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m streamspec.bench.ratios", description=__doc__.split("\n")[0])
    parser.add_argument("results", help="pytest-benchmark JSON (--benchmark-json=...)")
    parser.add_argument("--floors", default=str(Path(__file__).with_name("ratio_floors.toml")))
    parser.add_argument("--allow-missing", action="store_true",
                        help="a floor whose group ran without one of its subjects is not a failure")
    args = parser.parse_args(argv)
    try:
        with open(args.results) as handle:
            table = medians(json.load(handle))
        floors = load_floors(args.floors)
    except (OSError, ValueError, KeyError, tomllib.TOMLDecodeError) as err:
        print(f"streamspec.bench.ratios: {err}", file=sys.stderr)
        return 2
    verdicts = check(table, floors)
    print(report(table, verdicts))
    return exit_code(verdicts, args.allow_missing)


if __name__ == "__main__":
    sys.exit(main())
