"""Seconds per engine for one check with the ci profile's 1000 examples, with the examples
drawn again for every engine and with the first passing run's examples reused
(``conformance.runner._PASSED``); also whether every engine saw the same examples.

    python bench/results/ci/reuse_examples.py topkjoin step_by_step > bench/results/ci/reuse_examples.log
"""
import os
import sys
import time

from streamspec.conformance import checks, runner
from streamspec.spec.registry import Registry


def main(problem: str, check_name: str) -> None:
    check = checks.get(check_name)
    engines = [n for _, n in Registry.names(problem) if n != "oracle"]
    print(f"# {problem} {check_name}, 1000 examples, load {os.getloadavg()[0]:.2f}")
    for reuse in (False, True):
        runner._PASSED.clear()
        for name in engines:
            if not reuse:
                runner._PASSED.clear()
            started = time.perf_counter()
            failures, _ = runner.run_check(Registry.get(problem, name), check, 1000)
            print(f"{'reused' if reuse else 'drawn '} {name:12s} {time.perf_counter() - started:6.2f} s"
                  f"{'  FAILED' if failures else ''}")
    print(f"# load after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
