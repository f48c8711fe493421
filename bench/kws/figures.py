"""The paper's experiments as figures (Section 5, Figures 5.1-5.8; issue 14).

``python -m streamspec.bench.kws.figures FIG [FIG ...] [--seconds S] [--out DIR]``,
then ``... FIG [FIG ...] --memory`` for the memory panels, with ``FIG`` one of
``5.1 .. 5.8`` or ``all``.  Each figure varies one parameter
of Table 5.1 and keeps the others at the defaults (w 20 min, |K| 2, T_max 4,
|SR| 15, KWF 0.01, 1/sel 1/1000), as the paper does:

=====  ===========  ===========================================================
fig    varies       engines (names as everywhere, ``streamspec.spec.registry``)
=====  ===========  ===========================================================
5.1    w            forest (the paper's), forest-shared (ours), FM, PM, DuckDB
5.2    KWF          forest, FM, PM
5.3    |SR|         forest, FM, PM; FM initialisation time
5.4    1/sel        forest, FM, PM
5.5    |K|          forest, FM, PM; FM initialisation time
5.6    T_max        forest, FM, PM; FM initialisation time
5.7    w            FM-D-L (``fullmesh``), FM-!D-L (``fullmesh:demand_driven=false``)
5.8    w            FM-D-L, FM-D-!L (``fullmesh:purge=eager``)
=====  ===========  ===========================================================

Each (figure, point, engine) runs in a fresh Python process (nothing cached
from another engine): total CPU (``time.process_time``) of processing the
stream, fed one instant at a time as a live stream arrives (one ``process``
call for the whole stream would add the spec boundary's validation of 54,000
events at once to the peak), initialisation (engine construction: CNGen and
the mesh) apart, the
output cardinality |R| (``Appear`` events), and the process's peak RSS minus
its RSS before the engine was built (``peak_rss_mb``: untraced, but noisy by
tens of MiB between identical runs, so not the figure's memory).  Peak memory
is a second pass, ``--memory``: the same runs under tracemalloc, each in a
fresh process (``peak_traced_mb``; tracing slows the engines two to three
times, so CPU and memory never come from one run).  Rows go to
``DIR/figures.csv`` with the commit and the 1-minute load before each run
(the machine may be shared), and one PNG per figure (CPU left, memory right,
|R| and FM's initialisation printed under the x axis as the paper does).

Departures, stated in every row:

- Stream length: the paper runs 5 hours; ``--seconds`` (default 3600) sets
  ours, because the sweep is about 100 runs on a 2-core machine.  With
  ``--seconds 18000 --tag 5h`` the rows go to ``figures_5h.csv`` and the PNGs
  to ``figure5_N_5h.png`` (the 1 h files stay).
- Steady state: besides the total (the paper's measure), each row gives the
  CPU from instant ``steady_from`` on (``steady_cpu_s``; default the figure's
  largest window, so every point's window is full over the same instants;
  ``--steady-from`` sets it) and the CPU of each hour of stream
  (``hourly_cpu_s``, ``;``-separated), which is flat once the window is full.
  The PNG's CPU panel plots ``steady_cpu_s`` when the stream reaches
  ``steady_from``, the total otherwise.
- Event rate: ``--period P`` feeds one tuple per relation every P seconds (the
  paper: every second), for a 5 h stream where the machine cannot run the
  paper's rate (column ``period``); the window then holds 1/P of the tuples.
- The paper's forest is skipped where it would build more than ``FOREST_CNS``
  operator trees (|K| 5, T_max 6): its construction alone is the mesh's
  without sharing, and its trees are the number of CNs.
- DuckDB (Figure 5.1 only, ``bench/kws/duckdb_peer.py``) re-joins the whole
  window at every instant, seconds per instant at the larger windows: it is
  measured over ``--duckdb-instants`` instants once the window is full (the
  instants before are loaded without re-running the joins), and its row gives
  CPU per instant next to FM's CPU per instant over the same measured instants
  (``cpu_per_instant_ms``), and the total extrapolated to the stream
  (``cpu_s``, marked ``extrapolated``).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from itertools import groupby

OUT = os.path.join("bench", "results", "kws")
DEFAULTS = dict(window=1200, keywords=2, t_max=4, relations=15, kwf=0.01, sel=1000)
FOREST_CNS = 20000
FIGURES = {
    "5.1": ("window", (300, 600, 1200, 2400, 4800),
            ("forest", "forest-shared", "fullmesh", "partialmesh", "duckdb")),
    "5.2": ("kwf", (0.003, 0.007, 0.01, 0.013, 0.016), ("forest", "fullmesh", "partialmesh")),
    "5.3": ("relations", (5, 10, 15, 20, 25), ("forest", "fullmesh", "partialmesh")),
    "5.4": ("sel", (500, 750, 1000, 1250, 1500), ("forest", "fullmesh", "partialmesh")),
    "5.5": ("keywords", (2, 3, 4, 5), ("forest", "fullmesh", "partialmesh")),
    "5.6": ("t_max", (2, 3, 4, 5, 6), ("forest", "fullmesh", "partialmesh")),
    "5.7": ("window", (300, 600, 1200, 2400, 4800), ("fullmesh", "fullmesh:demand_driven=false")),
    "5.8": ("window", (300, 600, 1200, 2400, 4800), ("fullmesh", "fullmesh:purge=eager")),
}
LABELS = {"fullmesh": "FM", "partialmesh": "PM", "fullmesh:demand_driven=false": "FM-!D-L",
          "fullmesh:purge=eager": "FM-D-!L", "forest": "forest (paper)", "duckdb": "DuckDB"}
FIELDS = ("figure", "varies", "value", "engine", "seconds", "window", "keywords", "t_max",
          "relations", "kwf", "sel", "tuples", "cns", "init_s", "cpu_s", "cpu_per_instant_ms",
          "instants_measured", "peak_rss_mb", "peak_traced_mb", "outputs", "status", "commit",
          "load1", "memory_commit", "memory_load1", "steady_from", "steady_cpu_s", "hourly_cpu_s",
          "period")


def _rss_mb() -> float:
    """Current resident set size (Linux ``/proc``), MiB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_rss_mb() -> float:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def feed(eng, events, clock=None) -> list:
    """Every output of ``events`` fed one instant per ``process`` call, as a live stream
    arrives, then ``flush`` (the CPU run and the memory run feed alike).  With ``clock``
    (a dict), ``clock[t]`` is the process CPU time when instant ``t`` starts (taken every
    ``clock["every"]`` instants, and at ``clock["steady_from"]``)."""
    out = []
    if clock is None:
        for _, instant in groupby(events, key=lambda e: e.t):
            out.extend(eng.process(list(instant)))
    else:
        every, steady = clock["every"], clock["steady_from"]
        for t, instant in groupby(events, key=lambda e: e.t):
            if t % every == 0 or t == steady:
                clock[t] = time.process_time()
            out.extend(eng.process(list(instant)))
    out.extend(eng.flush())
    return out


