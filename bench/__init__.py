"""Benchmarks: data generators and loaders, pytest-benchmark suites (marked
``bench``), experiment scripts that redraw the papers' figures (CSV + PNG under
``bench/results/<problem>/``) and ``streamspec.bench.ratios``, which turns the medians of a
pytest-benchmark run into speed-up ratios within each group and checks them
against the committed floors in ``bench/ratio_floors.toml`` (``streamspec.bench.ratios``;
benchmarks compare engines within one run, never against absolute times).
"""
