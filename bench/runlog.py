"""One CSV per experiment, one row per measurement, runs appended.

``append_rows(path, rows, fields, label)`` adds ``rows`` to the experiment's CSV at ``path``
instead of writing a file per run: every row gets the run's ``label`` and the ``machine``
(host name) first; the rows already in the file are kept cell for cell, and a column that only
the new rows (or only the old ones) have is left empty where it is missing.
"""
from __future__ import annotations

import csv
import platform
from pathlib import Path

LEAD = ("label", "machine")


def append_rows(path, rows: list[dict], fields: list[str], label: str) -> Path:
    """Append ``rows`` (columns ``fields``, extra keys appended after them) to ``path`` under
    ``label``; returns the path.  The header is the union of the file's and the new columns,
    ``label`` and ``machine`` first."""
    path = Path(path)
    old, header = [], []
    if path.exists() and path.stat().st_size:
        with open(path, newline="") as handle:
            reader = csv.DictReader(handle)
            header = list(reader.fieldnames or [])
            old = list(reader)
    machine = platform.node()
    new = [dict(row, label=label, machine=machine) for row in rows]
    columns = list(LEAD)
    for name in [*header, *fields, *(k for row in new for k in row)]:
        if name not in columns:
            columns.append(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, restval="")
        writer.writeheader()
        writer.writerows(old)
        writer.writerows(new)
    tmp.replace(path)
    return path
