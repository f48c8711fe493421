"""Top-k join conformance: step-by-step comparison with the oracle, and the invariants.

``check(engine_cls, case)`` feeds the case's stream to a fresh engine in the
case's chunks and, after every chunk, checks that

- exactly the windows the spec makes due have been emitted, in order, with the
  oracle's ``window``/``start``/``tau``;
- when the case falls under one of the engine's ``exact_when`` conditions
  (``conditions(case)``: ``static``, ``full_list``, ``unlimited``; the oracle
  declares ``changing`` too), each evaluation equals the oracle's (ids and
  scores, in rank order);
- always (the invariants ``streamspec.spec.topkjoin`` states): at most ``budget`` fetches per
  evaluation (unless the engine is unbounded) and one counted evaluation per
  evaluation; answers of ``min(K, n)`` distinct ids of the window, ranked by
  ``(score desc, id asc)``; reported scores equal ``F`` of the engine's replica
  value and a streaming score it may use (the exact one, or ``S_min`` under
  ``latest``); the list's window marks agree with the rebuild formulation.

An engine that raises (e.g. ``BudgetExceeded``) is a mismatch.  Quality
metrics of approximate engines are measured by ``quality_of`` (reported by the
tests, not asserted).  ``check_watermark`` covers the end of stream (the spec
has no watermark); ``features(case)`` names the situations a case exercises, so
a test can check that the strategy draws every one it claims (``FEATURES``).
``partitioned_mismatch`` (Spark) replays a case and streams made from it as
the keys of one keyed input through the pipeline, from the driver's frame, from
Parquet row groups read by the executors and from a text file (CSV or JSON
lines) whose byte ranges the Spark tasks parse, against the single-process run
and the oracle.
"""
from __future__ import annotations

import json

import attrs

from streamspec.conformance.contracts import closed_after_flush
from streamspec.conformance.runner import Mismatch, check_rejection
from streamspec.conformance.strategies.topkjoin import SCENARIOS, cases, invalid_cases, random_case  # noqa: F401
from streamspec.reference.topkjoin import aggregate, evaluate
from streamspec.spec.errors import StreamspecError
from streamspec.spec.topkjoin import Item, ItemBatch, Params, rank_key
from streamspec.spec.topkjoin_quality import Quality, quality
from streamspec.spec.topkjoin_remote import TimelineDataset
from streamspec.spec.windows import SlidingWindows

PROBLEM = "topkjoin"


@attrs.frozen
class Case:
    params: Params
    items: list
    chunks: list
    scenario: str = "changing"


def _windows(case: Case) -> SlidingWindows | None:
    if not case.items:
        return None
    t0 = case.params.t0 if case.params.t0 is not None else case.items[0].ts
    return SlidingWindows(case.params.omega, case.params.beta, t0)


def window_sizes(case: Case) -> list[int]:
    w = _windows(case)
    if w is None:
        return []
    return [len({it.id for it in case.items if w.start(i) <= it.ts < w.end(i)})
            for i in range(w.started_by(case.items[-1].ts))]


def conditions(case: Case) -> set[str]:
    """The exactness conditions (``TopkJoinEngine.exact_when``) this case satisfies (recomputed from the data)."""
    p, w = case.params, _windows(case)
    out = {"changing"}
    t0 = w.t0 if w else p.t0
    remote = p.remote
    if isinstance(remote, TimelineDataset) and (t0 is None or all(t < t0 for _, t, _ in remote.rows())):
        out.add("static")
    widest = max(window_sizes(case), default=0)
    if p.k + p.n >= widest:
        out.add("full_list")
        if p.budget >= widest:
            out.add("unlimited")
    return out


def must_be_exact(engine_cls, case: Case) -> bool:
    return bool(set(engine_cls.exact_when) & conditions(case))


def run_engine(engine_cls, case: Case):
    """All evaluations of ``engine_cls`` on ``case`` (chunk by chunk, then flush)."""
    engine = engine_cls(case.params)
    out, pos = [], 0
    for size in case.chunks:
        out.extend(engine.process(case.items[pos:pos + size]))
        pos += size
    out.extend(engine.flush())
    return out


def quality_of(engine_cls, case: Case) -> Quality:
    return quality(run_engine(engine_cls, case), evaluate(case.items, case.params), case.params.k)


