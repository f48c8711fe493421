"""Bad input is never silently reinterpreted or truncated, and always located (issue 30).

The classes the first table (``test_bad_inputs``) did not cover: an unterminated CSV quote
(it used to swallow the rest of the file, exit 0), a UTF-8 byte order mark (it used to turn
every id into a string) and a NUL byte, JSON nested past the recursion limit, a missing
required field, a SQLite timeline time that is not an integer, ``--engine ''``, a Parquet
edge file without a column or with a ``t`` of words, an input that cannot be opened, and
times whose window end does not fit in 64 bits.  Each runs ``streamspec.pipeline.cli.main``
on real files: exit 2, the message names ``file:line`` (or the row, the column), nothing is
written at ``--output``, and Spark never starts (``no_spark``).  Where the shape allows, a
small generator of corrupt records (hypothesis) picks the line and the place of the fault.
"""
from __future__ import annotations

import builtins
import io
import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamspec.pipeline.io import csv_records, csv_table, json_objects
from streamspec.pipeline.io.edges import load_text_edges

from .test_bad_inputs import (DATA, EDGES, ITEMS, KWS, QUERIES, REMOTE, connectivity, kws,  # noqa: F401
                              no_spark, run, simjoin, topkjoin)

DEEP = "[" * 100_000 + "]" * 100_000
BOM = "\ufeff"
# each example is a whole CLI run (about 0.3 s): at most 40 of them, whatever the profile
FIXTURES = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture],
                    max_examples=min(settings().max_examples, 40))


def fails(argv, names: dict, tmp: Path, capsys) -> str:
    """Run ``argv``; assert exit 2, no traceback, nothing at the output; the message."""
    out = tmp / "out"
    code = run(argv, names, str(out))
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and err.startswith("streamspec: error: "), err
    assert not out.exists()
    return err


def kws_inputs(d: Path, **replaced: str) -> list[str]:
    """The sample kws relations copied to ``d``, with ``replaced`` (relation -> text)."""
    inputs = []
    for rel in ("director", "movie", "plays", "actor"):
        path = d / f"{rel}.csv"
        path.write_text(replaced.get(rel, (KWS / f"{rel}.csv").read_text()))
        inputs.append(f"{rel}={path}")
    return inputs


# -- 1. an unterminated quote: located where it opened, on every CSV reader ------------------
def test_kws_unterminated_quote_is_located_where_it_opened(tmp_path, capsys, no_spark):
    """The issue's case: ``m1,20,11,1,"Pulp Fiction`` on movie.csv line 2 (was exit 0, the
    rest of the file swallowed into one title)."""
    lines = (KWS / "movie.csv").read_text().splitlines(keepends=True)
    lines[1] = 'm1,20,11,1,"Pulp Fiction\n'
    err = fails(kws(*kws_inputs(tmp_path, movie="".join(lines))), {}, tmp_path, capsys)
    assert f"{tmp_path / 'movie.csv'}:2: unterminated quote" in err


def test_topkjoin_unterminated_quote_names_the_opening_line(tmp_path, capsys, no_spark):
    """Was reported at the file's last line (``items.csv:41`` for a quote opened on 6)."""
    lines = Path(ITEMS).read_text().splitlines(keepends=True)[:41]
    lines[5] = '"' + lines[5]
    items = tmp_path / "items.csv"
    items.write_text("".join(lines))
    err = fails(topkjoin(str(items)), {}, tmp_path, capsys)
    assert f"{items}:6: unterminated quote" in err


@pytest.mark.parametrize("text,line,kind", [
    ('u,v,t\n1,2,1\n"2,3,2\n3,4,3\n', 3, "edges"),     # was exit 0: '"2' a text id
    ('1 2 1\n"2" "3" 2\n', 2, "edges"),
    ('0 1\n1 "2"\n', 2, "queries")])
def test_a_quote_in_connectivity_text_is_an_error_at_its_line(text, line, kind, tmp_path, capsys,
                                                              no_spark):
    """Edge and query text is never quoted: a ``"`` used to become part of a text id (and
    every other id text with it, the id rule), silently."""
    path = tmp_path / f"{kind}.txt"
    path.write_text(text)
    argv = connectivity(str(path)) if kind == "edges" else connectivity(EDGES, queries=str(path))
    err = fails(argv, {}, tmp_path, capsys)
    assert f"{path}:{line}: a double quote in the line" in err


