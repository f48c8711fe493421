"""Continuous top-k join of a stream with an evolving remote dataset: one Parquet row per
(evaluation, rank).

``streamspec run topkjoin --input ITEMS --remote TIMELINE --window W --slide B
--k K --n N --budget G --engine NAME --output DIR [--aggregate sum|latest]
[--weights WS,WV] [--stream-range LO,HI] [--remote-range LO,HI] [--origin T0]
[--oracle]`` (notes/topkjoin.md; readers: ``streamspec.pipeline.io.topkjoin``;
shared flags: ``streamspec.pipeline.flags``).  The paper's names stay as
aliases: ``--stream`` for ``--input``, ``--omega``/``--beta`` for
``--window``/``--slide``.  The spec has no lateness policy (an item earlier
than one seen is always an error), so there is no ``--lateness``.

Output columns: ``window``, ``tau`` (evaluation time), ``rank`` (1..K), ``id``,
``score``; plus ``key`` first when the stream is keyed.  An evaluation with an
empty answer (empty window) is one row with ``rank`` 0 and null ``id`` and
``score``, so every evaluation is visible.

Defaults (documented choices): weights 0.7 (stream) and 0.3 (remote); the
stream range is the min and max of the per-window streaming scores over the
whole input (every key, every window), the remote range the min and max of
every timeline value and the default 0; a degenerate range ``lo == hi``
becomes ``(lo, lo + 1)``.  The origin defaults to each stream's first item.

Replay: ``streamspec.pipeline.replay.keyed``, one engine per key (a stream without a
``key`` column is one key); equal to the single-process run, since keys are
independent.  ``--oracle`` also replays the oracle and prints the cumulative
and mean nDCG@k and precision@k of the engine against it.

``streamspec stream topkjoin --source DIR --checkpoint DIR --output DIR
--remote TIMELINE --window W --slide B --k K --stream-range LO,HI ...``
(``streamspec.pipeline.streaming``): files of items ``id, x, ts`` (plus an
optional ``key``; ``--id-type long|string``) arrive in ``--source``; each
key's engine lives pickled in Spark's group state between micro-batches and
appends the same rows as the batch job, ``key`` first.  Parameters come from
the flags only: the batch job's default stream range is a pass over the whole
input, which a stream does not have, so ``--stream-range`` is required (the
paper's experiments also fix both ranges once per dataset, notes/topkjoin.md,
"Inputs").  The remote timeline is read and checked on the driver as in the
batch job (its min/max is the default ``--remote-range``) and held by the
engines by reference (``streamspec.pipeline.io.topkjoin.TimelineFile``), so
the state of a key stays the engine's own: window partials, the Super-MTK+N
list and one replica cell per id seen.  An evaluation is emitted when the
first item at or after its window's end arrives (no flush: a stream has no
end), exactly as ``process`` emits it in the batch job.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import attrs
import numpy as np
import pandas as pd

from streamspec.pipeline import flags
from streamspec.pipeline.job import Summary
from streamspec.pipeline.summary import counted
from streamspec.spec.topkjoin import PROBLEM, ItemBatch, Params

PREFERRED_ENGINES = ("at-tsm", "oracle")
ROW_COLUMNS = ("window", "tau", "rank", "id", "score")
# the demo sample: 30 windows of the paper's setting (seeded mentions of the 400 users, DS-CH-20
# dataset 1 restricted to the mentioned users; ``python -m streamspec.bench.topkjoin.data`` rebuilds it)
DATA = Path(__file__).resolve().parent.parent / "data" / "topkjoin"
DEMO_ORIGIN = 1420574422643     # the first tweet of the authors' stream (streamspec.bench.topkjoin.data.T0)


def demo_argv(output_dir: str) -> list[str]:
    """``streamspec demo``: AT-TSM in the paper's default setting, scored against the oracle."""
    return ["--input", str(DATA / "mentions.csv"), "--remote", str(DATA / "followers-dfc.csv"),
            "--window", "100000", "--slide", "60000", "--k", "5", "--n", "10", "--budget", "7",
            "--engine", "at-tsm", "--origin", str(DEMO_ORIGIN), "--output", output_dir,
            "--overwrite", "--oracle"]


def output_schema(id_kind: str) -> str:
    return f"window long, tau long, rank int, id {id_kind}, score double"


