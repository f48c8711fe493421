"""A removed edge or relation prunes the full mesh, the deletion itself deferred (paper
Section 4.4: "the operators ... are deleted recursively", then ``l_rem``).

What is deleted: the *start operators* (the joins on a removed edge; for a removed relation
the leaves of its nodes and the joins whose right node is one of them), every operator
above one of them (its left chain holds one: its tree holds the removed element), then,
``l_rem``, every operator left with no parent that is not a CN (nor the left operator of a
CN join still held as a row).  Deleting them one by one is about 1 us of interpreter work
each: a central edge at |K| = 4 deletes 17,559 operators, 0.4-0.5 of a warm mesh build.

What the change does (``cut``), about one step per start operator:

- the results that end: the composites alive at ``t`` of the deleted CN operators.  An
  operator holds a live composite only if its left operator's buffer holds its prefix:
  every composite is built from, or probed against, the left operator's buffer, and the
  prefix leaves that buffer only when it dies (and so does the composite), when one of its
  tuples is deleted (every composite holding it goes), or when the left operator sleeps,
  which it does only after its parents sleep, emptied, or when its right node runs dry (the
  prefix's newest tuple, and the composite with it, gone).  So the search climbs from the
  start operators only through buffers holding live composites, and empties those.
- the start operators stop (``running`` False; their buffers emptied).  From then on nothing
  feeds the deleted region: its operators are reached from the live mesh only through the
  start operators (an operator's parents are deleted only if they are start operators or
  above one), and a join that runs on arriving tuples probes its left operator's buffer,
  empty up the region.  Their left operators sleep if no running parent is left (Pstop,
  under demand-driven execution), as the deletion would have left them.
- the relation's tuples go, and the source indexes of its nodes.

The rest (``PendingPrune``): the deleted operators still sit in the engine's tables by
right node (``_by_right``, ``_running``), in ``_ops``, and the CN joins held as rows over
them or on the removed edge wait.  Two places would read them: the wake loop at a node's
first tuple (Pstart could wake a deleted CN operator, and the start operator below it)
and the rows keyed by a node, made operators at its first tuple.  So each node's tables
and rows are cleaned at its next tuple, before the tuple is processed (``arrive``, called
from ``MeshEngine._route``), and the whole deletion (the operator list, ``l_rem``, the rows
left) runs before the next schema change or when every operator or the mesh's size is
asked for (``complete``), where ``migration.DEFER_PRUNE = False`` runs it inside the change.
Between the two, a deleted operator is known by its left chain: a position on a removed
edge or of the removed relation (``_is_dead``; no schema change happens in between, so no
edge of the same id is back).  ``tests/kws/test_migration_prune.py`` checks the deferred
deletion against the one done in the change, step by step.
"""
from __future__ import annotations


def start_operators(engine, edge_ids: set, rel: str | None) -> list:
    """The operators a removal deletes first (the rest are above them, or ``l_rem``)."""
    m = len(engine.keywords)
    ends = {x for e in engine._xs_schema.edges if e.id in edge_ids for x in (e.left, e.right)}
    start = []
    for r in ends | ({rel} if rel else set()):
        for k in range(1 << m):
            n = (r, k)
            if r == rel:
                start += engine._roots.get(n, ())
                start += engine._by_right.get(n, ())
            else:
                start += [j for j in engine._by_right.get(n, ()) if j.label[0] in edge_ids]
    return start


def cut(engine, edge_ids: set, rel: str | None, t: int, defer: bool = True) -> list:
    """Section 4.4's removal on ``engine``'s full mesh, the deletion deferred (``defer``);
    the results that end at ``t``."""
    start = start_operators(engine, edge_ids, rel)
    ended = _end(engine, start, t)
    lefts = {s.left: None for s in start if s.running and s.left is not None}  # (by identity)
    for s in start:
        s.running = False
    if engine.demand_driven:   # Pstop: a join none of whose parents runs any more sleeps
        for k in lefts:
            if k.running and not k.cn and k.left is not None:
                for p in k.parents:
                    if p.running:
                        break
                else:
                    engine._sleep(k)
    if rel is not None:
        drop_relation(engine, rel)
        engine._index = {(n, a): ix for (n, a), ix in engine._index.items() if n[0] != rel}
        engine._group_indexes()
    pending = PendingPrune(edge_ids, rel, start, set(engine._sources))
    if defer:
        engine._pending = pending
    else:
        pending.complete(engine)
    return ended