def _steady(clock: dict, c_end: float, seconds: int, steady_from: int) -> dict:
    """``steady_cpu_s`` (CPU from instant ``steady_from`` on) and ``hourly_cpu_s``."""
    marks = sorted((t, c) for t, c in clock.items() if isinstance(t, int))
    hours = [t for t, _ in marks if t % 3600 == 0] + [seconds]
    hourly = [(clock[b] if b in clock else c_end) - clock[a] for a, b in zip(hours, hours[1:])]
    row = dict(steady_from=steady_from, hourly_cpu_s=";".join(f"{h:.3f}" for h in hourly))
    if steady_from in clock:
        row["steady_cpu_s"] = c_end - clock[steady_from]
    return row


def run_one(engine: str, cfg: dict, seconds: int, duckdb_instants: int,
            steady_from: int | None = None) -> dict:
    """One measurement, in this process (called in a fresh one by ``measure``)."""
    from streamspec.bench.kws.generator import params, stream
    from streamspec.engines.kws.cngen import cngen
    from streamspec.spec.kws import Appear

    p = params(cfg["relations"], cfg["keywords"], cfg["t_max"], cfg["window"])
    events = list(stream(p, seconds, cfg["kwf"], cfg["sel"], period=cfg.get("period", 1)))
    row = dict(tuples=len(events), instants_measured=seconds)
    if engine == "forest":
        # counted without filling CNGen's cache: the engine's initialisation must include it
        cns = len(cngen.__wrapped__(p.schema, cfg["keywords"], cfg["t_max"]))
        if cns > FOREST_CNS:
            return dict(row, cns=cns, status=f"skipped: {cns} CNs > {FOREST_CNS} trees")
    if engine == "duckdb":
        cns = len(cngen(p.schema, cfg["keywords"], cfg["t_max"]))
        res = _run_duckdb(p, events, seconds, cfg["window"], duckdb_instants)
        if steady_from is not None and steady_from < seconds:   # extrapolated as the total
            res.update(steady_from=steady_from,
                       steady_cpu_s=res["cpu_per_instant_ms"] / 1e3 * (seconds - steady_from))
        return dict(row, cns=cns, **res)
    from streamspec.spec.registry import Registry
    cls = Registry.get("kws", engine)
    base = _rss_mb()
    c0 = time.process_time()
    eng = cls(p)
    c1 = time.process_time()
    clock = None if steady_from is None else dict(every=3600, steady_from=steady_from)
    out = feed(eng, events, clock)
    c2 = time.process_time()
    if clock is not None:
        row.update(_steady(clock, c2, seconds, steady_from))
    cns = len(cngen(p.schema, cfg["keywords"], cfg["t_max"]))
    return dict(row, cns=cns, init_s=c1 - c0, cpu_s=c2 - c1,
                cpu_per_instant_ms=1e3 * (c2 - c1) / seconds,
                peak_rss_mb=_peak_rss_mb() - base, status="ok",
                outputs=sum(isinstance(o, Appear) for o in out))


