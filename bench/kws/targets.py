"""The S-KWS performance targets (paper Section 5 defaults), written under bench/results/kws/.

``python -m streamspec.bench.kws.targets [--seconds S] [--memory-seconds S] [--only cpu,memory,init]``

- ``forest_vs_fm.csv`` (``--only forest``): total CPU of the paper's forest
  (``forest``: Section 3.3's independent trees, Figure 4.5's eager pass),
  the project's forest (``forest-shared``) and the full mesh at |K| 2, T_max 4
  and w = 20 and 80 min over ``--forest-seconds`` of stream, one fresh process
  per run, with the commit and the 1-minute load before and after each run
  (the machine is shared); ``cpu_vs_fm`` is the ratio to FM at the same w.
- ``fm_vs_forest.csv``: total CPU (``time.process_time``, one core, engine
  construction excluded: it is in init.csv) of the paper's forest, the
  project's forest (``forest-shared``, and its ablation with FM's lazy
  purging, ``forest-shared:purge=lazy``), the full mesh and the partial mesh
  over the default stream (w 20 min, |K| 2, T_max 4, |SR|
  15, KWF 0.01, 1/sel 1/1000, ``--seconds`` of stream, one tuple per SR per
  second; also |K| = 3 over ``--k3-seconds``, and T_max = 5 and 6 at |K| = 2
  over ``--tmax-seconds``: the paper's trend, FM's advantage growing with the
  mesh), and the work each does, counted in a second, instrumented run:
  ``probes`` (an arriving tuple probing the left buffer of a running join;
  the paper's forest also scans a right input buffer for every new composite,
  counted in ``scanned`` too),
  ``scanned`` (composites looked at by those probes; ``scanned_by_cn_joins``:
  by the joins producing MTJNT, which the mesh cannot share: no CN is
  another's prefix; a nested-loop probe looks at all of them), ``matched``
  (those with the probed join value: what a hash-indexed probe looks at,
  dead ones included), ``built`` (composites put into operator buffers), plus
  the operator counts.
- ``memory.csv``: peak memory of FM and PM at |K| = 2, 3, 4: tracemalloc peak
  of the whole engine (mesh, CNs, buffers, sources, the spec's bookkeeping),
  traced from engine construction on, each run in a fresh process so that
  nothing is cached from another engine; and the operator state alone
  (operators, their buffers and buffer indexes, ``sys.getsizeof`` accounting, sampled every
  ``SAMPLE`` stream seconds, peak).
- ``init.csv``: written by ``streamspec.bench.kws.init`` (this script runs it
  with ``--label targets --append``): FM and PM initialisation CPU at
  |K| = 2..``--max-keywords``, T_max = 4, one fresh process per row, CN and
  operator counts.
- ``targets.png``: the three as bar charts.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
import tracemalloc
from collections import Counter

from streamspec.bench.kws.generator import params, stream

OUT = os.path.join("bench", "results", "kws")   # relative to the working directory (the checkout)
# "name:option=value,...": an engine with ablation options (streamspec.spec.registry)
ENGINES = ("forest", "forest-shared", "forest-shared:purge=lazy", "fullmesh", "partialmesh")
FOREST_ENGINES = ("forest", "forest-shared", "fullmesh")
FOREST_WINDOWS = (1200, 4800)    # w = 20 min (the default) and 80 min (Figure 5.1's largest)
SAMPLE = 300


def _engine(spec: str):
    """The engine class of ``name`` or ``name:option=value,...`` (an ablation)."""
    from streamspec.spec.registry import Registry
    return Registry.get("kws", spec)


def _cpu_run(name: str, k: int, seconds: int, t_max: int = 4, window: int = 1200) -> dict:
    p = params(15, k, t_max, window)
    events = list(stream(p, seconds, 0.01, 1000))
    c0 = time.process_time()
    eng = _engine(name)(p)
    c1 = time.process_time()
    n = sum(1 for _ in eng.process(events)) + len(eng.flush())
    c2 = time.process_time()
    return dict(engine=name, keywords=k, t_max=t_max, seconds=seconds, tuples=len(events),
                init_s=round(c1 - c0, 3),
                cpu_s=round(c2 - c1, 3), outputs=n)


def _forest_work(cls, count: Counter):
    """The paper's forest, counting its nested loops (``_work_run``)."""

    class Counted(cls):
        def _probe_left(self, tree, i, row, t_end):
            buf = tree.left[i]
            if buf:
                count["probes"] += 1
                count["scanned"] += len(buf)
                count["scanned_by_cn_joins"] += len(buf) if i == len(tree.nodes) - 1 else 0
                pp, (pa, xa) = tree.parent[i], tree.cond[i]
                xv = row.values[xa]
                if xv is not None:
                    count["matched"] += sum(c[1][pp].values[pa] == xv for c in buf)
            new = super()._probe_left(tree, i, row, t_end)
            count["built"] += len(new)
            return new

        def _probe_right(self, tree, i, composites):
            count["scanned"] += len(composites) * len(tree.right[i])
            new = super()._probe_right(tree, i, composites)
            count["built"] += len(new)
            return new

    return Counted


