"""Fast engines: one package per problem, one module per engine, numba kernels
in ``_<engine>_kernels`` modules (plain ``@njit`` functions over arrays)."""
