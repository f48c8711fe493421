"""Total CPU time and peak traced memory of the kws engines on the synthetic workload.

``python -m streamspec.bench.kws.run [--seconds S] [--keywords K] [--tmax T] [--relations N]
[--engines forest,fullmesh:demand_driven=false,purge=eager,...]`` prints one line per engine:
mesh initialisation time (CNGen + operators), processing CPU time, peak memory
(tracemalloc) and the number of outputs.  Engines are named as everywhere
(``streamspec.spec.registry``), ablations included.
"""
from __future__ import annotations

import argparse
import time
import tracemalloc

from streamspec.bench.kws.generator import params, stream
from streamspec.spec.registry import Registry


def measure(name: str, p, events) -> dict:
    cls = Registry.get("kws", name)
    tracemalloc.start()
    c0 = time.process_time()
    engine = cls(p)
    c1 = time.process_time()
    n = sum(1 for _ in engine.process(events)) + len(engine.flush())
    c2 = time.process_time()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return dict(engine=name, init_s=c1 - c0, cpu_s=c2 - c1, peak_mb=peak / 2**20, outputs=n)


def engine_list(text: str) -> list[str]:
    """Engine names separated by commas; a ``key=value`` after an engine with options
    is one more option of that engine (``fullmesh:purge=eager,demand_driven=false,forest``)."""
    names: list[str] = []
    for part in text.split(","):
        if names and ":" in names[-1] and "=" in part and ":" not in part:
            names[-1] += "," + part
        elif part:
            names.append(part)
    return names


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=600)
    ap.add_argument("--relations", type=int, default=15)
    ap.add_argument("--keywords", type=int, default=2)
    ap.add_argument("--tmax", type=int, default=4)
    ap.add_argument("--window", type=int, default=1200)
    ap.add_argument("--kwf", type=float, default=0.01)
    ap.add_argument("--sel", type=int, default=1000)
    ap.add_argument("--engines", default="forest,fullmesh,partialmesh")
    a = ap.parse_args(argv)
    p = params(a.relations, a.keywords, a.tmax, a.window)
    events = list(stream(p, a.seconds, a.kwf, a.sel))
    print(f"{len(events)} tuples, |SR|={a.relations} |K|={a.keywords} T_max={a.tmax} w={a.window} "
          f"KWF={a.kwf} 1/sel=1/{a.sel}")
    for name in engine_list(a.engines):
        r = measure(name, p, events)
        print(f"{r['engine']:<12} init {r['init_s']:.2f} s  cpu {r['cpu_s']:.2f} s  "
              f"peak {r['peak_mb']:.1f} MiB  outputs {r['outputs']}")


if __name__ == "__main__":
    main()
