"""Engine state against a growing id domain at a fixed window (issue 15, "state bounded by K+N").

``python -m streamspec.bench.topkjoin.state [--items 1e6] [--rates 1e3,1e4,1e5]
[--domains 1e3,1e4,1e5,1e6] [--engines all] [--label after] [--out state.csv]
[--plot-only]`` (the PNG ``state.png`` from ``state.csv``, every label)

The paper (§4, §5) promises memory O(K+N) per active window for the list plus
the partial aggregates of the window's ids: nothing should depend on how many
distinct ids the stream has carried so far.  Each run replays ``--items``
items with one item every ``omega / rate`` ms (``rate`` = items per window,
window 100 s, slide 60 s as in the paper), item ``i`` joining on id
``perm[i % D]`` (``perm``: ``D`` distinct 40-bit ints in a seeded order,
large like the user ids of the paper's stream, so no engine can index them
directly by value at any ``D``), x uniform in 1..9.  With ``D >= rate`` every window holds ``rate`` distinct ids whatever
``D`` is, and the stream has carried ``D`` distinct ids by its end: at
``D = items`` every item has a fresh id.  So the window is fixed and only
the id domain grows (the issue's "distinct ids per window from 1e3 to 1e6"
read as ids seen by an engine whose window is fixed: a window that truly
holds 1e6 live ids must hold their aggregates).

Remote side: ``value(key, tau)`` is a hash of ``(key, tau // 30 s)`` in
0..99 (every key changes every 30 s; any id has a value), served by a
``CallableDataset`` with a batch endpoint (``remote_values``, the same numbers
for a numpy array of keys: the engines read a batch's fresh keys and an
evaluation's elected keys in one call), K 5, N 10, gamma 7.  Measured per (engine, rate, D): CPU seconds of ``process`` +
``flush`` (``time.process_time``; numba compiled by a warm-up run first;
best of ``--repeat``), and, in a separate run, the peak of Python's traced
allocations (``tracemalloc``, numpy arrays included) above what was traced
before the engine was built: the engine's state plus the temporaries of one
batch.  In that run the interpreter's free lists are emptied every
``FREE_LISTS`` batches (``gc.collect()``): CPython keeps up to 2000 freed
tuples of each length for reuse, still allocated, so without it the peak
counted up to ~160 KB of 5-tuples (the answers' rows) that belong to the
interpreter, not to the engine, and more of them the more often answers
changed (at-asm: 441 KB at 1e3 ids against 320 KB at 1e6; 317 and 337 KB
with the free lists emptied, label ``after3``).  The oracle recomputes each window from its items
(linear, but in Python): it is run at ``D <= --oracle-max`` only.  Items
are given to ``process`` one slide at a time (``--batch``): a batch is
ingested whole before the windows it closes are evaluated, so a batch of
many windows would hold (and the engine would have to number) the ids of
all of them at once.

Rows go to ``bench/results/topkjoin/<out>`` with the commit, the 1-minute
load average when the row was measured (the machine is shared with other
sessions: CPU time is the robust figure, the load says how busy it was) and
``--label`` (``before``/``after`` the eviction change, ``after2`` the batched remote
access and the per-key capacity rule of issue 15, ``after3`` the bounded fetch log, the
in-place departed store and the free lists emptied in the traced run, ``after4`` the
per-batch costs cut: the id index a numba hash table, eviction, the departed store and
the WBM election one kernel call each, an evaluation's changed objects re-inserted in one
kernel call, only the ids that can reach the list ranked at an arrival, and ``topkn``'s
push read from the index's column); rows of other labels already in
the file are kept, this label's replaced; the file is rewritten after every row.
``--items-at RATE=N,...`` replays ``N`` items instead of ``--items`` at that rate.
"""
from __future__ import annotations

import argparse
import csv
import gc
import time
import tracemalloc

import numpy as np

from streamspec.bench.pipeline_util import commit, load
from streamspec.bench.topkjoin.experiment import RESULTS
from streamspec.spec.registry import Registry
from streamspec.spec.topkjoin import ItemBatch, Params
from streamspec.spec.topkjoin_remote import CallableDataset

