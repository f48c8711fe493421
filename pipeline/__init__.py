"""Spark pipelines around the engines: session, I/O, replay, streaming, the CLI.

Only ``streamspec.pipeline.spark`` builds sessions and only the ``streamspec.pipeline.io`` package reads or
writes files; transformations are pure ``DataFrame -> DataFrame`` functions.
"""
