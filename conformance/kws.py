"""S-KWS conformance: step-by-step comparison with the oracle (``streamspec.spec.kws``).

``check(engine_cls, case)`` feeds the case's events to a fresh engine in the
case's chunks.  After a chunk whose last event is at time ``T``, exactly the
oracle's outputs (``streamspec.reference.kws.evaluate``) with ``time < T`` must have
been emitted, in canonical order (the instant ``T`` is still open); after
``flush``, all of them.

``check_invalid`` offers one bad record and checks the typed error and that
the engine then goes on exactly as if it had never seen it.

``partitioned_mismatch`` (Spark) replays a case through the pipeline's replays,
including the case written as JSON lines tuple files that Spark tasks read
(``files_mismatch``: the files are written to a temporary directory on the
driver, the tasks read their byte ranges, the driver's reader reads them too for
the oracle's events).

``check_watermark`` offers watermarks (``advance_to``) between the chunks;
``features(case)`` names the situations a case exercises, so a test can check
that the strategy draws every one it claims (``FEATURES``).
"""
from __future__ import annotations

import json

import attrs

from streamspec.conformance.contracts import closed_after_flush
from streamspec.conformance.roundtrip import PicklingDivergence
from streamspec.conformance.runner import Mismatch, check_rejection
from streamspec.conformance.strategies.kws import cases, invalid_cases, random_case  # noqa: F401
from streamspec.reference.kws import evaluate
from streamspec.spec.errors import MalformedRecord, StreamspecError
from streamspec.spec.kws import (AddEdge, AddRelation, Appear, Delete, End, Insert, Params,
                                 RemoveEdge, RemoveRelation, TupleBatch, edge_json,
                                 event_from_json, event_to_json, relation_json)
from streamspec.spec.kws_schema import JoinEdge, Relation, Schema

PROBLEM = "kws"


@attrs.frozen
class Case:
    params: Params
    events: list
    chunks: list


_ORACLE: dict[str, list] = {}     # dump(case) -> the oracle's outputs (most recent cases)
_ORACLE_CASES = 4096


def oracle_outputs(case: Case) -> list:
    """The oracle's outputs on ``case`` (``reference.kws.evaluate``), remembered for the
    most recent cases: the brute-force oracle is most of the suite's time on kws, and
    the derandomized checks draw the same cases for every engine and for both
    ``step_by_step`` and ``watermark``.  The oracle is deterministic, so this changes
    no comparison; every engine still runs on every example."""
    key = dump(case)
    found = _ORACLE.get(key)
    if found is None:
        found = evaluate(case.params, case.events)
        if len(_ORACLE) >= _ORACLE_CASES:
            _ORACLE.pop(next(iter(_ORACLE)))
        _ORACLE[key] = found
    return found


def check(engine_cls, case: Case) -> Mismatch | None:
    expected = oracle_outputs(case)
    try:
        return _check(engine_cls, case, expected)
    except PicklingDivergence:     # reported at the round trip's own step (conformance.checks)
        raise
    except Exception as exc:  # an engine crash on a valid stream is a mismatch too
        return Mismatch("while processing", f"the engine raised {type(exc).__name__}: {exc}")


def _check(engine_cls, case: Case, expected: list) -> Mismatch | None:
    engine = engine_cls(case.params)
    got, pos = [], 0
    for size in case.chunks:
        chunk = case.events[pos:pos + size]
        pos += size
        got.extend(engine.process(chunk))
        t = chunk[-1].t
        want = [o for o in expected if o.time < t]
        if got != want:
            return _mismatch(f"after event {pos - 1} (t={t})", want, got)
    got.extend(engine.flush())
    if got != expected:
        return _mismatch("flush", expected, got)
    return None


def _mismatch(step, want, got) -> Mismatch:
    for i, (w, g) in enumerate(zip(want, got)):
        if w != g:
            return Mismatch(step, f"output {i} differs", w, g)
    if len(want) > len(got):
        return Mismatch(step, f"missing outputs from {len(got)} on", want[len(got):], None)
    return Mismatch(step, f"extra outputs from {len(want)} on", None, got[len(want):])


