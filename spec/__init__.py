"""Contracts of streamspec: one module per problem, plus the pieces they share.

``streamspec.spec.errors`` (typed errors), ``streamspec.spec.windows`` (sliding-window arithmetic),
``streamspec.spec.engine`` (the engine protocol and the shared driver), ``streamspec.spec.registry``
(engines found through the entry-point group ``streamspec.engines``).
Nothing here imports Spark or an engine; numba appears only in the private
``_*`` modules whose compiled functions the oracles and the engines share.
"""
