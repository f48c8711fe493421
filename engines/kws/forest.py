"""The forest baseline (paper Section 3.3, evaluated in Section 5): one left-deep
operator tree per CN, every join always running, no sharing of joins, purging
eager and bottom-up (Section 4.3, Figure 4.5): lazy purging rides on
demand-driven execution, which the paper applies to FM only, as it does for
PM.  ``purge="lazy"`` is the ablation.  Processing: ``streamspec.engines.kws.mesh``.

Departure from the paper: the trees read their right inputs from the sources
shared per expanded-schema node (a tuple is stored and hash-indexed once per
node, not once per tree), as the mesh does."""
from __future__ import annotations

from streamspec.engines.kws.mesh import MeshEngine


class ForestEngine(MeshEngine):
    name = "forest"
    description = "one operator tree per candidate network, evaluated independently (baseline)"
    shared = False
    demand_driven = False
    purge = "eager"
