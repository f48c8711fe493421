"""The fused path for int64 columns (``streamspec.spec._connectivity_kernels.feed_int64``)
must be invisible: the same windows, the same errors, the same dense ids as
the general path, whatever the chunking."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from streamspec.engines.connectivity.bic import BicEngine
from streamspec.reference.connectivity import OracleEngine, evaluate
from streamspec.spec.connectivity import SMALL, EdgeBatch, Params
from streamspec.spec.errors import OutOfOrder

ids = st.one_of(st.integers(0, 40), st.integers(0, 1 << 17), st.integers(-3, -1),
                st.integers(1 << 40, (1 << 40) + 3))


@st.composite
def chunked_streams(draw):
    n = draw(st.integers(1, 60))
    gaps = draw(st.lists(st.sampled_from([0, 0, 0, 1, 2, 7]), min_size=n, max_size=n))
    t = np.cumsum(gaps).tolist()
    edges = [(draw(ids), draw(ids), ti) for ti in t]
    cuts = sorted(set(draw(st.lists(st.integers(1, n), max_size=n))) | {n})
    chunks, lo = [], 0
    for hi in cuts:
        chunks.append(edges[lo:hi])
        lo = hi
    return edges, chunks


@settings(deadline=None, max_examples=150)
@given(data=chunked_streams(), r=st.integers(1, 6), s=st.integers(1, 4), as_batch=st.booleans(),
       engine=st.sampled_from([OracleEngine, BicEngine]), eager=st.booleans())
def test_chunked_calls_equal_one_call(data, r, s, as_batch, engine, eager):
    edges, chunks = data
    workload = [(edges[0][0], edges[-1][1]), (edges[0][1], 5), (1 << 40, 1 << 40)]
    params = Params(r=r, s=s, workload=workload)
    e = engine(params, hold_back=not eager)
    out = []
    for c in chunks:
        if as_batch:
            u, v, t = (np.asarray(col, dtype=np.int64) for col in zip(*c))
            c = EdgeBatch(u, v, t)
        out += list(e.process(c))
    out += e.flush()
    assert out == evaluate(edges, params)
    seen = {x for u, v, _ in edges for x in (u, v)} | {x for q in workload for x in q}
    got = e.vertices.lookup(sorted(seen)).tolist()
    assert sorted(got) == list(range(len(seen)))               # dense, no gaps, no duplicates
    assert [e.vertices.external(g) for g in got] == sorted(seen)


@pytest.mark.parametrize("bad_at", [0, 3, SMALL - 1])
def test_out_of_order_in_a_fused_call_is_located_and_changes_nothing(bad_at):
    params = Params(r=4, s=2, workload=[(1, 2), (3, 9)])
    head = [(1, 2, 0), (2, 3, 5)]
    tail = [(3, 100 + i, 5 + i) for i in range(SMALL)]
    bad = list(tail)
    bad[bad_at] = (9, 9, 4)                     # earlier than 5 (or than its predecessor)
    e = OracleEngine(params)
    out = list(e.process(head))
    size = e.vertices.size
    with pytest.raises(OutOfOrder) as info:
        list(e.process(EdgeBatch(*(np.asarray(col, dtype=np.int64) for col in zip(*bad)))))
    assert info.value.index == len(head) + bad_at
    assert e.vertices.size == size
    assert set(e.vertices.lookup([100 + i for i in range(SMALL)]).tolist()) == {-1}
    out += list(e.process(tail)) + e.flush()
    assert out == evaluate(head + tail, params)