def run_traced(engine: str, cfg: dict, seconds: int) -> dict:
    """The memory run (``--memory``): the same stream fed the same way, under
    tracemalloc from engine construction on; its peak in MiB.  A run of its own
    because tracing slows the engines two to three times (the CPU run is untraced)."""
    import tracemalloc

    from streamspec.bench.kws.generator import params, stream
    from streamspec.spec.registry import Registry

    p = params(cfg["relations"], cfg["keywords"], cfg["t_max"], cfg["window"])
    events = list(stream(p, seconds, cfg["kwf"], cfg["sel"], period=cfg.get("period", 1)))
    cls = Registry.get("kws", engine)
    tracemalloc.start()
    feed(cls(p), events)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return dict(peak_traced_mb=peak / 2**20)


def _run_duckdb(p, events, seconds: int, window: int, instants: int) -> dict:
    """DuckDB and FM over the same measured instants ``[start, start + instants)``,
    ``start`` = the window length (the window is full): see the module docstring."""
    from streamspec.bench.kws.duckdb_peer import DuckDbPeer
    from streamspec.spec.registry import Registry

    start = min(window, seconds - instants)
    before = [e for e in events if e.t < start]
    measured = [e for e in events if start <= e.t < start + instants]
    out = {}
    for name, cls in (("fullmesh", Registry.get("kws", "fullmesh")), ("duckdb", DuckDbPeer)):
        eng = cls(p)
        if name == "duckdb":
            eng.rerun = False          # load the window without re-running the joins
        list(eng.process(before))
        if name == "duckdb":
            eng.rerun = True
            list(eng.advance_to(start))   # close the last loaded instant: its joins run once
        c0 = time.process_time()
        list(eng.process(measured))
        list(eng.advance_to(start + instants))
        out[name] = time.process_time() - c0
    per = out["duckdb"] / instants
    return dict(init_s=None, cpu_s=per * seconds, cpu_per_instant_ms=1e3 * per,
                instants_measured=instants, peak_rss_mb=None, outputs=None,
                status=f"extrapolated from {instants} instants after t={start}; FM over the same "
                       f"instants: {1e3 * out['fullmesh'] / instants:.3f} ms/instant")


def _commit() -> str:
    from streamspec.bench.pipeline_util import commit
    return commit()


def steady_from(fig: str, seconds: int, given: int | None = None) -> int:
    """The instant from which ``steady_cpu_s`` counts: ``given``, else the figure's
    largest window (every point's window is full from there on)."""
    if given is not None:
        return given
    varies, values, _ = FIGURES[fig]
    return max(values) if varies == "window" else DEFAULTS["window"]


