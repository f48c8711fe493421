"""In-process A/B: swoop's index arena advised MADV_HUGEPAGE or not (issue 27, stop 37, H2).

    python bench/results/simjoin/ab-hugepage-s37-h2.py --window 1000000 --sets 1000000 --chunk 100000

Two engines of the working tree's swoop are filled with the same window of the TWEET-like
stream (k = 10); the second one's arena mapping (``engines/simjoin/_remap.py``, an anonymous
mapping grown by ``mremap``) gets ``madvise(MADV_HUGEPAGE)`` after every ``_grow_arena``
(the host's transparent huge pages are "madvise": without the advice the arena gets 4 KB
pages).  Then ``--sets`` sets go through ``process`` in batches of ``--step``, alternating
between the two engines batch by batch (A first in even chunks, B first in odd ones),
outputs compared batch by batch.  Per chunk of ``--chunk`` sets: B/A of the summed CPU time
(``time.process_time``), each side's minor faults, and the slowest batch of each side.
"""
from __future__ import annotations

import argparse
import ctypes
import gc
import mmap
import resource
import time

from streamspec.bench.simjoin.throughput import GENERATORS, STEP, window_slice
from streamspec.engines.simjoin import _remap, _swoop_kernels as K
from streamspec.engines.simjoin.swoop import SwoopEngine
from streamspec.spec.simjoin import Params

_libc = ctypes.CDLL(None, use_errno=True)
_libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)


class HugeArena(SwoopEngine):
    def _grow_arena(self) -> None:
        super()._grow_arena()
        for a in (self.a_rec, self.a_e):
            mp = _remap._mapping_of(a)
            if mp is not None:
                _libc.madvise(mp.where[0], mp.where[1], mmap.MADV_HUGEPAGE)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--window", type=int, default=1_000_000)
    ap.add_argument("--sets", type=int, default=1_000_000)
    ap.add_argument("--chunk", type=int, default=100_000)
    ap.add_argument("--step", type=int, default=STEP)
    args = ap.parse_args(argv)
    w = args.window
    stream = GENERATORS["tweet"](w + args.sets, seed=1)
    engs = [SwoopEngine(Params(k=10, w=w)), HugeArena(Params(k=10, w=w))]
    for a in range(0, w, STEP):
        for e in engs:
            list(e.process(window_slice(stream, a, min(a + STEP, w))))
    gc.collect()
    print(f"filled; arena top/size A {engs[0].meta[K.A_TOP]} {engs[0].a_rec.size}", flush=True)
    ratios = []
    for c0 in range(0, args.sets, args.chunk):
        cpu, flt, worst = [0.0, 0.0], [0, 0], [0.0, 0.0]
        order = (0, 1) if (c0 // args.chunk) % 2 == 0 else (1, 0)
        for b in range(c0, min(args.sets, c0 + args.chunk), args.step):
            sl = window_slice(stream, w + b, w + min(b + args.step, c0 + args.chunk, args.sets))
            outs = [None, None]
            for x in order:
                r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
                t0 = time.process_time()
                outs[x] = list(engs[x].process(sl))
                dt = time.process_time() - t0
                flt[x] += resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0
                cpu[x] += dt
                worst[x] = max(worst[x], dt)
            if outs[0] != outs[1]:
                raise AssertionError(f"outputs differ in the batch at {b}")
        ratios.append(cpu[1] / cpu[0])
        n = min(args.chunk, args.sets - c0)
        print(f"sets {c0:8d}: A {cpu[0] / n * 1e6:6.2f} B {cpu[1] / n * 1e6:6.2f} us/set, B/A {ratios[-1]:.3f}; "
              f"faults A {flt[0]} B {flt[1]}; slowest batch A {worst[0] * 1e3:.1f} B {worst[1] * 1e3:.1f} ms; "
              f"arena top {engs[0].meta[K.A_TOP]} size {engs[0].a_rec.size}", flush=True)
    ratios.sort()
    print(f"B/A per chunk: median {ratios[len(ratios) // 2]:.3f}, min {ratios[0]:.3f}, max {ratios[-1]:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
