"""Honest latency in the connectivity benchmarks (issue 13): BIC measured with its
backward build deferred (as shipped) and inside the triggering call (the
paper's), the GC kept out of and counted in triggering calls, and the targets
script's side-by-side table over top-degree and uniform workloads."""
import csv
import gc

import pytest

from streamspec.spec.connectivity import Params
from streamspec.reference.connectivity import evaluate

from streamspec.bench.connectivity import measure, targets
from streamspec.bench.connectivity.generators import rmat_stream, workload


def edges_of(stream):
    return list(zip(stream.u.tolist(), stream.v.tolist(), stream.t.tolist()))


@pytest.fixture(scope="module")
def small():
    stream = rmat_stream(300, 6000, 20, seed=3)                    # times 0..299
    return stream, Params(r=40, s=4, workload=workload(stream, 12, seed=3, top=None))


@pytest.mark.parametrize("build", ["deferred", "inside"])
@pytest.mark.parametrize("runner", [measure.run, measure.run_engine])
def test_both_placements_answer_like_the_oracle(small, build, runner):
    stream, params = small
    record = []
    m = runner("bic", stream, params, record=record, build=build)
    assert record == evaluate(edges_of(stream), params)
    assert m.defers and m.build == build and m.row()["build"] == build
    assert (("build inside the triggering call" in m.method) == (build == "inside"))


def test_inside_sets_the_engine_to_build_in_the_triggering_call(small, monkeypatch):
    stream, params = small
    made, real = [], measure.create

    def spy(name, params, hold_back=True):
        made.append(real(name, params, hold_back=hold_back))
        return made[-1]

    monkeypatch.setattr(measure, "create", spy)
    measure.run("bic", stream, params, build="inside", warm=False)
    measure.run("bic", stream, params, warm=False)
    from streamspec.engines.connectivity import _bic_layout as lay
    assert [int(e._st[lay.DEFER]) for e in made] == [0, lay.BUILD_DEFER]


def test_build_is_the_engines_option_and_keeps_its_other_options():
    assert measure.engine_name("bic") == "bic"                       # as named
    assert measure.engine_name("bic", "inside") == "bic:build=inside"
    assert measure.engine_name("bic:prereduce=false", "inside") == "bic:build=inside,prereduce=false"
    assert measure.engine_name("bic:build=inside", "deferred") == "bic:build=deferred"
    assert measure.engine_name("rwc", "inside") == "rwc"             # nothing to defer
    assert measure.engine_name("scipy", "inside") == "scipy"         # a peer
    with pytest.raises(ValueError, match="build must be one of"):
        measure.engine_name("bic", "later")


def test_a_named_placement_is_measured_as_named(small):
    # the paper's BIC by name (bic:build=inside,prereduce=false): build=None runs it as named
    stream, params = small
    record = []
    m = measure.run("bic:build=inside,prereduce=false", stream, params, record=record, warm=False)
    assert record == evaluate(edges_of(stream), params)
    assert m.defers and m.build == "inside" and "build=inside, the paper's" in m.method


def test_engines_without_a_deferred_build_say_so(small):
    stream, params = small
    m = measure.run("rwc", stream, params, build="inside")
    assert not m.defers and m.row()["build"] == "none"
    assert "nothing deferred" in m.method


def test_unknown_build_is_refused(small):
    stream, params = small
    with pytest.raises(ValueError, match="build must be one of"):
        measure.run("bic", stream, params, build="later")


@pytest.mark.own_gc
def test_gc_is_frozen_during_the_run_and_restored(small, monkeypatch):
    stream, params = small
    seen = []
    real = measure._timed

    def timed(*args, **kwargs):
        seen.append(gc.get_freeze_count())
        return real(*args, **kwargs)

    monkeypatch.setattr(measure, "_timed", timed)
    callbacks = list(gc.callbacks)
    frozen = measure.run("bic", stream, params, warm=False)
    loose = measure.run("bic", stream, params, warm=False, freeze_gc=False)
    assert seen[0] > 0 and seen[1] == 0             # everything alive at the start, frozen
    assert gc.get_freeze_count() == 0 and gc.callbacks == callbacks
    assert frozen.gc_frozen and not loose.gc_frozen
    assert "gc frozen after warm-up" in frozen.method


def test_gc_watch_counts_only_armed_passes():
    watch = measure._GcWatch(measure.CLOCKS["cpu"])
    gc.callbacks.append(watch)
    try:
        gc.collect()                                 # not armed: not counted
        watch.armed = True
        gc.collect()                                 # a full pass inside a "trigger"
        gc.collect(0)
        watch.armed = False
    finally:
        gc.callbacks.remove(watch)
    assert (watch.passes, watch.full) == (2, 1) and watch.seconds >= 0


def test_gc_passes_in_triggers_are_counted(small, monkeypatch):
    # a collector pass forced inside every triggering call shows in the row;
    # passes in the rest-of-slide calls and fill pieces do not
    stream, params = small
    calls = []
    real = measure._contract_feed

    def feed_with_gc(engine, stream):
        prepare, feed = real(engine, stream)

        def collecting(batch):
            calls.append(len(batch))
            if len(batch) == 1:
                gc.collect()
            return feed(batch)
        return prepare, collecting

    monkeypatch.setattr(measure, "_contract_feed", feed_with_gc)
    m = measure.run("bic", stream, params, warm=False)
    # (the collector may also have run by itself in a trigger: at least one per window)
    assert m.n_windows > 0 and m.gc_full_in_triggers >= m.n_windows
    assert m.gc_passes_in_triggers >= m.gc_full_in_triggers
    assert m.row()["gc_ms_in_triggers"] >= 0


def test_targets_table_has_both_placements_and_workloads(tmp_path):
    out = tmp_path / "targets-quick.csv"
    assert targets.main(["--edges", "20000", "--rate", "100", "--queries", "5", "--clock", "cpu",
                         "--table-only", "--table-engines", "bic,rwc", "--gc-compare", "--out", str(out)]) == 0
    with open(tmp_path / "targets-latency-quick.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert {(r["stream"], r["workload"], r["engine"]) for r in rows} == {
        (s, w, e) for s in ("rmat", "powerlaw") for w in ("top1000", "uniform")
        for e in ("bic", "rwc")}
    for row in rows:
        assert row["commit"] and float(row["load1_before"]) >= 0
        assert float(row["window_p99_ms"]) > 0 and float(row["inside_p99_ms"]) > 0
        assert float(row["unfrozen_p99_ms"]) > 0 and int(row["unfrozen_gc_in_triggers"]) >= 0
        if row["engine"] == "bic":
            assert row["defers"] == "True" and "build inside" in row["inside_method"]
            assert "deferred" in row["method"]
        else:
            assert row["defers"] == "False" and row["inside_p99_ms"] == row["window_p99_ms"]
    assert {r["edges"] for r in rows if r["stream"] == "powerlaw"} == {"6000"}
