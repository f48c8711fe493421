"""Issue 28, stop 34: where BIC's time goes on table1's OR and SC streams (bic-s34.log).

Copies of BIC's kernels at a git revision are written as packages into a scratch directory,
some with one part cut out (answers wrong: the time of what is left), and run in one process,
alternated round by round, engine alone (measure.run_engine, CPU clock) on a prefix of the
stream as table1 generates it (the stream is read from table1's scratch directory, or made).

    python bic-s34-profile.py ablate --ds OR --edges 4000000 --rounds 3
    python bic-s34-profile.py ab --old HEAD --ds OR --edges 4000000 --rounds 4   # HEAD vs tree
    python bic-s34-profile.py counters --ds OR --edges 8200000
    python bic-s34-profile.py boundary --ds SC --prefix 24000000 --edges 9000000

Run from a scratch directory (it writes nothing but its scratch packages).
"""
from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[3]
FILES = ("_bic_bfbg", "_bic_build", "_bic_kernels", "_bic_layout")

# variant -> [(file, old, new)]: one part of the BFBG upkeep cut out
ABLATIONS = {
    "nomove": [("_bic_bfbg", '''    splice o's list into n's (TR Section 6.1; no merging, see above)."""
''', '''    splice o's list into n's (TR Section 6.1; no merging, see above)."""
    return
''')],
    "nobh": [("_bic_bfbg", '''        h = BH[x]
        E[e, EBNEXT] = h & 0xFFFFFFFF if (h >> 32) == fe else -1
        BH[x] = (fe << 32) | e''', '''        E[e, EBNEXT] = -1''')],
    "walkonly": [("_bic_bfbg", '''        if a <= hi:
            _add_bits(st, V, E, M, H, BH, x, y, a, hi)''', '''        if a <= hi:
            M[0, 0] ^= np.uint64(x + y)''')],
    "noreg": [("_bic_bfbg", '''    if V[at(w, B_STAMP)] != st[B_EP]:
        return''', '''    return''')],
    "nofind": [("_bic_bfbg", '''    """The BFBG edge ``(x_B, y_F)`` of F-root ``y``, or -1."""
''', '''    """The BFBG edge ``(x_B, y_F)`` of F-root ``y``, or -1."""
    return -1
''')],
    "nocreate": [("_bic_bfbg", '''    e = _find_pair(V, E, H, x, y)
    if e < 0:''', '''    e = _find_pair(V, E, H, x, y)
    if e < 0:
        M[0, 0] ^= np.uint64(x + y)
        return
    if e < 0:''')],
}

# counters in st[27:]: registrations, walk steps, pair lookups; windows, windows with
# pending queries, pending queries, windows whose searches left one to the union-find
COUNTERS = [
    ("_bic_layout", "N_ST = 27", "N_ST = 34"),
    ("_bic_bfbg", '''    e = _find_pair(V, E, H, x, y)
''', '''    st[29] += 1
    e = _find_pair(V, E, H, x, y)
'''),
    ("_bic_bfbg", '''        par = V[at(x, B_PARENT)]
        lab = V[at(x, B_ELABEL)]''', '''        st[28] += 1
        par = V[at(x, B_PARENT)]
        lab = V[at(x, B_ELABEL)]'''),
    ("_bic_bfbg", '''    if V[at(w, B_STAMP)] != st[B_EP]:
        return''', '''    if V[at(w, B_STAMP)] != st[B_EP]:
        return
    st[27] += 1'''),
    ("_bic_kernels", '''    if npend == 0:
        return
    # A search''', '''    st[30] += 1
    if npend == 0:
        return
    st[31] += 1
    st[32] += npend
    # A search'''),
    ("_bic_kernels", '''    if left == 0:
        return
    npend = left''', '''    if left == 0:
        return
    st[33] += 1
    npend = left'''),
]