def check(engine_cls, case: Case) -> Mismatch | None:
    expected = evaluate(case.items, case.params)
    exact = must_be_exact(engine_cls, case)
    windows = _windows(case)
    got, pos = [], 0
    try:
        engine = engine_cls(case.params)
        for size in case.chunks:
            chunk = case.items[pos:pos + size]
            pos += size
            out = list(engine.process(chunk))
            step = f"after item {pos - 1} (ts={chunk[-1].ts})"
            problem = _compare(engine, case, got, out, expected, windows.due_before(chunk[-1].ts),
                               exact, step)
            if problem:
                return problem
            got.extend(out)
        out = list(engine.flush())
        return _compare(engine, case, got, out, expected, len(expected), exact, "flush")
    except StreamspecError as err:
        return Mismatch(f"evaluation {len(got)} (after item {pos - 1})",
                        f"engine raised {type(err).__name__}: {err}")


def _compare(engine, case, got, out, expected, due, exact, step) -> Mismatch | None:
    if len(got) + len(out) != due:
        return Mismatch(step, f"{len(got) + len(out)} evaluations emitted, the spec makes {due} due",
                        [e.window for e in expected[len(got):due]], [e.window for e in out])
    for a, e in zip(out, expected[len(got):due]):
        where = f"{step}, window {e.window} [{e.start}, {e.tau})"
        if (a.window, a.start, a.tau) != (e.window, e.start, e.tau):
            return Mismatch(where, "wrong window", (e.window, e.start, e.tau), (a.window, a.start, a.tau))
        if exact and a != e:
            return Mismatch(where, "answer differs from the oracle (exact case)", e.answer, a.answer)
        problem = _answer_invariants(case, a, e, where)
        if problem:
            return problem
    return _engine_invariants(engine, case, len(got) + len(out), out, step)


def _answer_invariants(case, a, e, where) -> Mismatch | None:
    inside = [(it.id, it.x, it.ts) for it in case.items if e.start <= it.ts < e.tau]
    window_ids = {r[0] for r in inside}
    if len(a.answer) != len(e.answer):
        return Mismatch(where, f"answer has {len(a.answer)} ids, expected min(K, n) = {len(e.answer)}",
                        e.ids, a.ids)
    if len(set(a.ids)) != len(a.ids) or not set(a.ids) <= window_ids:
        return Mismatch(where, "answer ids must be distinct ids of the window", sorted(window_ids), a.ids)
    keys = [rank_key(s, k) for k, s in a.answer]
    if keys != sorted(keys):
        return Mismatch(where, "answer not ranked by (score desc, id asc)", sorted(keys), keys)
    return None


def _engine_invariants(engine, case, evaluations, out, step) -> Mismatch | None:
    p = case.params
    fetcher = getattr(engine, "fetcher", None)
    if fetcher is not None and evaluations:
        counts = fetcher.per_evaluation
        if len(counts) != evaluations:
            return Mismatch(step, "fetch counter: one counted evaluation per evaluation",
                            evaluations, len(counts))
        if not engine.unbounded and any(c > p.budget for c in counts):
            return Mismatch(step, f"more than {p.budget} fetches in an evaluation", p.budget, counts)
    slist = getattr(engine, "slist", None)
    if slist is not None and slist.marks() != slist.rebuilt_marks():
        return Mismatch(step, "window marks disagree with the rebuild formulation (§3.7)",
                        slist.rebuilt_marks(), slist.marks())
    replica = getattr(engine, "replica", None)
    if replica is not None and out:
        last = out[-1]
        inside = [(it.id, it.x, it.ts) for it in case.items if last.start <= it.ts < last.tau]
        svals = aggregate(inside, p.aggregate)
        dense = dict(zip(last.ids, engine.keys.lookup(list(last.ids)).tolist())) if last.ids else {}
        score = p.scoring()
        allowed_s = lambda k: {svals[k]} | ({engine.smin} if p.aggregate == "latest" else set())
        for k, s in last.answer:
            if s not in {score(sv, replica[dense[k]]) for sv in allowed_s(k)}:
                return Mismatch(step, f"score of {k!r} in window {last.window} is not F(s, replica value)",
                                [score(sv, replica[dense[k]]) for sv in allowed_s(k)], s)
    return None


def columnar(chunk: list, case: Case) -> ItemBatch | None:
    """``chunk`` as the columnar ``ItemBatch`` the Spark pipeline feeds (``checks``: a
    third of the examples go in this way and must answer as lists do)."""
    return ItemBatch.of(chunk) if chunk else None


def check_invalid(engine_cls, case: Case, position: int, bad, error: type) -> Mismatch | None:
    """Offer ``bad`` before item ``position``: the error must be ``error`` and change nothing."""
    return check_rejection(engine_cls, case.params, case.items[:position], case.items[position:],
                           bad, error, position, show=lambda e: e.answer)

def stream(case: Case) -> list:
    """The items of ``case``, in order (what ``process`` is fed, cut by ``case.chunks``)."""
    return case.items


