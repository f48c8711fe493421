"""The real stream's characteristics (``real_stats``, paper Fig. 9 / Table 3) and the Table 6
summary (``table6``, paper Table 6) on small inputs: fast lane, no engine runs."""
import numpy as np
import pytest

from streamspec.bench.topkjoin import real_stats, real_stream, table6
from streamspec.bench.topkjoin.data import DATA

needs_data = pytest.mark.skipif(not (real_stream.SLIDES.exists() and real_stream.TOTALS.exists()),
                                reason="shared AcquaTop data absent")


@needs_data
def test_window_rows_of_the_real_stream_match_the_authors_totals():
    stream = real_stream.read_slides()
    rows = real_stats.window_rows("real", 0, real_stats.window_values(*real_stream.items(stream)))
    assert [(r["tau"], r["users"]) for r in rows] == real_stream.read_totals()
    assert all(r["both"] + r["one"] == r["users"] for r in rows)
    # "both" is the users of both slide pieces, read off the file directly
    for r in rows:
        k = r["window"]
        assert r["both"] == len(set(stream.slides[k].count) & set(stream.early[k].count))
    users = real_stats.user_rows(stream)
    assert sum(u["windows"] for u in users) == sum(r["users"] for r in rows)


def test_table3_statistics():
    s = real_stats._stats("DS", "1", [1, 2, 3, 4])
    assert (s["average"], s["median"], s["q1"], s["q3"], s["invocations"]) == (2.5, 2.5, 1.75, 3.25, 4)


@pytest.mark.skipif(not DATA.exists(), reason="shared AcquaTop data absent")
def test_table3_of_ds_ch_20_is_near_20():
    rows = real_stats.table3(real_stats.load_snapshots(), datasets=1, chs=(20,))
    assert [r["seed"] for r in rows] == ["1", "all"]
    assert 19.0 <= rows[0]["average"] <= 21.5 and rows[0] == {**rows[1], "seed": "1"}


def _rows(values):
    """Experiment rows: engine -> metric per grid value (one dataset)."""
    out = []
    for engine, per in values.items():
        for v, m in per.items():
            out.append(dict(engine=engine, value=v, dataset=1, ndcg=m, precision=m, ndcg_java=m))
    return out


def test_table6_margins_and_summary():
    rows = _rows({"at-tsm": {3: 110.0, 5: 90.0}, "wsj-wbm": {3: 100.0, 5: 100.0},
                  "at-bsm": {3: 100.0, 5: 100.0}})
    m = table6.margins(rows, "budget", [3, 5])
    tsm = {r["value"]: r["margin_pct"] for r in m
           if (r["ours"], r["theirs"], r["metric"]) == ("at-tsm", "wsj-wbm", "ndcg")}
    assert tsm == {3: 10.0, 5: -10.0}
    assert not any(r["theirs"] == "wsj-lru" for r in m)       # pairs run only when both engines ran
    s = [r for r in table6.summary(m, "real", "budget")
         if (r["ours"], r["theirs"], r["metric"]) == ("at-tsm", "wsj-wbm", "ndcg")][0]
    assert (s["max_pct"], s["max_at"], s["min_pct"], s["min_at"]) == (10.0, 3, -10.0, 5)
    assert (s["paper_max_pct"], s["paper_min_pct"]) == (11.68, -3.58)
    only3 = table6.summary(m, "real", "budget", [3])
    assert {r["grid"] for r in only3} == {"3..3"} and all(r["max_pct"] == r["min_pct"] for r in only3)
