"""Connectivity conformance: step-by-step comparison with the oracle.

``check(engine_cls, case)`` feeds the case's stream to a fresh engine in the
case's chunks and, after every chunk, checks that

- exactly the windows the spec makes due have been emitted (window ``n`` is
  due once an edge with ``t >= end(n)`` has arrived; ``flush`` emits every
  window whose start is at or before the last edge), in order of ``n``;
- each emitted ``WindowResult`` equals the oracle's (``streamspec.reference.connectivity``);
- ``connected(a, b)`` on the probe pairs answers for the last emitted window;
- a second engine built with ``hold_back=False`` (edges applied on arrival)
  emits the same windows at the same steps; it runs with the driver's pre-warm
  after every call (``spec.connectivity.PREWARM`` lowered to 1, shipped 32,768),
  so an engine with a fused one-edge call has its ``dry`` mode checked too (it
  must change nothing a later window's answers depend on).

``check_invalid`` slips one bad record into the stream and checks the typed
error, and that the engine, having rejected it, goes on exactly as if it had
never been offered.

``check_watermark`` offers truthful watermarks (``advance_to``) between the
chunks; ``features(case)`` names the situations a case exercises, so a test
can check that the strategy draws every one it claims (``FEATURES``).
"""
from __future__ import annotations

import json

import attrs

from streamspec.conformance.contracts import closed_after_flush
from streamspec.conformance.runner import Mismatch, check_rejection
from streamspec.conformance.strategies.connectivity import cases, invalid_cases, random_case  # noqa: F401
from streamspec.reference.connectivity import evaluate, on_time, window_answers
from streamspec.spec.connectivity import Edge, EdgeBatch, Params, prewarm_after
from streamspec.spec.errors import NoWindowYet
from streamspec.spec.windows import SlidingWindows

PROBLEM = "connectivity"


@attrs.frozen
class Case:
    params: Params
    edges: list
    chunks: list
    probes: list = attrs.Factory(list)


def _bits(answers) -> str:
    return "".join("1" if a else "0" for a in answers)


def check(engine_cls, case: Case) -> Mismatch | None:
    expected = evaluate(case.edges, case.params)
    engine = engine_cls(case.params)
    eager = engine_cls(case.params, hold_back=False)
    got, pos = [], 0
    windows = None
    for size in case.chunks:
        chunk = case.edges[pos:pos + size]
        pos += size
        latest = max(e.t for e in case.edges[:pos])     # (a late edge, dropped, moves no time)
        out = list(engine.process(chunk))
        with prewarm_after(1):
            eager_out = list(eager.process(chunk))
        if eager_out != out:
            return Mismatch(f"after edge {pos - 1} (t={chunk[-1].t})",
                            "hold_back=False emits other windows than hold_back=True",
                            [(w.index, _bits(w.answers)) for w in out],
                            [(w.index, _bits(w.answers)) for w in eager_out])
        if windows is None:
            t0 = case.params.t0 if case.params.t0 is not None else case.edges[0].t
            windows = SlidingWindows(case.params.r, case.params.s, t0)
        due = windows.due_before(latest)
        step = f"after edge {pos - 1} (t={chunk[-1].t})"
        problem = _compare(got, out, expected, due, step)
        if problem:
            return problem
        got.extend(out)
        problem = _probe(engine, case, windows, due, step)
        if problem:
            return problem
    out = list(engine.flush())
    eager_out = list(eager.flush())
    if eager_out != out:
        return Mismatch("flush", "hold_back=False emits other windows than hold_back=True",
                        [(w.index, _bits(w.answers)) for w in out],
                        [(w.index, _bits(w.answers)) for w in eager_out])
    problem = _compare(got, out, expected, len(expected), "flush")
    if problem:
        return problem
    got.extend(out)
    if windows is not None:
        return _probe(engine, case, windows, len(expected), "after flush")
    return None


