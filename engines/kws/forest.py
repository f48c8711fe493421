"""The forest baseline (paper Section 3.3, evaluated in Section 5): one left-deep
operator tree per CN, every join always running, no sharing of joins or buffers.
Processing: ``engines.kws.mesh``."""
from __future__ import annotations

from engines.kws.mesh import MeshEngine


class ForestEngine(MeshEngine):
    name = "forest"
    description = "one operator tree per candidate network, evaluated independently (baseline)"
    shared = False
    demand_driven = False
    purge = "lazy"