def output_rows(evaluations) -> pd.DataFrame:
    cols = {c: [] for c in ROW_COLUMNS}
    for e in evaluations:
        answer = e.answer or ((None, None),)
        for rank, (key, score) in enumerate(answer, 1 if e.answer else 0):
            for c, v in zip(ROW_COLUMNS, (e.window, e.tau, rank, key, score)):
                cols[c].append(v)
    frame = pd.DataFrame({"window": pd.Series(cols["window"], dtype="int64"),
                          "tau": pd.Series(cols["tau"], dtype="int64"),
                          "rank": pd.Series(cols["rank"], dtype="int32"),
                          "id": pd.Series(cols["id"], dtype=object),
                          "score": pd.Series(cols["score"], dtype="float64")})
    return frame


def run_stream(engine_cls, params: Params, events: pd.DataFrame) -> pd.DataFrame:
    """One key's stream (in order) through one engine."""
    ids = events["id"].to_numpy()
    ids = ids.astype(np.int64) if ids.dtype.kind in "iu" or all(
        isinstance(v, (int, np.integer)) for v in ids) else ids.astype(object)
    engine = engine_cls(params)
    batch = ItemBatch(ids, events["x"].to_numpy(np.float64), events["t"].to_numpy(np.int64))
    return output_rows(list(engine.process(batch)) + engine.flush())


def _stream_task(engine_cls, params):
    def task(pdf: pd.DataFrame) -> pd.DataFrame:
        return run_stream(engine_cls, params, pdf)
    return task


def replay_stream(spark, stream, engine_cls, params: Params, partitions: int):
    """The output rows as a Spark DataFrame (one engine per key)."""
    from streamspec.pipeline.replay import keyed

    frame = stream.frame
    id_kind = "long" if frame["id"].dtype.kind in "iu" else "string"
    key_kind = "long" if frame["key"].dtype.kind in "iu" else "string"
    df = spark.createDataFrame(frame, f"key {key_kind}, seq long, id {id_kind}, x double, t long")
    rows = keyed(df.repartition(partitions, "key"), _stream_task(engine_cls, params),
                 output_schema(id_kind))
    return rows if stream.keyed else rows.drop("key")


def default_stream_range(stream, params_kw: dict) -> tuple[float, float]:
    """Min and max per-window streaming score over every key (module docstring)."""
    from streamspec.engines.topkjoin.window_aggregates import SlotAggregates
    from streamspec.spec.windows import SlidingWindows

    lo, hi = np.inf, -np.inf
    for _, g in stream.frame.groupby("key", sort=False):
        t = g["t"].to_numpy(np.int64)
        t0 = params_kw["t0"] if params_kw["t0"] is not None else int(t[0])
        aggs = SlotAggregates(t0, params_kw["omega"], params_kw["beta"], params_kw["aggregate"])
        ids = pd.factorize(g["id"])[0].astype(np.int64)
        aggs.ingest(ids, g["x"].to_numpy(np.float64), t)
        for i in range(SlidingWindows(params_kw["omega"], params_kw["beta"], t0).started_by(int(t[-1]))):
            vals = aggs.window(i)[1]
            if vals.size:
                lo, hi = min(lo, float(vals.min())), max(hi, float(vals.max()))
    if not np.isfinite(lo):
        return 0.0, 1.0
    return (lo, hi) if hi > lo else (lo, lo + 1.0)


def _pair(text: str) -> tuple[float, float]:
    try:
        a, b = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected two numbers A,B, got {text!r}") from None
    return a, b