def _compare(got, out, expected, due, step) -> Mismatch | None:
    if len(got) + len(out) != due:
        return Mismatch(step, f"{len(got) + len(out)} windows emitted, the spec makes {due} due",
                        [w.index for w in expected[len(got):due]], [w.index for w in out])
    for w, e in zip(out, expected[len(got):due]):
        if w != e:
            return Mismatch(step, f"window {e.index} [{e.start}, {e.end}) differs",
                            (e.index, e.start, e.end, _bits(e.answers)),
                            (w.index, w.start, w.end, _bits(w.answers)))
    return None


def _probe(engine, case, windows, due, step) -> Mismatch | None:
    if not case.probes:
        return None
    if due == 0:
        try:
            engine.connected(*case.probes[0])
        except NoWindowYet:
            return None
        return Mismatch(step, "connected() before any window must raise NoWindowYet")
    n = due - 1
    lo, hi = windows.start(n), windows.end(n)
    inside = [(e.u, e.v) for e in on_time(case.edges) if lo <= e.t < hi]
    want = window_answers(inside, case.probes)
    have = tuple(bool(engine.connected(a, b)) for a, b in case.probes)
    if want != have:
        return Mismatch(step, f"connected() on window {n} for probes {case.probes}", _bits(want), _bits(have))
    return None


def adhoc(engine, case: Case) -> tuple:
    """The ad-hoc answers asked around a pickle round trip (``conformance.roundtrip``):
    ``connected(a, b)`` on the case's probe pairs (an error's type is the answer)."""
    return tuple(bool(engine.connected(a, b)) for a, b in case.probes)


def columnar(chunk: list, case: Case) -> EdgeBatch | None:
    """``chunk`` as the columnar ``EdgeBatch`` the Spark pipeline feeds (``checks``: a
    third of the examples go in this way and must answer as lists do)."""
    return EdgeBatch.of(chunk) if chunk else None


def check_invalid(engine_cls, case: Case, position: int, bad, error: type) -> Mismatch | None:
    """Offer ``bad`` before edge ``position``: the error must be ``error`` and change nothing."""
    return check_rejection(engine_cls, case.params, case.edges[:position], case.edges[position:],
                           bad, error, position, show=lambda w: _bits(w.answers))


def stream(case: Case) -> list:
    """The events of ``case``, in order (what ``process`` is fed, cut by ``case.chunks``)."""
    return case.edges


