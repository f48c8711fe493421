"""The kws pipeline against the engine alone (issue 11: the pipeline keeps the engines' speed).

``python -m streamspec.bench.kws.pipeline [--seconds S] [--work DIR] [--partitions 1,2]
[--formats parquet,csv,jsonl] [--before DIR]``

The paper's synthetic workload (``streamspec.bench.kws.generator``, defaults: 15
relations, one tuple per relation per second, |K| = 2, T_max = 4, w = 20 min; 5 hours
= 270,000 tuples) is written as one file per relation in each of ``--formats``
(Parquet, CSV, JSON lines); then, in this order:

- the engine alone: ``fullmesh`` over the events in one process (CPU and wall);
- ``streamspec run kws`` through the command line, once per format and
  ``--partitions`` value, wall time end to end (Spark start, reading, replay,
  write); its output must hold exactly the engine's results.  Local files are
  read by Spark tasks (``streamspec.pipeline.io.kws_text``: the driver reads their
  heads only); with ``--before DIR`` each run is repeated, right after, with the
  code of ``DIR`` first on ``PYTHONPATH`` (a checkout of an older commit as
  ``DIR/streamspec``: before issue 11's reader, every tuple was read and validated
  on the driver), so both see the same machine load.  Each row records the
  1-minute load average at its start.

Results: ``bench/results/kws/pipeline.csv``.  Committed figures (at 99174c0, against
6173606 as ``--before``, its driver reader; ``python -m streamspec.bench.kws.pipeline
--work /tmp/kws-bench-ab --before /tmp/kws-old``, 2 cores shared with other jobs, load
average 2 to 7.7 over the run, so wall times are loose): engine alone 4.1 s; Parquet
inputs ``--partitions 1`` 33.4 s (before 31.3 s), ``--partitions 2`` 43.3 s (before
53.6 s); CSV inputs ``--partitions 1`` 59.3 s (before 59.9 s), ``--partitions 2``
57.2 s (before 71.1 s).  Timed by phase (``bench.pipeline_util.phased_cli``, Parquet,
``--partitions 1``, load 6-7): the driver's ``prepare`` went from 11.9 s (reading and
validating every tuple) to 0.2 s (the files' heads) and ``createDataFrame`` from 7.5 s
to 3.7 s, while the replay (now also the tasks' parse, its checkpoint and the split by
time range) went from 27.9 s to 45.4 s: at this size the same work moved from the
driver into Spark, the wall time is about the same; the driver no longer holds the
stream.  In one warm process (``replay_files``): parse 3 s, replay 6-8 s of which the
engine 4.6 s.  Earlier figures (Parquet only, load 6-8): engine alone 8.5 s, CLI 63.0 s
with ``--partitions 1``, 68.4 s with 2.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from streamspec.bench.kws.generator import DEFAULTS, params, stream

RESULTS = Path(__file__).resolve().parent.parent / "results" / "kws" / "pipeline.csv"


def write_inputs(work: Path, seconds: int, formats=("parquet",)
                 ) -> tuple[dict[str, list[str]], str, list]:
    """The relation files (per format) and the schema file; returns the ``--input`` items
    of each format, the schema path and the events."""
    p = params()
    events = list(stream(p, seconds, DEFAULTS["kwf"], DEFAULTS["sel"]))
    rows: dict = {}
    for e in events:
        rows.setdefault(e.relation, []).append({"tid": e.tid, "t": e.t, **dict(e.values)})
    work.mkdir(parents=True, exist_ok=True)
    inputs: dict = {f: [] for f in formats}
    for rel, rs in rows.items():
        frame = pd.DataFrame(rs)
        for fmt in formats:
            path = work / f"{rel}.{fmt}"
            if fmt == "parquet":
                frame.to_parquet(path, index=False)
            elif fmt == "csv":
                frame.to_csv(path, index=False)
            else:
                frame.to_json(path, orient="records", lines=True)
            inputs[fmt].append(f"{rel}={path}")
    schema = {"relations": [{"name": r.name, "attributes": list(r.attributes),
                             "text": list(r.text)} for r in p.schema.relations],
              "edges": [{"id": e.id, "left": f"{e.left}.{e.left_attr}",
                         "right": f"{e.right}.{e.right_attr}"} for e in p.schema.edges]}
    (work / "schema.json").write_text(json.dumps(schema))
    return inputs, str(work / "schema.json"), events


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=DEFAULTS["seconds"])
    ap.add_argument("--work", default="/tmp/streamspec-bench-kws")
    ap.add_argument("--partitions", default="1,2")
    ap.add_argument("--output", default=str(RESULTS))
    ap.add_argument("--formats", default="parquet,csv")
    ap.add_argument("--before", metavar="DIR",
                    help="also run each CLI run with DIR first on PYTHONPATH (DIR/streamspec: "
                         "a checkout of an older commit)")
    a = ap.parse_args(argv)
    work = Path(a.work)
    formats = a.formats.split(",")
    inputs, schema, events = write_inputs(work, a.seconds, formats)
    from streamspec.engines.kws.fullmesh import FullMeshEngine
    p = params()
    c0, w0 = time.process_time(), time.monotonic()
    engine = FullMeshEngine(p)
    outputs = list(engine.process(events)) + engine.flush()
    rows = [{"run": "engine alone", "format": "", "code": "", "tuples": len(events),
             "outputs": len(outputs), "cpu_s": round(time.process_time() - c0, 2),
             "wall_s": round(time.monotonic() - w0, 2), "load": round(os.getloadavg()[0], 1)}]
    print(f"{len(events)} tuples; engine alone: {rows[0]['wall_s']} s wall, "
          f"{rows[0]['cpu_s']} s CPU, {len(outputs)} outputs", flush=True)
    # the job reads tids as text (``streamspec.pipeline.io.kws``): compare as sorted text
    want = sorted((o.time, tuple(sorted(map(str, o.tids))),
                   tuple(sorted(f"{e}:{x}:{y}" for e, x, y in o.edges))) for o in outputs)
    streamspec = str(Path(sys.executable).with_name("streamspec"))
    codes = [("current", None)] + ([("before", a.before)] if a.before else [])
    for fmt in formats:
        for parts in a.partitions.split(","):
            for code, path in codes:
                out = work / f"out-{fmt}-{parts}-{code}"
                env = dict(os.environ)
                if path:
                    env["PYTHONPATH"] = os.pathsep.join(
                        [str(Path(path).resolve()), *filter(None, [env.get("PYTHONPATH")])])
                load = round(os.getloadavg()[0], 1)
                w0 = time.monotonic()
                subprocess.run([streamspec, "run", "kws", "--schema", schema,
                                "--input", *inputs[fmt], "--keywords", ",".join(p.keywords),
                                "--tmax", str(p.t_max), "--window", str(p.window),
                                "--partitions", parts, "--output", str(out), "--overwrite",
                                "--no-progress"], check=True, stderr=subprocess.DEVNULL, env=env)
                wall = time.monotonic() - w0
                got = pd.read_parquet(out)
                have = sorted((int(r.time), tuple(sorted(r.tids)), tuple(sorted(r.edges)))
                              for r in got.itertuples())
                assert have == want, "the CLI's results differ from the engine's"
                rows.append({"run": f"CLI --partitions {parts}", "format": fmt, "code": code,
                             "tuples": len(events), "outputs": len(got), "cpu_s": "",
                             "wall_s": round(wall, 2), "load": load})
                print(f"{fmt} CLI --partitions {parts} ({code} code, load {load}): {wall:.1f} s "
                      "wall, results equal the engine's", flush=True)
    Path(a.output).parent.mkdir(parents=True, exist_ok=True)
    with open(a.output, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
