"""The kws job: readers, exact time-partitioned replay (halo of one window), and one Spark run."""
import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from streamspec.conformance.strategies.kws import cases
from streamspec.engines.kws.fullmesh import FullMeshEngine
from streamspec.pipeline.io.kws import read_events, read_schema
from streamspec.pipeline.jobs import kws as job
from streamspec.reference.kws import evaluate
from streamspec.spec.errors import InvalidRecord, MalformedRecord


@settings(max_examples=80, deadline=None)
@given(case=cases(), partitions=st.integers(1, 5))
def test_time_partitioned_replay_equals_single_run(case, partitions):
    params, events = case.params, case.events
    if params.window is None or not events:
        return
    whole = evaluate(params, events)
    parts = []
    for lo, hi in job.time_ranges(events, partitions):
        parts += job.run_range(FullMeshEngine, params, job.range_events(events, lo, hi, params.window), lo, hi)
    assert parts == whole


def test_readers_and_bad_records(tmp_path):
    (tmp_path / "s.json").write_text(json.dumps({
        "relations": [{"name": "R", "attributes": ["a", "s"]}, {"name": "S", "attributes": ["a"]}],
        "edges": [{"id": "e", "left": "R.a", "right": "S.a"}]}))
    schema = read_schema(str(tmp_path / "s.json"))
    (tmp_path / "r.csv").write_text("tid,t,a,s\nx,1,1,Hello World\ny,2,,\n")
    (tmp_path / "s.jsonl").write_text('{"t": 1, "a": 1}\n')
    tuples = read_events([("R", str(tmp_path / "r.csv")), ("S", str(tmp_path / "s.jsonl"))], None)
    events, wheres = tuples.events, tuples.wheres
    assert tuples.keys is None
    assert [e.tid for e in events] == ["x", "S:1", "y"]
    assert dict(events[0].values) == {"a": 1, "s": "Hello World"}
    assert wheres[1].endswith("s.jsonl:1")
    from streamspec.spec.kws import Params
    params = Params(schema, "hello", 2, 5)
    (tmp_path / "bad.csv").write_text("t,a,zzz\n1,1,2\n")
    tuples = read_events([("R", str(tmp_path / "bad.csv"))], None)
    with pytest.raises(InvalidRecord, match=r"bad.csv:2"):
        job.validate(params, tuples.events, tuples.wheres)
    (tmp_path / "bad2.csv").write_text("t,a\nsoon,1\n")
    with pytest.raises(MalformedRecord, match=r"bad2.csv:2"):
        read_events([("R", str(tmp_path / "bad2.csv"))], None)


def test_output_rows_shape():
    from streamspec.spec.kws import Appear, End
    frame = job.output_rows([Appear(3, (1, "b"), (("e", 1, "b"),), 9), End(5, (1, "b"), (("e", 1, "b"),))])
    assert frame["kind"].tolist() == ["appear", "end"]
    assert frame["tids"].tolist() == [["1", "b"], ["1", "b"]]
    assert frame["edges"].tolist()[0] == ["e:1:b"]
    assert frame["end"].tolist()[0] == 9 and pd.isna(frame["end"].tolist()[1])


@pytest.mark.spark
def test_spark_partitioned_run_equals_single_process(spark):
    args = job.demo_argv("unused")
    schema = read_schema(args[1])
    from streamspec.spec.kws import Params
    params = Params(schema, "tarantino,travolta", 5, 100)
    inputs = [tuple(a.split("=", 1)) for a in args[3:7]]
    events = read_events(inputs, None).events
    single = job.output_rows(job.run_range(FullMeshEngine, params, events, None, None))
    rows = job.replay_events(spark, FullMeshEngine, params, events, 3).toPandas()
    def key(frame):
        return sorted((k, int(t), None if pd.isna(e) else int(e), tuple(ts), tuple(es))
                      for k, t, e, ts, es in frame[["kind", "time", "end", "tids", "edges"]]
                      .astype(object).itertuples(index=False))
    assert len(single) > 0 and key(rows) == key(single)


