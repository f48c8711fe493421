"""Partial-Mesh S-KWS (paper Section 4.2): the mesh grown and shrunk at run time.

At first only the sources exist (here: the level-0 operator of each cluster
root).  An operator creates its parents when its output buffer receives its
first composite, and destroys them (recursively up the mesh) when its buffer
runs dry, so a join exists iff its left input has output.  TreeGen (Figure
4.3): an operator's tree is its CN prefix (the trees CNGen grows, in
pre-order), and its parents are the one-node expansions of that tree, made
by one CNGen step (``streamspec.engines.kws.cngen.Cluster.expand``) when the operator
first has output: the CNs among them feed the output operator, and a tree
becomes a join only if some CN grows from it.  Nothing of the full mesh and
no list of CNs is kept: memory holds the sources, the materialised operators
and their buffers (each operator keeps its tree's CNGen state to grow its
own parents), and the CPU pays for re-running TreeGen whenever a dried-up
operator regrows (paper Section 5, Figure 5.4).

A newly created parent starts with an empty buffer, which is exact: its left
input was empty until the composites that created it, and those travel up
as usual.  A buffer counts as dry when purging (or a deletion) leaves it
empty.  Every materialised join runs (no demand-driven sleeping), and
purging is eager, bottom-up from the expired tuples' sources (Figure 4.5;
paper Section 5: lazy purging and demand-driven execution are FM's): PM
trades CPU for memory.  ``purge="lazy"`` is the ablation (``partialmesh:purge=lazy``).  Processing
otherwise as ``streamspec.engines.kws.mesh``.

Schema changes (Section 4.4, ``streamspec.engines.kws.partial_migration``): the clusters
are re-made over the changed expanded schema (old nodes keep their nids), a new
relation gets its level-0 operators, and only the materialised operators whose
trees could take the new edge grow their missing parents, fed at once from
their buffers: new operators exist only as high as there are data.  A removal
deletes the operators whose trees hold the removed relation or edge.
"""
from __future__ import annotations

from streamspec.engines.kws.cngen import Cluster, expanded_schema
from streamspec.engines.kws.mesh import MeshEngine
from streamspec.engines.kws.partial_migration import migrate_partial_mesh
from streamspec.engines.kws.operators import Op, join_condition


class PartialMeshEngine(MeshEngine):
    name = "partialmesh"
    description = "operator mesh grown at run time from the sources and shrunk when input dries up"
    options = {"purge": ("eager", "lazy"), "index_buffers": (True, False)}
    shared = True
    demand_driven = False
    purge = "eager"   # Section 5: lazy purging needs demand-driven execution (FM only)
    shrinks = True

    def _build(self) -> None:
        schema, m, t_max = self.schema, len(self.keywords), self.params.t_max
        nodes, nid, adjacency, rbit = self._xs = expanded_schema(schema, m, t_max)
        self._xs_schema = schema   # the schema of ``_xs`` (migrations keep its nids)
        self._clusters: dict = {}      # root node -> Cluster (TreeGen)
        self._mat: dict = {}           # tree state (CN tree for CN operators) -> materialised Op
        self._sources = {(r.name, k): {} for r in schema.relations for k in range(1 << m)}
        self._roots, self._by_right, self._index = {}, {}, {}
        for e in schema.edges:  # every possible right input gets an index up front (cheap)
            for rel, attr in ((e.left, e.left_attr), (e.right, e.right_attr)):
                for k in range(1 << m):
                    self._index.setdefault(((rel, k), attr), {})
        self._group_indexes()
        self._conds = {}
        for root in nodes:
            if not root[1] & rbit:
                continue
            cluster = self._clusters[root] = Cluster(root, nid, adjacency, m, t_max, rbit)
            op = Op(0, root, -1, None, None)
            op.key, op.cn = cluster.first(), root[1] == cluster.full
            self._mat[op.key] = op
            self._roots.setdefault(op.node, []).append(op)

    @property
    def ops(self) -> list:
        """The materialised operators."""
        return list(self._mat.values())

    def _made_ops(self):
        return self._mat.values()

    def _emit(self, op, new, results) -> None:
        if not op.out and not op.parents:
            self._grow(op)
        super()._emit(op, new, results)

    def _grow(self, op) -> None:
        """TreeGen: create the parents of ``op`` (one CNGen step from its tree)."""
        if op.cn:
            return  # a CN never grows into another CN
        state = op.key
        cluster = self._clusters[state[0][0][:2]]
        cns, grown = [], []
        cluster.expand(state, cns, grown)
        parents = [(cn, cn, True) for cn in cns]
        parents += [(g, g[0], False) for g in grown if cluster.leads_to_cn(g)]
        cluster.kept.clear()   # no CNGen tables are kept between growths
        cluster.finals.clear()
        for key, tree, is_cn in parents:
            rel, kbits, parent_pos, label = tree[-1]
            q = Op(op.pos + 1, (rel, kbits), parent_pos, label, op)
            q.key, q.cn = key, is_cn
            q.cond = self._conds.get(label) or self._conds.setdefault(label, join_condition(self.schema, label))
            op.add_parent(q)
            self._mat[key] = q
            self._by_right.setdefault(q.node, []).append(q)

    def _shrink(self, op) -> None:
        """Destroy the parents of a dry operator, recursively up the mesh."""
        for q in op.parents:
            self._shrink(q)
            del self._mat[q.key]
            self._by_right[q.node].remove(q)
        op.parents = ()

    def _live(self, op) -> list:
        alive = super()._live(op)
        if not alive and op.parents:
            self._shrink(op)
        return alive

    def _schema_change(self, event, t):
        return migrate_partial_mesh(self, event, t)

    def _delete(self, tid, t):
        results = super()._delete(tid, t)
        self._prune_dry()
        return results

    # eager purging (the mesh's bottom-up pass): a destroyed operator is skipped, and
    # one left dry destroys its parents (no buffer above holds a dead composite then)
    def _exists(self, op) -> bool:
        return op.key in self._mat

    def _dried(self, op) -> bool:
        self._shrink(op)
        return True

    def _prune_dry(self) -> None:
        for op in [op for op in self._mat.values() if not op.out and op.parents]:
            if op.key in self._mat and not op.out:
                self._shrink(op)