def measure(fig: str, value, engine: str, seconds: int, duckdb_instants: int,
            steady: int | None = None, period: int = 1) -> dict:
    varies = FIGURES[fig][0]
    cfg = dict(DEFAULTS, **{varies: value}, period=period)
    code = ("import json, sys; from streamspec.bench.kws.figures import run_one; "
            "print(json.dumps(run_one(sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), "
            "int(sys.argv[4]), int(sys.argv[5]))))")
    load1 = os.getloadavg()[0]
    res = subprocess.run([sys.executable, "-c", code, engine, json.dumps(cfg), str(seconds),
                          str(duckdb_instants), str(steady_from(fig, seconds, steady))],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"figure {fig} {varies}={value} {engine} failed:\n{res.stderr}")
    row = json.loads(res.stdout.strip().splitlines()[-1])
    return dict(figure=fig, varies=varies, value=value, engine=engine, seconds=seconds,
                **cfg, **row, commit=_commit(), load1=round(load1, 2))


def _cpu(r) -> float | None:
    """The CPU a figure plots: steady state when measured, else the total."""
    for k in ("steady_cpu_s", "cpu_s"):
        if r.get(k) not in ("", None):
            return float(r[k])
    return None


def plot(rows: list, fig: str, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    varies, values, engines = FIGURES[fig]
    mine = [r for r in rows if r["figure"] == fig]
    traced = any(r.get("peak_traced_mb") not in ("", None) for r in mine)
    memcol = "peak_traced_mb" if traced else "peak_rss_mb"
    fig_, (ax_cpu, ax_mem) = plt.subplots(1, 2, figsize=(11, 4))
    x = list(range(len(values)))
    for eng in engines:
        cpu = [next((_cpu(r) for r in mine if r["engine"] == eng and _same(r["value"], v)
                     and _cpu(r) is not None), float("nan")) for v in values]
        mem = [next((float(r[memcol]) for r in mine if r["engine"] == eng
                     and _same(r["value"], v) and r.get(memcol) not in ("", None)), float("nan"))
               for v in values]
        style = "--" if eng == "duckdb" else "-"
        ax_cpu.plot(x, cpu, style, marker="o", label=LABELS.get(eng, eng))
        ax_mem.plot(x, mem, style, marker="o", label=LABELS.get(eng, eng))
    under = []
    for v in values:
        ref = next((r for r in mine if r["engine"] == "fullmesh" and _same(r["value"], v)), None)
        bits = [str(v)]
        if ref is not None and ref.get("outputs") not in ("", None):
            bits.append(f"|R| {ref['outputs']}")
        if ref is not None and varies in ("relations", "keywords", "t_max") \
                and ref.get("init_s") not in ("", None):
            bits.append(f"I {float(ref['init_s']):.1f}s")
        under.append("\n".join(bits))
    steady = [r for r in mine if r.get("steady_cpu_s") not in ("", None)]
    cpu_what = (f"CPU from instant {steady[0]['steady_from']} s on (s; window full)" if steady
                else "total CPU (s)")
    for ax, what in ((ax_cpu, cpu_what),
                     (ax_mem, "peak memory (MiB, tracemalloc)" if traced else "peak memory (MiB, RSS growth)")):
        ax.set_xticks(x, under, fontsize=7)
        ax.set_yscale("log")
        ax.set_xlabel(varies)
        ax.set_ylabel(what)
        ax.grid(alpha=0.3)
    ax_cpu.legend(fontsize=7)
    seconds = mine[0]["seconds"] if mine else "?"
    period = int(mine[0].get("period") or 1) if mine else 1
    if period > 1:
        seconds = f"{seconds} s, one tuple per relation every {period}"
    fig_.suptitle(f"Figure {fig}: {varies} ({seconds} s of stream; DuckDB extrapolated)"
                  if fig == "5.1" else f"Figure {fig}: {varies} ({seconds} s of stream)", fontsize=9)
    fig_.tight_layout()
    fig_.savefig(path, dpi=110)
    plt.close(fig_)


def memory_pass(path: str, figs: list, only, out: str, tag: str = "") -> None:
    """Fill ``peak_traced_mb`` of the rows of ``figs`` (each in a fresh process)."""
    with open(path) as f:
        rows = list(csv.DictReader(f))
    code = ("import json, sys; from streamspec.bench.kws.figures import run_traced; "
            "print(json.dumps(run_traced(sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]))))")
    for r in rows:
        if r["figure"] not in figs or r["status"] != "ok" or (only and r["engine"] not in only):
            continue
        cfg = {k: type(DEFAULTS[k])(float(r[k])) if k != "kwf" else float(r[k]) for k in DEFAULTS}
        cfg["period"] = int(r.get("period") or 1)
        load1 = os.getloadavg()[0]
        res = subprocess.run([sys.executable, "-c", code, r["engine"], json.dumps(cfg), r["seconds"]],
                             capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"memory run {r['figure']} {r['varies']}={r['value']} {r['engine']}:\n"
                               f"{res.stderr}")
        r.update(json.loads(res.stdout.strip().splitlines()[-1]), memory_commit=_commit(),
                 memory_load1=round(load1, 2))
        print(f"{r['figure']} {r['varies']}={r['value']} {r['engine']:<30} traced peak "
              f"{r['peak_traced_mb']:.2f} MiB load {r['memory_load1']}", flush=True)
        _write(path, rows)
    for fig in figs:
        plot(rows, fig, os.path.join(out, f"figure{fig.replace('.', '_')}{tag}.png"))


def _write(path: str, rows: list) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in FIELDS})
    os.replace(tmp, path)