def test_declared_types_convert_every_format(tmp_path):
    """``types`` in the schema: "007" declared string stays text (CSV typing would make it
    7), a long read from a float column is an int, a bad value is an error at its record."""
    from streamspec.pipeline.io import InputError
    from streamspec.pipeline.io.kws import read_types

    schema = {"relations": [{"name": "R", "attributes": ["a", "s", "x"],
                             "types": {"a": "long", "s": "string", "x": "double"}}]}
    (tmp_path / "s.json").write_text(json.dumps(schema))
    types = read_types(str(tmp_path / "s.json"))
    assert types == {"R": {"a": "long", "s": "string", "x": "double"}}
    (tmp_path / "r.csv").write_text("t,a,s,x\n1,5,007,2\n2,,12,\n")
    (tmp_path / "r.jsonl").write_text('{"t": 3, "a": 6.0, "s": 8, "x": "2.5"}\n')
    events = read_events([("R", str(tmp_path / "r.csv")), ("R", str(tmp_path / "r.jsonl"))],
                         None, types).events
    assert [dict(e.values) for e in events] == [{"a": 5, "s": "007", "x": 2.0},
                                                {"a": None, "s": "12", "x": None},
                                                {"a": 6, "s": "8", "x": 2.5}]
    assert isinstance(events[2].values[0][1], int)
    (tmp_path / "bad.csv").write_text("t,a\n1,five\n")
    with pytest.raises(MalformedRecord, match=r"bad.csv:2: attribute 'a': expected a 64-bit"):
        read_events([("R", str(tmp_path / "bad.csv"))], None, types)
    schema["relations"][0]["types"] = {"a": "int"}
    (tmp_path / "s.json").write_text(json.dumps(schema))
    with pytest.raises(InputError, match="type 'int' of 'a' is not one of long, double, string"):
        read_types(str(tmp_path / "s.json"))


def task_rows(table, lo, hi, w):
    """The rows the Spark join hands the task of range ``[lo, hi)`` (``replay_events``)."""
    import pyarrow as pa
    keep = [(hi is None or t < hi) and (lo is None or k == "schema" or t >= lo - w)
            for t, k in zip(table["t"].to_pylist(), table["kind"].to_pylist())]
    return table.filter(pa.array(keep, pa.bool_()))


@settings(max_examples=80, deadline=None)
@given(case=cases(), partitions=st.integers(1, 5), shuffle=st.randoms())
def test_columns_through_spark_equal_the_events(case, partitions, shuffle):
    """The typed columns (``event_table``) read back into batches (``inputs_of``), rows in
    any order, replay every range as the events do (``range_events``), schema changes,
    int and str tids and nulls included."""
    params, events = case.params, case.events
    if not events:
        return
    table = job.event_table(events)
    w = params.window
    ranges = job.time_ranges(events, partitions) if w is not None else [(None, None)]
    for lo, hi in ranges:
        part = task_rows(table.table, lo, hi, w)
        order = list(range(part.num_rows))
        shuffle.shuffle(order)                 # a shuffle does not keep the order
        import pyarrow as pa
        inputs = job.inputs_of(part.take(pa.array(order, pa.int64())), table.attributes,
                               None if lo is None else lo - w)
        evs = events if lo is None else job.range_events(events, lo, hi, w)
        assert job.run_inputs(FullMeshEngine, params, inputs, lo, hi) == \
            job.run_range(FullMeshEngine, params, evs, lo, hi)


def test_mixed_value_types_travel_exactly():
    """An attribute whose values mix types (an int, its text, a float, a huge int) is not
    given a column type: it travels as JSON and joins exactly as the events do."""
    from streamspec.spec.kws import Insert, Params
    from streamspec.spec.kws_schema import JoinEdge, Relation, Schema

    schema = Schema((Relation("R", ("a", "s")),), (JoinEdge("e", "R", "a", "R", "a"),))
    big = 2**70
    events = [Insert("R", i, {"a": a, "s": "kj"[i % 2]}, i) for i, a in
              enumerate([1, 1.0, "1", big, big, big + 1, 2**53 + 1, 2**53, None])]
    table = job.event_table(events)
    assert "a" not in dict(table.attributes) and "s" in dict(table.attributes)
    params = Params(schema, "k,j", 2, None)
    got = job.run_inputs(FullMeshEngine, params, job.inputs_of(table.table, table.attributes),
                         None, None)
    want = evaluate(params, events)
    # 1 joins 1.0, big joins big; "1", big + 1 and 2**53 + 1 (2**53 as a float) join none
    assert got == want and sorted({o.tids for o in want if len(o.tids) == 2}) == [(0, 1), (3, 4)]


