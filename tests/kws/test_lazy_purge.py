"""Lazy purging bounds the buffers of the joins without parents (the CN joins),
which no probe reads: a composite dead at ``t`` has been dead for less than ``w``
(at most ``2w`` after it was made), on a stream seven windows long (the mesh's
``_sweep``; before it, FM kept every result of the stream there)."""
from itertools import groupby

import pytest
from streamspec.bench.kws.generator import params, stream
from streamspec.engines.kws.forest import ForestSharedEngine
from streamspec.engines.kws.fullmesh import FullMeshEngine

W, SECONDS = 600, 4200


def _held(mesh_cls, sweep: bool, **options):
    """(held, dead for w or more) by the parentless joins at every ``w / 2`` from ``2w``."""
    p = params(15, 2, 4, W)
    eng = mesh_cls(p, **options)
    if not sweep:
        eng._unread = None   # the engine before the sweep: nothing purges these buffers
    samples = []
    for t, instant in groupby(stream(p, SECONDS, 0.01, 1000), key=lambda e: e.t):
        if t >= 2 * W and t % (W // 2) == 0:
            final = [op for op in eng._made_ops() if op.left is not None and not op.parents]
            samples.append((sum(len(op.out) for op in final),
                            sum(1 for op in final for c in op.out if c[0] <= t - W)))
        list(eng.process(list(instant)))
    return samples


@pytest.mark.parametrize("mesh_cls, options", [(FullMeshEngine, {}),
                                                 (ForestSharedEngine, {"purge": "lazy"})],
                         ids=["fullmesh", "forest-shared-lazy"])
def test_parentless_join_buffers_stay_bounded(mesh_cls, options):
    swept = _held(mesh_cls, True, **options)
    assert len(swept) == 10 and any(held for held, _ in swept)   # results were held
    assert all(old == 0 for _, old in swept), swept
    if mesh_cls is not FullMeshEngine:
        return
    unswept = _held(mesh_cls, False, **options)
    # without the sweep the stream's dead results pile up (the bug this guards against)
    assert unswept[-1][1] > 40 and unswept[-1][0] > 2 * max(held for held, _ in swept), unswept
