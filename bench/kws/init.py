"""Mesh initialisation time of FM and PM (paper Section 5.5, Figure 5.5's initialisation;
issue 14's target: FM at |K| = 5, T_max = 4 in at most 5 CPU-s).

``python -m streamspec.bench.kws.init [--keywords 2,3,4,5] [--t-max 4] [--label L] [--append]``

Each row is one engine construction (``FullMeshEngine`` / ``PartialMeshEngine`` on the
15-relation benchmark schema, w = 20 min) in a fresh interpreter, so that no CNGen cache
and no heap of an earlier run is met: ``init_s`` is ``time.process_time`` around the
constructor (CNGen and the whole mesh for FM, Section 4.1; the sources and the
expanded schema for PM, Section 4.2), any collection it sets off included.  ``cns``: the CNs of the mesh (FM's operators feeding the output operator;
PM's row repeats FM's count: PM grows the same CNs at run time); ``operators``: the
operators right after construction (FM: its CN joins still held as rows counted,
``MeshEngine.mesh_size``).  ``load1`` is the 1-minute load before and after the
run (the 2-core machine is shared with other sessions: CPU time still grows with load),
``commit`` the code measured (``$STREAMSPEC_BENCH_COMMIT`` names a ``git archive``
snapshot put first on ``PYTHONPATH``).  Rows go to ``bench/results/kws/init.csv`` (from
the working directory), with the command that made them; ``--append`` keeps the rows
there (a file with fewer columns is rewritten with the new ones, left empty in its rows).

FM's split, in the same process after the constructor: ``cngen_s``, the compiled CNGen
inside the constructor (``cn_joins.compiled_cngen``, timed by a wrapper; empty for code
without it); ``mesh_s`` = ``init_s - cngen_s`` (the operators, the engine's tables, the
collector's promotion); ``materialise_s``, making every CN join still held as a row an
operator (``cn_joins``: a row becomes an operator when its right node's first tuple
arrives, so this work moves out of the constructor into processing; 0 for code that
builds every operator up front); ``init_all_s`` = ``init_s + materialise_s``, the
construction without that move; ``gc_s``, one full collection (``gc.collect``) over the
whole mesh afterwards (the pass any full collection pays later).  ``rss_init_mib`` and
``rss_all_mib``: the process's max RSS after the constructor and after materialising.
"""
from __future__ import annotations

import argparse
import csv
import gc
import json
import os
import resource
import subprocess
import sys
import time

OUT = os.path.join("bench", "results", "kws")   # relative to the working directory (the checkout)
FIELDS = ["label", "commit", "engine", "keywords", "t_max", "cns", "operators", "init_s",
          "load1_before", "load1_after", "command", "cngen_s", "mesh_s", "materialise_s",
          "init_all_s", "gc_s", "rss_init_mib", "rss_all_mib"]
ENGINES = ("fullmesh", "partialmesh")


def _rss_mib() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def one(engine: str, keywords: int, t_max: int) -> dict:
    """One construction, in this process (call it in a fresh one)."""
    from streamspec.bench.kws.generator import params
    from streamspec.bench.pipeline_util import commit, load
    from streamspec.spec.registry import Registry
    p = params(15, keywords, t_max, 1200)
    cls = Registry.get("kws", engine)
    spent = []
    try:  # time the compiled CNGen inside the constructor (code that has it)
        from streamspec.engines.kws import cn_joins
        inner = cn_joins.compiled_cngen

        def timed(*args):
            c = time.process_time()
            try:
                return inner(*args)
            finally:
                spent.append(time.process_time() - c)
        cn_joins.compiled_cngen = timed
    except ImportError:
        pass
    before = load()
    c0 = time.process_time()
    eng = cls(p)
    c1 = time.process_time()
    rss_init = _rss_mib()
    if hasattr(eng, "mesh_size"):
        operators, cns = eng.mesh_size()
    else:
        operators, cns = len(eng.ops), sum(1 for op in eng.ops if op.cn)
    row = dict(commit=commit(), engine=engine, keywords=keywords, t_max=t_max, cns=cns,
               operators=operators, init_s=round(c1 - c0, 3), load1_before=before)
    if engine == "fullmesh":
        c2 = time.process_time()
        if getattr(eng, "_cn_rows", None) is not None:
            eng._materialise_all()
        c3 = time.process_time()
        gc.collect()
        c4 = time.process_time()
        cngen_s = round(sum(spent), 3) if spent else ""
        row.update(cngen_s=cngen_s, mesh_s=round(c1 - c0 - sum(spent), 3) if spent else "",
                   materialise_s=round(c3 - c2, 3), init_all_s=round(c1 - c0 + c3 - c2, 3),
                   gc_s=round(c4 - c3, 3), rss_init_mib=rss_init, rss_all_mib=_rss_mib())
    else:
        row.update(rss_init_mib=rss_init)
    row.update(load1_after=load())
    return row


DEFAULTS_FIELDS = ["label", "commit", "variant", "keywords", "t_max", "seconds", "tuples", "init_s",
                   "materialise_s", "cpu_s", "total_s", "outputs", "load1_before", "load1_after", "command"]