@FIXTURES
@given(data=st.data())
def test_an_unterminated_quote_anywhere_is_located(tmp_path_factory, capsys, no_spark, data):
    """Generated: a quote opened at the start of a random field of a random data line of
    plays.csv (never closed) is an error at that line, whatever follows it."""
    tmp = tmp_path_factory.mktemp("quote")
    lines = (KWS / "plays.csv").read_text().splitlines(keepends=True)
    n = data.draw(st.integers(2, len(lines)), label="line")
    fields = lines[n - 1].rstrip("\n").split(",")
    f = data.draw(st.integers(0, len(fields) - 1), label="field")
    fields[f] = '"' + fields[f] + data.draw(st.sampled_from(["", "x", ' "" y']), label="tail")
    lines[n - 1] = ",".join(fields) + "\n"
    err = fails(kws(*kws_inputs(tmp, plays="".join(lines))), {}, tmp, capsys)
    assert f"{tmp / 'plays.csv'}:{n}: unterminated quote" in err


def test_quoted_newlines_still_read_and_the_opening_line_found():
    """A closed quote may hold newlines (one record, numbered by the line it starts on); an
    unclosed one is named at the line it opened, not the record's first line."""
    good = 'a,b\n"x\ny",1\n2,3\n'
    assert list(csv_records(io.StringIO(good, newline=""), str)) == [
        (1, ["a", "b"]), (2, ["x\ny", "1"]), (4, ["2", "3"])]
    bad = 'a,b\n"x\ny","open\n2,3\n'
    with pytest.raises(ValueError, match="^4: unterminated quote"):
        list(csv_records(io.StringIO(bad.replace("y\",", "y\",\n"), newline=""), str))
    with pytest.raises(ValueError, match="^3: unterminated quote"):
        list(csv_records(io.StringIO(bad, newline=""), str))


def test_a_bad_record_after_quoted_newlines_is_named_at_the_line_it_starts(tmp_path):
    """Was: the line where the record ends, and every later record's line shifted by the
    newlines inside quotes: ``run`` (``csv_table``) and a stream's row (``record_line``,
    blank lines skipped as Spark skips them) name the physical line a record starts on."""
    from streamspec.pipeline.stream_check import check_file, record_line

    path = tmp_path / "part-0001.csv"
    path.write_text('u,v,t,key\n1,2,1,"a\nb\nc"\n\n2,3,3,"x\ny"\n4,5,6,7,8\n')
    with pytest.raises(ValueError, match=r"part-0001.csv:8: expected 4 fields"):
        csv_table(str(path))
    with pytest.raises(ValueError, match=r"part-0001.csv:8: expected 4 fields"):
        check_file(str(path), "csv", "u long, v long, t long, key string")
    assert [record_line(str(path), "csv", n) for n in range(4)] == [2, 6, 8, None]
    (tmp_path / "a.json").write_text('{"u":1}\n\n  \n{"u":2}\n')
    assert [record_line(str(tmp_path / "a.json"), "json", n) for n in range(3)] == [1, 4, None]


# -- 2. a byte order mark is skipped at the start; a NUL is an error at its line -------------
def test_a_bom_before_the_first_snap_edge_keeps_integer_ids(tmp_path):
    """Was: every id a string (``"\\ufeff67"`` is not 67)."""
    bommed = tmp_path / "edges.txt"
    bommed.write_text(BOM + Path(EDGES).read_text(), encoding="utf-8")
    plain, _ = load_text_edges(EDGES)
    got, _ = load_text_edges(str(bommed))
    assert got["u"].dtype.kind == "i" and got["v"].dtype.kind == "i"
    pd.testing.assert_frame_equal(got, plain)


def test_a_bom_before_a_csv_header_or_a_json_line_is_skipped(tmp_path):
    items = tmp_path / "items.csv"
    items.write_text(BOM + "id,x,ts\n1,2,3\n", encoding="utf-8")
    frame, wheres = csv_table(str(items))
    assert list(frame.columns) == ["id", "x", "ts"] and wheres == [f"{items}:2"]
    lines = tmp_path / "sets.jsonl"
    lines.write_text(BOM + '{"id": 1}\n', encoding="utf-8")
    assert list(json_objects(str(lines))) == [(f"{lines}:1", {"id": 1})]
    later = tmp_path / "later.txt"            # a BOM not at the start is a character
    later.write_text("1 2 0\n" + BOM + "3 4 1\n", encoding="utf-8")
    assert load_text_edges(str(later))[0]["u"].tolist() == ["1", BOM + "3"]


