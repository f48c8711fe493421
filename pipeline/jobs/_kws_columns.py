"""The kws job's events and outputs as columns through Spark (``streamspec.pipeline.jobs.kws``:
"Events travel through Spark as typed columns").

The driver's events become one Arrow table (``event_table``) cut into Arrow IPC chunks
(``chunks``); a task's rows go back into the engine's columnar batches (``inputs_of``:
``streamspec.spec.kws.TupleBatch``, validated by the spec there) and its output events
(``streamspec.spec.kws``: ``Appear`` and ``End``) into rows (``output_rows``, ``arrow_rows``).  The
batch replays (``kws``), the Spark-read path (``_kws_file_replay``) and the stream
(``_kws_stream``) share them; ``kws`` re-exports their public names.
"""
from __future__ import annotations

import json

import attrs
import numpy as np
import pandas as pd

from streamspec.spec.kws import (Appear, Delete, Insert, Params, TupleBatch, event_from_json,
                                 event_to_json)

OUTPUT_SCHEMA = "kind string, time long, end long, tids array<string>, edges array<string>"
INT64_MIN = -2**63


def output_rows(outputs) -> pd.DataFrame:
    rows = [("appear" if isinstance(o, Appear) else "end", o.time,
             o.end if isinstance(o, Appear) else None,
             [str(t) for t in o.tids], [f"{e}:{a}:{b}" for e, a, b in o.edges]) for o in outputs]
    frame = pd.DataFrame(rows, columns=["kind", "time", "end", "tids", "edges"])
    frame["time"] = frame["time"].astype("int64")
    frame["end"] = frame["end"].astype("Int64")
    return frame


# -- events through Spark, as columns ----------------------------------------------------
# One row per event: its order, time and kind, the insert's relation and tid (int or str:
# they sort differently, ``tid_key``), a schema change as its JSON, and one typed column per
# attribute name whose values all have one type (``long``, ``double`` or ``string``, the
# usual case); an attribute whose values mix types travels in the row's ``extra`` JSON.
# Tasks read the rows with Arrow (``applyInArrow``, IPC chunks: ints with nulls stay exact
# ints) into the engine's columnar batch (``TupleBatch``), no per-event objects on either side.
FIXED = ("seq long, t long, kind string, rel string, tid_int long, tid_str string, "
         "event string, extra string")
ARROW_TYPES = {"long": "int64", "double": "float64", "string": "string"}


@attrs.frozen
class EventTable:
    """The events as an Arrow table (``FIXED`` plus the attribute columns ``v0, v1...``)."""

    table: object                   # pyarrow.Table
    ddl: str                        # its Spark schema
    attributes: tuple               # ((attribute, column), ...) of the typed columns


def _value_type(values: list) -> str | None:
    """``long``, ``double`` or ``string`` when every non-null value has that type, else None."""
    kinds = {type(v) for v in values if v is not None}
    if kinds <= {int}:
        return "long" if all(-2**63 <= v < 2**63 for v in values if v is not None) else None
    return {frozenset({float}): "double", frozenset({str}): "string"}.get(frozenset(kinds))


def event_table(events: list, keys: list | None = None) -> EventTable:
    """The columns of ``events`` (and of their ``keys``), built on the driver in one pass."""
    import pyarrow as pa

    n = len(events)
    by_attr: dict = {}
    for ev in events:
        if isinstance(ev, Insert):
            for a, v in ev.values:
                by_attr.setdefault(a, []).append(v)
    typed = {a: kind for a, vs in by_attr.items() if (kind := _value_type(vs)) is not None}
    names = {a: f"v{j}" for j, a in enumerate(typed)}
    kind, rel, tid_int, tid_str, event, extra = ([None] * n for _ in range(6))
    cols = {a: [None] * n for a in typed}
    for i, ev in enumerate(events):
        if isinstance(ev, (Insert, Delete)):
            if isinstance(ev.tid, int):
                tid_int[i] = ev.tid
            else:
                tid_str[i] = ev.tid
        if isinstance(ev, Insert):
            kind[i], rel[i] = "insert", ev.relation
            mixed = {}
            for a, v in ev.values:
                if a in cols:
                    cols[a][i] = v
                elif v is not None:
                    mixed[a] = v
            if mixed:
                extra[i] = json.dumps(mixed)
        elif isinstance(ev, Delete):
            kind[i] = "delete"
        else:
            kind[i], event[i] = "schema", json.dumps(event_to_json(ev))
    arrays = {"seq": pa.array(np.arange(n, dtype=np.int64)),
              "t": pa.array(np.array([ev.t for ev in events], dtype=np.int64)),
              "kind": pa.array(kind, pa.string()), "rel": pa.array(rel, pa.string()),
              "tid_int": pa.array(tid_int, pa.int64()), "tid_str": pa.array(tid_str, pa.string()),
              "event": pa.array(event, pa.string()), "extra": pa.array(extra, pa.string())}
    ddl = FIXED
    for a, col in names.items():
        arrays[col] = pa.array(cols[a], getattr(pa, ARROW_TYPES[typed[a]])())
        ddl += f", {col} {typed[a]}"
    if keys is not None:
        ktype = key_type(keys)
        arrays["key"] = pa.array(keys, pa.int64() if ktype == "long" else pa.string())
        ddl += f", key {ktype}"
    return EventTable(pa.table(arrays), ddl, tuple(names.items()))


