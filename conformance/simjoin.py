"""Simjoin conformance: step-by-step comparison with the oracle.

``check(engine_cls, case)`` feeds the case's events to a fresh engine in the
case's chunks and, after every chunk, checks that the ``TopK`` outputs it
yielded are exactly the oracle's (``streamspec.reference.simjoin.evaluate``) for the
events of that chunk: same lists, same order, same scores and end times bit
for bit, and none where the list did not change.  ``flush`` must emit nothing.

``check_invalid`` slips one bad event into the stream and checks the typed
error, and that the engine, having rejected it, goes on exactly as if it had
never been offered.

``check_watermark`` offers ``Advance`` at the current index time between the
chunks; ``features(case)`` names the situations a case exercises, so a test
can check that the strategy draws every one it claims (``FEATURES``).
"""
from __future__ import annotations

import json

import numpy as np

import attrs

from streamspec.conformance.contracts import closed_after_flush
from streamspec.conformance.runner import Mismatch, check_rejection
from streamspec.conformance.strategies.simjoin import cases, invalid_cases, random_case  # noqa: F401
from streamspec.reference.simjoin import evaluate
from streamspec.spec.simjoin import SIDES, SIMILARITIES, Advance, Params, Record, RecordBatch

PROBLEM = "simjoin"


@attrs.frozen
class Case:
    params: Params
    events: list
    chunks: list


def check(engine_cls, case: Case, watermarks: bool = False) -> Mismatch | None:
    """Step by step against the oracle; with ``watermarks``, ``Advance`` at the current
    index time is sent alone after each chunk and must emit nothing (``check_watermark``)."""
    expected = evaluate(case.events, case.params)
    engine = engine_cls(case.params)
    past = ", past watermarks" if watermarks else ""
    pos = 0
    for size in case.chunks:
        chunk = case.events[pos:pos + size]
        want = [x for x in expected[pos:pos + size] if x is not None]
        pos += size
        got = list(engine.process(chunk))
        if got != want:
            return Mismatch(f"after event {pos - 1} (t={_time(chunk[-1])}){past}",
                            f"top-k changes of events {pos - size}..{pos - 1} differ",
                            [_show(x) for x in want], [_show(x) for x in got])
        if watermarks:      # at the index time: the latest time seen (a late event moves none)
            mark = Advance(max(_time(e) for e in case.events[:pos]))
            got = list(engine.process([mark]))
            if got:
                return Mismatch(f"{mark} after event {pos - 1}", "a watermark at the index "
                                "time changed the top-k list", [], [_show(x) for x in got])
    out = list(engine.flush())
    if out:
        return Mismatch(f"flush{' after watermarks' if watermarks else ''}",
                        "flush must emit nothing", [], [_show(x) for x in out])
    return closed_after_flush(engine) if watermarks else None


def _show(topk) -> tuple:
    return (topk.ts, topk.pairs)


def adhoc(engine, case: Case) -> int:
    """The ad-hoc answer asked around a pickle round trip (``conformance.roundtrip``):
    how many records the window holds (``n_records``)."""
    return engine.n_records


def columnar(chunk: list, case: Case) -> RecordBatch | None:
    """``chunk`` as the columnar ``RecordBatch`` the Spark pipeline feeds, when it has one
    (records only, in a stream of integer ids and tokens; ``checks``: a third of the examples go in this
    way and must answer as lists do); None otherwise."""
    records = [e for e in case.events if isinstance(e, Record)]
    tokens = [x for e in records for x in e.tokens]
    if not tokens or not all(type(x) is int for x in tokens) \
            or not all(type(e.id) is int for e in records):
        return None                     # (a RecordBatch holds int ids and int tokens)
    if not chunk or not all(isinstance(e, Record) for e in chunk):
        return None
    times = [e.ts for e in chunk]
    ts = np.array(times, dtype=np.int64 if all(type(t) is int for t in times) else np.float64)
    ptr = np.cumsum([0] + [len(e.tokens) for e in chunk]).astype(np.int64)
    tok = np.array([x for e in chunk for x in e.tokens], dtype=np.int64)
    side = None if chunk[0].side is None else np.array([SIDES[e.side] for e in chunk], np.int8)
    return RecordBatch(np.array([e.id for e in chunk], np.int64), ts, ptr, tok, side)


