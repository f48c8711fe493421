"""Schema changes that migrate the operator mesh (paper Section 4.4).

A new relation or edge grows ``M_new`` on top of ``M_old``: every operator of
``M_old`` stays with its output buffer (its intermediate results), and only
the operators of trees that hold a new node or a new label are added.  A
removal deletes the operators of the removed sources or edge and their
parents, recursively up the mesh, then the ``l_rem`` pass deletes the
operators left without parents (``_migration_prune``).  Nothing is replayed
through the mesh.

- Node ids: CNGen (``streamspec.engines.kws.cngen.Cluster``) runs over an
  expanded schema ``(nodes, nid, adjacency, root bit)`` kept by the engine:
  old nodes keep their nid and the nodes of a new relation get larger ones
  (the paper's rule), so a tree of old nodes and labels has the same
  representation in ``M_new`` as in ``M_old`` and its operator is found
  again.  A removed node keeps its slot, with no adjacency.
- Only the new part is generated: from the cluster roots, CNGen's search
  goes on only while a new element can still enter the tree (a node of the
  rightmost path close enough to an endpoint of a new edge, in the relation
  graph, for the nodes left under ``t_max``), or once one has.
- Feeding, so that no result of old tuples with the new edge is lost: a new
  join's buffer is computed once from its left child's buffer and its right
  source (children first), exactly what it would hold had it existed
  before; its new composites are the change's new results.  Under
  demand-driven execution (FM) a new join starts asleep and the new CN
  joins with right input wake their chains (Section 4.1's Pstart).
- Partial mesh (PM): ``streamspec.engines.kws.partial_migration``.
- Why the tree of old nodes keeps its representation when a relation is
  added: CNGen only compares nids (root order, canonical child order), and
  the old nodes keep their order.  A mesh built from scratch for the new
  schema (``expanded_nodes`` order) has the same CNs, shaped differently
  where a new node takes part (``tests/kws/test_migration.py``).

What the engine runs for an addition is ``_migration_grow.start``: the same search
compiled (``_cngen_kernels.cngen_search``, restricted), at the change only for the new CNs
whose every node holds tuples, the others at the first tuple of one of their nodes
(``PendingGrowth``); new CN joins with an empty node are kept as rows of
``cn_joins.CnJoinRows`` until its first tuple (``DEFER_NEW_CN_JOINS``: False searches and
makes everything at the change), the others made operators and fed at once.  ``grow_full_mesh``
below is the same search in Python over ``cngen.Cluster``, every new CN join an
operator: the statement of what an addition adds, checked equal to the compiled one
(``tests/kws/test_migration_rows.py``).

Cost: an addition costs about what building the operators of its CNs over nodes holding
tuples costs (CNGen over the trees that can take the new element, one operator per new join
that is not a row, one probe of each new join that runs); each later first tuple of a node
pays for the CNs it is the first to hold; nothing is proportional to the window.  A removal
(``_migration_prune.cut``) costs about one step per start operator (the joins on the removed
edge, the operators of the removed relation's nodes) and per buffer it empties; the deletion
of the operators above them waits (``PendingPrune``): each node's tables are cleaned at its
next tuple, the deletion runs in slices at the tuples after the change, and what is left of
it before the next schema change (``DEFER_PRUNE``: False does it all in the change, about
one step per operator deleted).
"""
from __future__ import annotations

from collections import deque

from streamspec.engines.kws._migration_grow import start
from streamspec.engines.kws._migration_prune import cut
from streamspec.engines.kws.cn_joins import FAR, by_nid, extend_entries
from streamspec.engines.kws.cngen import Cluster, collector_off
from streamspec.engines.kws.operators import Op, join_condition
from streamspec.spec.kws import AddEdge, AddRelation, RemoveEdge, RemoveRelation

# the new CN joins whose right node holds no tuple stay rows until its first tuple
# (``_migration_grow``); False makes every one an operator inside the change (the
# benchmark's variant without the deferral)
DEFER_NEW_CN_JOINS = True
# a removal leaves its deletion to ``_migration_prune.PendingPrune`` (False: all of it inside
# the change, the benchmark's variant without the deferral)
DEFER_PRUNE = True


# -- the expanded schema, nid-stable ------------------------------------------------------
def _entries(nid_m, kbits_m, label, node_m, t_max):
    """An adjacency entry as ``cngen.expanded_schema`` makes it."""
    return (nid_m, kbits_m, (label, (nid_m, ())),
            tuple((node_m[0], kbits_m, v, label) for v in range(max(t_max - 1, 0))))