def columnar(chunk: list, case: Case):
    """``chunk`` as the columnar ``TupleBatch`` the Spark pipeline feeds, when it holds only
    inserts and deletions (``checks``: a third of the examples go in this way and must
    answer as lists do); None for a chunk with a schema change."""
    if not chunk or not all(isinstance(ev, (Insert, Delete)) for ev in chunk):
        return None
    return TupleBatch.from_events(chunk)


def check_invalid(engine_cls, case: Case, position: int, bad, error: type) -> Mismatch | None:
    """Offer ``bad`` before event ``position``: the error must be ``error``, name that
    record, and change nothing (the rejected record still counts in the index of later
    records, so outputs are compared, not indices)."""
    return check_rejection(engine_cls, case.params, case.events[:position], case.events[position:],
                           bad, error, position, check_index=True)


def stream(case: Case) -> list:
    """The events of ``case``, in order (what ``process`` is fed, cut by ``case.chunks``)."""
    return case.events


def check_watermark(engine_cls, case: Case) -> Mismatch | None:
    """``advance_to(w)`` before the first chunk and after each one, with the truthful
    watermarks ``w`` in {last event's time, next event's time}: after each call exactly
    the oracle's outputs with ``time < w`` (or ``< T``, the last event's time, if
    larger) have been emitted, in order, so a watermark past ``T`` closes the instant
    ``T``; after ``flush``, all of them: the total equals ``flush`` alone."""
    expected = oracle_outputs(case)
    try:
        engine = engine_cls(case.params)
        got, pos, last = [], 0, None
        for size in case.chunks + [0]:
            upcoming = case.events[pos].t if pos < len(case.events) else last
            for w in [x for x in (last, upcoming) if x is not None]:
                got.extend(engine.advance_to(w))
                want = [o for o in expected if o.time < max(w, last if last is not None else w)]
                if got != want:
                    return _mismatch(f"advance_to({w}) after event {pos - 1}", want, got)
            if not size:
                break
            chunk = case.events[pos:pos + size]
            pos += size
            got.extend(engine.process(chunk))
            last = chunk[-1].t
            want = [o for o in expected if o.time < last]
            if got != want:
                return _mismatch(f"after event {pos - 1} (t={last}), past watermarks", want, got)
        got.extend(engine.flush())
    except PicklingDivergence:     # reported at the round trip's own step (conformance.checks)
        raise
    except Exception as exc:  # an engine crash on a valid stream is a mismatch too
        return Mismatch("while processing", f"the engine raised {type(exc).__name__}: {exc}")
    if got != expected:
        return _mismatch("flush after watermarks", expected, got)
    return closed_after_flush(engine)


# -- the columnar batch (streamspec.spec.kws.TupleBatch) ----------------------------------
def batch_inputs(events: list) -> list:
    """``events`` as ``process`` inputs for the columnar path: each maximal run of inserts
    and deletions as one ``TupleBatch``, each schema change as a one-event list."""
    out, run = [], []
    for ev in events:
        if isinstance(ev, (Insert, Delete)):
            run.append(ev)
            continue
        if run:
            out.append(TupleBatch.from_events(run))
            run = []
        out.append([ev])
    if run:
        out.append(TupleBatch.from_events(run))
    return out


def check_batch(engine_cls, case: Case) -> Mismatch | None:
    """``check`` with every chunk fed as batches (``batch_inputs``): the engine must give
    the oracle's outputs, step by step, for the columnar input too."""
    expected = oracle_outputs(case)
    try:
        engine = engine_cls(case.params)
        got, pos = [], 0
        for size in case.chunks:
            chunk = case.events[pos:pos + size]
            pos += size
            for piece in batch_inputs(chunk):
                got.extend(engine.process(piece))
            want = [o for o in expected if o.time < chunk[-1].t]
            if got != want:
                return _mismatch(f"batch ending at event {pos - 1} (t={chunk[-1].t})", want, got)
        got.extend(engine.flush())
    except PicklingDivergence:     # reported at the round trip's own step (conformance.checks)
        raise
    except Exception as exc:  # an engine crash on a valid stream is a mismatch too
        return Mismatch("while processing batches", f"the engine raised {type(exc).__name__}: {exc}")
    if got != expected:
        return _mismatch("flush after batches", expected, got)
    return None


