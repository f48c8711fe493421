"""streamspec.bench.ratios: medians -> ratios within a group, floors, verdicts, exit codes."""
import json

import pytest

from streamspec.bench import ratios


def doc(*benches):
    return {"benchmarks": [
        {"group": g, "name": n, "stats": {"median": m}, "extra_info": extra}
        for g, n, m, extra in benches]}


RESULTS = doc(("g1", "test_stream[bic]", 0.1, {}),
              ("g1", "test_stream[rwc]", 0.6, {}),
              ("g1", "whatever", 1.2, {"subject": "scipy"}),
              ("g2", "test_small[bic]", 1.0, {}))


def floors_file(tmp_path, text):
    path = tmp_path / "floors.toml"
    path.write_text(text)
    return path


def test_subject_from_extra_info_param_id_or_name():
    assert ratios.subject({"name": "x[a]", "extra_info": {"subject": "b"}}) == "b"
    assert ratios.subject({"name": "test_x[bic-10]"}) == "bic-10"
    assert ratios.subject({"name": "plain"}) == "plain"


def test_medians_and_ratios():
    table = ratios.medians(RESULTS)
    assert table == {"g1": {"bic": 0.1, "rwc": 0.6, "scipy": 1.2}, "g2": {"bic": 1.0}}
    got = {(g, s): r for g, s, base, r in ratios.ratios(table)}
    assert got[("g1", "bic")] == pytest.approx(12.0)      # against the slowest, scipy
    assert got[("g1", "scipy")] == pytest.approx(1.0)


def test_duplicate_subject_is_an_error():
    with pytest.raises(ValueError):
        ratios.medians(doc(("g", "a[x]", 1, {}), ("g", "b", 2, {"subject": "x"})))


FLOORS = """
[[floor]]
group = "g1"
subject = "bic"
baseline = "rwc"
min_ratio = 5
[[floor]]
group = "g1"
subject = "bic"
baseline = "scipy"
min_ratio = 20
[[floor]]
group = "g1"
subject = "bic"
baseline = "dtree"
min_ratio = 2
[[floor]]
group = "full"
subject = "bic"
baseline = "rwc"
min_ratio = 5
"""


def test_check_statuses(tmp_path):
    verdicts = ratios.check(ratios.medians(RESULTS), ratios.load_floors(floors_file(tmp_path, FLOORS)))
    assert [v.status for v in verdicts] == ["ok", "BROKEN", "MISSING", "not run"]
    assert verdicts[0].ratio == pytest.approx(6.0)
    assert verdicts[1].ratio == pytest.approx(12.0)
    assert ratios.exit_code(verdicts) == 1
    assert ratios.exit_code(verdicts[:1] + verdicts[3:]) == 0
    assert ratios.exit_code([verdicts[0], verdicts[2]]) == 1
    assert ratios.exit_code([verdicts[0], verdicts[2]], allow_missing=True) == 0


def test_floor_file_errors(tmp_path):
    with pytest.raises(ValueError):
        ratios.load_floors(floors_file(tmp_path, '[[floor]]\ngroup = "g"\nsubject = "a"\n'))
    with pytest.raises(ValueError):
        ratios.load_floors(floors_file(
            tmp_path, '[[floor]]\ngroup="g"\nsubject="a"\nbaseline="b"\nmin_ratio=0\n'))


def test_cli_exit_codes(tmp_path, capsys):
    results = tmp_path / "r.json"
    results.write_text(json.dumps(RESULTS))
    ok = floors_file(tmp_path, FLOORS.split("[[floor]]\ngroup = \"g1\"\nsubject = \"bic\"\n"
                                            "baseline = \"scipy\"")[0])
    assert ratios.main([str(results), "--floors", str(ok)]) == 0
    assert ratios.main([str(results), "--floors", str(floors_file(tmp_path, FLOORS))]) == 1
    out = capsys.readouterr().out
    assert "BROKEN" in out and "MISSING" in out and "not run" in out
    assert ratios.main([str(tmp_path / "absent.json"), "--floors", str(ok)]) == 2


def test_committed_floors_parse():
    floors = ratios.load_floors(ratios.Path(ratios.__file__).with_name("ratio_floors.toml"))
    assert floors and all(f.min_ratio > 0 for f in floors)


def test_a_failing_ratio_prints_below_its_floor(tmp_path, capsys):
    # 0.0967 against a floor of 0.1 used to print as x0.10 (floor x0.1): the miss was invisible
    results = tmp_path / "r.json"
    results.write_text(json.dumps(doc(("g", "a", 1.0, {}), ("g", "b", 0.0967, {}))))
    floors = floors_file(tmp_path, '[[floor]]\ngroup="g"\nsubject="a"\nbaseline="b"\n'
                                   'min_ratio=0.1\n')
    assert ratios.main([str(results), "--floors", str(floors)]) == 1
    assert "x0.0967 (floor x0.1;" in capsys.readouterr().out
    assert ratios.exact(0.099999, 0.1) == "0.099999"
