import time, numpy as np
from numba import types, typeof
from streamspec.engines.connectivity import _bic_kernels as kern
from streamspec.engines.connectivity.bic import BicEngine
from streamspec.spec.connectivity import Params
from streamspec.spec._numba import entry_point
from streamspec.bench.connectivity.generators import rmat_stream, workload
s = rmat_stream(1000, 20000, 20, seed=1)
p = Params(r=50, s=5, workload=workload(s, 100, seed=1))
e = BicEngine(p, hold_back=False)
list(e.process(s.batch(0, len(s))))
w = e.windows
z = np.zeros(0, np.int64)
args = (e._st, e._V, e._U, e._A, e._W, e._C, e._E, e._M, e._H, e._BH, e._Q, e._qa, e._qb, z, z, z,
        w.t0, w.g, 0, -1, e._K, e._m, e.next_window, e._no_answers, e._pend)
print([str(typeof(a)) for a in args])
entry = entry_point(kern.run, *[typeof(a) for a in args])
for name, f in (("dispatcher", kern.run), ("entry", entry)):
    for rep in range(3):
        n = 20000
        t = time.perf_counter()
        for _ in range(n):
            f(*args)
        print(name, f"{(time.perf_counter() - t) / n * 1e6:.2f} us/call")