def _work_run(name: str, k: int, seconds: int, t_max: int = 4) -> dict:
    """The same stream through an instrumented subclass (slower; counts only)."""
    from streamspec.engines.kws.forest import ForestEngine
    p = params(15, k, t_max, 1200)
    count = Counter()
    if issubclass(_engine(name), ForestEngine):
        eng = _forest_work(_engine(name), count)(p)
        for _ in eng.process(stream(p, seconds, 0.01, 1000)):
            pass
        eng.flush()
        return dict(probes=count["probes"], scanned=count["scanned"],
                    scanned_by_cn_joins=count["scanned_by_cn_joins"], matched=count["matched"],
                    built=count["built"], operators=sum(len(t.nodes) for t in eng.trees),
                    joins=sum(len(t.nodes) - 1 for t in eng.trees))

    class Counted(_engine(name)):
        def _route(self, row, results):
            for j in self._by_right.get((row.relation, row.kbits), ()):
                if j.running and j.left.out:
                    count["probes"] += 1
                    count["scanned"] += len(j.left.out)
                    count["scanned_by_cn_joins"] += len(j.left.out) if j.cn else 0
                    pp, (pa, xa) = j.parent_pos, j.cond
                    xv = row.values[xa]
                    if xv is not None:
                        count["matched"] += sum(c[1][pp].values[pa] == xv for c in j.left.out)
            return super()._route(row, results)

        def _emit(self, op, new, results):
            count["built"] += len(new)
            return super()._emit(op, new, results)

    eng = Counted(p)
    for _ in eng.process(stream(p, seconds, 0.01, 1000)):
        pass
    eng.flush()
    ops = eng.ops
    return dict(probes=count["probes"], scanned=count["scanned"],
                scanned_by_cn_joins=count["scanned_by_cn_joins"], matched=count["matched"], built=count["built"],
                operators=len(ops), joins=sum(op.left is not None for op in ops))


def _op_state_bytes(eng) -> int:
    size = 0
    for op in eng.ops:
        size += sys.getsizeof(op) + sys.getsizeof(op.out) + sys.getsizeof(op.parents)
        if op.key is not None:
            size += sys.getsizeof(op.key)
        for c in op.out:
            size += sys.getsizeof(c) + sys.getsizeof(c[1])
        if op.idx:  # the buffer's hash indexes (they share the composites)
            size += sys.getsizeof(op.idx)
            for ix in op.idx.values():
                size += sys.getsizeof(ix) + sum(sys.getsizeof(b) for b in ix.values())
    return size


def _memory_run(name: str, k: int, seconds: int) -> dict:
    p = params(15, k, 4, 1200)
    events = list(stream(p, seconds, 0.01, 1000))
    cls = _engine(name)   # imported before tracing: the engine's state, not its code
    tracemalloc.start()
    eng = cls(p)
    after_init = tracemalloc.get_traced_memory()[0]
    op_peak, n = 0, 0
    for lo in range(0, len(events), SAMPLE * 15):
        n += sum(1 for _ in eng.process(events[lo: lo + SAMPLE * 15]))
        op_peak = max(op_peak, _op_state_bytes(eng))
    n += len(eng.flush())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return dict(engine=name, keywords=k, seconds=seconds, peak_traced_mib=round(peak / 2**20, 2),
                after_init_mib=round(after_init / 2**20, 2), op_state_peak_mib=round(op_peak / 2**20, 3),
                operators_at_end=len(eng.ops), outputs=n)


def _fresh(kind: str, *args) -> dict:
    """One measurement in a fresh interpreter (no caches, clean memory)."""
    out = subprocess.run([sys.executable, "-m", "streamspec.bench.kws.targets", "--one", kind, *map(str, args)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _write(name: str, rows: list) -> None:
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, name), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {os.path.join(OUT, name)}")
    for r in rows:
        print("  ", r)


def _plot(cpu, mem, init) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.2))
    if cpu:
        rows = [r for r in cpu if r["keywords"] == 2 and int(r.get("t_max", 4)) == 4]
        ax[0].bar([r["engine"].replace(":", "\n") for r in rows], [r["cpu_s"] for r in rows],
                  color=["#b44", "#d88", "#e99", "#48b", "#4a4"][:len(rows)])
        ax[0].set_ylabel("total CPU (s)")
        ax[0].set_title(f"defaults, {rows[0]['seconds']} s of stream ({rows[0]['tuples']} tuples)")
    if mem:
        ks = sorted({r["keywords"] for r in mem})
        for i, eng in enumerate(("fullmesh", "partialmesh")):
            ax[1].bar([x + 0.4 * i for x in range(len(ks))],
                      [next(r["peak_traced_mib"] for r in mem if r["engine"] == eng and r["keywords"] == k)
                       for k in ks], width=0.4, label=eng)
        ax[1].set_xticks([x + 0.2 for x in range(len(ks))], [f"|K|={k}" for k in ks])
        ax[1].set_ylabel("peak traced memory (MiB)")
        ax[1].legend()
        ax[1].set_title("peak memory, FM vs PM")
    if init:
        last = init[-1]["label"]   # the newest run's FM rows only
        rows = [r for r in init if r["t_max"] == 4 and r["engine"] == "fullmesh" and r["label"] == last]
        ax[2].bar([f"|K|={r['keywords']}" for r in rows], [r["init_s"] for r in rows])
        ax[2].set_yscale("log")
        ax[2].set_ylabel("FM initialisation CPU (s)")
        ax[2].set_title("FM initialisation, T_max = 4")
    fig.tight_layout()
    fig.savefig(os.path.join(OUT, "targets.png"), dpi=110)
    print(f"wrote {os.path.join(OUT, 'targets.png')}")


