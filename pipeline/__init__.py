"""Spark pipelines around the engines: session, I/O, replay, streaming, the CLI.

Only ``pipeline.spark`` builds sessions and only the ``pipeline.io`` package reads or
writes files; transformations are pure ``DataFrame -> DataFrame`` functions.
"""
