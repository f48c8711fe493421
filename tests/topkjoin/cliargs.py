"""What the topkjoin pipeline tests hand the CLI for a conformance case: its arguments and its
remote timeline as a CSV file (shared by ``test_columnar.py`` and ``test_text_scan.py``)."""
from __future__ import annotations

import pandas as pd


def argv(items: str, remote: str, case, *extra) -> list[str]:
    p = case.params
    out = ["run", "topkjoin", "--input", items, "--remote", remote, "--window", str(p.omega),
           "--slide", str(p.beta), "--k", str(p.k), "--n", str(p.n), "--budget", str(p.budget),
           "--aggregate", p.aggregate, "--output", "unused"]
    return out + (["--origin", str(p.t0)] if p.t0 is not None else []) + list(extra)


def timeline(tmp_path, case) -> str:
    path = tmp_path / "timeline.csv"
    pd.DataFrame(list(case.params.remote.rows()) or [(0, 0, 0.0)],
                 columns=["key", "time", "value"]).to_csv(path, index=False)
    return str(path)
