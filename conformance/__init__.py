"""Conformance: hypothesis strategies per problem, the differential runner
against the oracle, the pytest plugin (``--engine``) and Spark fuzzing.
See conformance/README.md."""
