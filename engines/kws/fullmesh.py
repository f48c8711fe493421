"""Full-Mesh S-KWS (paper Section 4.1): the whole operator mesh built before
processing (clusters per root node, shared joins and output buffers), with
demand-driven operator execution and lazy purging; ``purge="eager"`` and
``demand_driven=False`` are the ablations of Section 5.  Processing:
``streamspec.engines.kws.mesh``."""
from __future__ import annotations

from streamspec.engines.kws.mesh import MeshEngine


class FullMeshEngine(MeshEngine):
    name = "fullmesh"
    description = "operator mesh with shared joins and buffers, demand-driven, lazy purging"
    shared = True
    demand_driven = True
    purge = "lazy"