def _add_query_arguments(parser: argparse.ArgumentParser, stream_range_help: str,
                         stream_range_required: bool = False) -> None:
    """The flags that fix ``Params``, shared by ``streamspec run`` and ``streamspec stream``."""
    parser.add_argument("--remote", required=True, metavar="TIMELINE",
                        help="remote timeline: CSV/Parquet with key,time,value, or a SQLite "
                             "file (.db/.sqlite) with table timeline(key, time, value) (required)")
    flags.add_window(parser, kind=flags.int64, aliases=("--omega",), slide_aliases=("--beta",))
    parser.add_argument("--k", type=flags.int64, required=True, metavar="K",
                        help="answers per evaluation (required)")
    parser.add_argument("--n", type=flags.int64, default=0, metavar="N",
                        help="extra list slots of Topk+N (default: 0)")
    parser.add_argument("--budget", type=flags.int64, default=0, metavar="G",
                        help="remote fetches per evaluation, gamma (default: 0)")
    flags.add_engine(parser, PROBLEM, PREFERRED_ENGINES)
    parser.add_argument("--aggregate", choices=("sum", "latest"), default="sum",
                        help="streaming score of an id in a window: the sum of its x or its "
                             "latest x (default: sum)")
    parser.add_argument("--weights", type=_pair, default=(0.7, 0.3), metavar="WS,WV",
                        help="weights of the stream and remote scores (default: 0.7,0.3)")
    parser.add_argument("--stream-range", type=_pair, default=None, metavar="LO,HI",
                        required=stream_range_required, help=stream_range_help)
    parser.add_argument("--remote-range", type=_pair, default=None, metavar="LO,HI",
                        help="normalisation range of remote values (default: their min and max, "
                             "with 0)")
    parser.add_argument("--origin", type=flags.int64, default=None, metavar="T0",
                        help="window origin t0 (default: each stream's first item)")
    parser.add_argument("--seed", type=flags.int64, default=0,
                        help="seed of WSJ-RND (default: 0)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    flags.add_input(parser, "ITEMS", "items: CSV (header id,x,ts[,key]), JSON lines or Parquet",
                    aliases=("--stream",))
    _add_query_arguments(parser, "normalisation range of stream scores (default: their min and "
                                 "max over the input)")
    parser.add_argument("--oracle", action="store_true",
                        help="also run the oracle and print nDCG@k and precision@k (default: off)")
    flags.add_run_options(parser, unit="key partitions")


def remote_range_of(args, remote) -> tuple[float, float]:
    """``--remote-range``, else the min and max of the timeline's values and its default."""
    if args.remote_range is not None:
        return args.remote_range
    lo, hi = remote.value_range()
    return (lo, hi) if hi > lo else (lo, lo + 1.0)


def build_params(args, stream, remote) -> Params:
    kw = dict(omega=args.window, beta=args.slide, aggregate=args.aggregate, t0=args.origin)
    srange = args.stream_range or default_stream_range(stream, kw)
    rrange = remote_range_of(args, remote)
    return Params(k=args.k, n=args.n, budget=args.budget, weights=args.weights,
                  stream_range=srange, remote_range=rrange, remote=remote, seed=args.seed, **kw)


@attrs.frozen
class Plan:
    args: argparse.Namespace
    stream: object          # an ItemStream
    params: Params


def prepare(args) -> Plan:
    """The windows first (the stream range needs them), then the inputs, all before Spark."""
    from streamspec.pipeline.io.topkjoin import read_items, read_remote

    Params(omega=args.window, beta=args.slide, k=args.k, n=args.n, budget=args.budget,
           aggregate=args.aggregate, weights=args.weights, t0=args.origin)
    stream = read_items(args.input, args.origin)
    return Plan(args, stream, build_params(args, stream, read_remote(args.remote)))


def replay(spark, plan: Plan, engine_cls, partitions: int):
    return replay_stream(spark, plan.stream, engine_cls, plan.params, partitions)


def summarize(plan: Plan, rows) -> Summary:
    """Counts, the last answer and, with ``--oracle``, the quality against the oracle."""
    from streamspec.spec.registry import Registry

    params = plan.params
    result = rows.toPandas()
    n_eval = len(result.drop_duplicates([c for c in ("key", "window") if c in result]))
    keys = f" for {counted(result['key'].nunique(), 'key')}" if "key" in result else ""
    details = [last_answer(result)]
    if plan.args.oracle:
        spark = rows.sparkSession
        partitions = plan.args.partitions or spark.sparkContext.defaultParallelism
        oracle = replay_stream(spark, plan.stream, Registry.get(PROBLEM, "oracle"), params,
                               partitions).toPandas()
        details.append(f"topkjoin quality of {plan.args.engine} against the oracle: "
                       f"{quality_of_rows(result, oracle, params.k)}")
    return Summary(f"{counted(n_eval, 'evaluation')} ({counted(len(result), 'row')}){keys}",
                   counted(len(plan.stream.frame), "item"),
                   f"omega={params.omega}, beta={params.beta}, K={params.k}, N={params.n}, "
                   f"budget={params.budget}, {params.aggregate}, stream range "
                   f"{params.stream_range}, remote range {params.remote_range}",
                   tuple(details))


