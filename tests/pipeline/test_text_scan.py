"""A text edge list parsed by the Spark tasks (``pipeline.text_scan``) equals the driver's read.

The staged path may only accept a file whose every data line the validating
reader (``pipeline.io.edges.load_text_edges``) reads as the same ``u, v, t``
edge, in the same order; everything else it must refuse, and the job then
runs the validating reader, which names the bad line exactly as before.
Streams come from the conformance strategy (ties, gaps, bursts, self loops)
written in the formats users have: SNAP with comments, tabs, CSV with a
header in any column order, CRLF line ends, blank lines.
"""
from __future__ import annotations

import os

import pyarrow.parquet as pq
import pytest
from hypothesis import given, strategies as st

from streamspec.conformance.profiles import spark_settings
from streamspec.conformance.strategies.connectivity import cases
from streamspec.pipeline import range_scan, text_scan
from streamspec.pipeline.cli import main
from streamspec.pipeline.io.edges import load_text_edges
from streamspec.spec.connectivity import Edge
from streamspec.spec.registry import Registry

STYLES = {
    "snap": ("# a comment\n# another\n", " ", "\n", ("u", "v", "t")),
    "tabs": ("", "\t", "\n", ("u", "v", "t")),
    "csv": ("u,v,t\n", ",", "\n", ("u", "v", "t")),
    "csv t first, CRLF": ("t,u,v\r\n", ",", "\r\n", ("t", "u", "v")),
    "spaced header": ("\n# c\n\nv u t\n", " ", "\n", ("v", "u", "t")),
}


def write_text(path, edges, style, blank_every=0):
    head, sep, end, order = STYLES[style]
    lines = [head]
    for n, e in enumerate(edges):
        if blank_every and n % blank_every == blank_every - 1:
            lines.append(end)
        fields = {"u": e.u, "v": e.v, "t": e.t}
        lines.append(sep.join(str(fields[c]) for c in order) + end)
    path.write_bytes("".join(lines).encode())
    return str(path)


def staged_edges(source, tmp_path, parts):
    """The edges the tasks' parser makes of each span, in file order (no Spark needed)."""
    from streamspec.pipeline.io.lines import line_cuts

    cuts = [source.data_start] + [c for c in line_cuts(source.source, source.size, parts)
                                  if c > source.data_start]
    out = []
    for n, (a, b) in enumerate(zip(cuts, cuts[1:])):
        part = tmp_path / f"p{parts}-{n}.parquet"
        if not text_scan.stage_span(source, a, b, str(part))[0]:
            return None
        table = pq.read_table(part)
        out += list(zip(*(table.column(c).to_pylist() for c in ("u", "v", "t"))))
    return out


def driver_edges(path):
    frame, _ = load_text_edges(path)
    return list(zip(frame["u"].tolist(), frame["v"].tolist(), frame["t"].tolist()))


