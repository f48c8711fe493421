"""One process's share of ``streamspec bench``'s rounds (``standard.measure_in_processes``).

``python -m streamspec.bench.worker SPEC`` with ``SPEC`` a JSON object (problem, workload,
scale, subjects, repeats or null, warmup, budget, least, most, flip): builds the workload's input,
runs ``standard.measure`` and prints one JSON object per run on stdout as it ends, so the
parent reports progress while the process works.  A typed error (``streamspec.spec.errors``)
is one JSON line ``{"error": ...}`` and exit 2; anything else a traceback on stderr, exit 1.
"""
from __future__ import annotations

import json
import sys

import attrs


def main(argv: list[str]) -> int:
    from streamspec.bench import standard, workloads
    spec = json.loads(argv[0])
    case = workloads.get(spec["problem"], spec["workload"]).prepare(spec["scale"])

    def emit(run):
        print(json.dumps(attrs.asdict(run)), flush=True)

    standard.measure(case, spec["subjects"], spec["repeats"], spec["warmup"], emit,
                     budget=spec["budget"], least=spec["least"], most=spec["most"],
                     flip=spec.get("flip", False))
    return 0


def run(argv: list[str]) -> int:
    """``main``, with a typed error (an engine this process cannot find, say) reported as one
    JSON line ``{"error": ...}`` for the parent to raise again, exit 2."""
    from streamspec.spec.errors import StreamspecError
    try:
        return main(argv)
    except StreamspecError as err:
        print(json.dumps({"error": str(err), "type": type(err).__name__}), flush=True)
        return 2


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
