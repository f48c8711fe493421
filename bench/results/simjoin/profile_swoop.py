"""Where a set's time goes in ``swoop`` (issue 27's "profile first").

    python bench/results/simjoin/profile_swoop.py --window 10000 --sets 100000

Two views of the throughput benchmark's run (TWEET-like stream, k = 10, the
window filled first, then ``--sets`` sets in batches of 10,000 through
``process(RecordBatch)``):

1. Python level, on the CPU clock: ``process`` split into the kernel call
   (``run_ops``), the token numbering (``TokenNumbering.add_ints``), the
   output mapping (``_outputs``), the engine's housekeeping (``_reserve``,
   ``_collect``) and the rest of the base class's validation.
2. Inside the kernel: a copy of ``run_ops``'s loop (same helpers, same order)
   with the CPU's cycle counter read between its phases, run on a copy of the
   engine's state at the same point of the same stream; cycles are turned into
   microseconds by the kernel call's own CPU time.  The copy must follow
   ``engines/simjoin/_swoop_kernels.run_ops``: it checks that its outputs equal
   the engine's (the script fails otherwise).
"""
from __future__ import annotations

import argparse
import copy
import time

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from streamspec.spec._numba import njit    # streamspec's cache locator, as every kernel module

from streamspec.bench.simjoin.generators import tweet_like
from streamspec.bench.simjoin.throughput import window_slice
from streamspec.engines.simjoin import _swoop_kernels as K
from streamspec.engines.simjoin import swoop as S
from streamspec.engines.simjoin._swoop_index_kernels import append_all, room_needed
from streamspec.engines.simjoin import _swoop_stock_kernels as SK
from streamspec.spec import _simjoin_tokens as T
from streamspec.spec import simjoin as SJ
from streamspec.spec.simjoin import Params

STEP = 10_000
PHASES = ("checks+prefetch", "expire", "tokens+room", "candidates", "append", "stock insert",
          "top-k compare/out")
INSERT = ("  insert: order for S", "  insert: merge into S", "  insert: count dominators",
          "  insert: compact S", "  insert: update E")


@intrinsic
def cycles(typingctx):
    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(64), []),
                                            "llvm.readcyclecounter")
        return builder.call(fn, [])
    return types.int64(), codegen


@njit
def now():
    return cycles()


@njit(inline="always")
def timed_insert(acc, cnt, seq, nc, k, ns, s_sc, s_e, s_i, s_j, s_n, e_e,
                 c_sc, c_e, c_i, c_j, order, dead):
    """``insert_candidates`` (incremental) with ``acc[len(PHASES) + part] += cycles``."""
    b = len(PHASES)
    c0 = cycles()
    c_i[:nc] = seq
    SK.order_candidates(c_sc, c_e, c_j, nc, order)
    c1 = cycles()
    SK.merge_in(s_sc, s_e, s_i, s_j, s_n, ns, c_sc, c_e, c_i, c_j, order, nc)
    n = ns + nc
    c2 = cycles()
    SK.count_dominators(n, s_e, s_n, order, nc)
    c3 = cycles()
    one = np.uint64(1)
    z = np.uint64(order[0])
    nd = np.uint64(0)
    na = np.uint64(0)
    for y in range(z, np.uint64(n)):
        if s_n[y] < k:
            if s_i[y] == seq:
                c_e[na] = s_e[y]
                na += one
            if z != y:
                s_sc[z], s_e[z], s_i[z], s_j[z], s_n[z] = s_sc[y], s_e[y], s_i[y], s_j[y], s_n[y]
            z += one
        elif s_i[y] != seq:
            dead[nd] = s_e[y]
            nd += one
    ndi, nai = np.int64(nd), np.int64(na)
    c4 = cycles()
    SK.sort_ends(dead, ndi)
    SK.sort_ends(c_e, nai)
    SK.update_ends(ns, e_e, dead, ndi, c_e, nai)
    out = np.int64(z)
    c5 = cycles()
    acc[b] += c1 - c0
    acc[b + 1] += c2 - c1
    acc[b + 2] += c3 - c2
    acc[b + 3] += c4 - c3
    acc[b + 4] += c5 - c4
    cnt[0] += 1
    cnt[1] += ns
    cnt[2] += nc
    cnt[3] += ns + nc - out
    return out


