"""The job skeleton (``streamspec.pipeline.job``) with a minimal adapter of its own."""
from __future__ import annotations

import argparse
import types

import pandas as pd
import pytest

from streamspec.pipeline import job
from streamspec.pipeline.spark import (ContractViolationInTask, TaskRejected, contract_violation,
                                       spec_error, task_error)
from streamspec.spec.errors import ContractViolation, OutOfOrder

pytestmark = pytest.mark.spark


def adapter(fail_at: int | None, broken_at: int | None = None):
    """A fifth 'problem': squares of 0..9, one Spark task per partition; record ``fail_at``
    is rejected inside its task with the spec's typed error."""
    def squares(batches):
        for pdf in batches:
            if fail_at is not None and (pdf["id"] == fail_at).any():
                raise OutOfOrder("time 3 is earlier than 5 already seen", index=fail_at)
            if broken_at is not None and (pdf["id"] == broken_at).any():
                raise ContractViolation("ConnectivityEngine._run", "list of 2",
                                        "an ndarray of shape (windows due, queries)",
                                        engine="connectivity.mine")
            yield pd.DataFrame({"n": pdf["id"], "square": pdf["id"] ** 2})

    def summarize(plan, rows):
        total = rows.groupBy().sum("square").collect()[0][0]
        return job.Summary(f"{rows.count()} squares", "10 numbers", "no settings",
                           (f"  their sum: {total}",))

    return types.SimpleNamespace(
        PROBLEM="connectivity", PREFERRED_ENGINES=("oracle",),
        prepare=lambda args: "plan",
        replay=lambda spark, plan, engine_cls, partitions:
            spark.range(10).repartition(partitions).mapInPandas(squares, "n long, square long"),
        summarize=summarize)


def args_for(tmp_path, name):
    return argparse.Namespace(engine="oracle", output=str(tmp_path / name), overwrite=False,
                              master=None, partitions=3, progress=False)


def test_a_fifth_problem_is_one_adapter(spark, tmp_path, capsys):
    assert job.run(adapter(None), args_for(tmp_path, "out")) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("connectivity: wrote 10 squares from 10 numbers (no settings, "
                                 "engine oracle) to ")
    assert printed[1] == "  their sum: 285"
    assert sorted(spark.read.parquet(str(tmp_path / "out")).toPandas()["square"]) == \
        [n * n for n in range(10)]


def test_a_record_rejected_inside_a_task_is_a_typed_error_and_nothing_is_written(spark, tmp_path):
    with pytest.raises(TaskRejected) as caught:
        job.run(adapter(7), args_for(tmp_path, "never"))
    assert str(caught.value) == "record 7: time 3 is earlier than 5 already seen"
    assert caught.value.exit_code == 2
    assert not (tmp_path / "never").exists()


def test_an_engine_contract_violation_inside_a_task_exits_1_not_as_bad_input(spark, tmp_path):
    with pytest.raises(ContractViolationInTask) as caught:
        job.run(adapter(None, broken_at=4), args_for(tmp_path, "never"))
    assert "ConnectivityEngine._run" in str(caught.value)
    assert caught.value.exit_code == 1
    assert not (tmp_path / "never").exists()


def test_spec_messages_are_found_in_spark_errors():
    text = ("py4j...\nTraceback (most recent call last):\n  File x\n"
            "streamspec.spec.errors.OutOfOrder: part-1.json:2: edge time 5 is earlier\n"
            " SQLSTATE: 38000\n\tat org.apache...")
    assert spec_error(text) == "part-1.json:2: edge time 5 is earlier"
    assert spec_error("java.lang.OutOfMemoryError: heap") is None
    broken = "x\nstreamspec.spec.errors.ContractViolation: connectivity.mine: _run returned a list\ny"
    assert spec_error(broken) is None            # not a rejected record
    assert contract_violation(broken) == "connectivity.mine: _run returned a list"
    assert task_error("a\nValueError: bad thing\nb") == "ValueError: bad thing"
