"""The compiled Static competitor and baseline (``static`` and ``base``,
``engines/simjoin/_static_kernels.py`` and ``_base_kernels.py``) against the plain
Python references they follow (``static:compiled=false``, ``base:compiled=false``):
the same outputs, list for list, on seeded streams with many ties (few tokens, equal
times, gaps longer than the window, empty sets), for each measure and both joins,
fed in batches so the kernel restarts after growing its output buffers.  The
conformance suite checks ``static`` and ``base`` themselves against the oracle
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
@pytest.mark.parametrize("engine", ["static", "base"])
def test_compiled_equals_the_plain_reference(engine, similarity, join):
    params = Params(k=4, w=15, similarity=similarity, join=join)
    b = stream(SIMILARITIES.index(similarity) + 7 * (join == "rs"), sides=join == "rs")
    compiled = run(engine, params, b, step=97)
    assert compiled, "the stream produced no top-k change: the comparison would be empty"
    assert compiled == run(f"{engine}:compiled=false", params, b, step=400)


def test_compiled_base_splits_and_frees_stock_blocks():
    """A window of 250 sets over 8 tokens holds ~3e4 overlapping pairs: S splits into
    dozens of blocks, and expiry empties and reuses them; same lists as the reference."""
    params = Params(k=5, w=250)
    rng = np.random.default_rng(5)
    n = 600
    ptr = np.arange(0, 3 * n + 1, 3, dtype=np.int64)
    b = RecordBatch(np.arange(n, dtype=np.int64), np.arange(n, dtype=np.int64), ptr,
                    rng.integers(0, 8, 3 * n).astype(np.int64))
    compiled = run("base", params, b, step=200)
    eng = Registry.get("simjoin", "base")(params)
    list(eng.process(b))
    assert eng.stats["max_stock"] > 40 * 512
    assert compiled == run("base:compiled=false", params, b, step=600)
