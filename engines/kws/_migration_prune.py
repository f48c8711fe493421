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
and rows are cleaned at its next tuple, before the tuple is processed (``clean``, from
``MeshEngine._route``), a deleted operator known by its left chain: a position on a
removed edge or of the removed relation (``_is_dead``; no schema change happens before the
deletion ends, so no edge of the same id is back).  The deletion itself (the operators
above, ``l_rem``, the rows, the tables and the operator list) runs in slices, one at each
arriving tuple (``step``: at most a few milliseconds each), and what is left of it before the next
schema change or when every operator or the mesh's size is asked for (``complete``);
``migration.DEFER_PRUNE = False`` runs it all inside the change.
``tests/kws/test_migration_prune.py`` checks the deferred deletion against the one done in
the change, step by step, with slices of every size down to one unit.
"""
from __future__ import annotations

import numpy as np


def start_operators(engine, edge_ids: set, rel: str | None, ends: set) -> list:
    """The operators a removal deletes first (the rest are above them, or ``l_rem``);
    ``ends``: the relations at the ends of the removed edges."""
    m = len(engine.keywords)
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


def cut(engine, edge_ids: set, rel: str | None, ends: set, t: int, defer: bool = True) -> list:
    """Section 4.4's removal on ``engine``'s full mesh (``migration.removed``), the deletion
    deferred (``defer``); the results that end at ``t``."""
    start = start_operators(engine, edge_ids, rel, ends)
    ended = _end(engine, start, t)
    lefts = {s.left: None for s in start if s.running and s.left is not None}  # (by identity)
    for s in start:
        s.running = False
    if engine.demand_driven:   # Pstop: a join none of whose parents runs any more sleeps
        for k in lefts:
            engine._pstop(k)
    if rel is not None:
        drop_relation(engine, rel)
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
    yet (``nodes``, each cleaned at its next tuple: ``clean``) and the deletion itself, in
    slices at every arriving tuple (``step``) or all that is left at once (``complete``).

    The deletion's phases, each sliced so that no tuple pays much (``SLICE``):

    1. ``climb``: every operator at or above a start operator is deleted (stopped, emptied);
    2. ``rows``: the CN joins held as rows on a removed edge or relation, or over a deleted
       operator, go, node by node;
    3. ``l_rem``: an operator left with no parent, no row and no CN is deleted, and its left
       operator checked in turn;
    4. ``tables``: the deleted operators leave the tables by node;
    5. ``ops``: and the operator list (the operators made since stay, after the kept ones).

    Between slices the engine runs as usual: nothing it does adds a parent or a row to a
    deleted operator (rows are made operators at their node's first tuple, after ``clean``),
    so each phase's result stays true.  State is plain data: a pending engine pickles."""

    SLICE = {"climb": 2000, "rows": 6, "l_rem": 1500, "tables": 12, "ops": 20000}

    def __init__(self, edge_ids: set, rel: str | None, start: list, nodes: set):
        self.edge_ids, self.rel = edge_ids, rel
        self.nodes = nodes      # nodes whose tables may still hold deleted operators
        self.phase = "climb"
        self.todo: list = list(start)   # the current phase's work list
        self.dead: set = set()          # the operators deleted (they hash by identity)
        self.gone: list = []
        self.l_rem: list = []           # left operators to check (l_rem)
        self.held: set = set()          # left operators of rows kept
        self.masks: dict = {}           # store -> its left operators deleted (bool array)
        self.kept: list = []            # the operator list, filtered so far
        self.made = 0                   # its length when the ``ops`` phase began

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
        the node's tables are cleaned if they are not yet, and a slice of the deletion runs."""
        if node in self.nodes:
            self.clean(engine, node)
        self.step(engine)

    def clean(self, engine, node) -> None:
        """The deleted operators leave ``node``'s tables, stopped and empty, and the rows keyed
        by the node over a deleted operator or on a removed edge go."""
        self.nodes.discard(node)
        _leave_tables(engine, node, self._is_dead)
        for store in ("_cn_rows", "_waiting"):
            rows = getattr(engine, store)
            if rows is not None and node in rows.rows:
                self.l_rem += rows.remove(self.edge_ids, self.rel, self._is_dead, (node,))
                if not rows.rows:
                    setattr(engine, store, None)

    def complete(self, engine) -> None:
        """The rest of the deletion, at once."""
        while self.phase is not None:
            self.step(engine, None)

    def step(self, engine, size: int | None = -1) -> None:
        """One slice of the current phase (``size`` units, -1: ``SLICE``'s, None: the whole
        phase, the work it finds included), then on to the next phase if this one is done."""
        n = self.SLICE[self.phase] if size == -1 else size
        todo, run = self.todo, getattr(self, "_" + self.phase)
        while True:
            k = len(todo) if n is None else min(n, len(todo))
            part = todo[len(todo) - k:]   # from the end: the climb and l_rem push there
            del todo[len(todo) - k:]
            run(engine, part)
            if n is not None or not todo:
                break
        if not todo:
            self._next(engine)

    def _next(self, engine) -> None:
        if self.phase == "climb":
            self.l_rem += [op.left for op in self.gone if op.left is not None and op.left not in self.dead]
            stores = [(store, getattr(engine, store)) for store in ("_cn_rows", "_waiting")]
            self.phase, self.todo = "rows", [(store, node) for store, rows in stores if rows is not None
                                             for node in rows.rows]
        elif self.phase == "rows":
            for store in ("_cn_rows", "_waiting"):
                rows = getattr(engine, store)
                if rows is not None:
                    self.held.update(rows.left_ops())
            self.phase, self.todo = "l_rem", self.l_rem
        elif self.phase == "l_rem":
            # no Pstop here: an operator l_rem keeps lost only parents that stopped at the cut
            # (start operators: ``cut`` ran Pstop on their left operators), rows (which do
            # not run) or parents l_rem deleted, asleep since the cut (``_sleep`` told this
            # one then)
            self.phase, self.todo = "tables", list({op.node for op in self.gone})
        elif self.phase == "tables":
            self.made = len(engine._ops)
            self.phase, self.todo = "ops", engine._ops[::-1]   # (slices are taken from the end)
        else:
            engine._ops = self.kept + engine._ops[self.made:]   # rows stay rows
            self.phase = None
            if engine._pending is self:
                engine._pending = None

    def _climb(self, engine, part) -> None:
        dead, gone, todo = self.dead, self.gone, self.todo
        while part:
            op = part.pop()
            if op not in dead:
                dead.add(op)
                gone.append(op)
                op.out, op.idx, op.running = (), None, False
                todo.extend(op.parents)

    def _rows(self, engine, part) -> None:
        # the CN joins still held as rows (``cn_joins``): those of the removed edges and
        # relation, and those above a deleted operator, go; their left operators are checked
        # by l_rem like those of deleted operators (a row counts as a parent)
        for store in ("_cn_rows", "_waiting"):
            rows = getattr(engine, store)
            nodes = [node for s, node in part if s == store]
            if rows is not None and nodes:
                mask = self.masks.get(store)
                if mask is None:   # which of the store's left operators are deleted, once
                    dead = self.dead
                    mask = self.masks[store] = np.fromiter((op in dead for op in rows.lefts), np.bool_,
                                                           len(rows.lefts))
                self.l_rem += rows.remove(self.edge_ids, self.rel, mask, nodes)
                if not rows.rows:
                    setattr(engine, store, None)

    def _l_rem(self, engine, part) -> None:
        dead, held, todo = self.dead, self.held, self.todo
        while part:
            k = part.pop()
            if k in dead:
                continue
            k.parents = [p for p in k.parents if p not in dead] or ()
            if not k.parents and not k.cn and k not in held:
                dead.add(k)
                self.gone.append(k)
                k.out, k.idx, k.running = (), None, False
                if k.left is not None:
                    todo.append(k.left)

    def _tables(self, engine, part) -> None:
        for n in part:
            _leave_tables(engine, n, self.dead.__contains__)

    def _ops(self, engine, part) -> None:
        dead = self.dead
        self.kept += [op for op in reversed(part) if op not in dead]


def _leave_tables(engine, node, is_dead) -> None:
    """The operators of ``node``'s tables (``_roots``, ``_by_right``, ``_running``) that
    ``is_dead`` leave them, stopped and empty."""
    running = engine._running.get(node, {})
    for table in (engine._roots, engine._by_right):
        ops = table.get(node)
        if not ops:
            continue
        kept = []
        for op in ops:
            if is_dead(op):
                op.out, op.idx, op.running = (), None, False
                running.pop(op, None)
            else:
                kept.append(op)
        if len(kept) != len(ops):
            if kept:
                table[node] = kept
            else:
                del table[node]


def drop_relation(engine, rel: str) -> None:
    """The tuples of a removed relation are dead (spec: a re-added relation starts empty),
    and the hash indexes of its nodes' sources go."""
    for n in [n for n in engine._sources if n[0] == rel]:
        for tid in engine._sources.pop(n):
            del engine._rows[tid]
    engine._index = {(n, a): ix for (n, a), ix in engine._index.items() if n[0] != rel}
    engine._group_indexes()