@njit
def timed_ops(acc, cnt, start, op, ts, side, tok_ptr, tok, kind, k, w, two, meta, r_ts, rec, p_tok,
              lists, a_rec, a_e, s_sc, s_e, s_i, s_j, s_n, e_e, s_dead, top_i, top_j,
              pc, pce, pclb, c_sc, c_e, c_i, c_j, c_ord, keys, lens, order, thr,
              out_pos, out_ptr, out_i, out_j, out_sc, out_e,
              use_index, crop, incremental, lb_linear, shortest_first):
    """``run_ops`` with ``acc[phase] += cycles`` (the incremental stock only)."""
    n = op.size
    tg = meta[K.A_TOP:]
    ks = 2 if two else 1
    rmask = rec.shape[0] - 1
    n_tok = p_tok.size
    for p in range(start, n):
        c0 = cycles()
        window = meta[K.N_REC] - meta[K.OLDEST] + 1
        if op[p] == 0 and (meta[K.NS] + window > s_sc.size or window > pc.size):
            return p, K.NEED_STOCK
        if meta[K.OUT_EV] + 1 > out_pos.size or meta[K.OUT_ROW] + k > out_i.size:
            return p, K.NEED_OUT
        t = ts[p]
        K._prefetch_ahead(p, op, side, tok_ptr, tok, ks, meta, rec, p_tok, lists)
        c1 = cycles()
        acc[0] += c1 - c0
        K.expire(t, w, ks, meta, r_ts, rec, p_tok, lists, a_rec, s_sc, s_e, s_i, s_j, s_n, e_e)
        c2 = cycles()
        acc[1] += c2 - c1
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
            c3 = cycles()
            acc[2] += c3 - c2
            nc = 0
            if lr > 0:
                nc = K.get_candidates(lr, kind, k, w, ks, opp, meta, r_ts, rec, p_tok, lists,
                                      a_rec, a_e, s_sc, s_e, e_e, pc, pce, pclb, c_sc, c_e, c_j,
                                      keys, lens, order, thr, use_index, crop, lb_linear,
                                      shortest_first)
            c4 = cycles()
            acc[3] += c4 - c3
            for q in range(lr):
                keys[q] = p_tok[a0 + q] * ks + side[p]
            append_all(keys, lr, seq & K.SEQ_MASK, t + w, lists, a_rec, a_e, tg)
            meta[K.N_POST] = g + lr
            meta[K.N_REC] += 1
            c5 = cycles()
            acc[4] += c5 - c4
            if nc > 0:
                meta[K.NS] = timed_insert(acc, cnt, seq, nc, k, meta[K.NS], s_sc, s_e, s_i, s_j, s_n, e_e,
                                          c_sc, c_e, c_i, c_j, c_ord, s_dead)
            meta[K.MAX_STOCK] = max(meta[K.MAX_STOCK], meta[K.NS])
            meta[K.SUM_STOCK] += meta[K.NS]
            c6 = cycles()
            acc[5] += c6 - c5
        else:
            c6 = cycles()
        m = min(k, meta[K.NS])
        changed = m != meta[K.NTOP]
        if not changed:
            for x in range(m):
                if top_i[x] != s_i[x] or top_j[x] != s_j[x]:
                    changed = True
                    break
        if changed:
            ev = meta[K.OUT_EV]
            row = meta[K.OUT_ROW]
            out_pos[ev] = p
            out_ptr[ev] = row
            for x in range(m):
                top_i[x] = s_i[x]
                top_j[x] = s_j[x]
                out_i[row + x] = s_i[x]
                out_j[row + x] = s_j[x]
                out_sc[row + x] = s_sc[x]
                out_e[row + x] = s_e[x]
            meta[K.NTOP] = m
            meta[K.OUT_EV] = ev + 1
            meta[K.OUT_ROW] = row + m
        acc[6] += cycles() - c6
    return n, 0


class Clock:
    """CPU seconds spent in wrapped callables, by label."""

    def __init__(self):
        self.spent: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def wrap(self, label, fn):
        def timed(*args, **kwargs):
            t = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.spent[label] = self.spent.get(label, 0.0) + time.process_time() - t
                self.calls[label] = self.calls.get(label, 0) + 1
        return timed


def python_level(stream, w, k, sets) -> tuple[dict, dict, float]:
    clock = Clock()
    saved = (K.run_ops, T.TokenNumbering.add_ints, SJ.SimJoinEngine._outputs,
             S.SwoopEngine._reserve, S.SwoopEngine._collect)
    eng = S.SwoopEngine(Params(k=k, w=w))
    for a in range(0, w, STEP):
        list(eng.process(window_slice(stream, a, min(a + STEP, w))))
    K.run_ops = clock.wrap("kernel run_ops", saved[0])
    T.TokenNumbering.add_ints = clock.wrap("token numbering add_ints", saved[1])
    SJ.SimJoinEngine._outputs = clock.wrap("outputs: ids, TopK", saved[2])
    S.SwoopEngine._reserve = clock.wrap("engine _reserve", saved[3])
    S.SwoopEngine._collect = clock.wrap("engine _collect", saved[4])
    try:
        total = 0.0
        for a in range(w, w + sets, STEP):
            batch = window_slice(stream, a, min(a + STEP, w + sets))
            t = time.process_time()
            list(eng.process(batch))
            total += time.process_time() - t
    finally:
        (K.run_ops, T.TokenNumbering.add_ints, SJ.SimJoinEngine._outputs,
         S.SwoopEngine._reserve, S.SwoopEngine._collect) = saved
    return clock.spent, clock.calls, total