def _same(a, b) -> bool:
    return abs(float(a) - float(b)) < 1e-12


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("figures", nargs="+", help="5.1 .. 5.8 or all")
    ap.add_argument("--seconds", type=int, default=3600, help="stream length (paper: 18000)")
    ap.add_argument("--duckdb-instants", type=int, default=20)
    ap.add_argument("--steady-from", type=int,
                    help="steady_cpu_s counts from this instant (default: the figure's largest window)")
    ap.add_argument("--period", type=int, default=1,
                    help="one tuple per relation every PERIOD s (the paper: 1): a lower event rate "
                         "over the same duration, where a 2-core machine cannot run the paper's")
    ap.add_argument("--tag", default="",
                    help="file suffix: figures_TAG.csv, figure5_N_TAG.png (e.g. 5h)")
    ap.add_argument("--engines", help="only these engines (comma-separated)")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--memory", action="store_true",
                    help="instead of the CPU runs: a tracemalloc run for every row of FIG already in "
                         "figures.csv (peak_traced_mb), then the PNGs again")
    a = ap.parse_args(argv)
    figs = list(FIGURES) if "all" in a.figures else a.figures
    unknown = [f for f in figs if f not in FIGURES]
    if unknown:
        ap.error(f"unknown figure(s) {', '.join(unknown)}; choose from {', '.join(FIGURES)} or all")
    only = set(a.engines.split(";")) if a.engines else None
    os.makedirs(a.out, exist_ok=True)
    tag = f"_{a.tag}" if a.tag else ""
    path = os.path.join(a.out, f"figures{tag}.csv")
    if a.memory:
        return memory_pass(path, figs, only, a.out, tag)
    old = []
    if os.path.exists(path):
        with open(path) as f:
            old = [r for r in csv.DictReader(f)
                   if r["figure"] not in figs or (only and r["engine"] not in only)]
    rows = []
    for fig in figs:
        varies, values, engines = FIGURES[fig]
        for v in values:
            for eng in engines:
                if only and eng not in only:
                    continue
                r = measure(fig, v, eng, a.seconds, a.duckdb_instants, a.steady_from, a.period)
                rows.append(r)
                print(f"{fig} {varies}={v} {eng:<30} init {r.get('init_s')} cpu {r.get('cpu_s')} "
                      f"steady {r.get('steady_cpu_s')} rss {r.get('peak_rss_mb')} "
                      f"|R| {r.get('outputs')} {r['status']} load {r['load1']}", flush=True)
                _write(path, old + rows)   # after every run: a stopped sweep keeps what it measured
        every = old + rows
        plot([{k: ("" if r.get(k) is None else r.get(k)) for k in FIELDS} for r in every],
             fig, os.path.join(a.out, f"figure{fig.replace('.', '_')}{tag}.png"))


if __name__ == "__main__":
    main()