@pytest.mark.parametrize("style", sorted(STYLES))
@pytest.mark.parametrize("parts", [1, 2, 3, 7])
def test_spans_parse_to_the_driver_readers_edges(tmp_path, style, parts):
    edges = [Edge(i % 13, -(i % 7), i // 3) for i in range(200)]
    path = write_text(tmp_path / "e.txt", edges, style, blank_every=17)
    source = text_scan.plan(path, "error", 10, 5, min_bytes=0)
    assert source is not None and source.columns == STYLES[style][3]
    assert staged_edges(source, tmp_path, parts) == driver_edges(path)


@pytest.mark.parametrize("why, text", [
    ("comment after the head", "1 2 3\n# late comment\n4 5 6\n"),
    ("a second separator", "1 2 3\n4\t5 6\n"),
    ("two spaces", "1 2 3\n4  5 6\n"),
    ("leading space", "1 2 3\n 4 5 6\n"),
    ("trailing space", "1 2 3\n4 5 6 \n"),
    ("text id", "1 2 3\nx 5 6\n"),
    ("id beyond 64 bits", "1 2 3\n99999999999999999999 5 6\n"),
    ("float time", "1 2 3\n4 5 6.0\n"),
    ("quoted id", '1 2 3\n"4" 5 6\n'),
    ("two fields", "1 2 3\n4 5\n"),
    ("four fields", "1 2 3\n4 5 6 7\n"),
    ("blank line of spaces", "1 2 3\n   \n4 5 6\n"),
    ("empty field", "1,2,3\n4,,6\n"),
    ("not UTF-8", "1 2 3\n4 5 6\n\xff\n"),
])
def test_the_tasks_parser_refuses_what_the_reader_must_judge(tmp_path, why, text):
    path = tmp_path / "e.txt"
    path.write_bytes(text.encode("latin-1"))
    source = text_scan.plan(str(path), "error", 10, 5, min_bytes=0)
    assert source is not None, why
    assert text_scan.stage_span(source, source.data_start, source.size,
                                str(tmp_path / "out.parquet"))[0] is False, why
    assert not (tmp_path / "out.parquet").exists()


@pytest.mark.parametrize("why, text, kwargs", [
    ("a key of two tokens", "u v t key\n1 2 3 a,b\n", {}),
    ("text ids first", "a b 3\n", {}),
    ("leading space first", " 1 2 3\n", {}),
    ("lone CR in the head", "# x\r1 2 3\n", {}),
    ("only comments", "# x\n# y\n", {}),
    ("keyed lateness drop", "u v t key\n1 2 3 a\n", {"lateness": "drop"}),
    ("s > r", "1 2 3\n", {"r": 1, "s": 2}),
    ("small file", "1 2 3\n", {"min_bytes": 1 << 20}),
])
def test_plan_leaves_other_inputs_to_the_validating_reader(tmp_path, why, text, kwargs):
    path = tmp_path / "e.txt"
    path.write_bytes(text.encode())
    args = dict(lateness="error", r=2, s=1, min_bytes=0) | kwargs
    assert text_scan.plan(str(path), **args) is None, why


def test_staging_directory_is_beside_the_output_and_never_remote(tmp_path):
    staging = text_scan.staging_dir(str(tmp_path / "out"))
    assert staging.startswith(str(tmp_path / ".out.staging-"))
    assert text_scan.staging_dir("hdfs://nn/out") is None


# -- through Spark ---------------------------------------------------------------------------
def rows(df):
    return sorted((r["window"], r["start"], r["end"], list(r["answers"]))
                  for r in df.select("window", "start", "end", "answers").collect())


def single_process(engine_cls, params, edges):
    engine = engine_cls(params)
    out = list(engine.process(edges)) + list(engine.flush())
    return [(w.index, w.start, w.end, list(w.answers)) for w in out]


@pytest.mark.spark
@spark_settings()
@given(case=cases(lateness=("error",)), partitions=st.integers(1, 5), style=st.sampled_from(sorted(STYLES)))
def test_staged_text_replays_equal_single_process(spark, tmp_path_factory, case, partitions,
                                                  style):
    edges = [Edge(*e) if not isinstance(e, Edge) else e for e in case.edges]
    if not edges or case.params.s > case.params.r \
            or {type(x) for e in edges for x in (e.u, e.v)} != {int}:
        return      # no plan: empty, s > r and text ids are the validating reader's
    tmp = tmp_path_factory.mktemp("text")
    source = text_scan.plan(write_text(tmp / "e.txt", edges, style, blank_every=5), "error",
                            case.params.r, case.params.s, min_bytes=0)
    scan = text_scan.staged_plan(spark, source, str(tmp / "staged"), partitions, case.params.t0,
                                 case.params.r, case.params.s)
    if case.params.t0 is not None and edges[0].t < case.params.t0:
        assert scan is None     # before the origin: the reader's located error
        return
    assert scan is not None and scan.rows == len(edges)
    bic = Registry.get("connectivity", "bic")
    kept = range_scan.replay(spark, scan, bic, case.params, partitions)
    assert kept is not None and rows(kept) == single_process(bic, case.params, edges)


def output_rows(directory):
    return sorted((r["window"], r["start"], r["end"], tuple(r["answers"]))
                  for r in pq.read_table(directory).to_pylist())


def run_cli(tmp_path, edges_path, out, *extra):
    queries = tmp_path / "q.txt"
    queries.write_text("1 2\n3 4\n5 x\n" if "text-query" in extra else "1 2\n3 4\n")
    extra = [e for e in extra if e != "text-query"]
    return main(["run", "connectivity", "--input", edges_path, "--queries", str(queries),
                 "-r", "6", "-s", "2", "--output", str(out), "--no-progress", *extra])


@pytest.mark.spark
@pytest.mark.parametrize("partitions", ["1", "3"])
@pytest.mark.parametrize("text_query", [False, True])
def test_cli_staged_output_equals_the_driver_read(spark, tmp_path, monkeypatch, capsys,
                                                  partitions, text_query):
    edges = [Edge(i % 9, (i * 5) % 11, i // 4) for i in range(400)]
    path = write_text(tmp_path / "e.csv", edges, "csv t first, CRLF", blank_every=31)
    extra = ["--partitions", partitions] + (["text-query"] if text_query else [])
    monkeypatch.setattr(text_scan, "MIN_BYTES", 1 << 40)        # the driver's read
    assert run_cli(tmp_path, path, tmp_path / "driver", *extra) == 0
    monkeypatch.setattr(text_scan, "MIN_BYTES", 0)              # the tasks' parse
    staged = []
    real = text_scan.staged_plan
    monkeypatch.setattr(text_scan, "staged_plan", lambda *a: staged.append(1) or real(*a))
    assert run_cli(tmp_path, path, tmp_path / "staged", *extra) == 0
    assert staged, "the staged path did not run"
    assert output_rows(tmp_path / "staged") == output_rows(tmp_path / "driver")
    assert not [p for p in tmp_path.iterdir() if ".staging-" in p.name]


@pytest.mark.spark
@pytest.mark.parametrize("why, lines, message", [
    ("id beyond 64 bits deep", {150: "99999999999999999999 1 7"},
     "e.txt:152: id '99999999999999999999' is an integer beyond 64 bits"),
    ("late edge deep", {300: "1 2 0"}, "e.txt:302: "),
    ("ragged line deep", {200: "1 2"}, "e.txt:202: expected 3 fields"),
])
def test_cli_bad_line_deep_in_a_staged_file_is_located(spark, tmp_path, monkeypatch, capsys,
                                                       why, lines, message):
    body = [f"{i % 9} {i % 7} {i // 4}" for i in range(400)]
    for n, text in lines.items():
        body[n] = text
    path = tmp_path / "e.txt"
    path.write_text("# header comment\n" + "\n".join(body) + "\n")
    monkeypatch.setattr(text_scan, "MIN_BYTES", 0)
    assert run_cli(tmp_path, str(path), tmp_path / "out", "--partitions", "3") == 2, why
    assert message in capsys.readouterr().err, why
    assert not (tmp_path / "out").exists()
    assert not [p for p in tmp_path.iterdir() if ".staging-" in p.name]


@pytest.mark.spark
def test_cli_text_ids_deep_in_a_staged_file_read_as_text(spark, tmp_path, monkeypatch):
    body = [f"{i % 9} {i % 7} {i // 4}" for i in range(100)] + ["a b 30", "b 1 31"]
    path = tmp_path / "e.txt"
    path.write_text("\n".join(body) + "\n")
    monkeypatch.setattr(text_scan, "MIN_BYTES", 0)
    assert run_cli(tmp_path, str(path), tmp_path / "staged") == 0
    monkeypatch.setattr(text_scan, "MIN_BYTES", 1 << 40)
    assert run_cli(tmp_path, str(path), tmp_path / "driver") == 0
    assert output_rows(tmp_path / "staged") == output_rows(tmp_path / "driver")


# -- keyed text: one engine per key over the staged edges ------------------------------------
@pytest.mark.parametrize("keys, kind", [(["7", "007", "-1"], int), (["a", "1", "b"], str)])
def test_keyed_spans_type_keys_as_the_reader_does(tmp_path, keys, kind):
    path = tmp_path / "e.csv"
    path.write_text("key,t,u,v\n" + "".join(f"{k},{t},{t % 3},{t % 5}\n"
                                            for t, k in enumerate(keys * 4)))
    source = text_scan.plan(str(path), "error", 10, 5, min_bytes=0)
    assert source.columns == ("key", "t", "u", "v")
    ok, got_kind, edges, first, last = text_scan.stage_span(
        source, source.data_start, source.size, str(tmp_path / "s.parquet"), part=3)
    assert (ok, got_kind, edges, first, last) == (True, kind, 12, 0, 11)
    table = pq.read_table(tmp_path / "s.parquet")
    frame, _ = load_text_edges(str(path))
    assert table.column("key").to_pylist() == frame["key"].tolist()
    assert table.column("seq").to_pylist() == [(3 << 40) + i for i in range(12)]


@pytest.mark.parametrize("keys", [["+5", "1"], ["99999999999999999999", "1"]])
def test_keyed_spans_leave_odd_integer_keys_to_the_reader(tmp_path, keys):
    path = tmp_path / "e.csv"
    path.write_text("u,v,t,key\n" + "".join(f"1,2,{t},{k}\n" for t, k in enumerate(keys)))
    source = text_scan.plan(str(path), "error", 10, 5, min_bytes=0)
    assert text_scan.stage_span(source, source.data_start, source.size,
                                str(tmp_path / "s.parquet"))[0] is False


def keyed_body(n=300, key=lambda i: i % 4):
    return [f"{key(i)} {i % 9} {(i * 5) % 11} {i // 4}" for i in range(n)]


@pytest.mark.spark
@pytest.mark.parametrize("partitions", ["1", "3"])
@pytest.mark.parametrize("key", [lambda i: i % 4, lambda i: f"k{i % 3}",
                                 lambda i: i % 4 if i < 150 else f"k{i % 3}"],
                         ids=["int keys", "text keys", "int then text keys"])
def test_cli_keyed_staged_output_equals_the_driver_read(spark, tmp_path, monkeypatch, partitions,
                                                        key):
    path = tmp_path / "e.txt"
    path.write_text("# keyed\nkey u v t\n" + "\n".join(keyed_body(key=key)) + "\n")
    monkeypatch.setattr(text_scan, "MIN_BYTES", 1 << 40)
    assert run_cli(tmp_path, str(path), tmp_path / "driver", "--partitions", partitions) == 0
    monkeypatch.setattr(text_scan, "MIN_BYTES", 0)
    assert run_cli(tmp_path, str(path), tmp_path / "staged", "--partitions", partitions) == 0
    read = lambda d: sorted((r["key"], r["window"], r["start"], tuple(r["answers"]))  # noqa: E731
                            for r in pq.read_table(d).to_pylist())
    assert read(tmp_path / "staged") == read(tmp_path / "driver")
    assert not [p for p in tmp_path.iterdir() if ".staging-" in p.name]


@pytest.mark.spark
@pytest.mark.parametrize("why, edit, extra, message", [
    ("a key's edge out of order deep", {250: "1 0 0 3"}, [], "e.txt:253: "),
    ("an edge before the origin", {}, ["--origin", "1"], "e.txt:3: "),
    # its window's end beyond 64 bits: was a raw OverflowError from a Spark task
    ("a time without room for its window deep", {250: f"9 0 0 {2**63 - 2}"}, [],
     "e.txt:253: edge time 9223372036854775806 leaves no room for the window"),
])
def test_cli_keyed_bad_order_deep_in_a_staged_file_is_located(spark, tmp_path, monkeypatch,
                                                              capsys, why, edit, extra, message):
    body = keyed_body()
    for n, text in edit.items():
        body[n] = text
    path = tmp_path / "e.txt"
    path.write_text("# keyed\nkey u v t\n" + "\n".join(body) + "\n")
    monkeypatch.setattr(text_scan, "MIN_BYTES", 0)
    assert run_cli(tmp_path, str(path), tmp_path / "out", "--partitions", "2", *extra) == 2, why
    err = capsys.readouterr().err
    assert message in err and "OutOfOrder" not in err.split(message)[0], (why, err)
    assert not (tmp_path / "out").exists()
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".out.")]   # staging removed


# -- lateness drop: the late edges removed from the staged files ------------------------------
def dropped_locally(source, tmp_path, parts):
    """``drop_late`` without Spark: stage each span, filter each file given the ranges
    before it; the kept edges in file order and the number removed."""
    from streamspec.pipeline.io.lines import line_cuts

    cuts = [source.data_start] + [c for c in line_cuts(source.source, source.size, parts)
                                  if c > source.data_start]
    kept, removed, running = [], 0, None
    for n, (a, b) in enumerate(zip(cuts, cuts[1:])):
        part = tmp_path / f"d{parts}-{n}.parquet"
        ok, _, edges, _, last = text_scan.stage_span(source, a, b, str(part), part=n)
        assert ok
        removed += text_scan.filter_late(str(part), running)
        if edges:
            running = last if running is None else max(running, last)
        table = pq.read_table(part)
        kept += list(zip(*(table.column(c).to_pylist() for c in ("u", "v", "t"))))
    return kept, removed


@pytest.mark.parametrize("parts", [1, 2, 3, 7])
def test_late_edges_dropped_as_the_reader_drops_them(tmp_path, parts):
    import random
    rng = random.Random(parts)
    edges, t = [], 0
    for i in range(300):
        t += rng.choice([0, 1, 2])
        late = rng.random() < 0.15
        edges.append(Edge(i % 11, i % 7, max(0, t - rng.randint(1, 30)) if late else t))
    path = write_text(tmp_path / "e.txt", edges, "snap")
    source = text_scan.plan(path, "drop", 10, 5, min_bytes=0)
    assert source is not None and source.lateness == "drop"
    frame, dropped = load_text_edges(path, "drop")
    want = list(zip(frame["u"].tolist(), frame["v"].tolist(), frame["t"].tolist()))
    assert dropped > 0
    assert dropped_locally(source, tmp_path, parts) == (want, dropped)


@pytest.mark.spark
@pytest.mark.parametrize("partitions", ["1", "3"])
def test_cli_staged_lateness_drop_equals_the_driver_read(spark, tmp_path, monkeypatch, capsys,
                                                         partitions):
    body = [f"{i % 9} {(i * 5) % 11} {i // 4 if i % 13 else max(0, i // 4 - 9)}"
            for i in range(400)]
    path = tmp_path / "e.txt"
    path.write_text("\n".join(body) + "\n")
    extra = ["--partitions", partitions, "--lateness", "drop"]
    monkeypatch.setattr(text_scan, "MIN_BYTES", 1 << 40)
    assert run_cli(tmp_path, str(path), tmp_path / "driver", *extra) == 0
    driver_says = capsys.readouterr().out.splitlines()[0]
    monkeypatch.setattr(text_scan, "MIN_BYTES", 0)
    assert run_cli(tmp_path, str(path), tmp_path / "staged", *extra) == 0
    staged_says = capsys.readouterr().out.splitlines()[0]
    assert output_rows(tmp_path / "staged") == output_rows(tmp_path / "driver")
    _, dropped = load_text_edges(str(path), "drop")
    assert f"({dropped} late edges dropped)" in staged_says and f"({dropped} late edges" in driver_says
