"""``static:batch=B``, SWOOP Section 7.2's approximate Static (the join rerun at every
B-th change of the window only): the compiled kernel and the plain reference agree
and do not depend on how the stream is cut into ``process`` calls; each list it emits
is the exact list at that operation; it is declared approximate, and the conformance
suite skips its oracle checks saying why instead of failing them."""
from __future__ import annotations

import numpy as np
import pytest

from streamspec.conformance import simjoin as suite
from streamspec.spec.registry import Registry
from streamspec.spec.simjoin import Params, RecordBatch
from tests.simjoin.test_compiled import run, stream


def test_batch_is_declared_approximate():
    assert Registry.get("simjoin", "static").exact
    assert Registry.get("simjoin", "static:batch=1").exact
    assert Registry.get("simjoin", "static:compiled=false").exact
    approx = Registry.get("simjoin", "static:batch=100")
    assert not approx.exact and approx.batch == 100
    assert suite.not_applicable(approx, "bad_records") is None
    for check in ("step_by_step", "watermark"):
        assert "approximate" in suite.not_applicable(approx, check)
        assert suite.not_applicable(Registry.get("simjoin", "static"), check) is None


@pytest.mark.parametrize("join", ["self", "rs"])
def test_batch_compiled_equals_plain_in_any_chunking(join):
    params = Params(k=3, w=15, join=join)
    b = stream(11 + (join == "rs"), sides=join == "rs")
    compiled = run("static:batch=5", params, b, step=37)
    assert len(compiled) > 5
    assert compiled == run("static:batch=5", params, b, step=400)
    assert compiled == run("static:batch=5,compiled=false", params, b, step=400)


def test_batch_emits_the_exact_list_every_bth_window_and_goes_stale_between():
    """One set per time unit: the window changes at every set, so the join reruns at
    sets 4, 9, 14, ... (b = 5); there its list is the exact one, and between it is the
    last one, which is wrong somewhere (the approximation the paper measures)."""
    n, k, b = 300, 3, 5
    rng = np.random.default_rng(4)
    ptr = np.arange(0, 4 * n + 1, 4, dtype=np.int64)
    batch = RecordBatch(np.arange(n, dtype=np.int64), np.arange(n, dtype=np.int64), ptr,
                        rng.integers(0, 30, 4 * n).astype(np.int64))
    params = Params(k=k, w=40)
    exact = {t.ts: t.pairs for t in run("static", params, batch, step=n)}
    approx = run(f"static:batch={b}", params, batch, step=64)
    assert approx and all(int(t.ts) % b == b - 1 for t in approx)
    held_exact, held_approx, wrong = (), (), 0
    by_ts = {t.ts: t.pairs for t in approx}
    for ts in range(n):
        held_exact = exact.get(ts, held_exact)
        held_approx = by_ts.get(ts, held_approx)
        if ts % b == b - 1:
            assert held_approx == held_exact, ts
        wrong += held_approx != held_exact
    assert wrong > 0