def package(root: Path, name: str, rev: str | None, edits=()) -> str:
    """BIC's kernels at ``rev`` (None: the working tree) as package ``name`` under ``root``."""
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "__init__.py").write_text("")
    for f in FILES:
        rel = f"engines/connectivity/{f}.py"
        src = (REPO / rel).read_text() if rev is None else subprocess.run(
            ["git", "-C", str(REPO), "show", f"{rev}:{rel}"], check=True, capture_output=True,
            text=True).stdout
        src = src.replace("streamspec.engines.connectivity._bic_", f"{name}._bic_")
        for file, old, new in edits:
            if file == f:
                assert old in src, (name, old)
                src = src.replace(old, new, 1)
        (d / f"{f}.py").write_text(src)
    return name


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["ablate", "ab", "counters", "boundary"])
    ap.add_argument("--ds", default="OR")
    ap.add_argument("--edges", type=int, default=4_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--prefix", type=int, default=None, help="table1's --prefix-edges (FS, SC)")
    ap.add_argument("--max-edges", type=int, default=16_000_000, help="table1's --max-edges")
    ap.add_argument("--old", default="HEAD")
    ap.add_argument("--variants", default="nomove,nobh,walkonly,noreg")
    a = ap.parse_args()

    from streamspec.bench.connectivity import measure
    from streamspec.bench.connectivity import table1 as T
    from streamspec.bench.connectivity.generators import Stream, workload
    from streamspec.spec.connectivity import Params
    import streamspec.engines.connectivity.bic as B

    d = T.parameters(T.DATASETS[a.ds], T.load_fit(REPO / "bench/results/connectivity/table1-fit.json"))
    scale = 1.0 if a.prefix else T.scale_of(d, a.max_edges)
    full = T.stream_of(d, scale, 0, T.scratch_dir(), prefix=a.prefix)
    n = min(a.edges, len(full))
    s = Stream(np.ascontiguousarray(full.u[:n]), np.ascontiguousarray(full.v[:n]), full.t[:n],
               full.description)
    sh = T.shape(d, scale)
    params = Params(r=sh["r"], s=sh["s"], workload=workload(full, T.QUERIES, seed=0, top=1000))
    root = Path(tempfile.mkdtemp(prefix="bic-s34-"))
    sys.path.insert(0, str(root))

    def load(name):
        return tuple(importlib.import_module(f"{name}.{m}") for m in ("_bic_kernels", "_bic_bfbg", "_bic_layout"))

    def use(mods):
        B.kern, B.bfbg, B.lay = mods

    print(f"{a.ds} first {n:,} edges, load {os.getloadavg()[0]:.2f}", flush=True)
    if a.mode in ("ablate", "ab"):
        if a.mode == "ablate":
            names = [package(root, "base", a.old)] + [
                package(root, v, a.old, [(f, o, w) for f, o, w in ABLATIONS[v]]) for v in a.variants.split(",")]
        else:
            names = [package(root, "old", a.old), package(root, "new", None)]
        mods = {p: load(p) for p in names}
        res = {p: [] for p in names}
        for r in range(a.rounds):
            for p in (names if r % 2 == 0 else names[::-1]):
                use(mods[p])
                rec = [] if a.mode == "ab" else None
                m = measure.run_engine("bic", s, params, clock="cpu", warm=True, record=rec)
                lat = m.window_latencies * 1e3 if len(m.window_latencies) else np.zeros(1)
                res[p].append((m.seconds, rec))
                print(f"  round {r} {p:10s} {m.seconds:6.3f} CPU-s {m.n_edges / m.seconds / 1e6:6.3f}M edges/CPU-s "
                      f"P95 {np.percentile(lat, 95):.3f} ms load {os.getloadavg()[0]:.2f}", flush=True)
            if a.mode == "ab":
                o, w = res["old"][-1][1], res["new"][-1][1]
                print("   answers identical:", len(o) == len(w) and all(x.answers == y.answers for x, y in zip(o, w)))
        for p in names:
            secs = [x for x, _ in res[p]]
            print(f"{p:10s} median {np.median(secs):.3f} CPU-s  all " + " ".join(f"{x:.3f}" for x in secs))
    elif a.mode == "counters":
        use(load(package(root, "counted", a.old, COUNTERS)))
        engine = measure.create("bic", params, hold_back=False)
        prepare, feed = measure._engine_feed(engine, s, params)
        feed(prepare(0, n))
        st, chunks = engine._st, n / sh["r"] / T.RATE
        print(f"per chunk: registrations {st[27] / chunks:,.0f}, walk steps {st[28] / chunks:,.0f}, "
              f"pair lookups {st[29] / chunks:,.0f}")
        print(f"windows answered (j > 0) {st[30]}, with pending queries {st[31]}, pending queries "
              f"{st[32]}, windows whose searches left a query to the union-find {st[33]}")
    else:
        import cProfile
        import pstats
        for r in range(a.rounds):
            for kind, f in (("engine", measure.run_engine), ("process", measure.run)):
                m = f("bic", s, params, clock="cpu", warm=True)
                lat = m.window_latencies * 1e3 if len(m.window_latencies) else np.zeros(1)
                print(f"  {kind:8s} {m.n_edges / m.seconds / 1e6:.3f}M edges/CPU-s, P95 {np.percentile(lat, 95):.3f} ms "
                      f"({len(lat)} windows) load {os.getloadavg()[0]:.2f}", flush=True)
        pr = cProfile.Profile(time.process_time)
        pr.enable()
        measure.run("bic", s, params, clock="cpu", warm=False)
        pr.disable()
        pstats.Stats(pr).sort_stats("tottime").print_stats(14)


if __name__ == "__main__":
    main()