def kernel_level(stream, w, k, sets) -> tuple[np.ndarray, float, int]:
    """Cycles per phase over the measured sets, and the kernel's CPU seconds."""
    eng = S.SwoopEngine(Params(k=k, w=w))
    for a in range(0, w, STEP):
        list(eng.process(window_slice(stream, a, min(a + STEP, w))))
    twin = copy.deepcopy(eng)
    acc = np.zeros(len(PHASES) + len(INSERT) + 1, np.int64)    # last: whole calls
    cnt = np.zeros(5, np.int64)     # inserts with candidates, stock sizes, candidates, removed
    kernel_s = 0.0
    calls = 0

    def timed(start, *rest):
        nonlocal kernel_s, calls
        t = time.process_time()
        c = now()
        out = timed_ops(acc, cnt, start, *rest)
        acc[-1] += now() - c
        kernel_s += time.process_time() - t
        calls += 1
        return out

    saved = K.run_ops
    K.run_ops = timed
    try:
        timed_ops(np.zeros_like(acc), np.zeros_like(cnt), 0, *_dummy_args(twin))     # compile outside the clock
        a_out, b_out = [], []
        for a in range(w, w + sets, STEP):
            batch = window_slice(stream, a, min(a + STEP, w + sets))
            a_out.extend(twin.process(batch))
            K.run_ops = saved
            b_out.extend(eng.process(batch))
            K.run_ops = timed
    finally:
        K.run_ops = saved
    if a_out != b_out:
        raise SystemExit("the timed copy of run_ops disagrees with run_ops: update it")
    return acc, cnt, kernel_s, calls


def _dummy_args(eng):
    """An empty batch for ``timed_ops``' first (compiling) call."""
    p = eng.params
    e = np.empty(0, np.int64)
    return (e, np.empty(0), e, np.zeros(1, np.int64), e, p.kind, p.k, p.wf, False,
            eng.meta.copy(), eng.r_ts, eng.rec, eng.p_tok, eng.lists, eng.a_rec, eng.a_e,
            *eng.s, *eng.e, eng.s_dead, eng.top_i, eng.top_j, eng.pc, eng.pce, eng.pclb, *eng.c,
            eng.c_ord, eng.keys, eng.lens, eng.order, eng.thr, eng.out_pos, eng.out_ptr,
            eng.out_i, eng.out_j, eng.out_sc, eng.out_e, True, True, True, False, True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--window", type=int, default=10_000)
    ap.add_argument("--sets", type=int, default=100_000)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    stream = tweet_like(args.window + args.sets, seed=args.seed)
    w, k, n = args.window, args.k, args.sets
    python_level(stream, w, k, min(n, 2 * STEP))      # warm-up (compiled kernels loaded)
    spent, calls, total = python_level(stream, w, k, n)
    print(f"# |W| = {w}, k = {k}, {n} sets; process() {total:.3f} CPU s = {1e6 * total / n:.2f} us/set "
          f"= {n / total:.0f} sets/CPU-s")
    print(f"{'part':34s} {'us/set':>8s} {'share':>6s} {'calls':>6s}")
    for label, s in sorted(spent.items(), key=lambda x: -x[1]):
        print(f"{label:34s} {1e6 * s / n:8.2f} {100 * s / total:5.1f}% {calls[label]:6d}")
    rest = total - sum(spent.values())
    print(f"{'base class rest (validation)':34s} {1e6 * rest / n:8.2f} {100 * rest / total:5.1f}%")
    acc, cnt, kernel_s, kcalls = kernel_level(stream, w, k, n)
    per_cycle = kernel_s / acc[-1]
    print(f"# inside run_ops (timed copy, {kcalls} calls, {kernel_s:.3f} CPU s = "
          f"{1e6 * kernel_s / n:.2f} us/set; cycle counter read 8-14 times per set)")
    for label, c in zip(PHASES + INSERT, acc[:-1]):
        print(f"{label:34s} {1e6 * c * per_cycle / n:8.2f} {100 * c / acc[-1]:5.1f}%")
    other = acc[-1] - acc[:len(PHASES)].sum()
    print(f"{'loop, calls, counter reads':34s} {1e6 * other * per_cycle / n:8.2f} {100 * other / acc[-1]:5.1f}%")
    print(f"# {cnt[0]} of {n} sets insert candidates: {cnt[2] / max(cnt[0], 1):.1f} candidates into a stock "
          f"of {cnt[1] / max(cnt[0], 1):.1f} pairs, cleanup removes {cnt[3] / max(cnt[0], 1):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
