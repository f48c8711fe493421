"""pytest plugin (measurement only): time in numba compiles and explicit gc.collect() per worker/test."""
import gc, os, time, json, collections

_orig_collect = gc.collect
STATS = {"gc_n": 0, "gc_s": 0.0, "nb_s": 0.0, "nb_n": 0}
PER = collections.Counter()
CUR = {"test": None}

def _collect(*a, **k):
    t = time.perf_counter()
    try:
        return _orig_collect(*a, **k)
    finally:
        d = time.perf_counter() - t
        STATS["gc_n"] += 1; STATS["gc_s"] += d
        PER["gc " + str(CUR["test"])] += d
gc.collect = _collect

def pytest_configure(config):
    try:
        from numba.core import event
    except Exception:
        return
    depth = {"d": 0, "t": 0.0}
    class L(event.Listener):
        def on_start(self, ev):
            if depth["d"] == 0:
                depth["t"] = time.perf_counter()
            depth["d"] += 1
        def on_end(self, ev):
            depth["d"] -= 1
            if depth["d"] == 0:
                d = time.perf_counter() - depth["t"]
                STATS["nb_s"] += d; STATS["nb_n"] += 1
                PER["nb " + str(CUR["test"])] += d
    event.register("numba:compile", L())

def pytest_runtest_setup(item):
    CUR["test"] = item.nodeid

def pytest_sessionfinish(session):
    w = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(f"/tmp/nbgc-{w}.json", "w") as f:
        json.dump({"stats": STATS, "objects_end": len(gc.get_objects()), "per": PER.most_common(60)}, f, indent=0)
