"""The Section 7.3 latency harness (bench/simjoin/latency.py): a single-server FIFO
queue on a simulated clock driven by the engine's measured CPU times."""
import csv

import numpy as np

from streamspec.bench.simjoin import latency
from streamspec.bench.simjoin.generators import tweet_like


def test_an_idle_server_takes_each_set_alone_and_its_latency_is_its_service():
    stream = tweet_like(400, seed=2)
    run = latency.replay("swoop", stream, w=200, k=5, sets=200, rate=1.0)   # one set a simulated second
    assert run["latency"].size == 200
    assert (run["batch"] == 1).all() and (run["queue"] == 0).all()
    assert np.allclose(run["latency"], run["service"])


def test_a_flooded_server_batches_the_queue_fifo_and_counts_it():
    stream = tweet_like(2200, seed=2)
    run = latency.replay("swoop", stream, w=200, k=5, sets=2000, rate=1e12, max_batch=500)
    lat, arrival = run["latency"], run["arrival"]
    assert run["batch"].sum() == 2000
    assert run["batch"].tolist() == [1, 500, 500, 500, 499]             # everything arrived at once
    assert run["queue"][0] == 1999 and run["queue"][-1] == 0
    done = arrival + lat                                              # FIFO: completions in order
    assert (np.diff(done) >= -1e-12).all() and (lat > 0).all()
    # the same outputs (top-k updates) as the stream in one batch: batching changes the timing only
    from streamspec.bench.simjoin.throughput import window_slice
    from streamspec.spec.registry import Registry
    from streamspec.spec.simjoin import Params
    eng = Registry.get("simjoin", "swoop")(Params(k=5, w=200))
    list(eng.process(window_slice(stream, 0, 200)))
    assert run["outputs"] == len(list(eng.process(window_slice(stream, 200, 2200))))


def test_main_writes_one_row_per_window(tmp_path):
    latency.main(["--windows", "100,300", "--sets", "1500", "--k", "5", "--out", str(tmp_path),
                  "--no-plot", "--label", "test"])
    with open(tmp_path / "latency-tweet-k5.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["w"]) for r in rows] == [100, 300]
    for r in rows:
        assert float(r["rate"]) == round(0.8 * float(r["max_rate"]), 1)
        assert float(r["lat_p50_ms"]) <= float(r["lat_p99_ms"]) <= float(r["lat_max_ms"])
        assert int(r["sets"]) == 1500 and r["label"] == "test" and r["commit"]