def last_answer(result: pd.DataFrame) -> str:
    """One line: the answer of the last evaluation (of the first key when the stream is keyed)."""
    if "key" in result and len(result):
        result = result[result["key"] == result["key"].iloc[0]]
    if not len(result):
        return "  no evaluation"
    last = result[(result["window"] == result["window"].max()) & (result["rank"] > 0)]
    tau = int(result.loc[result["window"].idxmax(), "tau"])
    answer = ", ".join(f"{i} ({s:.3f})" for i, s in zip(last.sort_values("rank")["id"],
                                                       last.sort_values("rank")["score"]))
    return f"  top-{len(last)} at the last evaluation (tau={tau}): {answer or 'empty window'}"


def quality_of_rows(result: pd.DataFrame, oracle: pd.DataFrame, k: int):
    """Cumulative and mean nDCG@k and precision@k from output rows (any keys)."""
    from streamspec.spec.topkjoin_quality import Quality, ndcg_at_k, precision_at_k

    group = [c for c in ("key", "window") if c in oracle]

    def answers(frame):
        frame = frame[frame["rank"] > 0].sort_values(group + ["rank"])
        return {tuple(f[group].iloc[0]): list(f["id"]) for _, f in frame.groupby(group, sort=False)}

    got, want = answers(result), answers(oracle)
    evaluations = list(oracle.drop_duplicates(group)[group].itertuples(index=False, name=None))
    emitted = set(result.drop_duplicates(group)[group].itertuples(index=False, name=None))
    nd = pr = 0.0
    for g in evaluations:
        if g not in emitted:
            continue  # a missing evaluation scores 0
        a, o = got.get(g, []), want.get(g, [])
        nd += ndcg_at_k(a, o, k)
        pr += precision_at_k(a, o, k)
    return Quality(len(evaluations), nd, pr)


# -- streamspec stream topkjoin (streamspec.pipeline.streaming) --------------------------------
def add_stream_arguments(parser: argparse.ArgumentParser) -> None:
    """The batch job's query flags, with ``--stream-range`` required (module docstring)."""
    _add_query_arguments(parser, "normalisation range of stream scores (required: a stream "
                                 "has no end to take their min and max from)",
                         stream_range_required=True)
    parser.add_argument("--id-type", choices=("long", "string"), default="long",
                        help="type of the item ids in the files (default: long)")


def source_schema(args) -> str:
    """One item: ``id, x, ts``, as in the batch job's files (``streaming`` adds ``key``)."""
    return f"id {args.id_type}, x double, ts long"


def stream_params(args) -> Params:
    """``Params`` from the flags and the remote timeline, read and checked on the driver
    (``read_remote_by_reference``: the engines in group state hold it by reference)."""
    from streamspec.pipeline.io.topkjoin import read_remote_by_reference

    Params(omega=args.window, beta=args.slide, k=args.k, n=args.n, budget=args.budget,
           aggregate=args.aggregate, weights=args.weights, stream_range=args.stream_range,
           t0=args.origin)     # bad flags fail before the timeline is read
    remote = read_remote_by_reference(args.remote)
    return Params(omega=args.window, beta=args.slide, k=args.k, n=args.n, budget=args.budget,
                  aggregate=args.aggregate, weights=args.weights, stream_range=args.stream_range,
                  remote_range=remote_range_of(args, remote), t0=args.origin, remote=remote,
                  seed=args.seed)


def stream_events(pdf: pd.DataFrame, params: Params) -> ItemBatch:
    """A key's rows of a micro-batch as an ``ItemBatch``; the engine's spec check does the
    rest (types, finite x, time order), each error carrying the row's position."""
    from streamspec.spec.errors import MalformedRecord

    for column in ("id", "x", "ts"):
        missing = np.flatnonzero(pdf[column].isna().to_numpy())
        if missing.size:
            # ``index`` is the row's position here: the streaming step names its file and line
            raise MalformedRecord(f"item {column} is missing (null or absent)",
                                  index=int(missing[0]))
    ids = pdf["id"].to_numpy()
    ids = ids.astype(np.int64) if ids.dtype.kind in "iu" else ids.astype(object)
    return ItemBatch(ids, pdf["x"].to_numpy(np.float64), pdf["ts"].to_numpy(np.int64))


def stream_rows(outputs, first: int) -> pd.DataFrame:
    """The rows of the batch job (``window`` already numbers evaluations on across batches)."""
    return output_rows(outputs)


def stream_schema(args) -> str:
    return output_schema(args.id_type)