def inputs_of(table, attributes: tuple, halo_from: int | None = None) -> list:
    """``process`` inputs of a task's rows (any order): runs of inserts and deletions as
    ``TupleBatch`` es, schema changes as one-event lists, in stream order.  With
    ``halo_from`` (a time range's task), deletions of tuples inserted before it are left
    out, as ``range_events`` does: their tuples are not replayed."""
    import pyarrow as pa

    table = table.sort_by("seq")
    kind = table["kind"].to_pylist()
    tid_int, tid_str = table["tid_int"].to_pylist(), table["tid_str"].to_pylist()
    tids = [a if a is not None else b for a, b in zip(tid_int, tid_str)]
    if halo_from is not None and "delete" in kind:
        inserted = {x for x, k in zip(tids, kind) if k == "insert"}
        keep = [k != "delete" or x in inserted for x, k in zip(tids, kind)]
        if not all(keep):
            table = table.filter(pa.array(keep))
            kind = [k for k, ok in zip(kind, keep) if ok]
            tids = [x for x, ok in zip(tids, keep) if ok]
    out, start = [], 0
    schema_rows = [i for i, k in enumerate(kind) if k == "schema"]
    for stop in schema_rows + [len(kind)]:
        if stop > start:
            out.append(_batch_of(table.slice(start, stop - start), kind[start:stop],
                                 tids[start:stop], attributes))
        if stop < len(kind):
            out.append([event_from_json(json.loads(table["event"][stop].as_py()))])
        start = stop + 1
    return out


def _batch_of(part, kind: list, tids: list, attributes: tuple) -> TupleBatch:
    """A run of insert and deletion rows as a ``TupleBatch`` (values per relation)."""
    import pyarrow.compute as pc

    relation = part["rel"].to_pylist()
    dele = np.array([k == "delete" for k in kind], dtype=bool)
    values = {}
    for name in {r for r, d in zip(relation, dele) if not d}:
        rows = part.filter(pc.and_(pc.equal(part["rel"], name), pc.equal(part["kind"], "insert")))
        cols = {}
        for a, col in attributes:
            c = rows[col]
            if c.null_count == len(c):
                continue            # not this relation's attribute, or null throughout
            cols[a] = c.to_numpy() if c.null_count == 0 and c.type != "string" \
                else c.to_pylist()
        if rows["extra"].null_count < len(rows):
            mixed = [json.loads(x) if x is not None else {} for x in rows["extra"].to_pylist()]
            for a in dict.fromkeys(a for d in mixed for a in d):
                cols[a] = [d.get(a) for d in mixed]
        values[name] = cols
    return TupleBatch.of(part["t"].to_numpy(), tids, relation, values, dele)


def run_inputs(engine_cls, params: Params, inputs: list, lo: int | None, hi: int | None) -> list:
    """``run_range`` over ``process`` inputs (``inputs_of``)."""
    engine = engine_cls(params)
    out = [o for piece in inputs for o in engine.process(piece)]
    out += engine.advance_to(hi) if hi is not None else engine.flush()
    return [o for o in out if (lo is None or o.time >= lo) and (hi is None or o.time < hi)]


def arrow_rows(outputs, key=None, key_arrow=None):
    """Output events as an Arrow table of ``OUTPUT_SCHEMA`` (``key`` first when given)."""
    import pyarrow as pa

    frame = output_rows(outputs)
    arrays = {"kind": pa.array(frame["kind"].tolist(), pa.string()),
              "time": pa.array(frame["time"].tolist(), pa.int64()),
              "end": pa.array([None if pd.isna(e) else int(e) for e in frame["end"]], pa.int64()),
              "tids": pa.array(frame["tids"].tolist(), pa.list_(pa.string())),
              "edges": pa.array(frame["edges"].tolist(), pa.list_(pa.string()))}
    if key_arrow is not None:
        arrays = {"key": pa.array([key] * len(frame), key_arrow), **arrays}
    return pa.table(arrays)


def key_type(keys: list) -> str:
    return "long" if all(isinstance(k, int) for k in keys) else "string"


# The columns cross Spark in chunks of ``CHUNK_ROWS`` rows, each one Arrow IPC stream
# (lz4) in a binary cell: Spark moves a few large values, not every event's fields (at
# 270,000 events, 23 columns wide, Spark's row-by-row shuffle and conversion of the plain
# columns took 8 s of a 17 s task whose engine ran 6 s).  Tasks read their chunks back
# into Arrow tables, zero-copy.
CHUNK_ROWS = 16384


def _ipc(table) -> bytes:
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema,
                           options=pa.ipc.IpcWriteOptions(compression="lz4")) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _from_ipc(blobs) -> object:
    import pyarrow as pa

    return pa.concat_tables([pa.ipc.open_stream(b).read_all() for b in blobs])


def chunks(table) -> list[tuple[int, int, int | None, bytes]]:
    """``(first t, last t, t of the first schema change or None, IPC bytes)`` of the
    table's consecutive slices of ``CHUNK_ROWS`` rows (the table in stream order)."""
    out = []
    for start in range(0, table.num_rows, CHUNK_ROWS):
        part = table.slice(start, CHUNK_ROWS)
        t, kind = part["t"].to_numpy(), part["kind"].to_pylist()
        schema_t = next((int(x) for x, k in zip(t, kind) if k == "schema"), None)
        out.append((int(t[0]), int(t[-1]), schema_t, _ipc(part)))
    return out


def _chunk_frame(spark, rows: list, group: str, group_type):
    """A DataFrame of ``(group, data)`` rows (a task's or a key's chunks)."""
    import pyarrow as pa

    table = pa.table({group: pa.array([g for g, _ in rows], group_type),
                      "data": pa.array([d for _, d in rows], pa.binary())})
    ddl = "long" if group_type == pa.int64() else "string" if group_type == pa.string() else "int"
    return spark.createDataFrame(table, f"{group} {ddl}, data binary")