def check_invalid(engine_cls, case: Case, position: int, bad, error: type) -> Mismatch | None:
    """Offer ``bad`` before event ``position``: the error must be ``error``, name that
    record, and change nothing."""
    return check_rejection(engine_cls, case.params, case.events[:position], case.events[position:],
                           bad, error, position, check_index=True, show=_show, noun="event")

# The checks that compare an engine with the oracle bit for bit (``check``, ``check_watermark``);
# ``bad_records`` compares it with a twin of itself.
ORACLE_CHECKS = frozenset({"step_by_step", "watermark"})


def not_applicable(engine_cls, check: str) -> str | None:
    """Why ``check`` does not apply to ``engine_cls`` (None: it applies).  An engine that
    declares ``exact = False`` (``static:batch=B``, SWOOP Section 7.2's approximate Static)
    gives other top-k lists than the oracle by design, so the oracle checks are skipped
    for it, saying so; the bad-records check still runs (its twin is the engine itself)."""
    if check in ORACLE_CHECKS and not getattr(engine_cls, "exact", True):
        return (f"{getattr(engine_cls, 'name', engine_cls)} is approximate (exact = False): its top-k "
                f"lists differ from the oracle's by design, and the {check} check compares with "
                f"the oracle bit for bit")
    return None


def stream(case: Case) -> list:
    """The events of ``case``, in order (what ``process`` is fed, cut by ``case.chunks``)."""
    return case.events


def _time(event):
    return event.t if isinstance(event, Advance) else event.ts


def check_watermark(engine_cls, case: Case) -> Mismatch | None:
    """Simjoin has no watermark call: its watermark is the ``Advance(t)`` event (the
    paper's ``set_index_time``), drawn inside the streams the step-by-step check
    compares with the oracle, and ``flush`` emits nothing (time does not move at end
    of stream).  What is left to check: a watermark at the current index time,
    ``Advance(t)`` sent alone after each chunk, moves nothing, so it emits nothing
    (the list did not change) and the engine then emits exactly the oracle's
    outputs for the stream without it; ``flush`` emits nothing and closes the engine."""
    return check(engine_cls, case, watermarks=True)


FEATURES = frozenset({
    "join_self", "join_rs", *(f"similarity_{s}" for s in SIMILARITIES), "int_window",
    "float_window", "float_times", "tie", "gap_longer_than_window", "advance", "empty_set",
    "duplicate_tokens", "identical_sets", "int_tokens", "str_tokens", "int_ids", "str_ids",
    "several_chunks", "empty_stream", "k_above_1", "lateness_drop", "late_event",
})


def features(case: Case) -> set[str]:
    """The situations ``case`` exercises, among ``FEATURES`` (what ``cases()`` claims to
    draw): each join kind and similarity, int and float windows and times, ties, gaps
    longer than the window, ``Advance`` events, empty sets, duplicate tokens in a record,
    identical sets, both token and id kinds, several ``process`` calls, the ``drop``
    lateness policy and late events."""
    p = case.params
    out = {f"join_{p.join}", f"similarity_{p.similarity}",
           "float_window" if isinstance(p.w, float) else "int_window"}
    out |= {"k_above_1"} if p.k > 1 else set()
    out |= {"several_chunks"} if len(case.chunks) > 1 else set()
    if not case.events:
        return out | {"empty_stream"}
    out |= {"lateness_drop"} if p.lateness == "drop" else set()
    times = [_time(e) for e in case.events]
    if any(t < max(times[:i]) for i, t in enumerate(times) if i):
        out.add("late_event")
    steps = [b - a for a, b in zip(times, times[1:])]
    out |= {"tie"} if 0 in steps else set()
    out |= {"gap_longer_than_window"} if any(d > p.w for d in steps) else set()
    out |= {"float_times"} if any(t != int(t) for t in times) else set()
    records = [e for e in case.events if isinstance(e, Record)]
    out |= {"advance"} if len(records) < len(case.events) else set()
    sets = [frozenset(r.tokens) for r in records]
    out |= {"empty_set"} if frozenset() in sets else set()
    out |= {"duplicate_tokens"} if any(len(set(r.tokens)) < len(r.tokens) for r in records) else set()
    out |= {"identical_sets"} if len({x for x in sets if x}) < len([x for x in sets if x]) else set()
    out |= {f"{type(x).__name__}_tokens" for r in records for x in r.tokens}
    out |= {f"{type(r.id).__name__}_ids" for r in records}
    return out