def _read(name: str) -> list:
    path = os.path.join(OUT, name)
    if not os.path.exists(path):
        return []
    with open(path) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for key, v in r.items():
            try:
                r[key] = float(v) if "." in v else int(v)
            except ValueError:
                pass
    return rows


def _forest_rows(seconds: int) -> list:
    """The rows of ``forest_vs_fm.csv`` (module docstring); every engine must give the
    same number of outputs at each w (the comparison is of one answer)."""
    from streamspec.bench.pipeline_util import commit, load
    rows = []
    for window in FOREST_WINDOWS:
        for name in FOREST_ENGINES:
            before = load()
            r = _fresh("cpu", name, 2, seconds, 4, window)
            rows.append(dict(r, window=window, commit=commit(), load1_before=before, load1_after=load()))
            print("  ", rows[-1], flush=True)
        same = {r["outputs"] for r in rows if r["window"] == window}
        assert len(same) == 1, f"w = {window}: the engines disagree on the number of outputs {same}"
    for r in rows:
        fm = next(x for x in rows if x["engine"] == "fullmesh" and x["window"] == r["window"])
        r["cpu_vs_fm"] = round(r["cpu_s"] / fm["cpu_s"], 2)
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=5 * 3600, help="stream length for fm_vs_forest")
    ap.add_argument("--k3-seconds", type=int, default=1800, help="stream length for the |K| = 3 rows")
    ap.add_argument("--tmax-seconds", type=int, default=3600,
                    help="stream length for the T_max = 5, 6 rows at |K| = 2 (0: none)")
    ap.add_argument("--memory-seconds", type=int, default=3600, help="stream length for memory")
    ap.add_argument("--memory-keywords", default="2,3,4")
    ap.add_argument("--memory-csv", default="memory.csv")
    ap.add_argument("--forest-seconds", type=int, default=5 * 3600,
                    help="stream length for forest_vs_fm (--only forest)")
    ap.add_argument("--only", default="cpu,memory,init", help="any of cpu,memory,init,forest")
    ap.add_argument("--max-keywords", type=int, default=5, help="largest |K| for init")
    ap.add_argument("--one", nargs="+", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.one:
        kind, *args = a.one
        fn = {"cpu": _cpu_run, "work": _work_run, "memory": _memory_run}[kind]
        args = [args[0], *map(int, args[1:])]
        print(json.dumps(fn(*args)))
        return
    only = set(a.only.split(","))
    if "forest" in only:
        _write("forest_vs_fm.csv", _forest_rows(a.forest_seconds))
    if "cpu" in only:
        rows = []
        cases = [(2, 4, a.seconds), (3, 4, a.k3_seconds)]
        cases += [(2, t, a.tmax_seconds) for t in (5, 6)] if a.tmax_seconds else []
        for k, t_max, seconds in cases:
            for name in ENGINES:
                r = _fresh("cpu", name, k, seconds, t_max)
                r.update(_fresh("work", name, k, seconds, t_max))
                rows.append(r)
        for r in rows:
            fm = next(x for x in rows if x["engine"] == "fullmesh" and x["keywords"] == r["keywords"]
                      and x["t_max"] == r["t_max"])
            r["cpu_vs_fm"] = round(r["cpu_s"] / fm["cpu_s"], 2)
            r["work_vs_fm"] = round(r["scanned"] / max(fm["scanned"], 1), 2)
        _write("fm_vs_forest.csv", rows)
    if "memory" in only:
        rows = [_fresh("memory", name, k, a.memory_seconds) for k in map(int, a.memory_keywords.split(","))
                for name in ("fullmesh", "partialmesh")]
        for r in rows:
            fm = next(x for x in rows if x["engine"] == "fullmesh" and x["keywords"] == r["keywords"])
            r["peak_vs_fm"] = round(r["peak_traced_mib"] / fm["peak_traced_mib"], 3)
            r["op_state_vs_fm"] = round(r["op_state_peak_mib"] / fm["op_state_peak_mib"], 4)
        _write(a.memory_csv, rows)
    if "init" in only:   # bench/kws/init.py owns init.csv (FM and PM, labelled runs)
        subprocess.run([sys.executable, "-m", "streamspec.bench.kws.init", "--label", "targets",
                        "--keywords", ",".join(map(str, range(2, a.max_keywords + 1))), "--append"],
                       check=True)
    _plot(_read("fm_vs_forest.csv"), _read("memory.csv"), _read("init.csv"))


if __name__ == "__main__":
    main()
