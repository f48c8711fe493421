"""A new edge or relation grows the full mesh from the compiled search (paper Section 4.4).

``grow_and_feed`` is ``migration.grow_full_mesh`` followed by ``migration._feed`` (the plain
version, kept as the statement of what a migration adds), with the search compiled and the
new CN joins held as rows the way the build holds them (``cn_joins``):

- the search is CNGen restricted to the trees that hold a new element or can still take one
  (``cn_joins.compiled_search``, ``_cngen_kernels.cngen_search``), over integer arrays;
- a tree that some new CN grows from (or from a tree grown from it) needs its join operator:
  the one the mesh has (``M_old``'s for a tree of old elements, below its parent tree's
  operator, by node, position joined and label; or one an earlier search of the same
  addition made), else a new ``Op``;
- a new CN join whose right node holds no tuple is a row of ``CnJoinRows``: it would be
  asleep with an empty buffer (``demand_driven=False``: running over an empty source, also
  empty), and it becomes an operator in that state when its right node's first tuple
  arrives, as the build's rows do;
- a new CN join whose right node holds tuples but whose left chain has a node without any
  is a waiting row (``engine._waiting``, keyed by that node): its left buffer holds no live
  composite, so it would run (Pstart) with nothing to join.  At that node's first tuple the
  engine makes it an operator and wakes it if its right node holds tuples, waking the chain
  below (``MeshEngine._route``), the state it would have reached running since the change;
- the other new CN joins are made operators at once and fed like every new join: they are
  what runs and what finds the change's own results;
- feeding (``_feed``): a new cluster root holds its source's alive tuples; under
  demand-driven execution the new CN joins with right input wake (their left chains first,
  each filled from its left child's buffer and its right source); otherwise every new join
  is filled so, children first.  Nothing is replayed.

What an addition searches (``start``): only the new CNs whose every node holds tuples (the
search forbids the other nodes).  No other new CN can join anything before one of its empty
nodes gets a tuple, so those wait as a ``PendingGrowth``.  Each is searched at the first
tuple of the first of its empty nodes (before the tuple is processed, the node counted as
holding tuples), or all together before the next schema change, or when every operator or
the mesh's size is asked for.  The searches together find exactly the new CNs
(``tests/kws/test_migration_rows.py`` checks this against a mesh built for the new schema
and against an engine that makes everything at the change).  On the paper's workload at
|K| = 4, the central edge searches 1,452 of its 102,350 new CN joins at the change (5-6 ms
against 50 ms); the rest are 51 ms if searched at once, spread over the first tuples of up to
164 nodes (``bench/results/kws/schema_change.csv``, rows labelled ``run4``).

``defer=False`` searches and makes everything in the call, every new CN join an operator
(the variant the benchmark reports beside the deferred one, ``bench/kws/schema_change.py``).
"""
from __future__ import annotations

import numpy as np

from streamspec.engines.kws.cn_joins import FAR, CnJoinRows, by_nid, compiled_search
from streamspec.engines.kws.operators import INF, Op, cn_join_ops, join_condition


def start(engine, xs, new_labels: set, new_nodes: set, dist: dict, t: int, defer: bool = True) -> list:
    """An addition to ``engine``'s full mesh (``engine.schema`` is the new schema); the results
    it starts.  With ``defer``, only the new CNs whose every node holds tuples now are searched
    and made; the others wait in ``engine._pending`` (``PendingGrowth``)."""
    conds = engine._conds
    for label in new_labels:   # an edge id can come back with other attributes
        conds[label] = join_condition(engine.schema, label)
    for n in new_nodes:
        engine._sources[n] = {}
    if not defer:
        return grow_and_feed(engine, xs, new_labels, new_nodes, dist, t, False)
    nodes = by_nid(xs)
    empty = [n is None or not engine._sources.get(n) for n in nodes]
    appeared = grow_and_feed(engine, xs, new_labels, new_nodes, dist, t, forbidden=np.array(empty, np.bool_))
    waiting = {n for n, e in zip(nodes, empty) if e and n is not None}
    if waiting:
        engine._pending = PendingGrowth(xs, engine.schema, new_labels, new_nodes, dist, waiting)
    return appeared


