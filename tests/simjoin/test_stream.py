"""``streamspec stream simjoin``: one engine per key in Spark's group state, restarted from
the checkpoint exactly once (the shared check: ``tests/pipeline/streamcheck.py``)."""
from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from streamspec.engines.simjoin.swoop import SwoopEngine
from streamspec.pipeline.cli import main
from streamspec.pipeline.jobs.simjoin import stream_events, stream_records
from streamspec.reference.simjoin import OracleEngine
from streamspec.spec.errors import MalformedRecord
from streamspec.spec.simjoin import Params, RecordBatch

from ..pipeline.streamcheck import restart_equals_batch, write_file

WORDS = ("red", "green", "blue", "ham", "eggs", "tea")


def set_rows(seed: int, n: int = 90, keys=("aal", "cph", "osl"), sides: bool = False,
             text: bool = False) -> list[dict]:
    """Small-alphabet sets over several keys: ties of score and end time, runs of equal
    timestamps, gaps longer than the window (the list empties: rank-0 rows), empty sets.
    With ``text``, string tokens, a third of the records as ``text`` instead."""
    rng = random.Random(seed)
    t, rows = 0, []
    for i in range(n):
        t += rng.choice([0, 0, 0, 1, 2, 15])
        tokens = [rng.randrange(len(WORDS)) for _ in range(rng.randint(0, 4))]
        row = {"id": i, "ts": t, "key": rng.choice(keys)}
        if not text:
            row["tokens"] = tokens
        elif rng.random() < 0.3:
            row["text"] = " ".join(WORDS[x].title() for x in tokens) + "!"
        else:
            row["tokens"] = [WORDS[x] for x in tokens]
        if sides:
            row["side"] = rng.choice("RS")
        rows.append(row)
    return rows


def micro_batch(rows: list[dict]) -> pd.DataFrame:
    """Rows as ``applyInPandasWithState`` hands them over: arrays as numpy arrays."""
    frame = pd.DataFrame(rows).drop(columns="key")
    if "tokens" in frame:
        frame["tokens"] = [np.asarray(t) if isinstance(t, list) else None for t in frame["tokens"]]
    return frame


@pytest.mark.parametrize("sides", [False, True])
def test_integer_columns_take_the_columnar_path_with_the_same_outputs(sides):
    rows = set_rows(5, sides=sides)
    params = Params(k=2, w=6, similarity="dice", join="rs" if sides else "self")
    events = stream_events(micro_batch(rows), params)
    assert isinstance(events, RecordBatch)
    want = list(OracleEngine(params).process(stream_records(micro_batch(rows))))
    assert len(want) > 10 and list(SwoopEngine(params).process(events)) == want


def test_text_null_ids_and_stray_sides_go_through_the_specs_checks():
    params = Params(k=2, w=6)
    texts = stream_events(micro_batch(set_rows(3, text=True)), params)
    assert isinstance(texts, list) and any(r.tokens and isinstance(r.tokens[0], str) for r in texts)
    no_tokens = pd.DataFrame({"id": [1, 2], "ts": [1.0, 2.0], "tokens": [np.array([1]), None]})
    with pytest.raises(MalformedRecord, match="record 1: tokens must be a collection"):
        list(SwoopEngine(params).process(stream_events(no_tokens, params)))
    null_id = pd.DataFrame({"id": [1.0, float("nan")], "ts": [1.0, 2.0],
                            "tokens": [np.array([1]), np.array([2])]})
    with pytest.raises(MalformedRecord, match="record 1: record id must be an int or str"):
        list(SwoopEngine(params).process(stream_events(null_id, params)))
    stray = micro_batch(set_rows(5, sides=True))
    assert isinstance(stream_events(stray, params), list)       # sides in a self join


@pytest.mark.spark
def test_json_text_and_string_tokens_restart_equals_the_batch_run(spark, tmp_path):
    rows = set_rows(3, text=True)
    argv = ["--k", "3", "--window", "5", "--similarity", "jaccard", "--engine", "swoop"]
    got = restart_equals_batch(spark, tmp_path, "simjoin", rows, argv, fmt="json")
    assert set(got["key"]) == {"aal", "cph", "osl"}
    assert (got["rank"] == 0).any() and (got["rank"] == 3).any()


@pytest.mark.spark
def test_parquet_columnar_two_stream_join_restart_equals_the_batch_run(spark, tmp_path):
    # long ids, tokens and times: the micro-batches reach the engine as RecordBatch columns
    rows = set_rows(5, sides=True)
    argv = ["--k", "2", "--window", "6", "--similarity", "cosine", "--join", "rs",
            "--engine", "swoop", "--id-type", "long", "--token-type", "long", "--ts-type", "long"]
    got = restart_equals_batch(spark, tmp_path, "simjoin", rows, argv, fmt="parquet")
    assert (got["rank"] == 0).any()


@pytest.mark.spark
def test_a_late_record_stops_the_stream_with_the_specs_message(spark, tmp_path, capsys):
    source = tmp_path / "in"
    source.mkdir()
    write_file(source, "part-0000.json", [{"id": 1, "ts": 10, "tokens": ["a"], "key": "x"},
                                         {"id": 2, "ts": 5, "tokens": ["a"], "key": "x"}], 0, "json")
    code = main(["stream", "simjoin", "--source", str(source), "--format", "json",
                 "--checkpoint", str(tmp_path / "ckpt"), "--output", str(tmp_path / "out"),
                 "--trigger-once", "--k", "1", "--window", "4"])
    assert code == 2
    assert "time 5.0 is earlier than" in capsys.readouterr().err