@FIXTURES
@given(data=st.data())
def test_a_nul_inside_an_id_is_an_error_at_its_line(tmp_path_factory, capsys, no_spark, data):
    """Generated: a NUL at a random place of a random edge line; was: every id a string."""
    tmp = tmp_path_factory.mktemp("nul")
    lines = Path(EDGES).read_text().splitlines(keepends=True)
    data_lines = [i for i, line in enumerate(lines) if line.strip() and not line.startswith("#")]
    i = data.draw(st.sampled_from(data_lines[:200]), label="line")
    at = data.draw(st.integers(0, len(lines[i].rstrip("\n"))), label="position")
    lines[i] = lines[i][:at] + "\x00" + lines[i][at:]
    edges = tmp / "edges.txt"
    edges.write_text("".join(lines))
    err = fails(connectivity(str(edges)), {}, tmp, capsys)
    assert f"{edges}:{i + 1}: a NUL byte in the line" in err


def test_a_nul_in_a_csv_field_is_an_error_at_its_line(tmp_path, capsys, no_spark):
    items = tmp_path / "items.csv"
    items.write_text("id,x,ts\n1,1,10\n2\x003,1,11\n")
    err = fails(topkjoin(str(items)), {}, tmp_path, capsys)
    assert f"{items}:3: a NUL byte in the line" in err


def test_a_nul_inside_a_json_string_is_an_error_at_its_line_and_column(tmp_path, capsys,
                                                                        no_spark):
    """Raw control bytes are not JSON: named with the column (was "... character at", cut)."""
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": 1, "x": 1, "ts": 10}\n{"id": "a\x00b", "x": 1, "ts": 11}\n')
    err = fails(topkjoin(str(items)), {}, tmp_path, capsys)
    assert f"{items}:2: not JSON: Invalid control character at column 10" in err


# -- 3. missing fields, JSON nested too deep -----------------------------------------------
@pytest.mark.parametrize("problem,text,words", [
    ("topkjoin", '{"id": 1, "x": 1, "ts": 1}\n{"id": 2, "x": 1}\n', ":2: ts is missing"),
    ("simjoin", '{"id": 2, "tokens": [1]}\n', ":1: missing field 'ts'"),
    ("kws", '{"tid": "d2", "did": 2, "name": "R"}\n', ":1: column t must be an integer time, "
                                                      "got None"),
])
def test_a_json_row_without_its_time_is_located(problem, text, words, tmp_path, capsys, no_spark):
    path = tmp_path / "rows.jsonl"
    path.write_text(text)
    argv = {"topkjoin": lambda: topkjoin(str(path)), "simjoin": lambda: simjoin(str(path)),
            "kws": lambda: kws(f"director={path}")}[problem]()
    assert f"{path}{words}" in fails(argv, {}, tmp_path, capsys)


@pytest.mark.parametrize("problem,line", [("simjoin", 1), ("topkjoin", 2), ("kws", 1),
                                          ("kws-schema-changes", 2), ("kws-schema", None),
                                          ("kws-yaml-schema", None)])
def test_json_nested_100000_deep_is_located_not_a_recursion_error(problem, line, tmp_path, capsys,
                                                                   no_spark):
    path = tmp_path / {"kws-schema": "schema.json", "kws-yaml-schema": "schema.yaml"}.get(
        problem, "deep.jsonl")
    good = {"simjoin": '{"id": 1, "ts": 1, "tokens": [1]}', "topkjoin": '{"id": 1, "x": 1, "ts": 1}',
            "kws": "", "kws-schema-changes": '{"t": 5, "remove_edge": "md"}'}.get(problem, "")
    path.write_text((good + "\n" if line == 2 else "") + DEEP + "\n")
    argv = {"simjoin": lambda: simjoin(str(path)), "topkjoin": lambda: topkjoin(str(path)),
            "kws": lambda: kws(f"director={path}"),
            "kws-schema-changes": lambda: kws(extra=("--schema-changes", str(path))),
            "kws-schema": lambda: kws(schema=str(path)),
            "kws-yaml-schema": lambda: kws(schema=str(path))}[problem]()
    err = fails(argv, {}, tmp_path, capsys)
    where = f"{path}:{line}: " if line else f"{path}: "
    assert f"{where}not {'YAML' if 'yaml' in problem else 'JSON'}: nested too deep" in err


