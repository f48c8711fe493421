"""The compiled Static competitor (``static``, ``engines/simjoin/_static_kernels.py``)
against the plain Python reference it follows (``static:compiled=false``): the
same outputs, list for list, on seeded streams with many ties (few tokens, equal
times, gaps longer than the window, empty sets), for each measure and both joins,
fed in batches so the kernel restarts after growing its output buffers.  The
conformance suite checks ``static`` itself against the oracle
(``tests/simjoin/test_conformance.py``)."""
from __future__ import annotations

import numpy as np
import pytest

from streamspec.spec.registry import Registry
from streamspec.spec.simjoin import SIMILARITIES, Params, RecordBatch


def stream(seed: int, n: int = 400, sides: bool = False) -> RecordBatch:
    rng = np.random.default_rng(seed)
    ts = np.cumsum(rng.choice([0, 0, 1, 2, 9], n))
    sizes = rng.integers(0, 6, n)
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    tok = rng.integers(0, 12, int(ptr[-1])).astype(np.int64)
    side = rng.integers(0, 2, n).astype(np.int8) if sides else None
    return RecordBatch(np.arange(n, dtype=np.int64), ts.astype(np.int64), ptr, tok, side)


def run(engine: str, params: Params, b: RecordBatch, step: int) -> list:
    eng = Registry.get("simjoin", engine)(params)
    out = []
    for a in range(0, len(b), step):
        c = min(a + step, len(b))
        side = None if b.side is None else b.side[a:c]
        out.extend(eng.process(RecordBatch(b.id[a:c], b.ts[a:c], b.tok_ptr[a:c + 1] - b.tok_ptr[a],
                                           b.tok[b.tok_ptr[a]:b.tok_ptr[c]], side)))
    return out


@pytest.mark.parametrize("similarity", SIMILARITIES)
@pytest.mark.parametrize("join", ["self", "rs"])
def test_compiled_static_equals_the_plain_reference(similarity, join):
    params = Params(k=4, w=15, similarity=similarity, join=join)
    b = stream(SIMILARITIES.index(similarity) + 7 * (join == "rs"), sides=join == "rs")
    compiled = run("static", params, b, step=97)
    assert compiled, "the stream produced no top-k change: the comparison would be empty"
    assert compiled == run("static:compiled=false", params, b, step=400)
