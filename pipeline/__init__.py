"""Spark pipelines around the engines: session, I/O, replay, streaming, the CLI.

Only ``pipeline.spark`` builds sessions and only ``pipeline.io`` reads or
writes files; transformations are pure ``DataFrame -> DataFrame`` functions.
"""