class PendingGrowth:
    """The new CNs of an addition that hold a node which had no tuple at the change: none of
    them can join anything before that node's first tuple, so each is searched for at the
    first tuple of the first of its nodes to get one (``discover``; the search requires that
    node and forbids the nodes discovered before it, so every CN is found once), or all
    together before the next schema change or when every operator is asked for
    (``complete``).  What they make is what the change would have made: rows for the CN
    joins with an empty node, operators for the rest, awake as Pstart leaves them."""

    def __init__(self, xs, schema, new_labels, new_nodes, dist, empty: set):
        self.xs, self.schema, self.new_labels, self.new_nodes, self.dist = xs, schema, new_labels, new_nodes, dist
        self.nodes = empty     # nodes without tuples at the change, not discovered yet
        self.done: set = set()

    def _search(self, engine, required: set, arriving) -> list:
        from streamspec.engines.kws.migration import distances
        nodes = by_nid(self.xs)
        hops = distances(self.schema, {n[0] for n in required})
        need = np.array([max(hops.get(n[0], FAR), 1) if n is not None else FAR for n in nodes], np.int64)
        return grow_and_feed(engine, self.xs, self.new_labels, self.new_nodes, self.dist, engine.now,
                             forbidden=np.array([n in self.done for n in nodes], np.bool_),
                             required=np.array([n in required for n in nodes], np.bool_),
                             req_need=need, arriving=arriving)

    def arrive(self, engine, node) -> None:
        """A tuple of ``node`` is arriving (``MeshEngine._route``, before it is processed)."""
        if node in self.nodes:
            self.discover(engine, node)

    def discover(self, engine, node) -> None:
        """``node``'s first tuple is arriving: the search of the new CNs it is the first of
        their nodes to hold."""
        self.nodes.discard(node)
        if not self.nodes:
            engine._pending = None
        engine._arriving = node
        try:
            self._search(engine, {node}, node)
        finally:
            engine._arriving = None
        self.done.add(node)

    def complete(self, engine) -> None:
        engine._pending = None
        if self.nodes:
            self._search(engine, self.nodes, None)


def grow_and_feed(engine, xs, new_labels: set, new_nodes: set, dist: dict, t: int,
                  defer: bool = True, forbidden=None, required=None, req_need=None, arriving=None) -> list:
    """Grow ``engine``'s full mesh for the expanded schema ``xs`` by the new CNs the search
    finds (``forbidden``, ``required``: ``cn_joins.compiled_search``) and feed the new
    operators; the results that start (``arriving``: a node whose first tuple is arriving,
    counted as holding tuples)."""
    from streamspec.engines.kws import _cn_join_kernels as _layout
    nodes = by_nid(xs)
    m, t_max = len(engine.keywords), engine.params.t_max
    conds = engine._conds
    a, _ = compiled_search(xs, m, t_max, new_labels, new_nodes, dist, forbidden, required, req_need)
    created, op_of = _tree_operators(engine, a, nodes, conds,
                                     _layout.trees_with_operators(a.tparent, a.cn_tree, a.cn_node))
    # the one-node CNs of new nodes holding every keyword
    for q in a.cn_tree[a.cn_node < 0].tolist():
        created.append(Op(0, nodes[a.tnode[q, 0]], -1, None, None, not engine.demand_driven, cn=True))
    for op in created:
        if op.left is None:
            engine._roots.setdefault(op.node, []).append(op)
        else:
            engine._by_right.setdefault(op.node, []).append(op)
    # the CN joins: operators now where the right node and every node of the left chain
    # hold tuples; rows keyed by the right node where it holds none; else waiting rows
    # keyed by an empty node of the left chain
    live = np.array([n is not None and (n == arriving or bool(engine._sources.get(n))) for n in nodes]
                    or [False], np.bool_)
    joins = a.cn_node >= 0
    now = joins & live[np.where(joins, a.cn_node, 0)] if defer else joins
    later = joins & ~now
    if defer:
        live_right = np.flatnonzero(now)
        blocker = _empty_left_node(a, live_right, live)
        waiting = live_right[blocker >= 0]
        now[waiting] = False
    runs = _cn_joins(engine, a, np.flatnonzero(now), op_of, nodes, live, conds)
    if later.any():
        held = np.flatnonzero(later)
        _hold(engine, "_cn_rows", a, held, a.cn_node[held], op_of, nodes)
    if defer and len(waiting):
        _hold(engine, "_waiting", a, waiting, blocker[blocker >= 0], op_of, nodes)
    _index_right_inputs(engine, a, joins, created, nodes, conds)
    engine._ops.extend(created)
    for _, ops in runs:
        engine._ops.extend(ops)
    return _feed(engine, created, runs, t)