def _event_json(e) -> str:
    if isinstance(e, Advance):
        return json.dumps({"advance": e.t})
    row = {"id": e.id, "tokens": list(e.tokens), "ts": e.ts}
    if e.side is not None:
        row["side"] = e.side
    return json.dumps(row)


def dump(case: Case) -> str:
    p = case.params
    head = {"problem": PROBLEM, "k": p.k, "w": p.w, "similarity": p.similarity, "join": p.join,
            "lateness": p.lateness, "chunks": list(case.chunks)}
    return "\n".join([json.dumps(head)] + [_event_json(e) for e in case.events]) + "\n"


def load(text: str) -> Case:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    head = json.loads(lines[0])
    params = Params(k=head["k"], w=head["w"], similarity=head["similarity"], join=head["join"],
                    lateness=head.get("lateness", "error"))
    events = []
    for ln in lines[1:]:
        row = json.loads(ln)
        if "advance" in row:
            events.append(Advance(row["advance"]))
        else:
            events.append(Record(row["id"], row["tokens"], row["ts"], row.get("side")))
    return Case(params, events, head["chunks"])


# -- Spark: the pipeline's partitioned replays against the oracle ------------------------------
def _oracle_rows(records: list, params: Params) -> list[tuple]:
    """The oracle's changes of ``records`` as the pipeline's output rows, in (event, rank) order."""
    from streamspec.pipeline.jobs.simjoin import output_rows
    topks = [x for x in evaluate(records, params) if x is not None]
    return _plain(output_rows(topks).itertuples(index=False))


def _plain(rows) -> list[tuple]:
    """Rows as tuples, NaN as None, sorted by (event, rank) (Spark returns them grouped)."""
    def plain(v):
        return None if v is None or (isinstance(v, float) and v != v) else v
    return sorted((tuple(plain(v) for v in row) for row in rows), key=lambda r: (r[0], r[2]))


def _frame(records: list, key=None):
    """``records`` as ``pipeline.io.simjoin.read_sets`` frames them (``pos`` per stream)."""
    import pandas as pd

    frame = pd.DataFrame({
        "pos": pd.Series(range(len(records)), dtype="int64"),
        "id": [r.id for r in records], "tokens": [list(r.tokens) for r in records],
        "ts": pd.Series([float(r.ts) for r in records], dtype="float64"),
        "side": pd.Series([r.side for r in records], dtype=object)})
    if key is not None:
        frame["key"] = key
    return frame


def _rows_mismatch(label: str, got: list, want: list) -> Mismatch | None:
    if got == want:
        return None
    if len(got) != len(want):
        return Mismatch(label, f"{len(got)} output rows, the oracle's run has {len(want)}",
                        want[:5], got[:5])
    first = next(n for n, (g, w) in enumerate(zip(got, want)) if g != w)
    return Mismatch(label, f"output row {first} (event {want[first][0]}) differs",
                    want[first], got[first])