def add_relation(xs, rel: str, m: int):
    """``xs`` with the ``2^m`` nodes of a new relation (no edges yet), nids after all others."""
    nodes, nid, adjacency, rbit = xs
    fresh = sorted(((rel, k) for k in range(1 << m)), key=lambda n: (-bin(n[1]).count("1"), n[1]))
    nid = dict(nid)
    base = len(adjacency)
    for i, n in enumerate(fresh):
        nid[n] = base + i
    return tuple(nodes) + tuple(fresh), nid, tuple(adjacency) + tuple([] for _ in fresh), rbit


def add_edge(xs, edge, m: int, t_max: int):
    """``xs`` with the labels of a new join edge (both orientations of a self join)."""
    nodes, nid, adjacency, rbit = xs
    old = adjacency
    adjacency = list(adjacency)
    touched = set()
    for parent_rel, child_rel, plays_left in ((edge.left, edge.right, True), (edge.right, edge.left, False)):
        label = (edge.id, plays_left)
        # one entry per child node, the same (immutable) tuple in every parent's list
        entries = [_entries(nid[(child_rel, k2)], k2, label, (child_rel, k2), t_max) for k2 in range(1 << m)]
        for k in range(1 << m):
            p = nid[(parent_rel, k)]
            if p not in touched:
                adjacency[p] = list(adjacency[p])
                touched.add(p)
            adjacency[p].extend(entries)
    for p in touched:   # the compiled search's arrays of the list, from the old list's
        extend_entries(old[p], adjacency[p])
    return nodes, nid, tuple(adjacency), rbit


def remove(xs, edge_ids: set, rel: str | None, ends: set):
    """``xs`` without the labels of ``edge_ids`` (between the relations ``ends``) and, if
    ``rel``, without its nodes."""
    nodes, nid, adjacency, rbit = xs
    dead = {nid[n] for n in nodes if n[0] == rel}
    # an entry of a removed edge, or of a node of ``rel`` (on a removed edge too), is in the
    # lists of its endpoints' nodes only: the other lists stay the same objects, and keep the
    # compiled search's arrays of them (``cn_joins._entry_arrays``)
    adj = tuple([] if i in dead else
                [a for a in lst if a[2][0][0] not in edge_ids and a[0] not in dead] if n is not None and n[0] in ends else lst
                for i, (n, lst) in enumerate(zip(by_nid(xs), adjacency)))
    return tuple(n for n in nodes if n[0] != rel), nid, adj, rbit


def distances(schema, targets: set) -> dict:
    """Hops from every relation to the nearest of ``targets`` in the relation graph."""
    near = {r.name: [] for r in schema.relations}
    for e in schema.edges:
        near[e.left].append(e.right)
        near[e.right].append(e.left)
    dist = {r: 0 for r in targets if r in near}
    queue = deque(dist)
    while queue:
        r = queue.popleft()
        for s in near[r]:
            if s not in dist:
                dist[s] = dist[r] + 1
                queue.append(s)
    return dist


def can_take(state, dist: dict, t_max: int) -> bool:
    """Whether a new element can still enter a tree grown from ``state``: CNGen adds
    nodes only on the rightmost path, and reaching an endpoint of a new edge from
    a path node costs one node per hop, plus one for the new node itself."""
    tree, path = state[0], state[3]
    room = t_max - len(tree)
    return any(dist.get(tree[v][0], FAR) + 1 <= room for v in path)