def test_a_yaml_schema_reads_as_its_json_twin(tmp_path):
    """PyYAML is a dependency: ``--schema`` takes ``.yaml``/``.yml`` as the docs say."""
    from streamspec.pipeline.io import InputError
    doc = json.loads((Path(__file__).parents[2] / "pipeline" / "data" / "kws" / "schema.json").read_text())
    import yaml
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc))
    assert read_schema(str(tmp_path / "s.yaml")) == read_schema(
        str(Path(__file__).parents[2] / "pipeline" / "data" / "kws" / "schema.json"))
    (tmp_path / "bad.yml").write_text("relations: [unclosed\n")
    with pytest.raises(InputError, match=r"bad.yml: not YAML"):
        read_schema(str(tmp_path / "bad.yml"))


# -- --schema-changes -----------------------------------------------------------------
def _schema_change_inputs(tmp_path, changes: str):
    (tmp_path / "s.json").write_text(json.dumps({
        "relations": [{"name": "R", "attributes": ["a", "s"]}, {"name": "S", "attributes": ["a", "b"]}],
        "edges": [{"id": "rs", "left": "R.a", "right": "S.a"}]}))
    (tmp_path / "r.csv").write_text("tid,t,a,s\nr1,0,1,x\nr2,3,1,x\n")
    (tmp_path / "s.csv").write_text("tid,t,a,b\ns1,0,1,5\ns2,2,1,5\n")
    (tmp_path / "t.jsonl").write_text('{"tid": "t1", "t": 2, "b": 5, "s": "y"}\n'
                                      '{"tid": "t2", "t": 4, "b": 5, "s": "x y"}\n')
    (tmp_path / "changes.jsonl").write_text(changes)
    return ["--schema", str(tmp_path / "s.json"), "--input", f"R={tmp_path / 'r.csv'}",
            f"S={tmp_path / 's.csv'}", f"T={tmp_path / 't.jsonl'}", "--keywords", "x,y", "--tmax", "3",
            "--window", "6", "--schema-changes", str(tmp_path / "changes.jsonl")]


CHANGES = ('{"t": 2, "add_relation": {"name": "T", "attributes": ["b", "s"]}}\n'
           '{"t": 2, "add_edge": {"id": "st", "left": "S.b", "right": "T.b"}}\n'
           '\n'
           '{"t": 4, "remove_edge": "rs"}\n'
           '{"t": 4, "add_edge": ["rs2", "R", "a", "S", "a"]}\n'
           '{"t": 5, "remove_relation": "T"}\n')


def _args(argv):
    import argparse
    parser = argparse.ArgumentParser()
    job.add_arguments(parser)
    return parser.parse_args(argv + ["--output", "unused"])


def test_schema_changes_file_is_part_of_the_stream(tmp_path):
    from streamspec.spec.kws import AddEdge, AddRelation, RemoveEdge, RemoveRelation
    plan = job.prepare(_args(_schema_change_inputs(tmp_path, CHANGES)))
    kinds = [(type(e).__name__, e.t) for e in plan.events]
    # a change applies before the tuples of its time, changes of one time in file order
    assert kinds[:5] == [("Insert", 0), ("Insert", 0), ("AddRelation", 2), ("AddEdge", 2), ("Insert", 2)]
    assert [type(e) for e in plan.events if e.t == 4][:2] == [RemoveEdge, AddEdge]
    assert any(isinstance(e, RemoveRelation) for e in plan.events)
    assert isinstance(plan.events[2], AddRelation) and plan.events[2].relation.attributes == ("b", "s")
    want = evaluate(plan.params, plan.events)
    assert any(o.time == 4 and not hasattr(o, "end") for o in want), "the edge removal ends results"
    for name in ("fullmesh", "partialmesh", "forest"):
        from streamspec.spec.registry import Registry
        got = job.run_range(Registry.get("kws", name), plan.params, plan.events, None, None)
        assert got == want, name


