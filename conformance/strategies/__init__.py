"""Public hypothesis strategies, one module per problem.

They build valid streams by construction (no ``.filter``), over small alphabets
and short time ranges so that ties, duplicates and collisions are common, and
they draw the batching (how the stream is cut into ``process`` calls) as part
of the example.
"""