# -- growing the mesh ------------------------------------------------------------------
def grow_full_mesh(engine, xs, old_adjacency, new_labels: set, new_nodes: set, dist: dict) -> list:
    """Add to the full mesh the operators of every tree with a new element (and
    the old trees below them that had no operator yet); the new operators,
    children before parents.

    A tree without a new element is expanded twice, over the new entries only
    (every expansion is new) and over the old ones (only to grow trees that
    can still take a new element; their CNs exist already), so no old CN is
    generated again; the last level has no growth, only the first pass."""
    nodes, nid, adjacency, rbit = xs
    old_adjacency = tuple(old_adjacency) + tuple([] for _ in range(len(adjacency) - len(old_adjacency)))
    delta = tuple(lst[len(old_adjacency[i]):] if i < len(old_adjacency) else lst
                  for i, lst in enumerate(adjacency))
    m, t_max = len(engine.keywords), engine.params.t_max
    full = (1 << m) - 1
    running = not engine.demand_driven
    conds = engine._conds
    created: list = []
    lookup: dict = {}    # id(op) -> {(node, parent_pos, label): non-CN parent}

    def cond(label):
        c = conds.get(label)
        if c is None:
            c = conds[label] = join_condition(engine.schema, label)
        return c

    def existing(prev, e):
        if prev is None:
            return next(iter(engine._roots.get((e[0], e[1]), ())), None)
        table = lookup.get(id(prev))
        if table is None:
            table = lookup[id(prev)] = {(q.node, q.parent_pos, q.label): q for q in prev.parents if not q.cn}
        return table.get(((e[0], e[1]), e[2], e[3]))

    def materialise(rec) -> Op:
        chain = []
        while rec is not None and rec[0] is None:
            chain.append(rec)
            rec = rec[1]
        prev = rec[0] if rec is not None else None
        for r in reversed(chain):
            e = r[2]
            op = None if r[4] else existing(prev, e)
            if op is None:
                if prev is None:
                    op = Op(0, (e[0], e[1]), -1, None, None, running)
                else:
                    op = Op(r[3], (e[0], e[1]), e[2], e[3], prev, running, cond(e[3]))
                    prev.add_parent(op)
                created.append(op)
            r[0] = prev = op
        return prev

    def is_new(e) -> bool:
        return e[3] in new_labels or (e[0], e[1]) in new_nodes

    with collector_off():
        for root in nodes:
            if not root[1] & rbit:
                continue
            fresh = root in new_nodes
            cluster = Cluster(root, nid, adjacency, m, t_max, rbit)
            first = cluster.first()
            new_only = Cluster(root, nid, delta, m, t_max, rbit)
            old_only = Cluster(root, nid, old_adjacency, m, t_max, rbit)
            if root[1] == full:  # the one-node CN
                if fresh:
                    created.append(Op(0, root, -1, None, None, running, cn=True))
                continue
            if not fresh and not can_take(first, dist, t_max):
                continue
            queue = deque([(first, [None, None, first[0][0], 0, fresh])])
            while queue:
                state, rec = queue.popleft()
                found: list = []
                grown: list = []
                if rec[4]:
                    cluster.expand(state, found, grown, leaves=True)
                else:
                    new_only.expand(state, found, grown, leaves=True)
                    if len(state[0]) + 1 < t_max:
                        old_only.expand(state, [], grown, leaves=True)
                if found:
                    prev = rec[0] or materialise(rec)
                    pos = rec[3] + 1
                    new = [Op(pos, (e[0], e[1]), e[2], e[3], prev, running, cond(e[3]), True) for e in found]
                    created.extend(new)
                    if prev.parents:
                        prev.parents.extend(new)
                    else:
                        prev.parents = new
                for g in grown:
                    e = g[0][-1]
                    flag = rec[4] or is_new(e)
                    if flag or can_take(g, dist, t_max):
                        queue.append((g, [None, rec, e, rec[3] + 1, flag]))
    return created


def changed_schema(engine, event):
    """(new xs, new labels, new nodes, dist) of an addition, or None for a removal;
    ``engine.schema`` is already the new schema."""
    m, t_max = len(engine.keywords), engine.params.t_max
    if isinstance(event, AddRelation):
        name = event.relation.name
        xs = add_relation(engine._xs, name, m)
        return xs, set(), {(name, k) for k in range(1 << m)}, {}
    if isinstance(event, AddEdge):
        e = event.edge
        return (add_edge(engine._xs, e, m, t_max), {(e.id, True), (e.id, False)}, set(),
                distances(engine.schema, {e.left, e.right}))
    return None


def removed(engine, event) -> tuple[set, str | None, set]:
    """(edge ids, relation, the relations at the ends of those edges) a removal takes out
    of the mesh."""
    old = engine._xs_schema
    if isinstance(event, RemoveRelation):
        edge_ids, rel = {e.id for e in old.edges if event.name in (e.left, e.right)}, event.name
    else:
        assert isinstance(event, RemoveEdge)
        edge_ids, rel = {event.edge_id}, None
    return edge_ids, rel, {x for e in old.edges if e.id in edge_ids for x in (e.left, e.right)}


# -- the full mesh: registering, feeding, pruning -------------------------------------
def migrate_full_mesh(engine, event, t: int):
    """Section 4.4 on the full mesh; (ended, appeared) at ``t``."""
    engine._advance(t)
    if engine._pending is not None:   # the last change's deferred part, over its schema
        engine._pending.complete(engine)
    change = changed_schema(engine, event)
    if change is None:
        edge_ids, rel, ends = removed(engine, event)
        ended = cut(engine, edge_ids, rel, ends, t, DEFER_PRUNE)
        engine._xs = remove(engine._xs, edge_ids, rel, ends)
        engine._xs_schema = engine.schema
        return ended, ()
    xs, new_labels, new_nodes, dist = change
    appeared = start(engine, xs, new_labels, new_nodes, dist, t, DEFER_NEW_CN_JOINS)
    engine._xs, engine._xs_schema = xs, engine.schema
    return (), appeared
