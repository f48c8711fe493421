"""Walk issue 30's categories once more as a user would (run from the repository root):
``python bench/results/pipeline/reliability_walk.py [CATEGORY...]``.

Every case runs ``streamspec.pipeline.cli.main`` in this process (one Spark session for
all; fd 2 captured, so a Java stack would show), on files written to a temporary
directory.  A bad case passes when it exits 2 with ``streamspec: error:`` (or a stopped
stream's message), names the expected place, prints no traceback or Java stack, and leaves
nothing at ``--output`` (no part file) and nothing beside it (no ``.out.*`` leftover).  A
good control passes when it exits 0.  The kill -9 cases run ``streamspec run --overwrite``
in a subprocess and kill it at chosen moments.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from streamspec.pipeline.cli import main

ROOT = Path(__file__).resolve().parents[3] if "bench" in __file__ else Path.cwd()
DATA = ROOT / "pipeline" / "data"
EDGES, QUERIES = DATA / "connectivity-edges.txt", DATA / "connectivity-queries.txt"
SETS = DATA / "simjoin-sets.jsonl"
ITEMS, REMOTE = DATA / "topkjoin" / "mentions.csv", DATA / "topkjoin" / "followers-dfc.csv"
KWS = DATA / "kws"
SCHEMA = KWS / "schema.json"
W = Path(tempfile.mkdtemp(prefix="relwalk-"))
DEEP = "[" * 100_000 + "]" * 100_000
TIME = {"connectivity": "t", "simjoin": "ts", "topkjoin": "ts", "kws": "t"}
ID = {"connectivity": "u", "simjoin": "id", "topkjoin": "id", "kws": "tid"}
results: list[tuple] = []


def folder(name: str) -> Path:
    p = W / name
    p.mkdir(parents=True, exist_ok=True)
    return p


# -- run ------------------------------------------------------------------------------------
def run_argv(problem: str, d: Path, inp=None, *extra, remote=None, kws_inputs=None,
             schema=SCHEMA) -> list[str]:
    out = str(d / "out")
    if problem == "connectivity":
        return ["run", "connectivity", "--input", str(inp or EDGES), "--window", "500",
                "--slide", "100", "--queries", str(QUERIES), "--output", out, *extra]
    if problem == "simjoin":
        return ["run", "simjoin", "--input", str(inp or SETS), "--k", "2", "--window", "300",
                "--output", out, *extra]
    if problem == "topkjoin":
        return ["run", "topkjoin", "--input", str(inp or ITEMS), "--remote", str(remote or REMOTE),
                "--window", "10", "--slide", "5", "--k", "2", "--output", out, *extra]
    inputs = kws_inputs or [f"{r}={KWS / (r + '.csv')}" for r in ("director", "movie", "plays",
                                                                   "actor")]
    return ["run", "kws", "--schema", str(schema), "--input", *inputs, "--keywords", "tarantino",
            "--tmax", "3", "--window", "100", "--output", out, *extra]


def kws_copy(d: Path, **replaced: str | bytes) -> list[str]:
    inputs = []
    for rel in ("director", "movie", "plays", "actor"):
        path = d / f"{rel}.csv"
        text = replaced.get(rel, (KWS / f"{rel}.csv").read_text())
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        inputs.append(f"{rel}={path}")
    return inputs


# -- stream ---------------------------------------------------------------------------------
GOOD = {"connectivity": [{"u": 1, "v": 2, "t": 1}, {"u": 2, "v": 3, "t": 2},
                         {"u": 3, "v": 4, "t": 3}, {"u": 1, "v": 4, "t": 9}],
        "simjoin": [{"id": 1, "ts": 1, "tokens": ["a", "b"]}, {"id": 2, "ts": 2, "tokens": ["a"]},
                    {"id": 3, "ts": 3, "tokens": ["a", "b"]}, {"id": 4, "ts": 9, "tokens": ["c"]}],
        "topkjoin": [{"id": 1, "x": 0.5, "ts": 1}, {"id": 2, "x": 0.7, "ts": 2},
                     {"id": 3, "x": 0.2, "ts": 3}, {"id": 1, "x": 0.9, "ts": 12}],
        "kws": [{"rel": "director", "tid": "d1", "t": 1, "did": 1, "name": "Quentin Tarantino"},
                {"rel": "movie", "tid": "m1", "t": 2, "mid": 11, "did": 1, "title": "Pulp"},
                {"rel": "director", "tid": "d2", "t": 3, "did": 2, "name": "Tarantino"},
                {"rel": "movie", "tid": "m2", "t": 200, "mid": 12, "did": 2, "title": "X"}]}
def csv_lines(problem: str, d: Path, rows: list[dict]) -> list[str]:
    """``rows`` as a CSV stream file's lines under the header the stream needs (every column
    of its schema, in order: Spark reads CSV columns by position)."""
    import importlib

    from streamspec.pipeline import streaming
    from streamspec.pipeline.cli import build_parser
    from streamspec.pipeline.stream_check import schema_fields
    adapter = importlib.import_module(f"streamspec.pipeline.jobs.{problem}")
    args = build_parser().parse_args(stream_argv(problem, d, "json"))
    header = [name for name, _ in schema_fields(streaming.source_schema(adapter, args))]
    return [",".join(header)] + [",".join("" if r.get(c) is None else str(r[c]) for c in header)
                                 for r in rows]


def stream_argv(problem: str, d: Path, fmt: str, *extra) -> list[str]:
    flags = {"connectivity": ["--window", "4", "--slide", "2", "--queries", str(d / "q.txt")],
             "simjoin": ["--k", "2", "--window", "6"],
             "topkjoin": ["--remote", str(d / "remote.csv"), "--window", "10", "--slide", "5",
                          "--k", "2", "--stream-range", "0,1"],
             "kws": ["--schema", str(SCHEMA), "--keywords", "tarantino", "--tmax", "3",
                     "--window", "100"]}[problem]
    (d / "q.txt").write_text("1 3\n")
    (d / "remote.csv").write_text("key,time,value\n1,0,5\n2,0,3\n")
    return ["stream", problem, "--source", str(d / "in"), "--format", fmt, "--checkpoint",
            str(d / "ckpt"), "--output", str(d / "out"), "--trigger-once", *flags, *extra]


def source(d: Path, name: str, data: str | bytes) -> None:
    (d / "in").mkdir(exist_ok=True)
    (d / "in" / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def json_lines(rows) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


# -- checking -------------------------------------------------------------------------------
def call(argv: list[str], env: dict | None = None) -> tuple[int, str]:
    """``main(argv)`` with fd 2 (Python's and the JVM's stderr) captured."""
    saved_env = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    sys.stderr.flush()
    with tempfile.TemporaryFile() as f:
        saved = os.dup(2)
        os.dup2(f.fileno(), 2)
        try:
            try:
                code = main(argv)
            except SystemExit as stop:
                code = stop.code
            except BaseException as err:       # a raw exception: what the user would see
                import traceback
                traceback.print_exc()
                code = f"raised {type(err).__name__}"
            sys.stderr.flush()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            for k, v in saved_env.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        f.seek(0)
        return code, f.read().decode("utf-8", "replace")


def leftovers(out: Path) -> list[str]:
    """Part files at the output and hidden directories a run left beside it."""
    found = []
    if out.is_dir():
        found += [n for n in os.listdir(out) if n.startswith("part-")]
    if out.parent.is_dir():
        found += [n for n in os.listdir(out.parent) if n.startswith(f".{out.name}.")]
    return found


def record(cat: str, problem: str, mode: str, name: str, code, err: str, verdict: str) -> None:
    lines = err.strip().splitlines()
    line = (lines[0] if lines and lines[0].startswith("output held") else
            " ".join(lines[-1:]))[:500]
    results.append((cat, problem, mode, name, code, verdict, line))
    print(f"[{verdict}] {cat} | {problem} {mode} | {name} | exit {code} | {line}", flush=True)


def bad(cat: str, problem: str, mode: str, name: str, argv: list[str], where: str,
        words: str = "", env: dict | None = None, out: Path | None = None) -> None:
    out = out or Path(argv[argv.index("--output") + 1]) if "--output" in argv else None
    code, err = call(argv, env)
    problems = []
    if code != 2:
        problems.append(f"exit {code}")
    if "Traceback" in err or "\tat org." in err or "Exception in thread" in err:
        problems.append("traceback")
    if where not in err:
        problems.append(f"not located at {where!r}")
    if words and words not in err:
        problems.append(f"no {words!r}")
    if out is not None and leftovers(out):
        problems.append(f"left {leftovers(out)}")
    record(cat, problem, mode, name, code, err, "OK" if not problems else "FAIL: " +
           "; ".join(problems))


def good(cat: str, problem: str, mode: str, name: str, argv: list[str], check=None) -> None:
    code, err = call(argv)
    problems = [] if code == 0 else [f"exit {code}"]
    if code == 0 and check is not None:
        problems += check()
    record(cat, problem, mode, name, code, err, "OK (good control)" if not problems else
           "FAIL: " + "; ".join(problems))


def rows_of(out: Path) -> list:
    return sorted(map(repr, pq.read_table(str(out)).to_pylist())) if out.exists() else []


# == 1. silent reinterpretation ============================================================
def reinterpretation() -> None:
    c = "1 reinterpretation"
    # unterminated quote, run: every CSV reader
    d = folder("q-kws-movie")
    bad(c, "kws", "run", "unterminated quote movie.csv:2",
        run_argv("kws", d, kws_inputs=kws_copy(d, movie="tid,t,mid,did,title\n"
                 'm1,20,11,1,"Pulp Fiction\nm2,25,12,2,Four Rooms\n')), "movie.csv:2", "unterminated")
    d = folder("q-kws-plays")
    plays = (KWS / "plays.csv").read_text().splitlines()
    plays[8] = plays[8].rsplit(",", 1)[0] + ',"' + plays[8].rsplit(",", 1)[1]
    bad(c, "kws", "run", "unterminated quote plays.csv:9",
        run_argv("kws", d, kws_inputs=kws_copy(d, plays="\n".join(plays) + "\n")), "plays.csv:9",
        "unterminated")
    d = folder("q-topk-items")
    items = ITEMS.read_text().splitlines()[:41]
    items[5] = items[5].split(",", 1)[0] + ',"' + items[5].split(",", 1)[1]
    (d / "items.csv").write_text("\n".join(items) + "\n")
    bad(c, "topkjoin", "run", "unterminated quote items.csv:6", run_argv("topkjoin", d, d / "items.csv"),
        "items.csv:6", "unterminated")
    d = folder("q-topk-remote")
    (d / "remote.csv").write_text('key,time,value\n1,5,"3\n2,6,4\n')
    bad(c, "topkjoin", "run", "unterminated quote remote.csv:2",
        run_argv("topkjoin", d, remote=d / "remote.csv"), "remote.csv:2", "unterminated")
    d = folder("q-conn-csv")
    (d / "e.csv").write_text('u,v,t\n1,2,1\n"2,3,2\n3,4,3\n')
    bad(c, "connectivity", "run", "unterminated quote e.csv:3 (edge text is never quoted)",
        run_argv("connectivity", d, d / "e.csv"), "e.csv:3", "double quote")
    # unterminated quote, stream (CSV format)
    for problem in ("connectivity", "simjoin", "topkjoin", "kws"):
        d = folder(f"q-stream-{problem}")
        lines = csv_lines(problem, d, GOOD[problem][:3])
        cut = lines[2].rsplit(",", 1)
        lines[2] = cut[0] + ',"' + cut[1]
        source(d, "part-0001.csv", "\n".join(lines) + "\n")
        if problem == "simjoin":
            bad(c, problem, "stream", "--format csv (tokens is an array: refused before Spark)",
                stream_argv(problem, d, "csv"), "--format csv", "tokens")
            continue
        bad(c, problem, "stream", "unterminated quote part-0001.csv:3",
            stream_argv(problem, d, "csv"), "part-0001.csv:3", "unterminated")

    # CSV streams: the header is the schema's columns in order (Spark reads by position)
    for problem in ("connectivity", "topkjoin", "kws"):
        as_json, as_csv = folder(f"csv-{problem}-json"), folder(f"csv-{problem}")
        source(as_json, "part-0001.json", json_lines(GOOD[problem]))
        source(as_csv, "part-0001.csv", "\n".join(csv_lines(problem, as_csv, GOOD[problem])) + "\n")
        call(stream_argv(problem, as_json, "json"))
        good(c, problem, "stream", "CSV with the schema's header: the rows of the same JSON lines",
             stream_argv(problem, as_csv, "csv"),
             lambda j=as_json, d=as_csv: [] if rows_of(d / "out") == rows_of(j / "out")
             else ["rows differ from the JSON stream"])
        lines = csv_lines(problem, as_csv, GOOD[problem])
        header = lines[0].split(",")
        for name, head in (("header in another order", ",".join([header[2], header[0], header[1],
                                                                  *header[3:]])),
                           ("header without the key column", ",".join(header[:-1]))):
            d = folder(f"csv-{problem}-{name.replace(' ', '-')}")
            rows = lines[1:] if "order" in name else [r.rsplit(",", 1)[0] for r in lines[1:]]
            source(d, "part-0001.csv", "\n".join([head, *rows]) + "\n")
            bad(c, problem, "stream", f"CSV {name} part-0001.csv:1", stream_argv(problem, d, "csv"),
                "part-0001.csv:1", "need the header")
    d = folder("conn-csv-quoted")
    (d / "e.csv").write_text('u,v,t\n"1","2","1"\n')
    bad(c, "connectivity", "run", "quoted CSV fields e.csv:2 (were text ids '\"1\"')",
        run_argv("connectivity", d, d / "e.csv"), "e.csv:2", "double quote")

    # BOM: skipped as an editor does -> the same rows as without it (good controls)
    bom = "\ufeff"
    for problem, name, make in (
            ("connectivity", "e.txt", lambda: EDGES.read_text()),
            ("simjoin", "s.jsonl", lambda: "".join(SETS.read_text().splitlines(True)[:300])),
            ("topkjoin", "i.csv", lambda: ITEMS.read_text())):
        plain, with_bom = folder(f"bom-{problem}-plain"), folder(f"bom-{problem}")
        (plain / name).write_text(make())
        (with_bom / name).write_text(bom + make())
        call(run_argv(problem, plain, plain / name))
        good(c, problem, "run", "BOM before the first record: the same rows as without it",
             run_argv(problem, with_bom, with_bom / name),
             lambda p=plain, b=with_bom: [] if rows_of(b / "out") == rows_of(p / "out") and
             rows_of(p / "out") else ["rows differ from the file without a BOM"])
    plain, with_bom = folder("bom-kws-plain"), folder("bom-kws")
    kws_copy(plain)
    good(c, "kws", "run", "BOM before movie.csv's header: the same rows as without it",
         run_argv("kws", with_bom, kws_inputs=kws_copy(with_bom, movie=bom + (KWS / "movie.csv")
                                                          .read_text())),
         lambda: [] if call(run_argv("kws", plain, kws_inputs=kws_copy(plain)))[0] == 0 and
         rows_of(with_bom / "out") == rows_of(plain / "out") else ["rows differ"])
    for problem in ("connectivity", "simjoin", "topkjoin", "kws"):
        for fmt in ("json", "csv"):
            if fmt == "csv" and problem == "simjoin":
                continue
            plain, with_bom = folder(f"bom-s-{problem}-{fmt}-plain"), folder(f"bom-s-{problem}-{fmt}")
            text = json_lines(GOOD[problem]) if fmt == "json" else \
                "\n".join(csv_lines(problem, plain, GOOD[problem])) + "\n"
            source(plain, f"part-0001.{fmt}", text)
            source(with_bom, f"part-0001.{fmt}", bom + text)
            call(stream_argv(problem, plain, fmt))
            good(c, problem, "stream", f"BOM at the start of a {fmt} file: the same rows",
                 stream_argv(problem, with_bom, fmt),
                 lambda p=plain, b=with_bom: [] if rows_of(b / "out") == rows_of(p / "out")
                 else ["rows differ from the file without a BOM"])

    # NUL inside an id
    d = folder("nul-conn")
    (d / "e.txt").write_bytes(b"1 2 1\n3\x004 5 2\n")
    bad(c, "connectivity", "run", "NUL in an id e.txt:2", run_argv("connectivity", d, d / "e.txt"),
        "e.txt:2", "NUL")
    d = folder("nul-sim")
    (d / "s.jsonl").write_bytes(b'{"id": 1, "ts": 1, "tokens": [1]}\n{"id": "a\x00b", "ts": 2, "tokens": [1]}\n')
    bad(c, "simjoin", "run", "NUL in an id s.jsonl:2", run_argv("simjoin", d, d / "s.jsonl"),
        "s.jsonl:2", "Invalid control character at column")
    d = folder("nul-topk")
    (d / "i.csv").write_bytes(b"id,x,ts\n1,1,5\n2\x00,1,6\n")
    bad(c, "topkjoin", "run", "NUL in an id i.csv:3", run_argv("topkjoin", d, d / "i.csv"),
        "i.csv:3", "NUL")
    d = folder("nul-kws")
    bad(c, "kws", "run", "NUL in a tid director.csv:2",
        run_argv("kws", d, kws_inputs=kws_copy(d, director=b"tid,t,did,name\nd\x001,10,1,Q\n")),
        "director.csv:2", "NUL")
    for problem in ("connectivity", "simjoin", "topkjoin", "kws"):
        d = folder(f"nul-s-{problem}")
        rows = json_lines(GOOD[problem][:1]).encode()
        row = dict(GOOD[problem][1])
        row[ID[problem]] = "X"
        raw = json.dumps(row).replace('"X"', '"2\x00"').encode()
        source(d, "part-0001.json", rows + raw + b"\n")
        extra = ["--id-type", "string"] if problem in ("connectivity", "simjoin", "topkjoin") else []
        bad(c, problem, "stream", f"raw NUL in a string {ID[problem]} (json, string ids) part-0001.json:2",
            stream_argv(problem, d, "json", *extra), "part-0001.json:2")
        if problem == "simjoin":
            continue
        d = folder(f"nul-s-csv-{problem}")
        lines = csv_lines(problem, d, GOOD[problem][:3])
        lines[2] = lines[2].replace(",", "\x00,", 1)
        source(d, "part-0001.csv", "\n".join(lines) + "\n")
        bad(c, problem, "stream", "NUL in the first field (csv, string ids) part-0001.csv:3",
            stream_argv(problem, d, "csv", *extra), "part-0001.csv:3")

    # a required field missing
    d = folder("miss-sim")
    (d / "s.jsonl").write_text('{"id": 1, "ts": 1, "tokens": [1]}\n{"id": 2, "tokens": [1]}\n')
    bad(c, "simjoin", "run", "missing ts s.jsonl:2", run_argv("simjoin", d, d / "s.jsonl"), "s.jsonl:2")
    d = folder("miss-topk")
    (d / "i.jsonl").write_text('{"id": 1, "x": 1, "ts": 5}\n{"id": 2, "x": 1}\n')
    bad(c, "topkjoin", "run", "missing ts i.jsonl:2", run_argv("topkjoin", d, d / "i.jsonl"), "i.jsonl:2")
    d = folder("miss-kws")
    (d / "director.jsonl").write_text('{"tid": "d1", "t": 10, "did": 1, "name": "Q"}\n'
                                      '{"tid": "d2", "did": 2, "name": "R"}\n')
    inputs = kws_copy(d)
    inputs[0] = f"director={d / 'director.jsonl'}"
    bad(c, "kws", "run", "missing t director.jsonl:2", run_argv("kws", d, kws_inputs=inputs),
        "director.jsonl:2")
    d = folder("miss-conn")
    (d / "e.csv").write_text("u,v,t\n1,2,1\n2,3,\n")
    bad(c, "connectivity", "run", "empty t e.csv:3", run_argv("connectivity", d, d / "e.csv"), "e.csv:3")
    for problem in ("connectivity", "simjoin", "topkjoin", "kws"):
        d = folder(f"miss-s-{problem}")
        row = {k: v for k, v in GOOD[problem][1].items() if k != TIME[problem]}
        source(d, "part-0001.json", json_lines([GOOD[problem][0], row]))
        bad(c, problem, "stream", f"missing {TIME[problem]} part-0001.json:2",
            stream_argv(problem, d, "json"), "part-0001.json:2")

    # SQLite time 'soon'
    for mode in ("run", "stream"):
        d = folder(f"soon-{mode}")
        with sqlite3.connect(d / "t.db") as conn:
            conn.executescript("CREATE TABLE timeline (key, time, value); "
                               "INSERT INTO timeline VALUES (1, 5, 3); "
                               "INSERT INTO timeline VALUES (2, 'soon', 4);")
        conn.close()
        if mode == "run":
            argv = run_argv("topkjoin", d, remote=d / "t.db")
        else:
            source(d, "part-0001.json", json_lines(GOOD["topkjoin"]))
            argv = stream_argv("topkjoin", d, "json")
            argv[argv.index("--remote") + 1] = str(d / "t.db")
        bad(c, "topkjoin", mode, "SQLite time 'soon' at rowid 2", argv, "rowid 2")

    # --engine ''
    for problem in ("connectivity", "simjoin", "topkjoin", "kws"):
        d = folder(f"engine-{problem}")
        bad(c, problem, "run", "--engine ''", run_argv(problem, d, None, "--engine", ""),
            "no engine ''", out=d / "out")
        d = folder(f"engine-s-{problem}")
        source(d, "part-0001.json", json_lines(GOOD[problem]))
        bad(c, problem, "stream", "--engine ''", stream_argv(problem, d, "json", "--engine", ""),
            "no engine ''")


# == 2. stream ordering with equal modification times =====================================
ORDER_ROWS = {
    "connectivity": [{"u": i % 5, "v": (i + 2) % 5, "t": 10 * i} for i in range(12)],
    "simjoin": [{"id": i, "ts": 3 * i, "tokens": ["ab"[i % 2], "c"]} for i in range(12)],
    "topkjoin": [{"id": i % 4, "x": (i % 3) / 3, "ts": 4 * i} for i in range(12)],
    "kws": [{"rel": "director", "tid": f"d{i}", "t": 10 * i, "did": i, "name": "Tarantino"}
            for i in range(12)],
}


def ordering() -> None:
    c = "2 stream order"
    for problem, rows in ORDER_ROWS.items():
        whole, cut = folder(f"order-{problem}-whole"), folder(f"order-{problem}")
        source(whole, "part-0000.json", json_lines(rows))
        call(stream_argv(problem, whole, "json"))
        for i in range(6):
            source(cut, f"part-{i:04d}.json", json_lines(rows[2 * i:2 * i + 2]))
        for i in (5, 3, 0, 1, 4, 2):        # written out of order, then equal mtimes
            os.utime(cut / "in" / f"part-{i:04d}.json", (1_700_000_000, 1_700_000_000))
        good(c, problem, "stream", "6 files, equal mtimes, --files-per-batch 1: rows of one file",
             stream_argv(problem, cut, "json", "--files-per-batch", "1"),
             lambda w=whole, d=cut: [] if rows_of(d / "out") == rows_of(w / "out") and
             rows_of(w / "out") else ["rows differ from the one-file stream"])
        # and a restart from that checkpoint with one more file
        last = dict(rows[-1], **{TIME[problem]: 10 * 13})
        if problem in ("simjoin", "kws"):         # a new record id / tid
            last[ID[problem]] = 99 if problem == "simjoin" else "d99"
        source(cut, "part-0006.json", json_lines([last]))
        os.utime(cut / "in" / "part-0006.json", (1_700_000_000, 1_700_000_000))
        good(c, problem, "stream", "restart from that checkpoint with a 7th file, equal mtime",
             stream_argv(problem, cut, "json", "--files-per-batch", "1"))


# == 3. the raw-traceback cases ============================================================
def tracebacks() -> None:
    c = "3 tracebacks"
    deep = DEEP + "\n"
    d = folder("deep-sim")
    (d / "s.jsonl").write_text('{"id": 1, "ts": 1, "tokens": [1]}\n' + deep)
    bad(c, "simjoin", "run", "JSON nested 100,000 deep s.jsonl:2", run_argv("simjoin", d, d / "s.jsonl"),
        "s.jsonl:2", "nested too deep")
    d = folder("deep-topk")
    (d / "i.jsonl").write_text('{"id": 1, "x": 1, "ts": 5}\n' + deep)
    bad(c, "topkjoin", "run", "JSON nested deep i.jsonl:2", run_argv("topkjoin", d, d / "i.jsonl"),
        "i.jsonl:2", "nested too deep")
    d = folder("deep-kws")
    (d / "director.jsonl").write_text('{"tid": "d1", "t": 10, "did": 1, "name": "Q"}\n' + deep)
    inputs = kws_copy(d)
    inputs[0] = f"director={d / 'director.jsonl'}"
    bad(c, "kws", "run", "JSON nested deep director.jsonl:2", run_argv("kws", d, kws_inputs=inputs),
        "director.jsonl:2", "nested too deep")
    d = folder("deep-schema")
    (d / "schema.json").write_text(deep)
    bad(c, "kws", "run", "schema nested deep", run_argv("kws", d, schema=d / "schema.json"),
        "schema.json", "nested too deep")
    d = folder("deep-changes")
    (d / "changes.jsonl").write_text('{"t": 5, "remove_edge": "in_movie"}\n' + deep)
    bad(c, "kws", "run", "schema-changes nested deep changes.jsonl:2",
        run_argv("kws", d, None, "--schema-changes", str(d / "changes.jsonl")), "changes.jsonl:2",
        "nested too deep")
    d = folder("deep-s-changes")
    source(d, "part-0001.json", json_lines(GOOD["kws"]))
    (d / "changes.jsonl").write_text(deep)
    bad(c, "kws", "stream", "schema-changes nested deep changes.jsonl:1",
        stream_argv("kws", d, "json", "--schema-changes", str(d / "changes.jsonl")),
        "changes.jsonl:1", "nested too deep")
    for problem in ("connectivity", "simjoin", "topkjoin", "kws"):
        d = folder(f"deep-s-{problem}")
        source(d, "part-0001.json", json_lines(GOOD[problem][:1]) + deep)
        bad(c, problem, "stream", "JSON nested deep part-0001.json:2", stream_argv(problem, d, "json"),
            "part-0001.json:2")

    # conform --replay files that are not reproducers
    for problem in ("connectivity", "simjoin", "topkjoin", "kws"):
        for n, content in enumerate([b"", b"{not json\n", b"\xff\xfe\x00garbage",
                                     b'{"problem": "%s"}\n' % problem.encode(),
                                     b'{"problem": "%s", "k": "x", "chunks": [1]}\n[1, 2]\n'
                                     % problem.encode()]):
            d = folder(f"replay-{problem}-{n}")
            (d / "case.jsonl").write_bytes(content)
            bad(c, problem, "conform", f"--replay file #{n} {content[:24]!r}",
                ["conform", problem, "--replay", str(d / "case.jsonl")], "case.jsonl", out=None)

    # Parquet edges without v, t of words
    d = folder("pq-no-v")
    pd.DataFrame({"u": [1], "t": [1]}).to_parquet(d / "e.parquet")
    bad(c, "connectivity", "run", "Parquet edges without v", run_argv("connectivity", d, d / "e.parquet"),
        "e.parquet", "missing ['v']")
    d = folder("pq-t-words")
    pd.DataFrame({"u": [1], "v": [2], "t": ["soon"]}).to_parquet(d / "e.parquet")
    bad(c, "connectivity", "run", "Parquet t of words", run_argv("connectivity", d, d / "e.parquet"),
        "e.parquet", "column t")
    d = folder("pq-s-no-v")
    (d / "in").mkdir()
    pd.DataFrame({"u": [1, 2], "t": [1, 2]}).to_parquet(d / "in" / "part-0001.parquet")
    bad(c, "connectivity", "stream", "Parquet stream file without v", stream_argv("connectivity", d, "parquet"),
        "part-0001.parquet", "v")
    d = folder("pq-s-t-words")
    (d / "in").mkdir()
    pd.DataFrame({"u": [1], "v": [2], "t": ["soon"]}).to_parquet(d / "in" / "part-0001.parquet")
    bad(c, "connectivity", "stream", "Parquet stream t of words", stream_argv("connectivity", d, "parquet"),
        "part-0001.parquet", "column t")

    # an input that cannot be read: this walk runs as root, where file modes stop no read, so
    # the open itself is made to fail (as tests/pipeline/test_bad_inputs_more.py does)
    import builtins
    real_open = builtins.open
    for problem, name in (("connectivity", "e.txt"), ("simjoin", "s.jsonl"), ("topkjoin", "i.csv"),
                          ("kws", "director.csv")):
        d = folder(f"unreadable-{problem}")
        if problem == "kws":
            argv = run_argv("kws", d, kws_inputs=kws_copy(d))
        else:
            (d / name).write_text({"connectivity": EDGES, "simjoin": SETS, "topkjoin": ITEMS}[problem]
                                  .read_text())
            argv = run_argv(problem, d, d / name)

        def refuse(file, *args, target=str(d / name), **kwargs):
            if str(file) == target:
                raise PermissionError(13, "Permission denied", str(file))
            return real_open(file, *args, **kwargs)
        builtins.open = refuse
        try:
            bad(c, problem, "run", f"unreadable {name} (open refused)", argv, name,
                "cannot read: Permission denied")
        finally:
            builtins.open = real_open

    # times near 2^63-1: the window end overflows
    top = 2**63 - 2
    d = folder("big-t-conn")
    (d / "e.txt").write_text(f"1 2 1\n2 3 {top}\n")
    bad(c, "connectivity", "run", "time 2^63-2 e.txt:2", run_argv("connectivity", d, d / "e.txt"),
        "e.txt:2", "no room")
    d = folder("big-t-topk")
    (d / "i.csv").write_text(f"id,x,ts\n1,1,5\n2,1,{top}\n")
    bad(c, "topkjoin", "run", "time 2^63-2 i.csv:3", run_argv("topkjoin", d, d / "i.csv"), "i.csv:3",
        "no room")
    d = folder("big-t-kws")
    good(c, "kws", "run", "time 2^63-2 (kws lifespans are Python ints: a good input)",
         run_argv("kws", d, kws_inputs=kws_copy(d, actor=(KWS / "actor.csv").read_text() +
                                                f"a9,{top},29,Nobody\n")))
    d = folder("big-t-sim")
    (d / "s.jsonl").write_text(f'{{"id": 1, "ts": 1, "tokens": [1]}}\n{{"id": 2, "ts": {top}, "tokens": [1]}}\n')
    bad(c, "simjoin", "run", "ts 2^63-2 (not exact as a float: the spec's rule) s.jsonl:2",
        run_argv("simjoin", d, d / "s.jsonl"), "s.jsonl:2", "finite int or float")
    for problem in ("connectivity", "topkjoin", "simjoin", "kws"):
        d = folder(f"big-t-s-{problem}")
        row = dict(GOOD[problem][1], **{TIME[problem]: top})
        source(d, "part-0001.json", json_lines([GOOD[problem][0], row]))
        argv = stream_argv(problem, d, "json")
        if problem in ("connectivity", "topkjoin"):
            bad(c, problem, "stream", "time 2^63-2 part-0001.json:2", argv, "part-0001.json:2", "room")
        elif problem == "simjoin":
            bad(c, problem, "stream", "ts 2^63-2 (run rejects it; the arrival scan too)",
                argv, "part-0001.json:2", "finite int or float")
        else:
            good(c, problem, "stream", "time 2^63-2 (no window end in 64 bits: a good input)", argv)

    # stream flags, checked before Spark
    for problem in ("connectivity", "simjoin", "topkjoin", "kws"):
        d = folder(f"flags-{problem}")
        source(d, "part-0001.json", json_lines(GOOD[problem]))
        base = stream_argv(problem, d, "json")
        once = [a for a in base if a != "--trigger-once"]
        bad(c, problem, "stream", "--interval -5", [*once, "--interval", "-5"], "--interval")
        bad(c, problem, "stream", "--interval nan", [*once, "--interval", "nan"], "--interval")
        i = base.index("--source")
        bad(c, problem, "stream", "no --source", base[:i] + base[i + 2:], "--source")
        (d / "ckfile").write_text("x")
        bad(c, problem, "stream", "--checkpoint is a file",
            [*base, "--checkpoint", str(d / "ckfile")], "ckfile")
        bad(c, problem, "stream", "--output under a file",
            [*base, "--output", str(d / "ckfile" / "out")], "ckfile", out=d / "out")
        bad(c, problem, "stream", "SPARK_MASTER=bogus://x", base, "SPARK_MASTER",
            env={"SPARK_MASTER": "bogus://x"})
        bad(c, problem, "run", "SPARK_MASTER=bogus://x", run_argv(problem, folder(f"master-{problem}")),
            "SPARK_MASTER", env={"SPARK_MASTER": "bogus://x"})


# == 4. unlocated / mislocated =============================================================
def located() -> None:
    c = "4 located"
    utf = b"\xff"
    d = folder("utf-conn")
    (d / "e.txt").write_bytes(b"1 2 1\n2 3 2\n3 " + utf + b" 3\n")
    bad(c, "connectivity", "run", "invalid UTF-8 e.txt:3", run_argv("connectivity", d, d / "e.txt"), "e.txt:3")
    d = folder("utf-q")
    (d / "q.txt").write_bytes(b"0 1\n" + utf + b" 2\n")
    argv = run_argv("connectivity", d)
    argv[argv.index("--queries") + 1] = str(d / "q.txt")
    bad(c, "connectivity", "run", "invalid UTF-8 queries q.txt:2", argv, "q.txt:2")
    d = folder("utf-sim")
    (d / "s.jsonl").write_bytes(b'{"id": 1, "ts": 1, "tokens": [1]}\n{"id": 2, "ts": 2, "text": "' + utf + b'"}\n')
    bad(c, "simjoin", "run", "invalid UTF-8 s.jsonl:2", run_argv("simjoin", d, d / "s.jsonl"), "s.jsonl:2")
    d = folder("utf-topk")
    (d / "i.csv").write_bytes(b"id,x,ts\n1,1,5\n2" + utf + b",1,6\n")
    bad(c, "topkjoin", "run", "invalid UTF-8 i.csv:3", run_argv("topkjoin", d, d / "i.csv"), "i.csv:3")
    d = folder("utf-remote")
    (d / "r.csv").write_bytes(b"key,time,value\n1,5,3\n2,6," + utf + b"\n")
    bad(c, "topkjoin", "run", "invalid UTF-8 remote r.csv:3", run_argv("topkjoin", d, remote=d / "r.csv"),
        "r.csv:3")
    d = folder("utf-kws")
    bad(c, "kws", "run", "invalid UTF-8 director.csv:3",
        run_argv("kws", d, kws_inputs=kws_copy(d, director=b"tid,t,did,name\nd1,10,1,Q\nd2,12,2," + utf + b"\n")),
        "director.csv:3")
    d = folder("utf-schema")
    (d / "schema.json").write_bytes(SCHEMA.read_bytes().replace(b'"did", "name"', b'"did", "n' + utf + b'"'))
    bad(c, "kws", "run", "invalid UTF-8 schema.json:3", run_argv("kws", d, schema=d / "schema.json"), "schema.json:3")

    # stream rows Spark's reader refuses, every problem
    for problem in ("connectivity", "simjoin", "topkjoin", "kws"):
        tcol = TIME[problem]
        cases = {"string time": json.dumps(dict(GOOD[problem][1], **{tcol: "soon"})),
                 "float time": json.dumps(dict(GOOD[problem][1], **{tcol: 1.5})),
                 "time 2^64": json.dumps(dict(GOOD[problem][1], **{tcol: 2**64})),
                 "array": "[1, 2, 3]",
                 "malformed JSON": json.dumps(GOOD[problem][1])[:-3],
                 "invalid UTF-8": json.dumps(dict(GOOD[problem][1], note="\x01")).replace("\\u0001", "\udcff")}
        if problem == "simjoin":        # simjoin's ts is a double by default
            cases["float time"] = json.dumps(dict(GOOD[problem][1], ts="1.5"))
            del cases["time 2^64"]
        for name, line in cases.items():
            d = folder(f"refused-{problem}-{name.replace(' ', '_').replace('^', '')}")
            data = line.encode("utf-8", "surrogateescape")
            source(d, "part-0001.json", json_lines(GOOD[problem][:1]).encode() + data + b"\n")
            bad(c, problem, "stream", f"{name} part-0001.json:2", stream_argv(problem, d, "json"),
                "part-0001.json:2")
        if problem != "simjoin":
            d = folder(f"refused-{problem}-fields")
            lines = csv_lines(problem, d, GOOD[problem][:3])
            lines[2] += ",9"
            source(d, "part-0001.csv", "\n".join(lines) + "\n")
            bad(c, problem, "stream", "CSV field count part-0001.csv:3", stream_argv(problem, d, "csv"),
                "part-0001.csv:3")
        # a null at row 3 of a Parquet file: the time, then the id
        for col in (tcol, ID[problem]):
            d = folder(f"null-{problem}-{col}")
            (d / "in").mkdir(exist_ok=True)
            rows = [dict(r) for r in GOOD[problem][:4]]
            if problem == "kws":
                rows = [dict(GOOD["kws"][0], tid=f"d{i}", t=i, did=str(i)) for i in range(4)]
            if problem == "simjoin":
                rows = [dict(r, ts=float(r["ts"])) for r in rows]
            rows[2][col] = None
            table = pa.Table.from_pylist(rows)
            pq.write_table(table, d / "in" / "part-0001.parquet")
            bad(c, problem, "stream", f"null {col} at row 3 (Parquet)", stream_argv(problem, d, "parquet"),
                "part-0001.parquet: row 3")
    d = folder("abc-query")
    source(d, "part-0001.json", json_lines(GOOD["connectivity"]))
    argv = stream_argv("connectivity", d, "json")
    (d / "q.txt").write_text("1 3\n2 abc\n")
    code, err = call(argv)
    record(c, "connectivity", "stream", "query id 'abc' with --id-type long: q.txt:2, no checkpoint",
           code, err, "OK" if code == 2 and "q.txt:2" in err and not leftovers(d / "out")
           and not (d / "ckpt").exists() else "FAIL")


# == 5. kill -9 during run --overwrite =====================================================
def kill_overwrite(problems=("connectivity", "simjoin", "topkjoin", "kws")) -> None:
    """The old output from a prefix of the shipped input (kws: director.csv's header alone, no results), the new one
    from the whole input; ``python reliability_walk.py kill:kws,topkjoin`` walks some."""
    c = "5 kill -9 run --overwrite"
    prefix = {"connectivity": ("e.txt", EDGES, 1500), "simjoin": ("s.jsonl", SETS, 400),
              "topkjoin": ("i.csv", ITEMS, 30), "kws": ("director.csv", KWS / "director.csv", 1)}
    for problem in problems:
        name, whole, lines = prefix[problem]
        small = "".join(whole.read_text().splitlines(True)[:lines])
        d = folder(f"kill-{problem}")

        def old_argv_of(*extra, d=d, name=name, problem=problem, small=small):
            if problem == "kws":
                return run_argv(problem, d, None, *extra, kws_inputs=kws_copy(d, director=small))
            return run_argv(problem, d, d / name, *extra)
        (d / name).write_text(small)
        old_argv = old_argv_of()
        assert call(old_argv)[0] == 0
        old = rows_of(d / "out")
        new_dir = folder(f"kill-{problem}-new")
        new_argv = run_argv(problem, new_dir)
        assert call(new_argv)[0] == 0
        new = rows_of(new_dir / "out")
        assert old != new
        argv = run_argv(problem, d, None, "--overwrite")
        for moment in ("the temporary output appears", "the temporary output has _SUCCESS",
                       "the old output is renamed away", "exit"):
            proc = subprocess.Popen([sys.executable, "-m", "streamspec.pipeline.cli", *argv,
                                     "--master", "local[2]"], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            deadline, seen = time.monotonic() + 240, "nothing (ran to the end)"
            while time.monotonic() < deadline and proc.poll() is None:
                names = os.listdir(d)
                tmp = [n for n in names if n.startswith(".out.tmp-")]
                if moment.startswith("the temporary output appears") and tmp:
                    seen = moment
                    break
                if moment.startswith("the temporary output has") and any(
                        os.path.exists(d / t / "_SUCCESS") for t in tmp):
                    seen = moment
                    break
                if moment.startswith("the old output") and any(n.startswith(".out.old-") for n in names):
                    seen = moment
                    break
                time.sleep(0.002)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            held = rows_of(d / "out")
            state = "old" if held == old else "new" if held == new else "NEITHER"
            left = [n for n in os.listdir(d) if n.startswith(".out.")]
            # the next run (refused: output exists) recovers and removes what the kill left
            code, err = call(old_argv_of())
            after = rows_of(d / "out")
            ok = state != "NEITHER" and after == held and not [n for n in os.listdir(d)
                                                               if n.startswith(".out.")]
            record(c, problem, "run", f"killed when {moment}: killed at '{seen}'", code,
                   f"output held the {state} rows; left {left}; next run: "
                   + " / ".join(err.strip().splitlines())[:400],
                   "OK" if ok else "FAIL")
            if state == "new":       # put the old output back for the next moment
                call(old_argv_of("--overwrite"))


# == 6. big text inputs (parsed by Spark tasks) with one bad line in the middle ===========
def big_inputs() -> None:
    c = "6 big inputs"
    n = 1_200_000
    d = folder("big-conn")
    with open(d / "e.txt", "w") as f:
        for i in range(n):
            f.write(f"{i % 977} {(7 * i) % 977} {i}\n" if i != n // 2 else "5 x 7\n")
    bad(c, "connectivity", "run", f"16+ MB SNAP text, bad line {n // 2 + 1}",
        run_argv("connectivity", d, d / "e.txt"), f"e.txt:{n // 2 + 1}")
    d = folder("big-conn-keyed")
    with open(d / "e.csv", "w") as f:
        f.write("u,v,t,key\n")
        for i in range(n):
            f.write(f"{i % 977},{(7 * i) % 977},{i},{'abc'[i % 3]}\n" if i != n // 2 else "5,x,7,a\n")
    bad(c, "connectivity", "run", f"16+ MB keyed CSV, bad line {n // 2 + 2}",
        run_argv("connectivity", d, d / "e.csv"), f"e.csv:{n // 2 + 2}")
    d = folder("big-conn-room")
    with open(d / "e.csv", "w") as f:
        f.write("u,v,t,key\n")
        for i in range(n):
            f.write(f"{i % 977},{(7 * i) % 977},{i},{'abc'[i % 3]}\n" if i != n // 2 else
                    f"5,6,{2**63 - 2},z\n")
    bad(c, "connectivity", "run", f"16+ MB keyed CSV, a time without window room at line {n // 2 + 2}",
        run_argv("connectivity", d, d / "e.csv"), f"e.csv:{n // 2 + 2}", "room")
    d = folder("big-sim-keyed")
    with open(d / "s.jsonl", "w") as f:
        for i in range(300_000):
            f.write(json.dumps({"id": i, "ts": i, "tokens": [i % 7, i % 11, i % 13],
                                "key": "abc"[i % 3]}) + "\n" if i != 150_000 else
                    '{"id": 150000, "ts": "soon", "tokens": [1], "key": "a"}\n')
    bad(c, "simjoin", "run", "16+ MB keyed JSON lines, bad line 150001",
        run_argv("simjoin", d, d / "s.jsonl"), "s.jsonl:150001")
    d = folder("big-topk")
    with open(d / "i.csv", "w") as f:
        f.write("id,x,ts\n")
        for i in range(200_000):
            f.write(f"{i % 5000},{i % 3},{1420574426427 + i}\n" if i != 100_000 else "7,high,1\n")
    bad(c, "topkjoin", "run", "2 MB items CSV, bad line 100002", run_argv("topkjoin", d, d / "i.csv"),
        "i.csv:100002")
    d = folder("big-topk-room")
    with open(d / "i.csv", "w") as f:
        f.write("id,x,ts\n")
        for i in range(200_000):
            f.write(f"{i % 5000},{i % 3},{1420574426427 + i}\n" if i != 100_000 else
                    f"7,1,{2**63 - 2}\n")
    bad(c, "topkjoin", "run", "2 MB items CSV, a time without window room at line 100002",
        run_argv("topkjoin", d, d / "i.csv"), "i.csv:100002")
    d = folder("big-kws")
    rows = ["tid,t,did,name"] + [f"d{i},{i},{i},name{i}" for i in range(200_000)]
    rows[100_001] = "d100000,soon,1,x"
    bad(c, "kws", "run", "kws director CSV (200k lines), bad line 100002",
        run_argv("kws", d, kws_inputs=kws_copy(d, director="\n".join(rows) + "\n")),
        "director.csv:100002")


CATEGORIES = {"reinterpretation": reinterpretation, "ordering": ordering, "tracebacks": tracebacks,
              "located": located, "kill": kill_overwrite, "big": big_inputs}

if __name__ == "__main__":
    from streamspec.pipeline.spark import session
    session("local[2]", conf={"spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false"})
    wanted = sys.argv[1:] or list(CATEGORIES)
    start = time.monotonic()
    for name in wanted:
        name, _, some = name.partition(":")     # kill:kws,topkjoin: those problems only
        CATEGORIES[name](*([some.split(",")] if some else []))
    failed = [r for r in results if r[5].startswith("FAIL")]
    print(f"\n{len(results)} cases, {len(failed)} not as promised, "
          f"{time.monotonic() - start:.0f} s (loaded 2-core machine)")
    for r in failed:
        print("NOT OK:", " | ".join(map(str, r)))
    shutil.rmtree(W, ignore_errors=True)
