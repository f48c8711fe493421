"""A/B of IdIndex.add on the SC prefix for DENSITY values (alternated), CPU clock."""
import time, numpy as np, sys
from streamspec.spec import vertices
from streamspec.spec.vertices import IdIndex
d='/tmp/streamspec-table1/SC-beta2.5-w0-x1-seed0-prefix24000000/'
u=np.load(d+'u.npy'); v=np.load(d+'v.npy')
N=int(sys.argv[1]); S=150_000
dens=[int(x) for x in sys.argv[2].split(',')]
rounds=int(sys.argv[3]) if len(sys.argv)>3 else 2
uv=np.empty(2*N,np.int64); uv[0::2]=u[:N]; uv[1::2]=v[:N]
w=IdIndex(int); w.add(np.array([1,2,10**12,5],np.int64)); w.add(np.array([3,10**12+1],np.int64))
ref=None
for r in range(rounds):
    for D in dens:
        vertices.DENSITY=D
        ix=IdIndex(int)
        outs=[]
        t=time.process_time()
        for a in range(0,2*N,2*S):
            outs.append(ix.add(uv[a:a+2*S]))
        t=time.process_time()-t
        h=hash(np.concatenate(outs).tobytes())
        print('DENSITY',D,'cpu',round(t,3),'us/edge',round(t/N*1e6,3),'size',ix.size,'direct',ix._direct.size,'sparse',len(ix._sparse),'hash',h, flush=True)
