"""Simjoin benchmarks: stream generators shaped like the SWOOP paper's data and
the throughput / stock-size / ablation experiments (bench/results/simjoin/)."""
