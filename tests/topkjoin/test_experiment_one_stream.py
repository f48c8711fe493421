"""One mention stream for the five DS-CH-x datasets (paper §6.1; issue 15).

The paper collected one stream and built five remote datasets per CH from the follower
snapshots; the datasets differ on the remote side only.  These tests check what the
experiment scripts actually feed the engines: the same items for every dataset, a different
remote timeline per dataset, and stream ids that are keys of the remote data (one id domain).
"""
import hashlib

import numpy as np
import pytest

from streamspec.bench.topkjoin import data, experiment, fig11, real_stream


def digest(ids, x, ts) -> str:
    h = hashlib.sha256()
    for a, dtype in ((ids, np.int64), (x, np.float64), (ts, np.int64)):
        h.update(np.ascontiguousarray(a, dtype=dtype).tobytes())
    return h.hexdigest()


def synthetic_snapshots(users: int = 60, seed: int = 5) -> dict:
    """Snapshots shaped like the shared ones (all users at the same instants, t0 + 15 s and then
    once a minute; counts drift), so the experiment path runs without the data outside the repo."""
    rng = np.random.default_rng(seed)
    times = data.T0 + 15_000 + 60_000 * np.arange(160, dtype=np.int64)
    return {2000 + u: (times, 9000 + np.cumsum(rng.integers(-3, 9, size=times.size)).astype(np.int64))
            for u in range(users)}


class Recorder:
    """Wraps ``experiment.run``: per call, the dataset (WSJ-RND seed), stream digest and remote."""

    def __init__(self, run):
        self.run, self.calls = run, []

    def __call__(self, engine, params, ids, x, ts):
        self.calls.append((params.seed, digest(ids, x, ts), params.remote, params.stream_range))
        return self.run(engine, params, ids, x, ts)


def check_one_stream(calls, datasets: int, items) -> None:
    assert sorted({c[0] for c in calls}) == list(range(1, datasets + 1))
    assert {c[1] for c in calls} == {digest(*items)}              # every run, every dataset: one stream
    assert len({c[3] for c in calls}) == 1                        # so one stream range
    remotes = {c[0]: c[2] for c in calls}
    for a in remotes:
        for b in remotes:
            assert (remotes[a] == remotes[b]) == (a == b), (a, b)  # the remote side differs
    for remote in remotes.values():
        assert set(items[0].tolist()) <= set(remote.keys())       # stream ids are remote keys


@pytest.mark.parametrize("java_compat", [False, True])
def test_experiment_runs_every_dataset_on_one_seeded_stream(monkeypatch, java_compat):
    snapshots = synthetic_snapshots()
    rec = Recorder(experiment.run)
    monkeypatch.setattr(experiment, "run", rec)
    monkeypatch.setattr(experiment, "ENGINES", ("wst", "at-tsm"))
    monkeypatch.setitem(experiment.GRIDS, "budget", [3, 7])
    rows = experiment.experiment("budget", 3, snapshots, java_compat)
    items = experiment.stream_items(snapshots, java_compat)
    assert items[0].size > 1000
    # the stream is the STREAM_SEED draw over the snapshot users, cut to the 150 windows
    ids, ts = data.mentions(list(snapshots), data.STREAM_SEED)
    keep = ts < data.T0 + data.OMEGA + 149 * data.BETA
    if not java_compat:
        assert np.array_equal(items[0], ids[keep]) and np.array_equal(items[2], ts[keep])
        assert np.all(items[1] == 1)
    else:
        assert experiment.stream_range(*items) == (1.0, 2.0)
    engines = len(experiment.engines(java_compat))
    assert len(rec.calls) == len(rows) == 2 * 3 * engines
    check_one_stream(rec.calls, 3, items)
    # not the same answers everywhere: the datasets' remote values do reach the metrics
    by_dataset = {}
    for r in rows:
        if r["engine"] == "wst":
            by_dataset.setdefault(r["dataset"], []).append(r["precision"])
    assert len({tuple(v) for v in by_dataset.values()}) > 1


def test_fig11_curves_use_one_stream(monkeypatch):
    snapshots = synthetic_snapshots()
    rec = Recorder(fig11.run)
    monkeypatch.setattr(fig11, "run", rec)
    monkeypatch.setattr(fig11, "load_snapshots", lambda: snapshots)
    monkeypatch.setattr(fig11, "ENGINES", ("wst",))
    rows = fig11.curves("seeded", 3)
    assert len(rows) == 3 * 150 and len(rec.calls) == 3
    check_one_stream(rec.calls, 3, experiment.stream_items(snapshots))


@pytest.mark.skipif(not data.DATA.exists(), reason="shared AcquaTop data absent")
def test_the_five_ds_ch_20_datasets_share_the_stream_on_the_shared_data():
    """The committed experiments' inputs: the five DS-CH-20 datasets of the real snapshots, one
    seeded stream (true counts and the Java's rewrite) and, where present, the real stream."""
    snapshots = data.load_snapshots()
    remotes = {seed: experiment.remote_dataset(20, seed, snapshots) for seed in range(1, 6)}
    modes = [(False, "seeded"), (True, "seeded")]
    if real_stream.SLIDES.exists():
        modes.append((True, "real"))
    for java_compat, stream in modes:
        items = experiment.stream_items(snapshots, java_compat, stream)
        # drawn again per dataset, as fig11/diagnose_real do through dataset(): still the one stream
        again = experiment.stream_items(snapshots, java_compat, stream)
        calls = [(seed, digest(*again), remote, experiment.stream_range(*again))
                 for seed, remote in remotes.items()]
        check_one_stream(calls, 5, items)
    params = experiment.inputs(experiment.DEFAULT, 3, snapshots, items)
    assert params.remote == remotes[3] and params.stream_range == experiment.stream_range(*items)