def _tree_operators(engine, a, nodes, conds, need) -> tuple[list, dict]:
    """The join operator of every tree in ``need`` (parents first): ``(the new operators,
    tree -> operator)``."""
    created: list = []
    op_of: dict = {}
    tables: dict = {}   # id(op) -> {(node, parent_pos, label): its non-CN parent}
    labels, roots, running = a.labels, engine._roots, not engine.demand_driven
    trees = np.flatnonzero(need)
    last = a.tsize[trees].astype(np.int64) - 1
    for q, pos, n, pp, lab, parent in zip(
            trees.tolist(), last.tolist(), a.tnode[trees, last].tolist(), a.tpar[trees, last].tolist(),
            a.tlab[trees, last].tolist(), a.tparent[trees].tolist()):
        node = nodes[n]
        if parent < 0:
            op = next((r for r in roots.get(node, ()) if not r.cn), None)
            if op is None:
                op = Op(0, node, -1, None, None, running)
                created.append(op)
        else:
            prev = op_of[parent]
            label = labels[lab]
            # its operator if the mesh has one: M_old's for a tree of old elements, or one a
            # search made before (a pending growth's trees are found again)
            table = tables.get(id(prev))
            if table is None:
                table = tables[id(prev)] = {(j.node, j.parent_pos, j.label): j
                                            for j in prev.parents if not j.cn}
            op = table.get((node, pp, label))
            if op is None:
                op = Op(pos, node, pp, label, prev, running, conds[label])
                prev.add_parent(op)
                created.append(op)
        op_of[q] = op
    return created, op_of


def _cn_joins(engine, a, which, op_of, nodes, live, conds) -> list:
    """The CN joins of rows ``which`` of ``a`` as operators (as ``CnJoinRows.materialise``
    makes them: running if their right node holds tuples or nothing runs on demand), each
    appended to its left operator's parents and registered by right node; ``[(left
    operator, its new CN joins)]`` (CNGen finds the CNs of one tree together)."""
    runs: list = []
    if not len(which):
        return runs
    labels, always = a.labels, not engine.demand_driven
    tree = a.cn_tree[which]
    cut = np.flatnonzero(tree[1:] != tree[:-1]) + 1
    starts, ends = np.concatenate(([0], cut)).tolist(), np.concatenate((cut, [len(tree)])).tolist()
    nm = a.cn_node[which].tolist()
    label = [labels[lb] for lb in a.cn_lab[which].tolist()]
    running_at = [always or bool(x) for x in live.tolist()]
    made = cn_join_ops(zip([op_of[q] for q in tree.tolist()], [nodes[n] for n in nm], a.cn_ppos[which].tolist(),
                           label, [running_at[n] for n in nm], [conds[lab] for lab in label]))
    for lo, hi in zip(starts, ends):
        new = made[lo:hi]
        left = new[0].left
        if left.parents:
            left.parents.extend(new)
        else:
            left.parents = new
        runs.append((left, new))
    # registered by right node (grouped once, not per operator)
    right = a.cn_node[which]
    order = np.argsort(right, kind="stable")
    cut = (np.flatnonzero(np.diff(right[order])) + 1).tolist()
    by_right, running = engine._by_right, engine._running
    order = order.tolist()
    for lo, hi in zip([0] + cut, cut + [len(order)]):
        ops = [made[i] for i in order[lo:hi]]
        node = ops[0].node
        by_right.setdefault(node, []).extend(ops)
        if engine.demand_driven and ops[0].running:   # Pstart: they run from now on
            running.setdefault(node, {}).update(dict.fromkeys(ops))
    return runs