def check_watermark(engine_cls, case: Case) -> Mismatch | None:
    """The top-k join has no watermark: time moves only with items (a window is due
    once an item at or past its end arrives) and ``flush`` evaluates the windows
    started by the last item, which the step-by-step check compares with the oracle.
    What is left of the contract: ``flush`` ends the stream (``process`` then raises
    ``StreamspecError``), and flushing a fresh engine emits nothing."""
    fresh = engine_cls(case.params)
    if list(fresh.flush()):
        return Mismatch("flush of a fresh engine", "must emit nothing")
    problem = closed_after_flush(fresh)
    if problem:
        return problem
    engine, pos = engine_cls(case.params), 0
    try:
        for size in case.chunks:
            list(engine.process(case.items[pos:pos + size]))
            pos += size
        list(engine.flush())
    except StreamspecError as err:
        return Mismatch("while processing", f"engine raised {type(err).__name__}: {err}")
    return closed_after_flush(engine)


FEATURES = frozenset({
    *(f"scenario_{s}" for s in SCENARIOS), "overlapping_windows", "tumbling_windows",
    "hopping_windows", "burst", "gap_longer_than_window", "empty_window", "aggregate_sum",
    "aggregate_latest", "tied_scores", "repeated_id_in_window", "budget_zero", "n_zero",
    "origin_given", "remote_changes_during_stream", "several_chunks", "empty_stream",
})


def features(case: Case) -> set[str]:
    """The situations ``case`` exercises, among ``FEATURES`` (what ``cases()`` claims to
    draw): each scenario, overlapping, tumbling and hopping windows, bursts, gaps longer
    than the window and empty windows, both aggregates, tied scores in an oracle answer,
    an id repeated within a window, zero budget or N, remote values changing while the
    stream runs, several ``process`` calls."""
    p, items = case.params, case.items
    out = {f"scenario_{case.scenario}", f"aggregate_{p.aggregate}",
           "overlapping_windows" if p.omega > p.beta else
           "tumbling_windows" if p.omega == p.beta else "hopping_windows"}
    out |= {"budget_zero"} if p.budget == 0 else set()
    out |= {"n_zero"} if p.n == 0 else set()
    out |= {"origin_given"} if p.t0 is not None else set()
    out |= {"several_chunks"} if len(case.chunks) > 1 else set()
    if not items:
        return out | {"empty_stream"}
    times = [it.ts for it in items]
    steps = [b - a for a, b in zip(times, times[1:])]
    out |= {"burst"} if 0 in steps else set()
    out |= {"gap_longer_than_window"} if any(d > p.omega for d in steps) else set()
    w = _windows(case)
    inside = [[it.id for it in items if w.start(n) <= it.ts < w.end(n)]
              for n in range(w.started_by(times[-1]))]
    out |= {"empty_window"} if any(not ids for ids in inside) else set()
    out |= {"repeated_id_in_window"} if any(len(set(ids)) < len(ids) for ids in inside) else set()
    if any(t >= w.t0 for _, t, _ in p.remote.rows()):
        out.add("remote_changes_during_stream")
    if any(len(set(e.scores)) < len(e.scores) for e in evaluate(items, p)):
        out.add("tied_scores")
    return out


def dump(case: Case) -> str:
    p = case.params
    head = {"problem": PROBLEM, "omega": p.omega, "beta": p.beta, "k": p.k, "n": p.n,
            "budget": p.budget, "aggregate": p.aggregate, "weights": list(p.weights),
            "stream_range": list(p.stream_range), "remote_range": list(p.remote_range),
            "t0": p.t0, "seed": p.seed, "scenario": case.scenario, "chunks": list(case.chunks),
            "timeline": [list(r) for r in p.remote.rows()]}
    lines = [json.dumps(head)] + [json.dumps([it.id, it.x, it.ts]) for it in case.items]
    return "\n".join(lines) + "\n"


def load(text: str) -> Case:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    h = json.loads(lines[0])
    params = Params(omega=h["omega"], beta=h["beta"], k=h["k"], n=h["n"], budget=h["budget"],
                    aggregate=h["aggregate"], weights=h["weights"], stream_range=h["stream_range"],
                    remote_range=h["remote_range"], t0=h["t0"], seed=h["seed"],
                    remote=TimelineDataset.from_rows(h["timeline"]))
    items = [Item(*json.loads(ln)) for ln in lines[1:]]
    return Case(params, items, h["chunks"], h.get("scenario", "changing"))