OMEGA, BETA = 100_000, 60_000
PERIOD = 30_000          # every remote value changes every 30 s
STYLES = (("before", "--"), ("after", ":"), ("after2", "-."), ("after3", (0, (6, 2))),
          ("after4", "-"))
FREE_LISTS = 32          # batches between two emptyings of the free lists (traced run)
FIELDS = ("label", "commit", "load1", "engine", "items_per_window", "ids_seen", "items", "batch",
          "cpu_s", "items_per_cpu_s", "peak_bytes", "state_rows")


def remote_value(key, tau: int) -> float:
    """A changing remote value for any key (module level: picklable)."""
    return float(((int(key) * 2654435761 + (int(tau) // PERIOD) * 40503) >> 7) % 100)


def remote_values(keys, tau: int) -> np.ndarray:
    """``remote_value`` of a numpy array of non-negative keys below 2**40 at once (the
    service's batch endpoint).  The same numbers in int64: ``key * M`` needs 72 bits, so the
    key is split as ``hi * 2**20 + lo`` and ``(hi * M * 2**20 + lo * M + c) >> 7`` taken
    modulo 100 as ``hi * M * 2**13 + ((lo * M + c) >> 7)`` (``2**20`` is a multiple of
    ``2**7``), each term below 2**63."""
    keys = np.asarray(keys, np.int64)
    hi, lo = keys >> 20, keys & ((1 << 20) - 1)
    c = (int(tau) // PERIOD) * 40503
    out = ((hi * 2654435761) % 100 * (2 ** 13 % 100) + ((lo * 2654435761 + c) >> 7)) % 100
    return out.astype(np.float64)


def params() -> Params:
    return Params(omega=OMEGA, beta=BETA, k=5, n=10, budget=7, t0=0,
                  remote=CallableDataset(remote_value, remote_values), stream_range=(0.0, 100.0),
                  remote_range=(0.0, 99.0))


def stream(items: int, rate: float, domain: int, seed: int = 15):
    """``(ids, x, ts)``: ``rate`` items per window, ids cycling over ``domain`` shuffled ids."""
    rng = np.random.default_rng(seed)
    # distinct 40-bit ids (an odd multiplier is a bijection modulo 2**40), large like user ids
    perm = (rng.permutation(domain).astype(np.int64) * 2654435761) % (1 << 40) + (1 << 20)
    ids = perm[np.arange(items) % domain]
    x = rng.integers(1, 10, items).astype(np.float64)
    ts = (np.arange(items, dtype=np.float64) * (OMEGA / rate)).astype(np.int64)
    return ids, x, ts


def replay(engine: str, p: Params, ids, x, ts, trace: bool, batch: int) -> tuple[float, int, int]:
    """CPU seconds, peak traced bytes above the start (``trace``), most state rows after a batch."""
    if trace:
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
    cpu = time.process_time()
    e = Registry.get("topkjoin", engine)(p)
    rows = 0
    for i, a in enumerate(range(0, ids.size, batch)):
        for _ in e.process(ItemBatch(ids[a:a + batch], x[a:a + batch], ts[a:a + batch])):
            pass
        if trace and i % FREE_LISTS == FREE_LISTS - 1:
            gc.collect()          # empties the interpreter's free lists (not engine state)
        if hasattr(e, "memory_rows"):
            rows = max(rows, e.memory_rows())
    e.flush()
    cpu = time.process_time() - cpu
    peak = 0
    if trace:
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
    return cpu, peak, rows


def plot(paths, out) -> None:
    """Peak traced bytes and items per CPU second against the ids seen, one line per engine
    and label, one column per rate (``STYLES``: ``before`` dashed, ``after`` dotted,
    ``after2`` dash-dotted, ``after3`` long dashes, ``after4`` solid)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [r for path in paths if path.exists() for r in csv.DictReader(open(path))]
    rates = sorted({int(r["items_per_window"]) for r in rows})[:3]
    fig, axes = plt.subplots(2, len(rates), figsize=(6.5 * len(rates), 9), sharex=True,
                             squeeze=False)
    colours = plt.get_cmap("tab20")
    names = sorted({r["engine"] for r in rows})
    for col, rate in enumerate(rates):
        for label, style in STYLES:
            for i, name in enumerate(names):
                pts = sorted((int(r["ids_seen"]), int(r["peak_bytes"]), float(r["items_per_cpu_s"]))
                             for r in rows if r["engine"] == name and r["label"] == label
                             and int(r["items_per_window"]) == rate)
                if not pts:
                    continue
                xs = [p[0] for p in pts]
                kw = dict(color=colours(i), linestyle=style, marker="o", markersize=3,
                          label=f"{name} ({label})")
                axes[0][col].plot(xs, [p[1] / 2 ** 20 for p in pts], **kw)
                axes[1][col].plot(xs, [p[2] for p in pts], **kw)
        axes[0][col].set_title(f"{rate} items per window (window fixed; fresh ids beyond it)")
        axes[0][col].set_ylabel("peak traced MB (tracemalloc)")
        axes[1][col].set_ylabel("items per CPU second")
        axes[1][col].set_xlabel("distinct ids seen by the end of the stream")
        axes[1][col].axhline(1e6, color="grey", linewidth=0.8)
        for ax in (axes[0][col], axes[1][col]):
            ax.set_xscale("log")
            ax.set_yscale("log")
    axes[0][0].legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def write(path, rows) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=float, default=1e6)
    ap.add_argument("--rates", default="1e3,1e4,1e5")
    ap.add_argument("--domains", default="1e3,1e4,1e5,1e6")
    ap.add_argument("--engines", default="all")
    ap.add_argument("--items-at", default="",
                    help="RATE=ITEMS,... : fewer items at some rates (time)")
    ap.add_argument("--oracle-max", type=float, default=1e4)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--batch", type=float, default=0,
                    help="items per process() call (default: one slide's items)")
    ap.add_argument("--label", default="after")
    ap.add_argument("--out", default="state.csv")
    ap.add_argument("--plot-only", action="store_true",
                    help="redraw state.png from state.csv")
    args = ap.parse_args(argv)
    if args.plot_only:
        plot([RESULTS / "state.csv"], RESULTS / "state.png")
        return 0
    names = ([n for _, n in Registry.names("topkjoin")] if args.engines == "all"
             else args.engines.split(","))
    items = int(args.items)
    at_rate = {float(k): int(float(v)) for k, v in
               (pair.split("=") for pair in args.items_at.split(",") if pair)}
    p = params()
    rev = commit()
    warm = stream(20_000, 1e3, 20_000)
    for name in names:
        replay(name, p, *warm, False, 600)       # numba compilation, first calls
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / args.out
    # the rows of other labels stay as they are; this label's rows are replaced
    out = ([r for r in csv.DictReader(open(path)) if r["label"] != args.label]
           if path.exists() else [])
    for rate in (float(r) for r in args.rates.split(",")):
        for domain in (int(float(d)) for d in args.domains.split(",")):
            if domain < rate:
                continue       # fewer ids than a window's items, or more than the stream has
            n_items = at_rate.get(rate, items)
            if domain > n_items:
                continue
            data = stream(n_items, rate, domain)
            batch = int(args.batch) or int(rate * BETA / OMEGA)
            for name in names:
                if name == "oracle" and domain > args.oracle_max:
                    continue
                cpu = min(replay(name, p, *data, False, batch)[0] for _ in range(args.repeat))
                _, peak, rows = replay(name, p, *data, True, batch)
                row = dict(label=args.label, commit=rev, load1=load(), engine=name,
                           items_per_window=int(rate), ids_seen=domain, items=n_items,
                           batch=batch, cpu_s=round(cpu, 4),
                           items_per_cpu_s=round(n_items / cpu),
                           peak_bytes=peak, state_rows=rows)
                out.append(row)
                print(row, flush=True)
                write(path, out)          # after every row: a run cut short keeps its rows
    print(f"wrote {path}")
    plot([RESULTS / "state.csv"], RESULTS / "state.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
