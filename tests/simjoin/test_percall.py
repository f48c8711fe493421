"""The compiled passes that replaced numpy calls on swoop's per-call path (stop 38):
``plain_changes`` (spec/_simjoin_rows.py) gives the outputs of the checks and row
sharing it stands for, and fails (-1, the checks then say why) exactly where they fail;
``batch_shape`` (engines/simjoin/_swoop_batch.py) and ``_largest``
(spec/_simjoin_tokens.py) equal the numpy expressions they replaced."""
from __future__ import annotations

import numpy as np
import pytest

from streamspec.engines.simjoin._swoop_batch import batch_shape
from streamspec.engines.simjoin import _swoop_kernels as K
from streamspec.spec._simjoin_rows import plain_changes, shared_rows
from streamspec.spec._simjoin_tokens import _largest
from streamspec.spec.errors import ContractViolation
from streamspec.spec.simjoin import Params, Record
from tests.simjoin.test_changes_check import Lists    # the engine answering given columns


def random_changes(rng, n, spoil):
    k = int(rng.integers(0, n + 1))
    pos = np.sort(rng.choice(n, k, replace=False)).astype(np.int64)
    ptr = np.zeros(k + 1, np.int64)
    np.cumsum(rng.integers(0, 4, k), out=ptr[1:])
    rows = int(ptr[-1])
    si, sj = rng.integers(0, n, rows).astype(np.int64), rng.integers(0, n, rows).astype(np.int64)
    sc = rng.choice([0.5, 0.25, 1.0], rows)
    en = rng.choice([5.0, -0.0, 0.0, np.nan], rows)
    if spoil == "pos" and k > 1:
        pos[-1] = pos[0]
    elif spoil == "range" and k:
        pos[-1] = n
    elif spoil == "ptr" and k > 1 and rows:
        ptr[1] = rows + 1
    elif spoil == "seq" and rows:
        sj[-1] = -1
    elif spoil == "len":
        sc = np.append(sc, 1.0)
    return pos, ptr, si, sj, sc, en


@pytest.mark.parametrize("spoil", [None, "pos", "range", "ptr", "seq", "len"])
def test_plain_changes_agrees_with_the_checks(spoil):
    """Each case through the int64 columns (the compiled pass) and through int32 positions
    (the checks in Python and numpy): the same outputs or the same error."""
    failed = 0
    rng = np.random.default_rng(38)
    for _ in range(60):
        n = int(rng.integers(1, 9))
        cols = random_changes(rng, n, spoil)
        got = []
        for c in (cols, (cols[0].astype(np.int32),) + cols[1:]):
            engine = Lists(Params(k=3, w=10))
            engine.columns = c
            try:
                got.append(repr(list(engine.process([Record(x, [1], 0) for x in range(n)]))))
            except ContractViolation as e:
                got.append(str(e).replace("int32", "int64"))     # (the message names the dtype)
        assert got[0] == got[1]
        failed += got[0].startswith("engine")
    assert failed > 0 if spoil else failed == 0


def test_plain_changes_rows_equal_shared_rows():
    rng = np.random.default_rng(7)
    for _ in range(40):
        pos, ptr, si, sj, sc, en = random_changes(rng, 8, None)
        rows = si.size
        rep = np.empty(rows, np.int64)
        u = [np.empty(rows, np.int64), np.empty(rows, np.int64), np.empty(rows), np.empty(rows)]
        nu = plain_changes(pos, ptr, si, sj, sc, en, sc.view(np.int64), en.view(np.int64), 8, rep, *u)
        want_rep, first = shared_rows(si, sj, sc, en, ptr)
        assert nu == first.size and rep.tolist() == want_rep.tolist()
        for a, col in zip(u, (si, sj, sc, en)):
            assert a[:nu].view(np.int64).tolist() == col[first].view(np.int64).tolist()


def test_batch_shape_equals_numpy():
    rng = np.random.default_rng(3)
    meta = np.zeros(K.META, np.int64)
    meta[K.N_REC], meta[K.OLDEST], meta[K.N_POST], meta[K.POST_BASE] = 90, 40, 700, 123
    for n in (0, 1, 2, 135):
        op = rng.integers(0, 2, n).astype(np.int64)
        ptr = np.zeros(n + 1, np.int64)
        np.cumsum(rng.integers(0, 30, n), out=ptr[1:])
        ptr += 5
        longest = int(np.diff(ptr).max()) if n else 0
        assert batch_shape(op, ptr, meta) == (int((op == 0).sum()), longest, 50, 577)


def test_largest_equals_max():
    rng = np.random.default_rng(5)
    for n in (1, 2, 1000):
        tok = rng.integers(-2 ** 62, 2 ** 62, n)
        assert _largest(tok) == int(tok.max())