def _parquet_case(records: list, path: str) -> None:
    """``records`` as a Parquet file of the pipeline's columns, in about five row groups."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    kinds = {type(x) for r in records for x in r.tokens}
    ids = pa.string() if any(isinstance(r.id, str) for r in records) else pa.int64()
    times = pa.int64() if all(isinstance(r.ts, int) for r in records) else pa.float64()
    columns = {"id": pa.array([r.id for r in records], ids),
               "ts": pa.array([r.ts for r in records], times),
               "tokens": pa.array([list(r.tokens) for r in records],
                                  pa.list_(pa.string() if str in kinds else pa.int64()))}
    if any(r.side is not None for r in records):
        columns["side"] = pa.array([r.side for r in records], pa.string())
    pq.write_table(pa.table(columns), path, row_group_size=max(1, len(records) // 5))


def partitioned_mismatch(spark, engine_cls, case: Case, partitions: int) -> Mismatch | None:
    """The pipeline's Spark replays of ``case`` over ``partitions`` against the oracle
    (``streamspec.reference.simjoin``), output rows and event numbers included:

    - record ranges with their halo from the driver's frame
      (``jobs.simjoin.replay_stream``, what ``streamspec run`` takes for JSON lines);
    - record ranges whose tasks read their own row groups of a Parquet file cut
      into about five (``jobs.simjoin.replay_scan``, what it takes for Parquet);
    - record ranges whose tasks parse their own bytes of a JSON lines file
      (``jobs.simjoin.replay_lines``, what it takes for JSON lines);
    - keyed replay of three streams made from the case as keys: the whole case,
      its second half and every other record (each against the oracle on it).

    The pipeline's input holds records only: the case's ``Advance`` events are left
    out (of the oracle's run too).
    """
    import os
    import tempfile

    import pandas as pd

    from streamspec.pipeline.io.simjoin import SetStream, plan_lines, plan_scan
    from streamspec.pipeline.jobs.simjoin import replay_lines, replay_scan, replay_stream

    params = attrs.evolve(case.params, lateness="error")
    records = [e for e in case.events if isinstance(e, Record)]
    id_type = "string" if any(isinstance(r.id, str) for r in records) else "long"
    columns = ["event", "ts", "rank", "id_new", "id_old", "score", "end_time"]

    def rows(df, *keys):
        return _plain(tuple(r[c] for c in columns) for r in df.select(*keys, *columns).collect())

    want = _oracle_rows(records, params)
    one = SetStream(_frame(records), "<case>", False, len(records), 0)
    found = _rows_mismatch(f"{partitions} record ranges",
                           rows(replay_stream(spark, one, engine_cls, params, partitions, id_type)),
                           want)
    if found is not None:
        return found
    if records:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "sets.parquet")
            _parquet_case(records, path)
            scan = plan_scan(path, params)
            replayed = None if scan is None else replay_scan(spark, scan, engine_cls, params,
                                                             partitions)
            if replayed is None:
                return Mismatch(f"{partitions} range-scan partitions",
                                "the columnar path declined or rejected a valid case")
            found = _rows_mismatch(f"{partitions} range-scan partitions", rows(replayed[0]), want)
            if found is not None:
                return found
            path = os.path.join(tmp, "sets.jsonl")
            with open(path, "w") as f:
                f.write("".join(_event_json(r) + "\n" for r in records))
            lines = plan_lines(path, params)
            replayed = None if lines is None else replay_lines(spark, lines, engine_cls, params,
                                                               partitions, True)
            if replayed is None:
                return Mismatch(f"{partitions} JSON-lines partitions",
                                "the task-parsed path declined or rejected a valid case")
            found = _rows_mismatch(f"{partitions} JSON-lines partitions", rows(replayed[0]), want)
            if found is not None:
                return found
    streams = {"all": records, "tail": records[len(records) // 2:], "odd": records[1::2]}
    streams = {k: v for k, v in streams.items() if v}
    if not streams:
        return None
    keyed = SetStream(pd.concat([_frame(v, k) for k, v in streams.items()], ignore_index=True),
                      "<case>", True, sum(map(len, streams.values())), 0)
    got = replay_stream(spark, keyed, engine_cls, params, partitions, id_type)
    for key, stream in streams.items():
        found = _rows_mismatch(f"key {key!r} of {len(streams)}, {partitions} partitions",
                               rows(got.where(got["key"] == key)), _oracle_rows(stream, params))
        if found is not None:
            return found
    return None
