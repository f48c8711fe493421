"""Table 1-shaped streams (bench/connectivity/table1.py): generator shape and statistics, tiny."""
import attrs
import numpy as np

from streamspec.bench.connectivity import table1 as T


def test_statistics_of_a_path_and_a_star():
    # path 0-1-2-3-4: every vertex a source, AD over ordered pairs = 40 / 20, diameter 4
    u = np.array([0, 1, 2, 3], np.int64)
    v = np.array([1, 2, 3, 4], np.int64)
    st = T.graph_stats(u, v, sources=5)
    assert (st["vertices"], st["edges"], st["diameter_lb"]) == (5, 4, 4)
    assert st["avg_distance"] == 2.0 and st["max_degree"] == 2 and st["largest_cc_share"] == 1.0
    # a star plus a detached edge: the double sweep stays in the hub's component
    st = T.graph_stats(np.array([0, 0, 0, 7]), np.array([1, 2, 3, 8]), sources=6)
    assert st["diameter_lb"] == 2 and st["max_degree"] == 3
    assert st["largest_cc_share"] == round(4 / 6, 4)


def test_chung_lu_weights_and_skew():
    rng = np.random.default_rng(0)
    ids = T.chung_lu_endpoints(rng, 400_000, 1000, 2.5)
    assert ids.min() >= 0 and ids.max() < 1000
    counts = np.bincount(ids, minlength=1000)
    # id i has the mass of x ** (-2/3) on [i + 1, i + 2): id 0 against id 7 is
    # (2 ** (1/3) - 1) / (9 ** (1/3) - 2) = 3.25
    assert 2.95 < counts[0] / counts[7] < 3.55
    lighter = np.bincount(T.chung_lu_endpoints(rng, 400_000, 1000, 4.0), minlength=1000)
    assert counts.max() > 2 * lighter.max()           # a smaller beta is a heavier tail


def test_dataset_stream_shape_and_whiskers():
    tiny = attrs.evolve(T.DATASETS["YG"], vertices=1_000, edges=6_000, beta=2.5, whisker=0)
    u, v = T.make_arrays(tiny, 1.0, seed=3)
    assert len(u) == 6_000 and u.dtype == np.int64 and not np.any(u == v)
    assert max(u.max(), v.max()) < 1_000
    core = T.graph_stats(u, v, sources=4)
    assert core["max_degree"] > 10 * core["avg_degree"]    # heavy-tailed degrees
    wu, wv = T.make_arrays(attrs.evolve(tiny, whisker=12), 1.0, seed=3)
    assert len(wu) == 6_000 and np.sum((wu != u) | (wv != v)) == 24   # |E| unchanged
    hung = T.graph_stats(wu, wv, sources=4)
    # two 12-edge paths hooked on the core: the double sweep sees both tips
    assert hung["diameter_lb"] >= 24 > core["diameter_lb"]
    assert wu.max() < 1_000 + 24 and wv.max() == 1_000 + 23        # 24 fresh whisker ids
    again = T.make_arrays(attrs.evolve(tiny, whisker=12), 1.0, seed=3)
    assert np.array_equal(again[0], wu) and np.array_equal(again[1], wv)


def test_scaling_and_headline_check():
    fs = T.DATASETS["FS"]
    scale = T.scale_of(fs, 64_000_000)
    sh = T.shape(fs, scale)
    assert sh["edges"] == 64_000_000 and sh["r"] == 20 * sh["s"]
    assert abs(sh["s"] * T.RATE - 150_000 * scale) <= T.RATE
    assert T.shape(T.DATASETS["YG"], T.scale_of(T.DATASETS["YG"]))["r"] * T.RATE == 3_000_000
    rows = [dict(dataset="YG", engine="bic", throughput_eps="7e6", p95_ms="0.1", sampled="False"),
            dict(dataset="YG", engine="rwc", throughput_eps="1e6", p95_ms="50", sampled="False"),
            dict(dataset="YG", engine="dtree", throughput_eps="5e5", p95_ms="9", sampled="True")]
    assert T.split_engines(",".join(T.ENGINES)) == list(T.ENGINES)
    got = {(c["against"]): (c["ratio"], c["met"]) for c in T.check(rows)}
    assert got == {"rwc": (7.0, True), "dtree": (90.0, False)}


