"""Benchmarks of sliding-window connectivity (BIC TR Section 7).

- ``generators``: seeded R-MAT / Chung-Lu edge streams at a fixed arrival rate.
- ``loaders``: SNAP-style edge lists (``u v [t]``), synthetic timestamps when absent.
- ``peers``: per-window recomputation with scipy and networkx, the tools a user
  would otherwise reach for, behind the engine contract.
- ``measure``: one run of an engine over a stream, slide by slide: throughput
  and per-window latencies.
- ``experiment``: the paper's throughput / P95 / P99 figures against window
  size and slide size (CSV + PNG under ``bench/results/connectivity/``).
- ``targets``: the issue's targets (BIC >= 3M edges/s, BIC/RWC >= 5, ...).
- ``memory``: peak memory of one engine run, in a fresh subprocess.
"""
