"""An MSF that does all its work twice, compared with a normal run's JSON (full default workload).

Run from the checkout: python bench/results/bench-cli/twice-compare.py PREVIOUS.json OUT.json
Exit code: that of `streamspec bench ... --compare PREVIOUS.json --max-regression 10`.
"""
import sys

from streamspec.engines.connectivity.msf import MsfEngine
from streamspec.pipeline.cli import main
from streamspec.spec.registry import Registry


@Registry.register
class MsfTwice(MsfEngine):
    name = "msf-twice"
    description = "msf, every call done twice"

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


if __name__ == "__main__":
    sys.exit(main(["bench", "connectivity", "--engine", "msf-twice", "--baseline", "bic",
                   "--compare", sys.argv[1], "--max-regression", "10", "--json", sys.argv[2],
                   "--processes", "1"]))   # msf-twice is registered in this process only
