"""In-process A/B of SWOOP's stock insert (issue 27, stop 34): the stock's inputs of a real
run (per operation its time, per insert its candidates) are captured once from the engine
(TWEET-like stream, k = 10, after a one-window fill), then replayed through two stock
implementations, alternated round by round: ``expire_pairs`` + ``insert_candidates`` of the
committed ``_swoop_stock_kernels`` and of a variant module (``--variant path.py``, a copy of
the module with the change).  Both replays must leave identical stocks after every insert
(checked by a running checksum of S and E), so a faster variant is also an exact one.

    python bench/results/simjoin/ab_swoop_stock.py --window 10000 --sets 50000 --variant /tmp/v.py
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import time

import numpy as np

from streamspec.spec._numba import njit
from streamspec.bench.simjoin.generators import tweet_like
from streamspec.bench.simjoin.throughput import window_slice
from streamspec.engines.simjoin import _swoop_kernels as K
from streamspec.engines.simjoin import swoop as S
from streamspec.engines.simjoin._swoop_index_kernels import append_all, room_needed
from streamspec.spec.simjoin import Params

STEP = 10_000


@njit
def capture_ops(cap_t, cap_nc, cap_c, cap_n, start, op, ts, side, tok_ptr, tok, kind, k, w, two, meta,
                r_ts, rec, p_tok, lists, a_rec, a_e, s_sc, s_e, s_i, s_j, e_sc, e_e, e_i, e_j, s_dead,
                top_i, top_j, pc, pce, pclb, c_sc, c_e, c_i, c_j, c_ord, keys, lens, order, thr,
                out_pos, out_ptr, out_i, out_j, out_sc, out_e):
    """``run_ops`` (no output events) recording per operation ``t`` and the candidates
    (``cap_c`` rows: score, end, seq_i, seq_j)."""
    n = op.size
    tg = meta[K.A_TOP:]
    ks = 2 if two else 1
    rmask = rec.shape[0] - 1
    n_tok = p_tok.size
    for p in range(start, n):
        window = meta[K.N_REC] - meta[K.OLDEST] + 1
        if op[p] == 0 and (meta[K.NS] + window > s_sc.size or window > pc.size):
            return p, K.NEED_STOCK
        t = ts[p]
        K.expire(t, w, ks, meta, r_ts, rec, p_tok, lists, a_rec, s_sc, s_e, s_i, s_j, e_sc, e_e, e_i, e_j)
        no = cap_n[0]
        nr = cap_n[1]
        cap_t[no] = t
        cap_nc[no] = 0
        if op[p] == 0:
            seq = meta[K.N_REC]
            L = seq & rmask
            g = meta[K.N_POST]
            a0 = g & (n_tok - 1)
            n_raw = tok_ptr[p + 1] - tok_ptr[p]
            if a0 + n_raw > n_tok:
                g += n_tok - a0
                a0 = 0
            pb = g if meta[K.OLDEST] == seq else meta[K.POST_BASE]
            if seq - meta[K.OLDEST] + 1 > rmask + 1 or g + n_raw - pb >= n_tok:
                return p, K.NEED_RING
            lr = K._store_tokens(tok, tok_ptr[p], tok_ptr[p + 1], p_tok, a0)
            for q in range(lr):
                keys[q] = p_tok[a0 + q] * ks + side[p]
            need = room_needed(keys, lr, lists)
            if meta[K.A_TOP] + need > a_rec.size:
                meta[K.A_NEED] = need
                return p, K.NEED_ARENA
            meta[K.POST_BASE] = pb
            r_ts[L] = t
            rec[L, K.PTR] = a0
            rec[L, K.LS] = 2 * lr + side[p]
            rec[L, K.MARK] = -1
            opp = 1 - side[p] if two else side[p]
            nc = 0
            if lr > 0:
                nc = K.get_candidates(lr, kind, k, w, ks, opp, meta, r_ts, rec, p_tok, lists,
                                      a_rec, a_e, s_sc, s_e, e_e, pc, pce, pclb, c_sc, c_e, c_j,
                                      keys, lens, order, thr, True, True, False, True)
            for q in range(lr):
                keys[q] = p_tok[a0 + q] * ks + side[p]
            append_all(keys, lr, seq & K.SEQ_MASK, t + w, lists, a_rec, a_e, tg)
            meta[K.N_POST] = g + lr
            meta[K.N_REC] += 1
            if nc > 0:
                cap_nc[no] = nc
                for x in range(nc):
                    cap_c[nr + x, 0] = c_sc[x]
                    cap_c[nr + x, 1] = c_e[x]
                    cap_c[nr + x, 2] = seq
                    cap_c[nr + x, 3] = c_j[x]
                cap_n[1] = nr + nc
                meta[K.NS] = K.insert_candidates(seq, nc, k, meta[K.NS], s_sc, s_e, s_i, s_j,
                                                 e_sc, e_e, e_i, e_j, c_sc, c_e, c_i, c_j, c_ord,
                                                 True, s_dead)
        cap_n[0] = no + 1
    return n, 0


def capture(w, k, sets, seed=1):
    stream = tweet_like(w + sets, seed=seed)
    eng = S.SwoopEngine(Params(k=k, w=w))
    for a in range(0, w, STEP):
        list(eng.process(window_slice(stream, a, min(a + STEP, w))))
    ns0 = int(eng.meta[K.NS])
    s0 = [a[:ns0].copy() for a in eng.s]
    e0 = [a[:ns0].copy() for a in eng.e]
    cap_t = np.empty(sets, np.float64)
    cap_nc = np.zeros(sets, np.int64)
    cap_c = np.empty((sets * 64, 4), np.float64)
    cap_n = np.zeros(2, np.int64)
    saved = K.run_ops

    def run(start, op, ts, side, tok_ptr, tok, kind, k_, w_, two, meta, *rest):
        rest = rest[:-5]          # the ablation flags
        return capture_ops(cap_t, cap_nc, cap_c, cap_n, start, op, ts, side, tok_ptr, tok, kind, k_,
                           w_, two, meta, *rest)
    K.run_ops = run
    try:
        for a in range(w, w + sets, STEP):
            list(eng.process(window_slice(stream, a, min(a + STEP, w + sets))))
    finally:
        K.run_ops = saved
    assert cap_n[0] == sets
    c = cap_c[:cap_n[1]]
    return ns0, s0, e0, cap_t, cap_nc, c


def make_replay(SK):
    @njit
    def replay(k, ns, s_sc, s_e, s_i, s_j, e_sc, e_e, e_i, e_j, dead, c_sc, c_e, c_i, c_j, order,
               cap_t, cap_nc, cap_c, sums, o0, o1, r):
        """Operations ``o0..o1`` (their candidates from row ``r``); returns ``(ns, r)``."""
        h = 0.0
        for o in range(o0, o1):
            ns = SK.expire_pairs(cap_t[o], ns, s_sc, s_e, s_i, s_j, e_sc, e_e, e_i, e_j)
            nc = cap_nc[o]
            if nc > 0:
                for x in range(nc):
                    c_sc[x] = cap_c[r + x, 0]
                    c_e[x] = cap_c[r + x, 1]
                    c_j[x] = np.int64(cap_c[r + x, 3])
                seq = np.int64(cap_c[r, 2])
                r += nc
                ns = SK.insert_candidates(seq, nc, k, ns, s_sc, s_e, s_i, s_j, e_sc, e_e, e_i, e_j,
                                          c_sc, c_e, c_i, c_j, order, True, dead)
            if sums.size:
                h = h * 1.000001 + ns
                for x in range(ns):
                    h += s_i[x] * 3 + s_j[x] * 7 + e_i[x] * 11 + e_j[x] * 13 + (x + 1) * (s_j[x] - e_j[x])
                sums[o] = h
        return ns, r
    return replay


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--window", type=int, default=10_000)
    ap.add_argument("--sets", type=int, default=50_000)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--chunk", type=int, default=1000, help="operations per alternation")
    ap.add_argument("--base", default=None, help="module file for A (default: the committed module)")
    ap.add_argument("--variant", required=True, help="module file for B")
    ap.add_argument("--cache", default=None, help="an .npz keeping the captured inputs between runs")
    args = ap.parse_args(argv)
    from streamspec.engines.simjoin import _swoop_stock_kernels as SK0
    A = load(args.base, "stock_a") if args.base else SK0
    B = load(args.variant, "stock_b")
    if args.cache and os.path.exists(args.cache):
        z = np.load(args.cache)
        ns0, s0, e0 = int(z["ns0"]), [z[f"s{x}"] for x in range(4)], [z[f"e{x}"] for x in range(4)]
        cap_t, cap_nc, cap_c = z["cap_t"], z["cap_nc"], z["cap_c"]
    else:
        ns0, s0, e0, cap_t, cap_nc, cap_c = capture(args.window, args.k, args.sets)
        if args.cache:
            np.savez(args.cache, ns0=ns0, cap_t=cap_t, cap_nc=cap_nc, cap_c=cap_c,
                     **{f"s{x}": s0[x] for x in range(4)}, **{f"e{x}": e0[x] for x in range(4)})
    n_ins = int((cap_nc > 0).sum())
    print(f"# |W| = {args.window}, k = {args.k}, {args.sets} sets, {n_ins} inserts, "
          f"{cap_c.shape[0] / max(n_ins, 1):.2f} candidates each; load {os.getloadavg()[0]:.2f}")
    size = ns0 + args.window + 64 * 2
    runs = {}
    for label, M in (("A", A), ("B", B)):
        runs[label] = make_replay(M)

    def state():
        s = [np.zeros(size), np.zeros(size), np.zeros(size, np.int64), np.zeros(size, np.int64)]
        e = [a.copy() for a in s]
        for a, b in zip(s + e, s0 + e0):
            a[:ns0] = b
        c = [np.empty(256), np.empty(256), np.empty(256, np.int64), np.empty(256, np.int64)]
        return s, e, np.zeros(size, np.int64), c, np.empty(256, np.int64)

    sums = {}
    n_op = cap_t.size
    for label, fn in runs.items():
        s, e, dead, c, order = state()
        sums[label] = np.zeros(n_op)
        fn(args.k, ns0, *s, *e, dead, *c, order, cap_t, cap_nc, cap_c, sums[label], 0, n_op, 0)
    bad = np.flatnonzero(sums["A"] != sums["B"])
    if bad.size:
        raise SystemExit(f"stocks differ first after operation {bad[0]}")
    print("# stocks equal after every operation")
    # both replays advance chunk by chunk, alternated (A B, then B A), each on its own state
    ratios = []
    none = np.empty(0)
    for rnd in range(args.rounds):
        st = {label: [*state(), ns0, 0] for label in runs}
        t = {"A": 0.0, "B": 0.0}
        for q, o0 in enumerate(range(0, n_op, args.chunk)):
            o1 = min(n_op, o0 + args.chunk)
            for label in (("A", "B") if q % 2 == 0 else ("B", "A")):
                s, e, dead, c, order, ns, r = st[label]
                c0 = time.process_time()
                ns, r = runs[label](args.k, ns, *s, *e, dead, *c, order, cap_t, cap_nc, cap_c, none, o0, o1, r)
                t[label] += time.process_time() - c0
                st[label][5], st[label][6] = ns, r
        ratios.append(t["A"] / t["B"])
        print(f"round {rnd}: A {1e6 * t['A'] / n_op:.3f} us/set  B {1e6 * t['B'] / n_op:.3f} us/set"
              f"  A/B {ratios[-1]:.3f}")
    print(f"# A/B median {np.median(ratios):.3f} (> 1: B faster); load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