def test_the_tasks_parsers_refuse_deep_json_as_a_value_error():
    """The Spark tasks' parsers hand a deep line to the validating reader (``Unfit`` or a
    ValueError, their 'not mine' signals), never a RecursionError out of a task."""
    from streamspec.pipeline.io import kws_text, simjoin as simjoin_io, topkjoin_text

    data = (DEEP + "\n").encode()
    with pytest.raises((ValueError, simjoin_io.Unfit)):
        simjoin_io.json_records(data, "f")
    with pytest.raises(kws_text.Unfit, match="nested too deep"):
        kws_text._json_rows(data)
    plan = topkjoin_text.TextItems("f", len(data), "json", 0, False)
    with pytest.raises((ValueError, topkjoin_text.Unfit)):
        topkjoin_text.parse_chunk(plan, data)


# -- 4. a remote time that is not an integer; an empty engine name ---------------------------
def test_a_sqlite_timeline_time_of_words_is_rejected_at_its_rowid(tmp_path, capsys, no_spark):
    """The CSV timeline rejects ``soon`` at its line; the SQLite one accepted it."""
    db = tmp_path / "remote.db"
    with sqlite3.connect(db) as conn:
        conn.executescript("CREATE TABLE timeline (key, time INTEGER, value REAL);"
                           "INSERT INTO timeline VALUES (1, 5, 1.0), (2, 'soon', 2.0);")
    conn.close()
    err = fails(topkjoin(ITEMS, remote=str(db)), {}, tmp_path, capsys)
    assert f"{db}:table timeline rowid 2: time must be a 64-bit integer, got 'soon'" in err


@pytest.mark.parametrize("argv", [topkjoin(ITEMS, "--engine", ""), connectivity(EDGES, "--engine", "")])
def test_an_empty_engine_name_names_the_registered_engines(argv, tmp_path, capsys, no_spark):
    err = fails(argv, {}, tmp_path, capsys)
    assert "no engine '' for problem" in err and "(registered: " in err


# -- 5. Parquet edges without a column or with a t of words; an unreadable input -----------
@pytest.mark.parametrize("columns,words", [
    ({"u": [1, 2], "t": [1, 2]}, "Parquet edges need columns u, v, t[, key]; missing ['v']"),
    ({"u": [1, 2], "v": [2, 3], "t": ["soon", "later"]}, "column t must be an integer type, got string"),
    ({"u": [1.5], "v": [2.0], "t": [1]}, "column u must be integer or string, got double"),
])
def test_parquet_edge_columns_are_checked_before_spark(columns, words, tmp_path, capsys, no_spark):
    """Was a ValueError out of the footers' planning (``'v' is not in list``)."""
    path = tmp_path / "edges.parquet"
    pd.DataFrame(columns).to_parquet(path)
    assert f"{path}: {words}" in fails(connectivity(str(path)), {}, tmp_path, capsys)


def test_an_unreadable_simjoin_input_cannot_be_read(tmp_path, capsys, no_spark, monkeypatch):
    """As the other problems say it (was a PermissionError traceback).  Tests run as root
    here, where file modes do not stop a read: the open itself is made to fail."""
    path = tmp_path / "sets.jsonl"
    path.write_text(Path(DATA / "simjoin-sets.jsonl").read_text())
    real = builtins.open

    def refuse(file, *args, **kwargs):
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied", str(file))
        return real(file, *args, **kwargs)
    monkeypatch.setattr(builtins, "open", refuse)
    for argv in (simjoin(str(path)), simjoin(str(path), "--join", "self")):
        assert f"{path}: cannot read: Permission denied" in fails(argv, {}, tmp_path, capsys)


# -- 6. times whose window end does not fit in 64 bits -----------------------------------
TOP = 2**63 - 1


@FIXTURES
@given(room=st.integers(0, 499))
def test_an_edge_time_without_room_for_its_window_is_located(tmp_path_factory, capsys, no_spark,
                                                             room):
    """Generated: the second edge's time is less than r=500 from 2^63-1 (was an
    OverflowError in a Spark task computing its window's end)."""
    tmp = tmp_path_factory.mktemp("top")
    edges = tmp / "edges.txt"
    edges.write_text(f"1 2 {TOP - 10**6}\n2 3 {TOP - room}\n")
    err = fails(connectivity(str(edges)), {}, tmp, capsys)
    assert f"{edges}:2: edge time {TOP - room} leaves no room for the window" in err