def _end(engine, start: list, t: int) -> list:
    """The results of ``t`` held by CN operators at or above ``start``; their buffers emptied."""
    ended, stack = [], [op for op in start if op.out]
    while stack:
        op = stack.pop()
        out = op.out
        if not out:
            continue
        op.out, op.idx = (), None
        live = [c for c in out if c[0] > t]
        if live:
            if op.cn:
                ended += [engine._result(op, c) for c in live]
            stack.extend(op.parents)
    return ended


class PendingPrune:
    """A removal's deletion still to do (``cut``): the nodes whose tables are not cleaned
    yet (``nodes``, each cleaned at its next tuple by ``arrive``) and the deletion itself
    (``complete``)."""

    def __init__(self, edge_ids: set, rel: str | None, start: list, nodes: set):
        self.edge_ids, self.rel, self.start = edge_ids, rel, start
        self.nodes = nodes      # nodes whose tables may still hold deleted operators
        self.dropped: list = []  # left operators of rows dropped by ``arrive`` (for l_rem)

    def _is_dead(self, op) -> bool:
        """Whether ``op`` is deleted: a position of its tree is on a removed edge or of the
        removed relation."""
        ids, rel = self.edge_ids, self.rel
        while op is not None:
            if op.node[0] == rel or (op.label is not None and op.label[0] in ids):
                return True
            op = op.left
        return False

    def arrive(self, engine, node) -> None:
        """A tuple of ``node`` is arriving (``MeshEngine._route``, before it is processed):
        the deleted operators leave the node's tables, stopped and empty, and the rows keyed
        by the node over a deleted operator or on a removed edge go."""
        self.nodes.discard(node)
        ops = engine._by_right.get(node)
        if ops:
            dead = self._is_dead
            kept = [op for op in ops if not dead(op)]
            if len(kept) != len(ops):
                running = engine._running.get(node, {})
                for op in ops:
                    if dead(op):
                        op.out, op.idx, op.running = (), None, False
                        running.pop(op, None)
                if kept:
                    engine._by_right[node] = kept
                else:
                    del engine._by_right[node]
        for store in ("_cn_rows", "_waiting"):
            rows = getattr(engine, store)
            if rows is not None and node in rows.rows:
                self.dropped += rows.remove(self.edge_ids, self.rel, self._is_dead, (node,))
                if not rows.rows:
                    setattr(engine, store, None)

    def complete(self, engine) -> None:
        """The deletion: every operator at or above a start operator, then ``l_rem``."""
        engine._pending = None
        dead: set = set()   # operators hash by identity
        gone: list = []
        stack = list(self.start)
        while stack:
            op = stack.pop()
            if op not in dead:
                dead.add(op)
                gone.append(op)
                stack.extend(op.parents)
        l_rem = [op.left for op in gone if op.left is not None and op.left not in dead]
        l_rem += self.dropped
        # the CN joins still held as rows (``cn_joins``): those of the removed edges and
        # relation, and those above a deleted operator, go; their left operators are checked
        # by l_rem like those of deleted operators (a row counts as a parent)
        held: set = set()   # the left operators rows still hold
        for store in ("_cn_rows", "_waiting"):
            rows = getattr(engine, store)
            if rows is not None:
                l_rem += rows.remove(self.edge_ids, self.rel, dead.__contains__)
                held.update(rows.left_ops())
                if not rows.rows:
                    setattr(engine, store, None)
        lost = []
        while l_rem:
            k = l_rem.pop()
            if k in dead:
                continue
            k.parents = [p for p in k.parents if p not in dead] or ()
            if not k.parents and not k.cn and k not in held:
                dead.add(k)
                gone.append(k)
                if k.left is not None:
                    l_rem.append(k.left)
            else:
                lost.append(k)
        _unregister(engine, gone, dead)
        if engine.demand_driven:  # a join whose running parents are gone sleeps (Pstop)
            for k in lost:
                if k.left is not None and k.running and not k.cn and not any(p.running for p in k.parents):
                    engine._sleep(k)


def _unregister(engine, gone: list, dead: set) -> None:
    nodes = {op.node for op in gone}
    for n in nodes:
        for table in (engine._roots, engine._by_right):
            if n in table:
                kept = [op for op in table[n] if op not in dead]
                if kept:
                    table[n] = kept
                else:
                    del table[n]
        running = engine._running.get(n)
        if running:
            for op in [op for op in running if op in dead]:
                del running[op]
    for op in gone:
        op.out, op.idx, op.running = (), None, False
    engine._ops = [op for op in engine._ops if op not in dead]   # rows stay rows


def drop_relation(engine, rel: str) -> None:
    """The tuples of a removed relation are dead (spec: a re-added relation starts empty)."""
    for n in [n for n in engine._sources if n[0] == rel]:
        for tid in engine._sources.pop(n):
            del engine._rows[tid]