def test_schema_changes_apply_to_every_key(tmp_path):
    argv = _schema_change_inputs(tmp_path, CHANGES)
    (tmp_path / "r.csv").write_text("key,tid,t,a,s\nk1,r1,0,1,x\nk2,r1,3,1,x\n")
    (tmp_path / "s.csv").write_text("key,tid,t,a,b\nk1,s1,0,1,5\nk2,s1,2,1,5\n")
    (tmp_path / "t.jsonl").write_text('{"key": "k1", "tid": "t1", "t": 2, "b": 5, "s": "y"}\n')
    plan = job.prepare(_args(argv))
    from streamspec.spec.kws import AddRelation
    adds = [k for e, k in zip(plan.events, plan.keys) if isinstance(e, AddRelation)]
    assert sorted(adds) == ["k1", "k2"]


@pytest.mark.parametrize("line, error, message", [
    ('{"t": 2, "add_edge": ["e", "R", "a"]}', MalformedRecord, "add_edge takes"),
    ('{"t": 2, "add_edgz": "e"}', MalformedRecord, "a schema change is one of"),
    ('{"add_relation": {"name": "U", "attributes": ["a"]}}', MalformedRecord, "column t must be"),
    ('{"t": 2, "add_relation": {"name": "U"}}', MalformedRecord, "missing 'attributes'"),
    ('{"t": 2, "remove_edge": "rs", "add_edge": ["e", "R", "a", "S", "a"]}', MalformedRecord, "got 2 changes"),
    ('{"t": 2, "add_edge": {"id": "e", "left": "Ra", "right": "S.a"}}', MalformedRecord, "RELATION.ATTRIBUTE"),
    ('not json', MalformedRecord, "not JSON"),
    ('{"t": 2, "remove_edge": "nope"}', InvalidRecord, "unknown edge 'nope'"),
    ('{"t": 2, "add_edge": ["e", "R", "zz", "S", "a"]}', InvalidRecord, "zz"),
    ('{"t": 1, "remove_relation": "S"}', InvalidRecord, "unknown relation 'S'"),
])
def test_bad_schema_change_names_file_and_line(tmp_path, line, error, message):
    argv = _schema_change_inputs(tmp_path, '{"t": 1, "add_relation": {"name": "T", "attributes": ["b", "s"]}}\n'
                                 + line + "\n")
    if "remove_relation" in line:   # S's later tuple is then of an unknown relation: at its own line
        with pytest.raises(error, match=r"s.csv:3: " + message):
            job.prepare(_args(argv))
        return
    with pytest.raises(error, match=r"changes.jsonl:2: .*" + message):
        job.prepare(_args(argv))


def test_bad_schema_changes_exit_2_and_write_nothing(tmp_path, capsys):
    from streamspec.pipeline.cli import main
    argv = _schema_change_inputs(tmp_path, '{"t": 2, "remove_edge": "nope"}\n')
    out = tmp_path / "out"
    assert main(["run", "kws", *argv, "--output", str(out)]) == 2
    assert "changes.jsonl:1" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.spark
def test_spark_run_with_schema_changes_equals_oracle(spark, tmp_path):
    from streamspec.pipeline.cli import main
    argv = _schema_change_inputs(tmp_path, CHANGES)
    plan = job.prepare(_args(argv))
    want = job.output_rows(evaluate(plan.params, plan.events))
    out = tmp_path / "out"
    assert main(["run", "kws", *argv, "--engine", "fullmesh", "--partitions", "2", "--output", str(out)]) == 0
    got = pd.read_parquet(out)
    def key(frame):
        return sorted((k, int(t), None if pd.isna(e) else int(e), tuple(ts), tuple(es))
                      for k, t, e, ts, es in frame[["kind", "time", "end", "tids", "edges"]]
                      .astype(object).itertuples(index=False))
    assert len(want) > 0 and key(got) == key(want)
