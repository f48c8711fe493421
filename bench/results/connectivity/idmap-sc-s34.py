"""Scratch profile of IdIndex.add on the SC prefix stream (see idmap-sc-s34.log beside it)."""
import time, numpy as np, cProfile, pstats, sys
from streamspec.spec.vertices import IdIndex
d='/tmp/streamspec-table1/SC-beta2.5-w0-x1-seed0-prefix24000000/'
u=np.load(d+'u.npy'); v=np.load(d+'v.npy')
print(u.dtype, u.max(), len(u), len(np.unique(u[:3000000])))
N=int(sys.argv[1]) if len(sys.argv)>1 else 9_000_000
S=150_000
ix=IdIndex(int)
uv=np.empty(2*N,np.int64); uv[0::2]=u[:N]; uv[1::2]=v[:N]
def run():
    t=time.process_time()
    for a in range(0,2*N,2*S):
        ix.add(uv[a:a+2*S])
    return time.process_time()-t
pr=cProfile.Profile(); pr.enable(); t=run(); pr.disable()
print('cpu', t, 'per edge us', t/N*1e6, 'size', ix.size, 'direct', ix._direct.size, 'sparse', len(ix._sparse))
pstats.Stats(pr).sort_stats('tottime').print_stats(12)