def test_times_at_the_top_in_parquet_edges_and_topkjoin_items(tmp_path, capsys, no_spark):
    path = tmp_path / "edges.parquet"
    pd.DataFrame({"u": [1, 2], "v": [2, 3], "t": [1, TOP - 3]}).to_parquet(path)
    err = fails(connectivity(str(path)), {}, tmp_path, capsys)
    assert f"{path} (its latest edge): edge time {TOP - 3} leaves no room" in err
    items = tmp_path / "items.csv"
    items.write_text(f"id,x,ts\n1,1,5\n2,1,{TOP}\n")
    err = fails(topkjoin(str(items)), {}, tmp_path, capsys)
    assert f"{items}:3: item time {TOP} leaves no room for the window" in err
    planned = tmp_path / "items.parquet"      # footers say late: the driver's reader takes it
    pd.DataFrame({"id": [1, 2], "x": [1.0, 2.0], "ts": [1, TOP - 2]}).to_parquet(planned)
    err = fails(topkjoin(str(planned)), {}, tmp_path, capsys)
    assert f"{planned}:row 2: item time {TOP - 2} leaves no room for the window" in err


def test_the_last_representable_times_are_still_accepted(tmp_path):
    """The bound is exact: t + r = 2^63-1 is a valid window end."""
    edges = tmp_path / "edges.txt"
    edges.write_text(f"1 2 {TOP - 500}\n")
    assert load_text_edges(str(edges), window=500)[0]["t"].tolist() == [TOP - 500]


def test_json_helpers_keep_their_meaning():
    """The reader's JSON is the standard library's (only the depth bound is added)."""
    from streamspec.pipeline.io import json_loads
    assert json_loads('{"a": [1, 2.5, "x"]}') == json.loads('{"a": [1, 2.5, "x"]}')


@pytest.mark.spark
def test_a_staged_text_edge_without_room_is_located_by_the_reader(spark, tmp_path, capsys,
                                                                  monkeypatch):
    """A text input the Spark tasks parse (``pipeline.text_scan``, made to take this small
    file): the staged footers' last time leaves no room for the window, so the validating
    reader reads the file and names the line (was an OverflowError in a task)."""
    from streamspec.pipeline import text_scan

    monkeypatch.setattr(text_scan, "MIN_BYTES", 0)
    staged, real = [], text_scan.staged_plan
    monkeypatch.setattr(text_scan, "staged_plan", lambda *a: staged.append(1) or real(*a))
    edges = tmp_path / "edges.txt"
    edges.write_text("".join(f"{n} {n + 1} {n}\n" for n in range(1, 50)) + f"7 8 {TOP - 7}\n")
    err = fails(connectivity(str(edges), "--master", "local[2]"), {}, tmp_path, capsys)
    assert f"{edges}:50: edge time {TOP - 7} leaves no room for the window" in err
    assert staged, "the tasks did not parse the file"


def test_the_staging_tasks_leave_a_nul_to_the_reader(tmp_path):
    """A keyed text input the Spark tasks parse: a NUL in a key is refused by the task (the
    validating reader then names the line), a clean range is staged."""
    from streamspec.pipeline import text_scan

    for text, ok in (("u v t key\n1 2 3 a\n2 3 4 b\x00c\n", False), ("u v t key\n1 2 3 a\n", True)):
        path = tmp_path / "keyed.txt"
        path.write_text(text)
        plan = text_scan.plan(str(path), "error", 10, 5, min_bytes=0)
        assert plan is not None and plan.columns == ("u", "v", "t", "key")
        report = text_scan.stage_span(plan, plan.data_start, plan.size, str(tmp_path / "p.parquet"))
        assert report[0] is ok


@pytest.mark.spark
def test_a_parquet_edge_without_room_read_by_spark_is_located(spark, tmp_path, capsys):
    """Lateness ``drop`` sends Parquet edges through Spark's validating reader (not the
    footers' plan): the edge without room for its window is named by its row."""
    path = tmp_path / "edges.parquet"
    pd.DataFrame({"u": [1, 2, 3], "v": [2, 3, 4], "t": [1, 5, TOP - 9]}).to_parquet(path)
    err = fails(connectivity(str(path), "--lateness", "drop", "--master", "local[2]"), {},
                tmp_path, capsys)
    assert f"{path}:row 3: edge time {TOP - 9} leaves no room for the window" in err