def check_watermark(engine_cls, case: Case) -> Mismatch | None:
    """``advance_to(w)`` before the first chunk and after each one, with the truthful
    watermarks ``w`` in {the latest edge's time, midway, the next on-time edge's time,
    then a stale one behind the latest edge}: each call must emit
    exactly the windows ending by ``w`` not yet emitted, equal to the oracle's, and the
    total output (process, watermarks, flush) must be the oracle's whole output, in
    order: what ``flush`` alone gives (the step-by-step check).  Watermarks past the
    last edge are not offered: they legitimately add trailing empty windows."""
    if not case.edges:
        return None
    expected = evaluate(case.edges, case.params)
    t0 = case.params.t0 if case.params.t0 is not None else case.edges[0].t
    windows = SlidingWindows(case.params.r, case.params.s, t0)
    engine = engine_cls(case.params)
    got, pos, last = [], 0, None
    for size in case.chunks + [0]:
        # truthful: at most every edge still to come that is not late (late ones are
        # dropped whatever the watermark), and past the last edge only to the last time
        ahead = [e.t for e in case.edges[pos:] if last is None or e.t >= last]
        upcoming = min(ahead) if ahead else last
        # and last a stale mark, behind the latest edge, which must move nothing (under
        # "drop" the late edges after it must still be dropped)
        stale = None if last is None else last - case.params.r - case.params.s
        marks = [upcoming] if last is None else [last, (last + upcoming) // 2, upcoming, stale]
        for w in marks:
            out = engine.advance_to(w)
            due = windows.due_before(w) if case.params.t0 is not None or last is not None else 0
            due = max(due, len(got))    # (a mark behind an earlier one, past a late edge, moves nothing)
            problem = _compare(got, out, expected, due, f"advance_to({w}) after edge {pos - 1}")
            if problem:
                return problem
            got.extend(out)
        chunk = case.edges[pos:pos + size]
        if not chunk:
            break
        pos += size
        out = list(engine.process(chunk))
        last = max(e.t for e in case.edges[:pos])
        problem = _compare(got, out, expected, max(len(got), windows.due_before(last)),
                           f"after edge {pos - 1} (t={last}), past watermarks")
        if problem:
            return problem
        got.extend(out)
    problem = _compare(got, list(engine.flush()), expected, len(expected), "flush after watermarks")
    return problem or closed_after_flush(engine)


FEATURES = frozenset({
    "int_vertices", "str_vertices", "r_below_s", "r_equal_s", "r_above_s", "r_not_multiple_of_s",
    "empty_stream", "tie", "burst", "step_within_slide", "gap_longer_than_window", "empty_window",
    "self_loop", "duplicate_edge", "self_query", "absent_query_vertex", "empty_workload",
    "origin_given", "origin_before_first_edge", "several_chunks", "probes", "negative_time",
    "lateness_drop", "late_edge",
})


def features(case: Case) -> set[str]:
    """The situations ``case`` exercises, among ``FEATURES`` (what ``cases()`` claims to
    draw): window shapes, ties (two edges at one time) and bursts (three or more), gaps
    longer than the window and empty windows, self loops, duplicate edges, ``Q(x, x)``,
    query vertices absent from the stream, an explicit origin, several ``process`` calls,
    the ``drop`` lateness policy and late edges."""
    p, edges = case.params, case.edges
    out = {"r_below_s" if p.r < p.s else "r_equal_s" if p.r == p.s else "r_above_s"}
    out |= {"r_not_multiple_of_s"} if p.r % p.s else set()
    out |= {"empty_workload"} if not p.workload else set()
    out |= {"self_query"} if any(a == b for a, b in p.workload) else set()
    out |= {"origin_given"} if p.t0 is not None else set()
    out |= {"several_chunks"} if len(case.chunks) > 1 else set()
    out |= {"probes"} if case.probes else set()
    if not edges:
        return out | {"empty_stream"}
    out.add("str_vertices" if isinstance(edges[0].u, str) else "int_vertices")
    present = {x for e in edges for x in (e.u, e.v)}
    if any(x not in present for q in p.workload for x in q):
        out.add("absent_query_vertex")
    if p.t0 is not None and p.t0 < edges[0].t:
        out.add("origin_before_first_edge")
    out |= {"lateness_drop"} if p.lateness == "drop" else set()
    if len(on_time(edges)) < len(edges):
        out.add("late_edge")
    edges = on_time(edges)           # the stream the windows see
    times = [e.t for e in edges]
    steps = [b - a for a, b in zip(times, times[1:])]
    out |= {"tie"} if 0 in steps else set()
    out |= {"burst"} if any(times.count(t) >= 3 for t in set(times)) else set()
    out |= {"step_within_slide"} if any(0 < d <= p.s for d in steps) else set()
    out |= {"gap_longer_than_window"} if any(d > p.r for d in steps) else set()
    out |= {"negative_time"} if times[0] < 0 else set()
    out |= {"self_loop"} if any(e.u == e.v for e in edges) else set()
    pairs = [(e.u, e.v) for e in edges]
    out |= {"duplicate_edge"} if len(set(pairs)) < len(pairs) else set()
    windows = SlidingWindows(p.r, p.s, p.t0 if p.t0 is not None else times[0])
    if any(not any(windows.start(n) <= t < windows.end(n) for t in times)
           for n in range(windows.started_by(times[-1]))):
        out.add("empty_window")
    return out


def dump(case: Case) -> str:
    p = case.params
    head = {"problem": PROBLEM, "r": p.r, "s": p.s, "t0": p.t0, "lateness": p.lateness,
            "workload": [list(q) for q in p.workload], "chunks": list(case.chunks),
            "probes": [list(q) for q in case.probes]}
    lines = [json.dumps(head)] + [json.dumps([e.u, e.v, e.t]) for e in case.edges]
    return "\n".join(lines) + "\n"


def load(text: str) -> Case:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    head = json.loads(lines[0])
    params = Params(r=head["r"], s=head["s"], t0=head["t0"], lateness=head.get("lateness", "error"),
                    workload=[tuple(q) for q in head["workload"]])
    edges = [Edge(*json.loads(ln)) for ln in lines[1:]]
    return Case(params, edges, head["chunks"], [tuple(q) for q in head.get("probes", [])])


# -- Spark (streamspec.conformance.spark) ------------------------------------------------
def _windows_mismatch(label: str, got: list, want: list) -> Mismatch | None:
    if got == want:
        return None
    if len(got) != len(want):
        return Mismatch(label, f"{len(got)} windows, the oracle has {len(want)}",
                        [w[0] for w in want], [w[0] for w in got])
    first = next(i for i, (g, w) in enumerate(zip(got, want)) if g != w)
    return Mismatch(label, f"window {want[first][0]} differs", want[first], got[first])


def partitioned_mismatch(spark, engine_cls, case: Case, partitions: int) -> Mismatch | None:
    """Both Spark replays of ``case`` over ``partitions`` window ranges against the oracle:
    the validating reader's (``pipeline.replay.time_partitioned``) and, for a stream in
    order, the columnar range scan of a Parquet file cut into small row groups
    (``pipeline.range_scan``, what ``streamspec run`` takes for Parquet)."""
    import tempfile

    import pyarrow as pa
    import pyarrow.parquet as pq

    from streamspec.pipeline import range_scan, text_scan
    from streamspec.pipeline.io.edges import edges_frame, frame_stream
    from streamspec.pipeline.jobs.connectivity import replay_stream

    def rows(df):
        return sorted((r["window"], r["start"], r["end"], tuple(r["answers"]))
                      for r in df.select("window", "start", "end", "answers").collect())

    want = [(w.index, w.start, w.end, w.answers) for w in evaluate(case.edges, case.params)]
    stream = frame_stream(spark, "<case>", edges_frame(case.edges))
    found = _windows_mismatch(f"{partitions} partitions",
                              rows(replay_stream(stream, engine_cls, case.params, partitions)), want)
    if found is not None or not case.edges:
        return found
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/edges.parquet"
        cols = {c: [getattr(e, c) for e in case.edges] for c in ("u", "v", "t")}
        pq.write_table(pa.table(cols), path, row_group_size=max(1, len(case.edges) // 5))
        scan = range_scan.plan(path, case.params.lateness, case.params.t0, case.params.r,
                               case.params.s)
        if scan is None:        # out of order, s > r, mixed ids...: the reader's path above
            return None
        kept = range_scan.replay(spark, scan, engine_cls, case.params, partitions)
        if kept is None:
            return None         # a late edge inside a row group: the reader's path above
        found = _windows_mismatch(f"{partitions} range-scan partitions", rows(kept), want)
        if found is not None or {type(x) for e in case.edges for x in (e.u, e.v)} != {int}:
            return found
        # the same stream as a text file parsed by the Spark tasks (pipeline.text_scan)
        text = f"{tmp}/edges.txt"
        with open(text, "w") as f:
            f.write("# a conformance case\n")
            f.writelines(f"{e.u} {e.v} {e.t}\n" for e in case.edges)
        source = text_scan.plan(text, "error", case.params.r, case.params.s, min_bytes=0)
        scan = text_scan.staged_plan(spark, source, f"{tmp}/staged", partitions,
                                     case.params.t0, case.params.r, case.params.s) \
            if source is not None else None
        if scan is None:
            return Mismatch(f"{partitions} text partitions", "the staged text path refused "
                             "a stream the range scan took")
        kept = range_scan.replay(spark, scan, engine_cls, case.params, partitions)
        return _windows_mismatch(f"{partitions} text-scan partitions", rows(kept), want)
