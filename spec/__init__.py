"""Contracts of streamspec: one module per problem, plus the pieces they share.

``spec.errors`` (typed errors), ``spec.windows`` (sliding-window arithmetic),
``spec.engine`` (the engine protocol and the shared driver), ``spec.registry``
(engines found through the entry-point group ``streamspec.engines``).
Nothing here imports Spark or an engine; numba appears only in the private
``_*`` modules whose compiled functions the oracles and the engines share.
"""
