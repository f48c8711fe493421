"""``experiment --fetch-stats``: the refresh statistics the results README quotes (how many of a
policy's fetches find a changed value, how many distinct keys it fetches; paper §5.2 policies)."""
import numpy as np

from streamspec.bench.topkjoin import data, experiment
from streamspec.spec.topkjoin_remote import TimelineDataset


def test_recording_remote_counts_changed_fetches_not_the_load():
    remote = TimelineDataset.from_rows([(1, data.T0 - 1, 5.0), (1, data.T0 + 50, 6.0), (2, data.T0 - 1, 3.0)])
    rec = experiment.RecordingRemote(remote)
    assert rec.value(1, data.T0) == 5.0 and rec.value(2, data.T0) == 3.0      # bulk load: no fetch
    assert rec.log == []
    rec.value(1, data.T0 + 10)          # still 5: unchanged
    rec.value(1, data.T0 + 60)          # 6: changed
    rec.value(1, data.T0 + 70)          # 6 again: unchanged against the last fetch
    rec.value(2, data.T0 + 70)          # 3: unchanged against the load
    assert rec.log == [(1, data.T0 + 10, False), (1, data.T0 + 60, True), (1, data.T0 + 70, False),
                       (2, data.T0 + 70, False)]
    assert rec.value_range() == remote.value_range()


def synthetic_snapshots(users: int = 60, seed: int = 7) -> dict:
    rng = np.random.default_rng(seed)
    times = data.T0 + 15_000 + 60_000 * np.arange(160, dtype=np.int64)
    return {3000 + u: (times, 4000 + np.cumsum(rng.integers(-3, 9, size=times.size)).astype(np.int64))
            for u in range(users)}


def test_fetch_stats_agree_with_the_runs_and_the_remote(tmp_path, monkeypatch):
    snapshots = synthetic_snapshots()
    rows = experiment.fetch_stats(2, snapshots)
    assert {(r["engine"], r["dataset"]) for r in rows} == {
        (e, d) for e in ("at-tsm", "at-bsm", "wsj-wbm", "wsj-lru") for d in (1, 2)}
    items = experiment.stream_items(snapshots)
    for r in rows:
        params = experiment.inputs(experiment.DEFAULT, r["dataset"], snapshots, items)
        _, fetches = experiment.run(r["engine"], params, *items)
        assert r["fetches"] == fetches > 0
        assert 0 < r["changed"] <= r["fetches"] and 0 < r["distinct_keys"] <= len(snapshots)
    # the window-wide LRU rotates through more keys than the list-bound TSM
    by = {(r["engine"], r["dataset"]): r for r in rows}
    assert all(by[("wsj-lru", d)]["distinct_keys"] > by[("at-tsm", d)]["distinct_keys"] for d in (1, 2))
    # the CLI writes the same rows
    monkeypatch.setattr(experiment, "load_snapshots", lambda: snapshots)
    assert experiment.main(["--fetch-stats", "--datasets", "2", "--results", str(tmp_path)]) == 0
    written = experiment.t6.read(tmp_path / "fetch-stats.csv")
    assert [{k: int(v) if k != "engine" else v for k, v in r.items()} for r in written] == rows