# -- Spark: the keyed replay across partitions (conformance.spark) ----------------------------
def keyed_streams(case: Case) -> dict[int, list]:
    """Independent streams of one query (``case.params``) as keys of one keyed input: key 0 is
    the case's stream, keys 1-3 its items dealt at random (each key a subsequence, in order),
    key 4 the stream moved ``omega + beta + 1`` later (the same items meet other remote
    values).  The deal is seeded by the case, so a failure replays."""
    import random
    import zlib

    p, items = case.params, case.items
    rng = random.Random(zlib.crc32(dump(case).encode()))
    streams = {0: list(items), 1: [], 2: [], 3: []}
    for it in items:
        streams[rng.randint(1, 3)].append(it)
    shift = p.omega + p.beta + 1
    streams[4] = [Item(it.id, it.x, it.ts + shift) for it in items]
    return {k: v for k, v in streams.items() if v}


def partitioned_mismatch(spark, engine_cls, case: Case, partitions: int) -> Mismatch | None:
    """The pipeline's keyed replay (``pipeline.jobs.topkjoin.replay_stream``: one engine per
    key, keys spread over ``partitions``) of ``keyed_streams(case)`` against, key by key,

    - the same engine run in one process on that key's stream (Spark changes nothing, for
      approximate engines too: keys are independent, the engine is deterministic);
    - the oracle (``reference.topkjoin.evaluate``): the same windows in order, answers equal
      to the oracle's where the key's stream falls under one of the engine's ``exact_when``
      conditions (recomputed per key, as ``check`` does), the answer invariants of ``check``
      (``min(K, n)`` distinct ids of the window, ranked by ``(score desc, id asc)``) always.

    Both ways the job reads items are checked: the driver's frame shipped to Spark
    (``replay_stream``) against the above, then the same keyed input written as a Parquet
    file of small row groups, which the executors read themselves
    (``pipeline.jobs.topkjoin.replay_parquet``), against the first.  Each key's items go
    into the engine as one ``ItemBatch``, the columnar path the pipeline uses; ``check``
    feeds ``Item`` lists, so this also covers an engine whose columnar path differs from
    its row path.  Then the same input as a text file the Spark tasks parse
    (``pipeline.jobs.topkjoin.text_replay``: CSV for an odd ``partitions``, JSON lines for
    an even one), against the first too."""
    import pandas as pd

    from streamspec.pipeline.io.topkjoin import ItemStream
    from streamspec.pipeline.jobs.topkjoin import replay_stream

    streams = keyed_streams(case)
    frame = pd.DataFrame([(k, it.id, float(it.x), int(it.ts)) for k, items in streams.items()
                          for it in items], columns=["key", "id", "x", "t"])
    frame.insert(1, "seq", range(len(frame)))
    if not len(frame):      # nothing to replay: the pipeline writes nothing, no engine runs
        return None
    frame = frame.astype({"key": "int64", "t": "int64"})
    rows = replay_stream(spark, ItemStream(frame, "<case>", True), engine_cls, case.params,
                         partitions).toPandas()
    label = f"keyed replay over {partitions} partitions"
    if set(rows["key"]) != set(streams):
        return Mismatch(label, "keys replayed", sorted(streams), sorted(set(rows["key"])))
    for key, items in streams.items():
        mine = Case(case.params, items, [len(items)], case.scenario)
        got = _evaluations_of_rows(rows[rows["key"] == key])
        single = [(e.window, e.tau, e.answer) for e in run_engine(engine_cls, mine)]
        where = f"{label}, key {key} ({len(items)} items)"
        if got != single:
            first = next((i for i, (g, s) in enumerate(zip(got, single)) if g != s),
                         min(len(got), len(single)))
            return Mismatch(where, f"differs from the engine run in one process at evaluation "
                                   f"{first}", single[first:first + 1], got[first:first + 1])
        expected = evaluate(items, case.params)
        if [(w, t) for w, t, _ in got] != [(e.window, e.tau) for e in expected]:
            return Mismatch(where, "evaluations differ from the oracle's",
                            [(e.window, e.tau) for e in expected], [(w, t) for w, t, _ in got])
        exact = must_be_exact(engine_cls, mine)
        for (w, tau, answer), e in zip(got, expected):
            at = f"{where}, window {w} [{e.start}, {tau})"
            if exact and answer != e.answer:
                return Mismatch(at, "answer differs from the oracle (exact case)", e.answer, answer)
            problem = _answer_invariants(mine, e.__class__(w, e.start, tau, answer), e, at)
            if problem:
                return problem
    return (_parquet_mismatch(spark, engine_cls, case, frame, rows, partitions)
            or _text_mismatch(spark, engine_cls, case, frame, rows, partitions))


