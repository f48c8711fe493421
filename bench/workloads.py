"""The standard workloads of ``streamspec bench``: each paper's headline setting, seeded.

A workload is a generated stream (the same arrays on every machine for a given
``scale``) and the engine parameters of the paper's headline experiment, at a
size where one engine's pass runs in well under a minute.  ``prepare(scale)``
builds the input once (untimed) and returns a ``Case``; ``Case.setup(name)``
constructs the engine (and, where the paper measures a full window, fills it),
still untimed, and returns the one call that is timed: the engine's
``process`` over the whole prepared input, then ``flush``.  The call returns
how many outputs the engine produced, recorded per run.

``scale`` multiplies the stream's length (default 1.0); tests and smoke runs
shrink it.  Per problem (``WORKLOADS``; the first listed is the default):

- connectivity ``rmat``: BIC TR Section 7 at the issue's full size: an R-MAT
  (Graph500) stream of 10M edges over 1M vertices, 1000 edges per timestamp,
  window r = 1000 and slide s = 50 timestamps (K = 20 slides per window, ~1M
  edges per window), 100 queries among the top-1000-degree vertices.  The
  stream is fed as ``bench.connectivity.measure`` feeds it (engines built
  with ``hold_back=False``; per window its triggering edge, then the rest of
  the slide).  ``scale`` shrinks the edges and the edges per timestamp
  together, so the windows and slides stay the same in number.
  ``powerlaw``: the same setting on a Chung-Lu power-law stream (3M edges).
  Default baseline: ``rwc`` (the paper's baseline, recomputation per window).
  Besides registered engines, the per-window peers ``scipy`` and ``networkx``
  (``bench.connectivity.peers``) may be named.
- simjoin ``tweet``: SWOOP Section 7's default setting on its TWEET-like
  stream (``bench.simjoin.generators.tweet_like``): window |W| = 10,000 sets
  (filled before the clock starts), k = 10, Jaccard; the timed call processes
  the next 15,000 sets.  Default baseline: ``scase`` (the paper's SCase).
- kws ``defaults``: S-KWS Section 5's synthetic workload at the paper's
  defaults (|SR| 15, |K| 2, T_max 4, KWF 0.01, 1/sel 1/1000, one tuple per
  relation per second, w = 20 min) over 2400 s (36,000 tuples: a window filled
  and slid for 20 min); ``k3``: |K| 3 over 1200 s.  Engine construction (CNGen
  and the mesh) is untimed.  Default baseline: ``forest`` (the paper's forest
  of independent operator trees).
- topkjoin ``stream``: the AcquaTop setting (omega 100 s, beta 60 s, K 5, N 10,
  refresh budget 7) over the bundled DS-CH-20 sample timeline
  (``bench/topkjoin/sample``, shipped with streamspec: the 400 users' follower
  changes over the first 30 evaluations; later the values hold) joined with a
  seeded Zipf mention stream of 10,000 mentions per window over its users for
  the paper's 150 evaluations (~900K items).  Default baseline: ``oracle`` (recomputes every
  window's top-K).
"""
from __future__ import annotations

import csv
import functools
from pathlib import Path
from typing import Callable

import attrs
import numpy as np

from streamspec.spec.errors import InvalidParameter


@attrs.frozen
class Case:
    """A prepared workload: its parameters (for the report) and ``setup(name) -> timed call``."""

    params: dict
    setup: Callable[[str], Callable[[], int]]
    # optional: ``stepwise(name)`` -> the same run cut in pieces (callables, the last one
    # flushes), which ``standard.measure`` times engine by engine, piece by piece
    stepwise: Callable[[str], list[Callable[[], int]]] | None = None


@attrs.frozen
class Workload:
    problem: str
    name: str
    summary: str
    baseline: str                                  # the default baseline engine
    prepare: Callable[[float], Case]


STEPS = 50     # pieces of a stepwise workload's input (connectivity)


def _scaled(n: int, scale: float, least: int = 1) -> int:
    return max(least, int(round(n * scale)))


def _drain(engine, inputs) -> int:
    produced = 0
    for item in inputs:
        for _ in engine.process(item):
            produced += 1
    return produced + len(engine.flush())


# ---- connectivity ---------------------------------------------------------------------------

