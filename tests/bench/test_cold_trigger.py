"""bench/connectivity/cold_trigger.py: the ablations and the stage split, on a tiny run."""
import pytest

from streamspec.bench.connectivity import cold_trigger
from streamspec.spec.connectivity import Params
from streamspec.spec.registry import Registry


def test_a_tiny_run_has_every_ablation_and_splits_the_stages():
    rows = cold_trigger.measure(["msf"], [2000], triggers=5, edges=20_000, thrash_bytes=1 << 20)
    assert [r["variant"] for r in rows] == list(cold_trigger.VARIANTS)
    assert all(r["triggers"] == 5 and r["p50_us"] > 0 and r["p99_us"] >= r["p50_us"] for r in rows)
    (line,) = cold_trigger.stages(rows)
    assert line.startswith("msf evict 2000: P50 ") and "+ results" in line


@pytest.mark.parametrize("variant", ["process", "feed", "run"])
def test_an_ablation_skips_its_stages_and_full_is_the_engine(variant):
    cls = type(Registry.create("connectivity", "msf", Params(r=2, s=1, workload=[(1, 2)])))
    assert cold_trigger.ablation(cls, "full") is cls
    made = cold_trigger.ablation(cls, variant)
    assert issubclass(made, cls) and made is not cls
    skipped = {"process": {"process"}, "feed": {"_run", "_results"}, "run": {"_results"}}[variant]
    assert {k for k in ("process", "_run", "_results") if k in made.__dict__} == skipped