def defaults_run(variant: str, seconds: int) -> dict:
    """FM at the paper's defaults (|K| 2, T_max 4, w 20 min, ``seconds`` of the default
    stream), as ``bench/kws/targets.py``'s cpu run: ``init_s`` the constructor, ``cpu_s``
    the processing; ``variant`` ``rows`` (the CN joins become operators as their right
    nodes' first tuples arrive, inside ``cpu_s``) or ``whole`` (every one made right
    after the constructor: ``materialise_s``)."""
    from streamspec.bench.kws.generator import params, stream
    from streamspec.bench.pipeline_util import commit, load
    from streamspec.engines.kws.fullmesh import FullMeshEngine
    p = params(15, 2, 4, 1200)
    events = list(stream(p, seconds, 0.01, 1000))
    before = load()
    c0 = time.process_time()
    eng = FullMeshEngine(p)
    c1 = time.process_time()
    if variant == "whole" and getattr(eng, "_cn_rows", None) is not None:
        eng._materialise_all()
    c2 = time.process_time()
    n = sum(1 for _ in eng.process(events)) + len(eng.flush())
    c3 = time.process_time()
    return dict(commit=commit(), variant=variant, keywords=2, t_max=4, seconds=seconds, tuples=len(events),
                init_s=round(c1 - c0, 3), materialise_s=round(c2 - c1, 3), cpu_s=round(c3 - c2, 3),
                total_s=round(c3 - c0, 3), outputs=n, load1_before=before, load1_after=load())


def fresh(engine: str, keywords: int, t_max: int) -> dict:
    out = subprocess.run([sys.executable, "-m", "streamspec.bench.kws.init", "--one", engine,
                          str(keywords), str(t_max)], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keywords", default="2,3,4,5")
    ap.add_argument("--t-max", type=int, default=4)
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--label", default="", help="e.g. before/after, kept in the CSV")
    ap.add_argument("--append", action="store_true", help="keep the rows already in the CSV")
    ap.add_argument("--out", default=os.path.join(OUT, "init.csv"))
    ap.add_argument("--defaults", type=int, default=0, metavar="SECONDS",
                    help="instead: FM at the defaults over SECONDS of stream (18000: the 5 h target), "
                         "CN joins as rows and made whole up front, rows appended to init_defaults.csv")
    ap.add_argument("--one", nargs=3, metavar=("ENGINE", "K", "T_MAX"), help=argparse.SUPPRESS)
    ap.add_argument("--one-defaults", nargs=2, metavar=("VARIANT", "SECONDS"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.one:
        print(json.dumps(one(a.one[0], int(a.one[1]), int(a.one[2]))))
        return
    if a.one_defaults:
        print(json.dumps(defaults_run(a.one_defaults[0], int(a.one_defaults[1]))))
        return
    if a.defaults:
        _defaults(a, argv)
        return
    command = "python -m streamspec.bench.kws.init " + " ".join(argv if argv is not None else sys.argv[1:])
    if os.environ.get("STREAMSPEC_BENCH_COMMIT"):  # a snapshot measured: say which
        command = (f"PYTHONPATH={os.environ.get('PYTHONPATH', '')} "
                   f"STREAMSPEC_BENCH_COMMIT={os.environ['STREAMSPEC_BENCH_COMMIT']} {command}")
    old = []
    if a.append and os.path.exists(a.out):
        with open(a.out) as f:
            reader = csv.DictReader(f)
            # checked before any run: nothing is half-written
            if reader.fieldnames is None or not set(reader.fieldnames) <= set(FIELDS):
                ap.error(f"{a.out} has other columns ({reader.fieldnames}); run without --append")
            old = list(reader)
    rows, cns = [], {}
    for k in map(int, a.keywords.split(",")):
        for engine in a.engines.split(","):
            r = fresh(engine, k, a.t_max)
            if engine == "fullmesh":
                cns[k] = r["cns"]
            elif k in cns:
                r["cns"] = cns[k]
            r.update(label=a.label, command=command)
            print(json.dumps(r), flush=True)
            rows.append(r)
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS, restval="")
        w.writeheader()
        w.writerows(old + rows)
    print(f"wrote {a.out}")


def _defaults(a, argv) -> None:
    command = "python -m streamspec.bench.kws.init " + " ".join(argv if argv is not None else sys.argv[1:])
    if os.environ.get("STREAMSPEC_BENCH_COMMIT"):
        command = (f"PYTHONPATH={os.environ.get('PYTHONPATH', '')} "
                   f"STREAMSPEC_BENCH_COMMIT={os.environ['STREAMSPEC_BENCH_COMMIT']} {command}")
    out = os.path.join(OUT, "init_defaults.csv")
    old = []
    if os.path.exists(out):
        with open(out) as f:
            old = list(csv.DictReader(f))
    rows = []
    for variant in ("rows", "whole"):
        res = subprocess.run([sys.executable, "-m", "streamspec.bench.kws.init", "--one-defaults", variant,
                              str(a.defaults)], check=True, capture_output=True, text=True).stdout
        r = json.loads(res.strip().splitlines()[-1])
        r.update(label=a.label, command=command)
        print(json.dumps(r), flush=True)
        rows.append(r)
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, DEFAULTS_FIELDS, restval="")
        w.writeheader()
        w.writerows(old + rows)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
