"""Schema changes on the partial mesh (paper Section 4.4, last sentences: "in PM new
operators are only created as high as there are data").

The expanded schema changes as for the full mesh (``streamspec.engines.kws.migration``:
old nodes keep their nids); the clusters are re-made over it and a new relation gets
its level-0 operators.  The materialised operators whose trees could take a new
element (``migration.can_take``) run TreeGen again (``Cluster.expand``) and only
their missing parents are created, each fed at once from its left child's buffer
and its right source (``_emit`` grows them further as their buffers fill).  A
removal deletes the materialised operators whose trees hold the removed relation
or edge; their parents hold it too.
"""
from __future__ import annotations

from streamspec.engines.kws.cngen import Cluster
from streamspec.engines.kws._migration_prune import drop_relation
from streamspec.engines.kws.migration import can_take, changed_schema, distances, remove, removed
from streamspec.engines.kws.operators import Op, join_condition
from streamspec.spec.kws import AddEdge


def migrate_partial_mesh(engine, event, t: int):
    """Section 4.4 on the partial mesh: new operators only as high as there are data."""
    engine._advance(t)
    m, t_max = len(engine.keywords), engine.params.t_max
    change = changed_schema(engine, event)
    if change is None:
        edge_ids, rel, ends = removed(engine, event)
        old = engine._xs_schema
        ended = prune_partial_mesh(engine, edge_ids, rel, t)
        engine._xs = remove(engine._xs, edge_ids, rel, ends)
        engine._xs_schema = engine.schema
        _clusters(engine, set())
        _drop_dead_ends(engine, distances(old, ends | ({rel} if rel else set())))
        return ended, ()
    xs, new_labels, new_nodes, dist = change
    engine._xs, engine._xs_schema = xs, engine.schema
    for n in new_nodes:
        engine._sources[n] = {}
    _clusters(engine, new_nodes)
    if isinstance(event, AddEdge):
        e = event.edge
        for r, a in ((e.left, e.left_attr), (e.right, e.right_attr)):
            for k in range(1 << m):
                engine._index_source((r, k), a)
    results: list = []
    for op in [op for op in engine._mat.values() if not op.cn and op.out]:
        if op.key not in engine._mat or not can_take(op.key, dist, t_max) or not engine._live(op):
            continue
        cluster = engine._clusters[op.key[0][0][:2]]
        cns, grown = [], []
        cluster.expand(op.key, cns, grown)
        fresh = [(cn, cn, True) for cn in cns if cn not in engine._mat]
        fresh += [(g, g[0], False) for g in grown if g not in engine._mat and cluster.leads_to_cn(g)]
        cluster.kept.clear()
        cluster.finals.clear()
        for key, tree, is_cn in fresh:
            rel, kbits, parent_pos, label = tree[-1]
            q = Op(op.pos + 1, (rel, kbits), parent_pos, label, op)
            q.key, q.cn = key, is_cn
            q.cond = engine._conds.get(label) or engine._conds.setdefault(label, join_condition(engine.schema, label))
            op.add_parent(q)
            engine._mat[key] = q
            engine._by_right.setdefault(q.node, []).append(q)
            more = engine._probe_right(q, engine._live(op))
            if more:
                engine._emit(q, more, results)
    return (), results


def _drop_dead_ends(engine, dist: dict) -> None:
    """After a removal, the joins from whose trees no CN grows any more (TreeGen
    would not make them now: their CNs held the removed element) go, with their
    parents; only trees that could have reached it are checked."""
    t_max = engine.params.t_max
    for op in list(engine._mat.values()):
        if op.cn or op.left is None or op.key not in engine._mat or not can_take(op.key, dist, t_max):
            continue
        cluster = engine._clusters[op.key[0][0][:2]]
        if cluster.leads_to_cn(op.key):
            continue
        stack, gone = [op], []
        while stack:
            q = stack.pop()
            gone.append(q)
            stack.extend(q.parents)
        dead = set(gone)
        op.left.parents = [p for p in op.left.parents if p not in dead] or ()
        for q in gone:
            del engine._mat[q.key]
            engine._by_right[q.node].remove(q)
            q.out, q.idx, q.parents = (), None, ()
    for cluster in engine._clusters.values():
        cluster.kept.clear()
        cluster.finals.clear()


def _clusters(engine, new_nodes: set) -> None:
    """A CNGen cluster per root over the current expanded schema; a level-0
    operator for each new root."""
    nodes, nid, adjacency, rbit = engine._xs
    m, t_max = len(engine.keywords), engine.params.t_max
    engine._clusters = {}
    for root in nodes:
        if not root[1] & rbit:
            continue
        cluster = engine._clusters[root] = Cluster(root, nid, adjacency, m, t_max, rbit)
        if root in new_nodes:
            op = Op(0, root, -1, None, None)
            op.key, op.cn = cluster.first(), root[1] == cluster.full
            engine._mat[op.key] = op
            engine._roots.setdefault(op.node, []).append(op)


def prune_partial_mesh(engine, edge_ids: set, rel: str | None, t: int) -> list:
    """Delete the materialised operators whose tree holds ``rel`` or a removed edge
    (with their parents: their trees hold it too), then, ``l_rem``, the joins left
    without parents (a level-0 operator stays: it regrows when data arrive)."""
    def holds(op) -> bool:
        while op is not None:
            if op.node[0] == rel or (op.label is not None and op.label[0] in edge_ids):
                return True
            op = op.left
        return False

    gone = [op for op in engine._mat.values() if holds(op)]
    dead = set(gone)
    # l_rem: a join that had parents (TreeGen made every expansion leading to a CN)
    # and lost them all leads to no CN any more; its left child may follow
    l_rem = [op.left for op in gone if op.left is not None and op.left not in dead]
    while l_rem:
        k = l_rem.pop()
        if k in dead or not k.parents:
            continue
        k.parents = [p for p in k.parents if p not in dead] or ()
        if not k.parents and not k.cn and k.left is not None:
            dead.add(k)
            gone.append(k)
            l_rem.append(k.left)
    ended = [engine._result(op, c) for op in gone if op.cn for c in op.out if c[0] > t]
    for op in gone:
        del engine._mat[op.key]
        table = engine._roots if op.left is None else engine._by_right
        table[op.node].remove(op)
        op.out, op.idx = (), None
    for table in (engine._roots, engine._by_right):
        for n in [n for n, ops in table.items() if not ops]:
            del table[n]
    if rel is not None:
        drop_relation(engine, rel)
    return ended