def test_windows_feeds_the_window_plus_slides_without_budget():
    from streamspec.bench.connectivity.generators import Stream, timestamps, workload
    from streamspec.spec.connectivity import Params
    tiny = attrs.evolve(T.DATASETS["YG"], vertices=500, edges=6_000, beta=2.5, whisker=0)
    u, v = T.make_arrays(tiny, 1.0, seed=1)
    stream = Stream(u, v, timestamps(len(u), T.RATE), "tiny")
    params = Params(r=20, s=5, workload=workload(stream, 5, seed=0, top=50))
    # window 2,000 edges, slide 500: three slides past the window are three windows, each
    # triggering piece fed whole, however small the budget
    m, note = T.measure_point("msf", stream, params, 2_000, 1e-9, windows=3, slide_edges=500)
    assert note.startswith("WINDOWS: prefix of 3500 edges")
    assert (m.n_edges, m.n_windows, m.truncated) == (3_500, 3, False)
    assert m.steady_edges == 1_500 and m.steady_seconds > 0


def test_a_slow_calibration_is_checked_on_the_longer_prefix(monkeypatch):
    from streamspec.bench.connectivity.generators import Stream, timestamps, workload
    from streamspec.spec.connectivity import Params
    tiny = attrs.evolve(T.DATASETS["YG"], vertices=500, edges=6_000, beta=2.5, whisker=0)
    u, v = T.make_arrays(tiny, 1.0, seed=1)
    stream = Stream(u, v, timestamps(len(u), T.RATE), "tiny")
    params = Params(r=20, s=5, workload=workload(stream, 5, seed=0, top=50))
    # a calibration that says 1 edge/s (a burst on the machine): the fill of 2,000 edges
    # would be "2,000 s", but the 20,000-edge prefix measured next shows it fits the budget
    monkeypatch.setattr(T, "_calibrate", lambda *a: 1.0)
    m, note = T.measure_point("msf", stream, params, 2_000, 60.0)
    assert note == "" and m.n_edges == 6_000 and m.n_windows >= 5


def test_a_prefix_is_the_full_streams_first_edges(monkeypatch):
    # chunks of 1,000 edges: the 2,500-edge prefix cuts the third chunk, which is still drawn
    # at its full-stream size (1,000) so the generator stays in step
    monkeypatch.setattr(T, "CHUNK", 1_000)
    for model in ("chunglu", "rmat"):
        tiny = attrs.evolve(T.DATASETS["YG"], vertices=300, edges=6_000, beta=2.5, whisker=40,
                            model=model)
        u, v = T.make_arrays(tiny, 1.0, seed=5)
        assert max(u.max(), v.max()) == 300 + 79          # every core id occurs: fresh from 300
        pu, pv = T.make_arrays(tiny, 1.0, seed=5, prefix=2_500)
        assert len(pu) == 2_500
        whisker = np.flatnonzero(v[:2_500] >= 300)
        assert whisker.size > 0                           # some whisker edges fall in the prefix
        same = np.ones(2_500, bool)
        # a path's first edge hangs on a hook drawn over the whole stream: beyond the prefix
        # it is unknown there and the core edge stays (at most one per path)
        hooked = whisker[u[whisker] < 300]
        hooked = hooked[(pu[hooked] != u[hooked]) | (pv[hooked] != v[hooked])]
        same[hooked] = False
        assert hooked.size <= 2
        assert np.array_equal(pu[same], u[:2_500][same]) and np.array_equal(pv[same], v[:2_500][same])
        core = attrs.evolve(tiny, whisker=0)
        cu, cv = T.make_arrays(core, 1.0, seed=5, prefix=2_500)
        fu, fv = T.make_arrays(core, 1.0, seed=5)
        assert np.array_equal(cu, fu[:2_500]) and np.array_equal(cv, fv[:2_500])