def _connectivity(kind: str, scale: float) -> Case:
    from streamspec.spec.connectivity import Params
    from streamspec.bench.connectivity.generators import powerlaw_stream, rmat_stream, workload
    from streamspec.bench.connectivity.measure import pieces
    from streamspec.bench.connectivity.peers import create

    full = 10_000_000 if kind == "rmat" else 3_000_000
    edges = _scaled(full, scale, least=1000)
    vertices = max(edges // 10, 100)
    rate = _scaled(1000, edges / full)
    r, s, queries, seed = 1000, 50, 100, 0
    if kind == "rmat":
        stream = rmat_stream(vertices, edges, rate, seed=seed)
    else:
        stream = powerlaw_stream(vertices, edges, rate, seed=seed)
    params = Params(r=r, s=s, workload=workload(stream, queries, seed=seed))
    batches = []
    for lo, hi in pieces(stream, params):      # the triggering edge, then the rest of the slide
        batches.append(stream.batch(lo, lo + 1))
        if hi > lo + 1:
            batches.append(stream.batch(lo + 1, hi))

    def setup(name: str):
        engine = create(name, params, hold_back=False)
        return lambda: _drain(engine, batches)

    # STEPS pieces of whole windows' batches: each piece is some 20 ms of engine time at
    # full scale, long beside the cost of switching engines (caches refilled), short beside
    # the seconds over which a shared host's speed drifts
    cuts = [len(batches) * k // STEPS for k in range(STEPS + 1)]

    def stepwise(name: str):
        engine = create(name, params, hold_back=False)

        def piece(lo, hi, last):
            def call():
                produced = sum(1 for b in batches[lo:hi] for _ in engine.process(b))
                return produced + (len(engine.flush()) if last else 0)
            return call
        return [piece(cuts[k], cuts[k + 1], k == STEPS - 1) for k in range(STEPS)]

    return Case({"generator": kind, "edges": edges, "vertices": vertices,
                 "edges_per_timestamp": rate, "r": r, "s": s, "queries": queries,
                 "seed": seed, "feed": "per window: its triggering edge, then the rest of the slide; "
                 f"timed in {STEPS} pieces, engines alternating piece by piece"},
                setup, stepwise)


# ---- simjoin --------------------------------------------------------------------------------

def _simjoin(scale: float) -> Case:
    from streamspec.spec.registry import Registry
    from streamspec.spec.simjoin import Params
    from streamspec.bench.simjoin.generators import tweet_like
    from streamspec.bench.simjoin.throughput import window_slice

    w, k, seed = 10_000, 10, 5
    window = _scaled(w, min(scale, 1.0), least=100)
    sets = _scaled(15_000, scale, least=100)
    stream = tweet_like(window + sets, seed=seed)
    fill = [window_slice(stream, a, min(a + 2000, window)) for a in range(0, window, 2000)]
    timed = [window_slice(stream, window, window + sets)]

    def setup(name: str):
        engine = Registry.create("simjoin", name, Params(k=k, w=window))
        for batch in fill:
            list(engine.process(batch))
        return lambda: _drain(engine, timed)

    return Case({"generator": "tweet_like", "window_sets": window, "sets": sets, "k": k,
                 "similarity": "jaccard", "seed": seed,
                 "feed": "window filled untimed, then the sets in one batch"}, setup)


# ---- kws ------------------------------------------------------------------------------------

def _kws(keywords: int | None, seconds: int, seed: int, scale: float) -> Case:
    from streamspec.spec.registry import Registry
    from streamspec.bench.kws.generator import DEFAULTS, params, stream

    k = DEFAULTS["keywords"] if keywords is None else keywords
    seconds = _scaled(seconds, scale, least=10)
    p = params(DEFAULTS["relations"], k, DEFAULTS["t_max"], DEFAULTS["window"])
    events = list(stream(p, seconds, DEFAULTS["kwf"], DEFAULTS["sel"], seed=seed))

    def setup(name: str):
        engine = Registry.create("kws", name, p)
        return lambda: _drain(engine, [events])

    return Case({"relations": DEFAULTS["relations"], "keywords": k, "t_max": DEFAULTS["t_max"],
                 "kwf": DEFAULTS["kwf"], "sel": DEFAULTS["sel"], "window_s": DEFAULTS["window"],
                 "seconds": seconds, "tuples": len(events), "seed": seed,
                 "feed": "engine built untimed, then every event in one call"}, setup)


# ---- topkjoin -------------------------------------------------------------------------------

SAMPLE = Path(__file__).resolve().parent / "topkjoin" / "sample"


@functools.lru_cache(maxsize=1)
def _sample_timeline():
    from streamspec.spec.topkjoin_remote import TimelineDataset
    with open(SAMPLE / "followers-dfc.csv", newline="") as handle:
        rows = [(int(r["key"]), int(r["time"]), float(r["value"])) for r in csv.DictReader(handle)]
    return TimelineDataset.from_rows(rows)


def _topkjoin(scale: float) -> Case:
    from streamspec.spec.registry import Registry
    from streamspec.spec.topkjoin import ItemBatch, Params
    from streamspec.bench.topkjoin.data import BETA, OMEGA, T0, mentions

    remote = _sample_timeline()
    evaluations, seed = 150, 1          # the paper's run; the sample's changes cover the first 30
    per_window = _scaled(10_000, scale, least=50)
    ids, ts = mentions(sorted(remote.keys()), seed, evaluations=evaluations,
                       per_window=per_window)
    params = Params(omega=OMEGA, beta=BETA, k=5, n=10, budget=7, t0=T0, remote=remote,
                    stream_range=(1.0, 200.0), remote_range=remote.value_range())
    batch = ItemBatch(ids, np.ones(ids.size), ts)

    def setup(name: str):
        engine = Registry.create("topkjoin", name, params)
        return lambda: _drain(engine, [batch])

    return Case({"remote": "bundled DS-CH-20 sample (bench/topkjoin/sample)",
                 "users": len(remote.keys()), "evaluations": evaluations,
                 "mentions_per_window": per_window, "items": int(ids.size), "omega_ms": OMEGA,
                 "beta_ms": BETA, "k": 5, "n": 10, "budget": 7, "seed": seed,
                 "feed": "every item in one call"}, setup)


WORKLOADS: dict[str, dict[str, Workload]] = {}


def _add(w: Workload) -> None:
    WORKLOADS.setdefault(w.problem, {})[w.name] = w


_add(Workload("connectivity", "rmat", "R-MAT 10M edges, 1M vertices, 1000 edges/timestamp, "
              "r=1000 s=50 (K=20), 100 top-degree queries (BIC TR Section 7)", "rwc",
              functools.partial(_connectivity, "rmat")))
_add(Workload("connectivity", "powerlaw", "Chung-Lu power-law 3M edges, 300K vertices, "
              "1000 edges/timestamp, r=1000 s=50, 100 top-degree queries", "rwc",
              functools.partial(_connectivity, "powerlaw")))
_add(Workload("simjoin", "tweet", "TWEET-like, |W|=10,000 sets filled, then 15,000 sets, k=10, "
              "Jaccard (SWOOP Section 7)", "scase", _simjoin))
_add(Workload("kws", "defaults", "|SR|=15 |K|=2 T_max=4 KWF 0.01 1/sel 1/1000 w=20 min, "
              "2400 s (S-KWS Section 5 defaults)", "forest", functools.partial(_kws, None, 2400, 0)))
_add(Workload("kws", "k3", "as defaults with |K|=3, 1200 s (seed 1)", "forest",
              functools.partial(_kws, 3, 1200, 1)))
_add(Workload("topkjoin", "stream", "AcquaTop setting (omega 100 s, beta 60 s, K 5, N 10, "
              "budget 7) on the bundled DS-CH-20 sample, 10,000 mentions per window, 150 "
              "evaluations", "oracle", _topkjoin))


def get(problem: str, name: str | None = None) -> Workload:
    """The workload ``name`` of ``problem`` (default: the problem's first); typed errors name the known ones."""
    if problem not in WORKLOADS:
        raise InvalidParameter(f"unknown problem {problem!r}; streamspec bench knows: "
                               f"{', '.join(sorted(WORKLOADS))}")
    known = WORKLOADS[problem]
    if name is None:
        return next(iter(known.values()))
    if name not in known:
        raise InvalidParameter(f"unknown workload {name!r} for {problem}; known: "
                               f"{', '.join(known)}")
    return known[name]