def _plain_rows(df) -> list[tuple]:
    cols = ["key", "window", "tau", "rank", "id", "score"]
    df = df[cols].astype(object).where(df[cols].notna(), None)
    return sorted(df.itertuples(index=False, name=None), key=repr)


def _text_mismatch(spark, engine_cls, case: Case, frame, rows, partitions: int):
    """The keyed input of ``partitioned_mismatch`` as a text file, each byte range parsed by
    its Spark task: the same rows as the driver's frame gave (``rows``).  The text path
    declining the file (``read_items`` taking it on the driver) is a mismatch too."""
    import argparse
    import tempfile

    from streamspec.pipeline.io.topkjoin_text import TextItems, plan_text_items
    from streamspec.pipeline.jobs.topkjoin import Plan, text_replay

    ordered = frame.sort_values(["t", "seq"], kind="stable")
    label = f"text keyed replay over {partitions} partitions"
    with tempfile.TemporaryDirectory() as tmp:
        if partitions % 2:
            path = f"{tmp}/items.csv"
            lines = ["ts,id,key,x"] + [f"{t},{i},{k},{x!r}" for k, i, x, t in zip(
                ordered["key"], ordered["id"], ordered["x"].astype(float), ordered["t"])]
        else:
            path = f"{tmp}/items.jsonl"
            lines = [json.dumps({"key": int(k), "id": i.item() if hasattr(i, "item") else i,
                                 "x": float(x), "ts": int(t)})
                     for k, i, x, t in zip(ordered["key"], ordered["id"], ordered["x"], ordered["t"])]
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        items = plan_text_items(path, case.params.t0, small=0)
        if items is None:
            return Mismatch(label, "the text path declined the file", "TextItems", None)
        plan = Plan(argparse.Namespace(origin=case.params.t0), items, case.params)
        got = text_replay(spark, plan, engine_cls, partitions).toPandas()
        if not isinstance(plan.stream, TextItems):
            return Mismatch(label, "the tasks declined the file (read on the driver)",
                            "TextItems", type(plan.stream).__name__)
    want, have = _plain_rows(rows), _plain_rows(got)
    if have != want:
        first = next((i for i, (a, b) in enumerate(zip(have, want)) if a != b),
                     min(len(have), len(want)))
        return Mismatch(label, "rows differ from the driver frame's replay", want[first:first + 3],
                        have[first:first + 3])
    return None


def _parquet_mismatch(spark, engine_cls, case: Case, frame, rows, partitions: int):
    """The keyed input of ``partitioned_mismatch`` as Parquet, read by the executors: the same
    rows as the driver's frame gave (``rows``, already checked key by key)."""
    import tempfile

    import pyarrow as pa
    import pyarrow.parquet as pq

    from streamspec.pipeline.io.topkjoin import plan_parquet_items
    from streamspec.pipeline.jobs.topkjoin import columnar_source, replay_parquet

    # interleaved by time as a real keyed file is (each key's items keep their order)
    ordered = frame.sort_values(["t", "seq"], kind="stable")
    table = pa.table({"key": ordered["key"].to_numpy(), "id": ordered["id"].to_numpy(),
                      "x": ordered["x"].to_numpy(), "ts": ordered["t"].to_numpy()})
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/items.parquet"
        pq.write_table(table, path, row_group_size=max(1, len(ordered) // 7))
        items = plan_parquet_items(path)
        columnar = columnar_source(spark, items, partitions, case.params.t0)
        got = replay_parquet(spark, items, columnar, engine_cls, case.params).toPandas()

    def plain(df):
        cols = ["key", "window", "tau", "rank", "id", "score"]
        df = df[cols].astype(object).where(df[cols].notna(), None)
        return sorted(df.itertuples(index=False, name=None), key=repr)

    want = plain(rows)
    have = plain(got)
    if have != want:
        first = next((i for i, (a, b) in enumerate(zip(have, want)) if a != b),
                     min(len(have), len(want)))
        return Mismatch(f"Parquet keyed replay over {partitions} partitions",
                        "rows differ from the driver frame's replay", want[first:first + 3],
                        have[first:first + 3])
    return None


def _evaluations_of_rows(rows) -> list[tuple]:
    """``(window, tau, answer)`` per evaluation from output rows (rank 0: empty answer)."""
    out = []
    for (window, tau), g in rows.sort_values(["window", "rank"]).groupby(["window", "tau"],
                                                                          sort=True):
        answer = tuple((i if isinstance(i, str) else int(i), float(s))
                       for r, i, s in zip(g["rank"], g["id"], g["score"]) if r > 0)
        out.append((int(window), int(tau), answer))
    return out
