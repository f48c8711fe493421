"""Structured Streaming: one engine per key, kept in Spark's group state
(DESIGN.md, "Spark pipeline", "Streaming").

``windows_stream`` turns a streaming DataFrame of edges (``u, v, t, key``;
``streamspec.pipeline.io.edges.read_edge_stream``) into a streaming DataFrame of
``key, window, start, end, answers``.  ``groupBy(key).applyInPandasWithState``
hands each key's new edges of a micro-batch to that key's engine; the engine
is pickled into the group state after every micro-batch (engine state is
picklable by contract), so a query restarted from its checkpoint location
goes on exactly where it stopped.  With Spark's file sink (exactly-once, its
own metadata log) no output is lost or repeated across restarts;
``tests/pipeline/test_streaming.py`` stops and restarts a query to check it.

A stream has no end, so windows are emitted as edges make them due (an edge
with ``t >= end``), never flushed.  Within a micro-batch a key's edges are
replayed in time order (stable); an edge earlier than the key's last one in
an earlier micro-batch meets the engine's lateness policy (``drop`` counts it,
``error`` fails the query).
"""
from __future__ import annotations

import pickle

import pandas as pd

from streamspec.pipeline.jobs.connectivity import edge_batch, result_rows

OUTPUT_FIELDS = "window long, start long, end long, answers array<boolean>"
STATE_SCHEMA = "engine binary"


def key_engine_step(engine_cls, params):
    """The ``applyInPandasWithState`` function: one key, one micro-batch."""
    def step(key, batches, state):
        engine = pickle.loads(state.get[0]) if state.exists else engine_cls(params)
        results = []
        for pdf in batches:
            if len(pdf):
                results += engine.process(edge_batch(pdf.sort_values("t", kind="stable")))
        state.update((pickle.dumps(engine, protocol=pickle.HIGHEST_PROTOCOL),))
        if results:
            rows = result_rows(results)
            rows.insert(0, "key", pd.Series([key[0]] * len(rows), dtype=object
                                            if isinstance(key[0], str) else "int64"))
            yield rows
    return step


def windows_stream(edges, engine_cls, params):
    """Streaming windows of a streaming edge DataFrame with a ``key`` column."""
    from pyspark.sql.streaming.state import GroupStateTimeout

    key_type = edges.schema["key"].dataType.simpleString()
    return edges.groupBy("key").applyInPandasWithState(
        key_engine_step(engine_cls, params), f"key {key_type}, {OUTPUT_FIELDS}", STATE_SCHEMA,
        "append", GroupStateTimeout.NoTimeout)