def _hold(engine, store: str, a, which, key, op_of, nodes) -> None:
    """The CN joins of rows ``which`` of ``a`` join the engine's rows ``store``, grouped by
    ``key`` (per row, a node without tuples): ``_cn_rows``, keyed by their right node, as
    the build holds them; or ``_waiting`` (right node live, ``key`` an empty node of the
    left chain), their right nodes kept.  The engine makes them operators at the key node's
    first tuple (``MeshEngine._route``) and wakes those whose right node then holds tuples,
    the state they would have reached since the change (their buffer is empty until then:
    ``_empty_left_node``)."""
    rows = getattr(engine, store)
    if rows is None:
        rows = CnJoinRows.empty(nodes, keyed_by_right=store == "_cn_rows")
        setattr(engine, store, rows)
    # grouped by key node, CNGen's order within a node (a stable sort; int16 sorts by radix)
    order = np.argsort(key.astype(np.int16 if len(nodes) < 1 << 15 else np.int32), kind="stable")
    which, key = which[order], key[order]
    ptr = np.zeros(len(nodes) + 1, np.int64)
    ptr[1:] = np.cumsum(np.bincount(key, minlength=len(nodes)))
    has = np.zeros(len(a.tsize), np.bool_)   # the trees they grow from (np.unique sorts)
    has[a.cn_tree[which]] = True
    trees = np.flatnonzero(has)
    tree_left = np.full(len(a.tsize), -1, np.int32)
    tree_left[trees] = np.arange(len(rows.lefts), len(rows.lefts) + len(trees), dtype=np.int32)
    rows.lefts.extend([op_of[q] for q in trees.tolist()])
    label = rows.label_index(a.labels)[a.cn_lab[which]]
    rows.add(nodes, ptr, tree_left[a.cn_tree[which]], a.cn_ppos[which].astype(np.int8), label,
             None if rows.right is None else a.cn_node[which].astype(np.int32))


def _empty_left_node(a, which, live) -> np.ndarray:
    """Per CN row ``which`` of ``a``: the node (nid) of the first position of the tree it
    grows from whose source holds no tuple, or -1.  Such a tree's buffer holds no live
    composite (every composite has a tuple of each position), so its CN join has nothing to
    join until that node's first tuple."""
    tree = a.cn_tree[which]
    valid = np.arange(a.tnode.shape[1]) < a.tsize[tree][:, None]
    tnode = np.where(valid, a.tnode[tree], 0)   # past a tree's size the rows are unset
    empty = ~live[tnode] & valid
    first = empty.argmax(axis=1)
    return np.where(empty.any(axis=1), tnode[np.arange(len(first)), first], -1)


def _index_right_inputs(engine, a, joins, created, nodes, conds) -> None:
    """A hash index of a right source on every join attribute a new join (operator or
    row) probes it on, filled from the source."""
    labels = a.labels
    seen = np.zeros(len(nodes) * len(labels), np.bool_)
    seen[a.cn_node[joins].astype(np.int64) * len(labels) + a.cn_lab[joins]] = True
    keys = np.flatnonzero(seen).tolist()
    wanted = {(nodes[k // len(labels)], conds[labels[k % len(labels)]][1]) for k in keys}
    wanted |= {(op.node, op.cond[1]) for op in created if op.left is not None}
    for node, attr in wanted:
        engine._index_source(node, attr)


def _feed(engine, created: list, runs: list, t: int) -> list:
    """Fill the new operators' buffers once from their inputs; the new CN composites
    are the results the change starts."""
    for op in created:
        if op.left is None:  # a new cluster root: the alive tuples of its source
            op.out = [(INF if r.t_end is None else r.t_end, (r,)) for r in engine._sources[op.node].values()]
            op.idx = None
    probe, live = engine._probe_right, engine._live
    if engine.demand_driven:
        # Pstart from the new CN joins with right input (running already): the left
        # chain first, each join filled from its left child's buffer and its source
        nonempty, wake = engine._nonempty, engine._wake
        for k, joins in runs:
            if k.left is not None and not k.running and nonempty(k.right) and any(j.running for j in joins):
                wake(k)
    else:
        for op in created:
            if op.left is not None:
                op.out, op.idx = probe(op, live(op.left)), None
    appeared = []
    eager = engine._eager
    for k, joins in runs:
        if k.out:
            for j in joins:
                if j.running:
                    j.out, j.idx = probe(j, live(k)), None
                    if j.out:
                        if eager:
                            j.end = min(c[0] for c in j.out)
                        appeared.extend(engine._result(j, c) for c in j.out if c[0] > t)
    if eager:
        for op in created:
            if op.out:
                op.end = min(c[0] for c in op.out)
    for op in created:
        if op.cn and op.out:   # a one-node CN of a new node (its source is empty: no results)
            appeared.extend(engine._result(op, c) for c in op.out if c[0] > t)
    return appeared
