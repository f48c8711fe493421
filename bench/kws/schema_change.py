"""Schema changes on a running mesh against building the mesh (paper Section 4.4; issue 14).

``python -m streamspec.bench.kws.schema_change [--seconds 600] [--after 60] [--out DIR]``

The paper's workload (``streamspec.bench.kws.generator``) at |K| = 4, T_max 4,
|SR| 15, the other parameters at ``figures.DEFAULTS`` (w 20 min, KWF 0.01,
1/sel 1/1000): ``--seconds`` of stream, then one schema change at the next
instant, then ``--after`` more seconds of stream (over the new schema: an
added relation streams too).  Measured, each run in a fresh Python process
(nothing cached by CNGen from another run): the CPU time
(``time.process_time``) of building the engine (its initialisation: CNGen
and, for FM, the whole mesh) and of the ``process`` call that applies the
change (the instant before it already closed by a watermark), for

- ``method=replay``: ``streamspec.engines.kws.mesh.rebuild_and_replay``, the
  step both meshes took before the migration (rebuild every operator for the
  new schema, replay the alive tuples; unchanged code);
- ``method=migrate``: ``streamspec.engines.kws.migration`` (the engines' own).

Two builds are timed: ``build_cpu_s``, the first in the process (what a job pays at its
start: for FM mostly numba loading the compiled CNGen from its cache, about 0.2 s of the
0.4-0.5 s), and ``build_warm_cpu_s``, the same build again right after (the mesh's own
construction); the change runs with the kernels loaded, so ``change_over_warm_build`` is
the like-for-like ratio and ``change_over_build`` the one against what a job's start costs.

FM's deferral: an addition searches only the new CNs whose every node holds tuples; the
rest wait (``_migration_grow.PendingGrowth``) and are searched at the first tuple of the
first of their nodes to get one.  A removal stops the operators on the removed element and
ends their results; the deletion waits (``_migration_prune.PendingPrune``): each node's
tables are cleaned at its next tuple, and the deletion runs in slices, one per tuple, the
rest before the next change.  ``pending_cpu_s`` is the deferred part done at once right
after the change (on a pickled copy; ``change_cpu_s + pending_cpu_s`` is the change
without the deferral), ``discoveries``, ``discover_cpu_s`` and ``discover_max_s`` the
deferred work the ``--after`` stream ran at tuples (how many calls, their CPU, the longest
one: a pause in processing): an addition's searches, a removal's cleanings and slices;
``pending_at_end`` whether any of it was still pending after that stream.

Exactness: the oracle cannot enumerate the data graph of 9,000 alive tuples at
every instant, so every run's outputs (the whole stream, the change included)
are digested and a migrate run must equal the replay run of the same engine
and change (the replay path is the one the conformance suite checked
against the oracle; the migration itself is checked against the oracle on
the suite's small streams, ``tests/kws/test_migration.py``).  Rows go to
``DIR/schema_change.csv`` (appended, an older file keeps its columns) with the run's ``--label``,
the machine, the commit and the 1-minute load before each run.
``--rows whole`` makes FM's migration do everything inside the change: build every new CN
join as an operator (``migration.DEFER_NEW_CN_JOINS = False``) instead of holding those whose
right node has no tuple as rows until its first tuple (``engines/kws/_migration_grow.py``),
and delete every operator of a removal (``migration.DEFER_PRUNE = False``); the build
holds its own CN joins as rows either way, so ``defer`` is the like-for-like ratio.
``--csv NAME`` writes ``DIR/NAME`` (default ``schema_change.csv``).
At the paper's KWF (0.01) and |K| = 4 the stream has few results, so the
digests compare little: ``--kwf 0.3 --sel 50 --seconds 120`` is the exactness
run (many results, the change's own included; rows marked by their kwf/sel).
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import pickle
import platform
import subprocess
import sys
import time
from itertools import groupby

OUT = os.path.join("bench", "results", "kws")
CONFIG = dict(relations=15, keywords=4, t_max=4, window=1200, kwf=0.01, sel=1000)
# name -> (events as JSON objects, without "t"); the generator's schema: R<i> joins its
# parent R<(i-1)//3> on j<i>, so an edge between existing relations reuses their attributes
CHANGES = {
    "add_edge_leaf": [{"add_edge": ["x13", "R13", "j13", "R14", "j14"]}],
    "add_edge_central": [{"add_edge": ["x1", "R1", "j4", "R2", "j7"]}],
    "add_relation": [{"add_relation": {"name": "R15", "attributes": ["text", "j15"], "text": ["text"]}}],
    "add_relation_and_edge": [
        {"add_relation": {"name": "R15", "attributes": ["text", "j15"], "text": ["text"]}},
        {"add_edge": ["e15", "R5", "j5", "R15", "j15"]}],
    "remove_edge": [{"remove_edge": "e4"}],
    "remove_relation": [{"remove_relation": "R13"}],
}
FIELDS = ("label", "machine", "engine", "change", "method", "rows", "seconds", "after", "keywords", "t_max", "relations", "window",
          "kwf", "sel",
          "tuples_before", "build_cpu_s", "change_cpu_s", "change_over_build", "operators_before",
          "operators_after", "outputs", "digest", "equal_to_replay", "commit", "load1", "command",
          "build_warm_cpu_s", "change_over_warm_build", "pending_cpu_s", "discoveries", "discover_cpu_s",
          "discover_max_s", "pending_at_end")


def _stream(p, schema, first_t: int, seconds: int, first_tid: int, seed: int, kwf: float, sel: int):
    from streamspec.bench.kws.generator import stream
    from streamspec.spec.kws import Insert, Params
    q = Params(schema, p.keywords, p.t_max, p.window)
    for ev in stream(q, seconds, kwf, sel, seed=seed):
        yield Insert(ev.relation, ev.tid + first_tid, ev.values, ev.t + first_t)


def run_one(engine: str, change: str, method: str, seconds: int, after: int,
            kwf: float = CONFIG["kwf"], sel: int = CONFIG["sel"], rows: str = "defer") -> dict:
    """One run, in this process (``measure`` starts a fresh one)."""
    from streamspec.bench.kws.generator import params
    from streamspec.engines.kws import migration
    migration.DEFER_NEW_CN_JOINS = migration.DEFER_PRUNE = rows == "defer"
    from streamspec.engines.kws.mesh import rebuild_and_replay
    from streamspec.spec.kws import event_from_json
    from streamspec.spec.registry import Registry

    p = params(CONFIG["relations"], CONFIG["keywords"], CONFIG["t_max"], CONFIG["window"])
    before = list(_stream(p, p.schema, 0, seconds, 0, 0, kwf, sel))
    t0 = time.process_time()
    eng = Registry.create("kws", engine, p)
    build = time.process_time() - t0
    # the same build again in this process: the compiled kernels are loaded now (the first
    # build's time is mostly numba loading their machine code from its cache)
    t0 = time.process_time()
    Registry.create("kws", engine, p)
    warm = time.process_time() - t0
    if method == "replay":
        eng._schema_change = lambda event, t: rebuild_and_replay(eng, t)
    # the work an FM change leaves for the tuples after it (an addition's searches at the first
    # tuple of a node that had none, ``_migration_grow.PendingGrowth.discover``; a removal's
    # cleaning of a node's tables at its next tuple and the slices of its deletion,
    # ``_migration_prune.PendingPrune.clean`` and ``step``): counted apart, each call timed
    from streamspec.engines.kws import _migration_grow, _migration_prune
    spent: list = []

    def timing(cls, name):
        work = getattr(cls, name)

        def timed(self, *args):
            c0 = time.process_time()
            work(self, *args)
            spent.append(time.process_time() - c0)
        setattr(cls, name, timed)

    timing(_migration_grow.PendingGrowth, "discover")
    timing(_migration_prune.PendingPrune, "clean")
    timing(_migration_prune.PendingPrune, "step")
    out = []
    for _, instant in groupby(before, key=lambda e: e.t):
        out.extend(eng.process(list(instant)))
    out.extend(eng.advance_to(seconds))
    # counted without making FM's CN joins still held as rows operators (``engines/kws/cn_joins``):
    # a removal makes them operators inside the change, so its time includes that
    size = getattr(eng, "mesh_size", None)
    ops_before = size()[0] if size else len(eng.ops)
    events = [event_from_json(dict(d, t=seconds)) for d in CHANGES[change]]
    t0 = time.process_time()
    out.extend(eng.process(events))
    cpu = time.process_time() - t0
    spent.clear()   # (``--rows whole`` completes inside the change: that is not work at tuples)
    # what the change left pending (an addition's searches, a removal's deletion), done at
    # once on a copy (``mesh_size`` would do it on the engine and leave nothing for the
    # tuples after): the change without the deferral is change_cpu_s + pending_cpu_s
    pending_cpu = None
    if getattr(eng, "_pending", None) is not None:
        copy, calls = pickle.loads(pickle.dumps(eng)), len(spent)
        c0 = time.process_time()
        copy._pending.complete(copy)
        pending_cpu = time.process_time() - c0
        del spent[calls:]   # (not work at tuples)
        ops_after = copy.mesh_size()[0]
        del copy
    else:
        ops_after = size()[0] if size else len(eng.ops)
    rest = list(_stream(p, eng.schema, seconds + 1, after, len(before), 1, kwf, sel))
    for _, instant in groupby(rest, key=lambda e: e.t):
        out.extend(eng.process(list(instant)))
    # whether the deferred part was still pending after the ``--after`` stream (a removal's
    # deletion runs in slices at those tuples; an addition's searches wait for first tuples)
    pending_at_end = getattr(eng, "_pending", None) is not None
    out.extend(eng.flush())
    digest = hashlib.sha256("\n".join(map(repr, out)).encode()).hexdigest()[:16]
    return dict(tuples_before=len(before), build_cpu_s=round(build, 4), change_cpu_s=round(cpu, 4),
                change_over_build=round(cpu / build, 4) if build else None,
                build_warm_cpu_s=round(warm, 4), change_over_warm_build=round(cpu / warm, 4) if warm else None,
                operators_before=ops_before, operators_after=ops_after, outputs=len(out), digest=digest,
                pending_cpu_s=None if pending_cpu is None else round(pending_cpu, 4),
                discoveries=len(spent), discover_cpu_s=round(sum(spent), 4),
                discover_max_s=round(max(spent), 4) if spent else None, pending_at_end=pending_at_end)


def _commit() -> str:
    from streamspec.bench.pipeline_util import commit
    return commit()


def measure(engine: str, change: str, method: str, seconds: int, after: int, kwf: float, sel: int,
            rows: str = "defer") -> dict:
    code = ("import json, sys; from streamspec.bench.kws.schema_change import run_one; "
            "print(json.dumps(run_one(*sys.argv[1:4], int(sys.argv[4]), int(sys.argv[5]), "
            "float(sys.argv[6]), int(sys.argv[7]), sys.argv[8])))")
    load1 = os.getloadavg()[0]
    res = subprocess.run([sys.executable, "-c", code, engine, change, method, str(seconds), str(after),
                          str(kwf), str(sel), rows], capture_output=True, text=True, check=True)
    row = json.loads(res.stdout.strip().splitlines()[-1])
    row.update(engine=engine, change=change, method=method, rows=rows, seconds=seconds, after=after,
               keywords=CONFIG["keywords"], t_max=CONFIG["t_max"], relations=CONFIG["relations"],
               window=CONFIG["window"], kwf=kwf, sel=sel, commit=_commit(), load1=round(load1, 2))
    return row


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=600)
    ap.add_argument("--after", type=int, default=60)
    ap.add_argument("--engines", default="fullmesh,partialmesh")
    ap.add_argument("--changes", default=",".join(CHANGES))
    ap.add_argument("--methods", default="replay,migrate")
    ap.add_argument("--kwf", type=float, default=CONFIG["kwf"],
                    help="keyword frequency (raise it for an exactness run with many results)")
    ap.add_argument("--sel", type=int, default=CONFIG["sel"], help="1/sel is the join selectivity")
    ap.add_argument("--rows", default="defer", choices=("defer", "whole"),
                    help="FM migration: defer what can wait (new CN joins over empty nodes, a removal's deletion) or do it all in the change")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--csv", default="schema_change.csv")
    ap.add_argument("--label", default="", help="names this run's rows in the CSV (e.g. run7)")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, a.csv)
    new = not os.path.exists(path)
    fields = FIELDS
    if not new:   # an older file keeps its columns
        with open(path, newline="") as f:
            fields = next(csv.reader(f))
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fields, extrasaction="ignore")
        if new:
            w.writeheader()
        for engine in a.engines.split(","):
            for change in a.changes.split(","):
                digests = {}
                for method in a.methods.split(","):
                    row = measure(engine, change, method, a.seconds, a.after, a.kwf, a.sel, a.rows)
                    row["label"], row["machine"] = a.label, platform.node()
                    row["command"] = "python -m streamspec.bench.kws.schema_change " + " ".join(
                        sys.argv[1:] if argv is None else argv)
                    digests[method] = row["digest"]
                    row["equal_to_replay"] = (row["digest"] == digests["replay"]) if "replay" in digests else ""
                    w.writerow(row)
                    f.flush()
                    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