def check_batch_invalid(engine_cls, case: Case, position: int, bad, error: type,
                        lead: int = 0) -> Mismatch | None:
    """A batch holding ``bad`` at ``position`` (after the ``lead`` events before it and
    with the batchable events after it): the error must be the event path's (``error``,
    naming record ``position``), and the whole batch is refused: the engine then goes on
    exactly as one never offered it.  None when ``bad`` cannot be a batch row."""
    lead = min(lead, position)
    before, rest = case.events[:position - lead], case.events[position:]
    after = []
    for ev in rest:
        if not isinstance(ev, (Insert, Delete)):
            break
        after.append(ev)
    try:
        batch = TupleBatch.from_events(case.events[position - lead:position] + [bad] + after)
    except (MalformedRecord, TypeError, ValueError):
        return None             # not an Insert or Delete: no batch row
    step = f"batch with record {position}"
    clean, dirty = engine_cls(case.params), engine_cls(case.params)
    want, have = list(clean.process(before)), list(dirty.process(before))
    try:
        list(dirty.process(batch))
    except error as err:
        if getattr(err, "index", None) != position:
            return Mismatch(step, "the error names the wrong record", position,
                            getattr(err, "index", None))
    except StreamspecError as other:
        return Mismatch(step, f"raised {type(other).__name__}, expected {error.__name__}",
                        error.__name__, repr(other))
    else:
        return Mismatch(step, f"bad record {bad!r} was accepted in a batch", error.__name__, None)
    tail = case.events[position - lead:]
    want += list(clean.process(tail)) + list(clean.flush())
    have += list(dirty.process(tail)) + list(dirty.flush())
    if want != have:
        return Mismatch("after the rejected batch", "the rejection changed the engine's state",
                        want, have)
    return None


FEATURES = frozenset({
    "window_model", "deletion_model", "one_relation", "several_relations", "self_join_edge",
    "parallel_edges", "cycle", "no_join_edges", "insert", "delete", "add_relation",
    "remove_relation", "add_edge", "remove_edge", "tie", "gap_longer_than_window",
    "arrival_at_tuple_end", "null_join_value", "no_text", "keyword_case_and_punctuation",
    "int_tids", "str_tids", "three_keywords", "several_chunks", "empty_stream",
})


def features(case: Case) -> set[str]:
    """The situations ``case`` exercises, among ``FEATURES`` (what ``cases()`` claims to
    draw): both lifespan models, one or several relations, self joins, parallel edges and
    cycles in the schema, every event kind (schema changes included), ties, gaps longer
    than the window, an arrival at a tuple's window end, null join values, tuples without
    text, keywords in mixed case and punctuation, int and str tids, several chunks."""
    p, events = case.params, case.events
    out = {"deletion_model" if p.window is None else "window_model",
           "one_relation" if len(p.schema.relations) == 1 else "several_relations"}
    out |= {"three_keywords"} if len(p.keywords) == 3 else set()
    out |= {"several_chunks"} if len(case.chunks) > 1 else set()
    out |= _schema_features(p.schema.edges)
    kinds = {Insert: "insert", Delete: "delete", AddRelation: "add_relation",
             RemoveRelation: "remove_relation", AddEdge: "add_edge", RemoveEdge: "remove_edge"}
    out |= {kinds[type(e)] for e in events}
    if not events:
        return out | {"empty_stream"}
    times = [e.t for e in events]
    steps = [b - a for a, b in zip(times, times[1:])]
    out |= {"tie"} if 0 in steps else set()
    inserts = [e for e in events if isinstance(e, Insert)]
    values = [dict(e.values) for e in inserts]
    if p.window is not None:
        out |= {"gap_longer_than_window"} if any(d > p.window for d in steps) else set()
        ends = {e.t + p.window for e in inserts}
        out |= {"arrival_at_tuple_end"} if ends & set(times) else set()
    out |= {"null_join_value"} if any(None in (v["a"], v["b"]) for v in values) else set()
    out |= {"no_text"} if any("s" not in v for v in values) else set()
    text = " ".join(v.get("s", "") for v in values)
    out |= {"keyword_case_and_punctuation"} if any(c.isupper() or c in "!-," for c in text) else set()
    out |= {f"{type(e.tid).__name__}_tids" for e in inserts}
    return out


