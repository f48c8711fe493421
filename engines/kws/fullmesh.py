"""Full-Mesh S-KWS (paper Section 4.1): the whole operator mesh built before
processing (clusters per root node, shared joins and output buffers), with
demand-driven operator execution and lazy purging; ``purge="eager"`` and
``demand_driven=False`` are the ablations of Section 5 (Figures 5.7, 5.8),
selectable by name: ``fullmesh:purge=eager``, ``fullmesh:demand_driven=false``
(``streamspec.spec.registry``).  Processing:
``streamspec.engines.kws.mesh``; schema changes grow or prune the mesh in place
(Section 4.4, ``streamspec.engines.kws.migration``)."""
from __future__ import annotations

from streamspec.engines.kws.mesh import MeshEngine


class FullMeshEngine(MeshEngine):
    name = "fullmesh"
    description = "operator mesh with shared joins and buffers, demand-driven, lazy purging"
    options = {"purge": ("lazy", "eager"), "demand_driven": (True, False), "index_buffers": (True, False)}
    shared = True
    demand_driven = True
    purge = "lazy"
