"""``experiment.py --stream real`` (paper §6, Figures 12-15 on the real stream; issue 15): one
stream shared by the five DS-CH-x datasets, cut to the 150 evaluated windows, and the engines
exact on it where ``exact_when`` says they must be (unlimited budget, N >= |window|)."""
import numpy as np
import pytest

from streamspec.bench.topkjoin import experiment, real_stream
from streamspec.bench.topkjoin.data import BETA, DATA, OMEGA, T0, load_snapshots
from streamspec.reference.topkjoin import evaluate
from streamspec.spec.topkjoin import Params
from streamspec.spec.topkjoin_quality import quality

pytestmark = pytest.mark.skipif(not (DATA.exists() and real_stream.SLIDES.exists()),
                                reason="shared AcquaTop data absent")


@pytest.fixture(scope="module")
def snapshots():
    return load_snapshots()


def test_the_five_datasets_share_the_real_stream(snapshots):
    r1, *s1 = experiment.dataset(20, 1, snapshots, True, "real")
    r2, *s2 = experiment.dataset(20, 2, snapshots, True, "real")
    assert all(np.array_equal(a, b) for a, b in zip(s1, s2))
    ids, x, ts = s1
    assert ts.max() < T0 + OMEGA + 149 * BETA and set(np.unique(x).tolist()) == {0.0, 1.0}
    assert experiment.stream_range(ids, x, ts) == (1.0, 2.0)          # the Java's {1, 2} values
    assert list(r1.rows()) != list(r2.rows())                         # the remote side differs


def test_unlimited_budget_is_exact_on_the_real_stream(snapshots):
    remote, ids, x, ts = experiment.dataset(20, 1, snapshots, True, "real")
    params = Params(omega=OMEGA, beta=BETA, k=5, n=50, budget=60, t0=T0, remote=remote,
                    stream_range=experiment.stream_range(ids, x, ts),
                    remote_range=remote.value_range(), seed=1)
    truth = evaluate(list(zip(ids.tolist(), x.tolist(), ts.tolist())), params)[:150]
    for engine in ("at-tsm", "at-bsm"):
        answers, fetches = experiment.run(engine, params, ids, x, ts)
        q = quality(answers, truth, 5)
        assert (q.evaluations, q.precision, round(q.ndcg, 9)) == (150, 150.0, 150.0), engine
        assert fetches <= 60 * 150