def _schema_features(edges) -> set[str]:
    """Shapes of the join graph: self joins, parallel edges, cycles over distinct relations."""
    out = set() if edges else {"no_join_edges"}
    pairs = [frozenset((e.left, e.right)) for e in edges]
    out |= {"self_join_edge"} if any(len(q) == 1 for q in pairs) else set()
    out |= {"parallel_edges"} if len(set(pairs)) < len(pairs) else set()
    parent = {}

    def root(x):
        while parent.get(x, x) != x:
            x = parent[x]
        return x
    for q in {q for q in pairs if len(q) == 2}:
        a, b = map(root, q)
        if a == b:
            out.add("cycle")
        parent[a] = b
    return out


# -- Spark (streamspec.conformance.spark) ------------------------------------------------
KEYED_VARIANTS = 3      # keys of the keyed replay: the case and two variants (``keyed_streams``)


def keyed_streams(case: Case, n: int = KEYED_VARIANTS) -> dict:
    """Several independent streams under the case's parameters, one per key: the case
    itself, then prefixes of it moved later in time (key ``k{i}``: the first
    ``len * (n - i) / n`` events, times + ``3 i``).  Every key reuses the same tids (each
    key has its own), and the shifts make ties across keys."""
    events = case.events
    out = {}
    for i in range(n):
        cut = len(events) * (n - i) // n
        out[f"k{i}"] = [attrs.evolve(ev, t=ev.t + 3 * i) for ev in events[:cut]]
    return out


def _rows_mismatch(label: str, got: list, want: list) -> Mismatch | None:
    got, want = sorted(got, key=repr), sorted(want, key=repr)
    if got == want:
        return None
    extra = [r for r in got if r not in want]
    missing = [r for r in want if r not in got]
    if len(got) != len(want) and not extra and not missing:
        return Mismatch(label, f"{len(got)} rows, the oracle has {len(want)} (repeated rows)")
    return Mismatch(label, f"{len(missing)} rows missing, {len(extra)} extra",
                    missing[:3] or None, extra[:3] or None)


def _plain(frame) -> list[tuple]:
    """Output rows as tuples of plain values (lists as tuples, every missing value None)."""
    import pandas as pd

    def plain(v):
        if v is None or v is pd.NA or (isinstance(v, float) and v != v):
            return None
        if hasattr(v, "tolist"):
            v = v.tolist()
        return tuple(v) if isinstance(v, (list, tuple)) else v
    return [tuple(plain(v) for v in row) for row in frame.astype(object).itertuples(index=False)]


def partitioned_mismatch(spark, engine_cls, case: Case, partitions: int) -> Mismatch | None:
    """The pipeline's two Spark replays of ``case`` (``streamspec.pipeline.jobs.kws``)
    against the oracle (``streamspec.reference.kws.evaluate``), as output rows:

    - the exact time-partitioned replay over ``partitions`` time ranges (one halo of a
      window each; the positive-negative model replays in one task);
    - the keyed replay of ``keyed_streams(case)`` over ``partitions`` Spark
      partitions: each key's rows must be the oracle's on that key's stream alone;
    - the case as tuple files read by Spark tasks (``files_mismatch``).
    """
    from streamspec.pipeline.jobs import kws as job

    params = case.params
    want = _plain(job.output_rows(evaluate(params, case.events)))
    got = _plain(job.replay_events(spark, engine_cls, params, case.events, partitions)
                 .toPandas())
    found = _rows_mismatch(f"{partitions} time ranges", got, want)
    if found is not None:
        return found
    streams = keyed_streams(case)
    events = [ev for key in streams for ev in streams[key]]
    keys = [key for key in streams for _ in streams[key]]
    want = []
    for key, stream in streams.items():
        want += [(key, *row) for row in _plain(job.output_rows(evaluate(params, stream)))]
    if not events:
        return None
    # each key's events in its own order: ``seq`` numbers them in this concatenation
    got = _plain(job.replay_keyed(spark, engine_cls, params, events, keys, partitions)
                 .toPandas())
    found = _rows_mismatch(f"{len(streams)} keys over {partitions} partitions", got, want)
    if found is not None:
        return found
    return files_mismatch(spark, engine_cls, case, partitions)


