"""The one job skeleton every problem runs through (docs/pipeline.md, "How a job runs"; issue 11).

``streamspec run PROBLEM`` is ``run(adapter, args)`` and ``streamspec stream
PROBLEM`` is ``streamspec.pipeline.streaming.main``; a problem joins both with
one adapter module, ``streamspec.pipeline.jobs.PROBLEM``.  The skeleton owns
the order of things, the same for every problem:

1. resolve every path flag on the driver (``flags.resolve_paths``: relative
   paths and ``file:`` URIs become absolute local paths), resolve the engine,
   let the adapter read and validate its inputs on the driver (``prepare``:
   typed, located errors, exit 2, before Spark starts) and refuse an existing
   output;
2. start Spark (``--master``, ``--conf``; on a cluster, check that the executors
   see the inputs and can create the output: ``spark.check_task_paths``),
   replay (``replay``: keyed, or exactly partitioned where the problem allows
   it) and materialise the rows once (``spark.materialise``: ``localCheckpoint``
   in local mode, a reliable checkpoint on ``--checkpoint-dir`` on a cluster,
   removed when the job ends), so the write and the summary read the computed
   rows instead of replaying or re-reading the output;
3. write the rows atomically (``write_parquet_atomic``), with the progress
   line on both long steps;
4. print the summary sentence (``streamspec.pipeline.summary``) and the
   adapter's detail lines, computed from the rows of step 2.

A record the spec rejects inside a Spark task (where the columnar paths
validate) ends the job like one rejected on the driver: exit 2 and the spec's
located message (``TaskRejected``), nothing written.  ``tests/pipeline/test_job.py``
runs the skeleton with a made-up fifth problem.

An adapter module defines, for the batch job:

- ``PROBLEM``, ``PREFERRED_ENGINES`` (the default engine is the first one
  registered) and the module docstring (its first paragraph is the help);
- ``add_arguments(parser)``: its flags, the shared ones from
  ``streamspec.pipeline.flags``;
- ``prepare(args) -> plan``: everything checkable before Spark (parameters,
  inputs read or planned from metadata), any object the adapter's other
  functions understand;
- ``replay(spark, plan, engine_cls, partitions) -> DataFrame``: the output rows
  (``materialised(rows)`` when they already sit over the adapter's own checkpoint);
- ``summarize(plan, rows) -> Summary``: from the materialised rows;
- ``demo_argv(output_dir)``: ``streamspec demo``'s arguments (optional);

and, for ``streamspec stream`` (``streamspec.pipeline.streaming``):

- ``add_stream_arguments(parser)``: the flags that fix ``Params`` without
  reading the stream (the batch job may derive defaults from the input; a
  stream has no end to read first);
- ``stream_params(args) -> Params``, ``SOURCE_SCHEMA`` (or
  ``source_schema(args)``): the DDL of one input row, without ``key``;
- ``stream_events(pdf, params)``: a key's rows of a micro-batch, in arrival
  order, as the engine's input (its columnar batch where it has one);
- ``stream_rows(outputs, first) -> pandas.DataFrame``: the outputs as rows of
  ``stream_schema(args)`` (``first`` numbers events on from earlier batches).
"""
from __future__ import annotations

import sys
import time

import attrs

from streamspec.pipeline import flags
from streamspec.pipeline.summary import sentence
from streamspec.spec.errors import StreamspecError


@attrs.frozen
class Summary:
    """What ``sentence`` needs from the adapter, plus detail lines printed after it."""

    wrote: str
    source: str
    settings: str
    details: tuple[str, ...] = ()


MATERIALISED = "_streamspec_materialised"


def materialised(rows):
    """Mark ``rows`` as already computed once (a projection or filter over the adapter's own
    checkpoint, ``spark.materialise``, which it needs to check the tasks' reports before
    the write), so
    the skeleton does not copy them into a second checkpoint."""
    setattr(rows, MATERIALISED, True)
    return rows


def engine_of(adapter, args):
    from streamspec.spec.registry import Registry
    name = args.engine      # '' is a name like any other (an unknown one), not the default
    return Registry.get(adapter.PROBLEM, name if name is not None else
                        flags.default_engine(adapter.PROBLEM, adapter.PREFERRED_ENGINES))


def run(adapter, args, out=None) -> int:
    """``streamspec run PROBLEM``: the steps of the module docstring."""
    from streamspec.pipeline.io import (check_output, check_output_path, checkpoint_dir_beside,
                                        recover_output, write_parquet_atomic)
    from streamspec.pipeline.progress import SparkProgress
    from streamspec.pipeline.spark import (ContractViolationInTask, TaskRejected, check_task_paths,
                                           checkpoint_dir, contract_violation, materialise,
                                           path_failure, session, spec_error)
    from streamspec.spec.errors import PathError

    out = out or sys.stdout
    began = time.monotonic()
    flags.resolve_paths(args)       # relative paths and file: URIs, once, on the driver
    engine_cls = engine_of(adapter, args)
    plan = adapter.prepare(args)
    recover_output(args.output)     # what a killed run left beside a local output, said on stderr
    check_output_path(args.output, args.overwrite)
    if getattr(args, "checkpoint_dir", None) is None:   # this run's own, removed at its end
        args.checkpoint_dir = checkpoint_dir_beside(args.output)

    spark = session(args.master, app_name=f"streamspec {adapter.PROBLEM} {engine_cls.name}",
                    conf=dict(getattr(args, "conf", None) or ()))
    # on a cluster: the workers see the paths; an object store's: Spark has its connector
    check_task_paths(spark, *flags.task_paths(args))
    if "://" in args.output and not args.output.startswith("file:"):
        recover_output(args.output, spark)      # the same on another file system
    check_output(spark, args.output, args.overwrite)
    partitions = args.partitions or spark.sparkContext.defaultParallelism
    # reliable checkpoints (on a cluster) under --checkpoint-dir, removed however the job ends
    with checkpoint_dir(spark, args.checkpoint_dir):
        try:
            with SparkProgress(spark, enabled=args.progress, label=adapter.PROBLEM):
                # computed once: the write and the summary both read these rows
                rows = adapter.replay(spark, plan, engine_cls, partitions)
                if not getattr(rows, MATERIALISED, False):
                    rows = materialise(rows)
                write_parquet_atomic(rows, args.output, overwrite=args.overwrite)
                summary = adapter.summarize(plan, rows)
        except StreamspecError:
            raise
        except Exception as err:    # py4j/pyspark wrap what a task raised
            broken = contract_violation(err)
            if broken is not None:  # the engine's bug inside a task: exit 1, as on the driver
                raise ContractViolationInTask(broken) from err
            message = spec_error(err)
            if message is None:
                unopened = path_failure(err)
                if unopened is not None:    # an executor could not open a path: exit 2, said once
                    raise PathError(f"a Spark task could not open a path: {unopened}") from err
                raise
            # a record the spec rejected inside a task: the same typed exit as on the driver
            # (nothing was written: the output lands only after the rows are complete)
            raise TaskRejected(message) from err
    print(sentence(adapter.PROBLEM, summary.wrote, summary.source, summary.settings,
                   engine_cls.name, args.output, time.monotonic() - began), file=out)
    for line in summary.details:
        print(line, file=out)
    out.flush()
    return 0


def command(adapter):
    """The argparse ``func`` of ``streamspec run PROBLEM``."""
    def main(args) -> int:
        return run(adapter, args)
    main.__doc__ = f"streamspec run {adapter.PROBLEM}"
    return main
