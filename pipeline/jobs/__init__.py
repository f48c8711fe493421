"""One module per problem, each the ``streamspec run <problem>`` job.

A job module defines ``add_arguments(parser)`` and ``main(args) -> int``;
``streamspec.pipeline.cli`` discovers them by name, so adding a problem touches no shared file.
"""