def files_mismatch(spark, engine_cls, case: Case, partitions: int) -> Mismatch | None:
    """The case written as tuple files (JSON lines, one per relation, deletions apart) and
    replayed as ``streamspec run kws`` replays local files: Spark tasks parse byte ranges
    of a few lines (``streamspec.pipeline.jobs.kws.replay_files``).  Its rows must be the
    oracle's over the events the driver's reader makes of the same files (the files merge
    ties in their own order, and tids are text).  Cases a file cannot hold (schema
    changes, tids equal as text, an attribute named like a file column) are skipped."""
    import os
    import tempfile

    from streamspec.pipeline.io.kws import read_events
    from streamspec.pipeline.io.kws_text import plan_files
    from streamspec.pipeline.jobs import kws as job

    params = case.params
    if not case.events or any(not isinstance(ev, (Insert, Delete)) for ev in case.events) \
            or any(a in ("t", "tid", "key") for r in params.schema.relations for a in r.attributes):
        return None
    tids = [str(ev.tid) for ev in case.events if isinstance(ev, Insert)]
    if len(set(tids)) < len(tids):
        return None
    with tempfile.TemporaryDirectory(prefix="streamspec-kws-files-") as tmp:
        lines: dict = {}
        for ev in case.events:
            if isinstance(ev, Insert):
                row = {"tid": str(ev.tid), "t": ev.t, **{a: v for a, v in ev.values if v is not None}}
                lines.setdefault(ev.relation, []).append(json.dumps(row))
            else:
                lines.setdefault(None, []).append(json.dumps({"tid": str(ev.tid), "t": ev.t}))
        inputs, deletions = [], None
        for rel, rows in lines.items():
            path = os.path.join(tmp, f"{rel or '-deletions'}.jsonl")
            with open(path, "w") as f:
                f.write("\n".join(rows) + "\n")
            if rel is None:
                deletions = path
            else:
                inputs.append((rel, path))
        try:
            events = read_events(inputs, deletions).events
            want = _plain(job.output_rows(evaluate(params, events)))
        except StreamspecError:
            return None             # not valid once written (a value JSON cannot hold...)
        files = plan_files(inputs, deletions, None, params.schema)
        if files is None:
            return Mismatch("tuple files", "the plan declined files the driver reads")
        plan = job.Plan(params, None, files=files, inputs=tuple(inputs), deletions=deletions)
        rows = job.replay_files(spark, plan, engine_cls, partitions, chunk_bytes=64)
        if rows is None:
            return Mismatch("tuple files", "the Spark tasks refused files the driver reads")
        return _rows_mismatch(f"tuple files read by Spark, {partitions} partitions",
                              _plain(rows.toPandas()), want)


# -- reproducers: JSON lines (one event a line, ``streamspec.spec.kws.event_to_json``) ------
def dump(case: Case) -> str:
    p = case.params
    head = {"problem": PROBLEM, "keywords": list(p.keywords), "t_max": p.t_max, "window": p.window,
            "relations": [relation_json(r) for r in p.schema.relations],
            "edges": [edge_json(e) for e in p.schema.edges], "chunks": list(case.chunks)}
    lines = [json.dumps(head)] + [json.dumps(event_to_json(e)) for e in case.events]
    return "\n".join(lines) + "\n"


def load(text: str) -> Case:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    head = json.loads(lines[0])
    schema = Schema(tuple(Relation(**r) for r in head["relations"]),
                    tuple(JoinEdge(*e) for e in head["edges"]))
    params = Params(schema, tuple(head["keywords"]), head["t_max"], head["window"])
    return Case(params, [event_from_json(json.loads(ln)) for ln in lines[1:]], head["chunks"])


__all__ = ["Case", "Appear", "End", "check", "check_invalid", "dump", "load", "cases",
           "invalid_cases", "random_case"]
