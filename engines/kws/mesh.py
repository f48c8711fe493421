"""Tuple processing over operator trees or the operator mesh (paper Section 4).

``MeshEngine`` routes each arriving tuple through the operators of
``streamspec.engines.kws.operators``: the tuple is probed against the (shared) output
buffer of the left input of every join whose right source is its node
(through a hash index of the buffer on the join value; the paper loops over
the whole buffer, ``index_buffers=False``, the same for every engine), and
every new composite travels up to the running parents, which probe their
right source (hash index on the join attribute).  New composites at a CN
operator go to the output operator.  Every composite holding the new tuple is
built exactly once: buffers do not hold the tuple yet, and a join refuses a
tuple already in the composite.

Options (class attributes, or keyword arguments for ablations):

- ``shared``: the mesh (shared joins and buffers) instead of the forest.
- ``demand_driven`` (Section 4.1): a join runs only while its right source
  has alive tuples and it feeds the output operator or a running parent; a
  join going to sleep tells its left child (Pstop), which sleeps when all its
  parents sleep.  Waking (Pstart) wakes the left child first.  Departure from
  the paper: a sleeping join drops its output buffer and rebuilds it on
  waking from its inputs, instead of catching up from ``stopTime``; the
  result is the same buffer (all alive composites), and a sleeping join
  holds no dead tuples, so the sleeping-operator queue is not needed.
- ``purge`` (Section 4.3): ``"lazy"`` drops dead composites from a buffer
  when a probe meets one (and rebuilds its indexes on the next probe); ``"eager"`` drops them from every buffer as soon as a source
  tuple expires.  Deletions (negative tuples) are always purged eagerly.
  No probe reads the buffer of a join without parents (a CN join: its buffer
  serves deletions and schema changes, which read its alive composites), so
  under lazy purging these buffers are swept every ``w`` (``_sweep``): a dead
  composite stays there less than ``w``, at most ``2w`` after it was made, the
  bound lazy purging gives a probed buffer.

Schema changes (Section 4.4) migrate the mesh (``streamspec.engines.kws.migration``):
a new relation or edge adds only the operators of the trees that hold it, fed
once from the buffers below them; a removal deletes operators recursively.  On the
full mesh, what can wait waits in ``_pending`` (an addition's searches for CNs over empty
nodes, a removal's deletion) and is done at the tuples it concerns or before the next
change (``_migration_grow``, ``_migration_prune``).
The forest (``shared=False``) rebuilds its trees and replays the alive tuples
(``rebuild_and_replay``): Section 4.4 describes the meshes.
"""
from __future__ import annotations

from collections import deque

from streamspec.engines.kws.cngen import cngen, collector_off, expanded_schema
from streamspec.engines.kws.migration import migrate_full_mesh
from streamspec.engines.kws.cn_joins import compact_mesh
from streamspec.engines.kws.operators import INF, build, join_condition
from streamspec.spec.kws import KwsEngine, Result


def _holds(rows, row) -> bool:
    for r in rows:
        if r is row:
            return True
    return False


def _index_into(ix: dict, composites, pp: int, pa: str, now) -> None:
    """Add composites to a buffer's hash index on attribute ``pa`` of position
    ``pp`` (null values join nothing); with ``now``, only the live ones."""
    for c in composites:
        if now is not None and c[0] <= now:
            continue
        v = c[1][pp].values[pa]
        if v is not None:
            bucket = ix.get(v)
            if bucket is None:
                ix[v] = [c]
            else:
                bucket.append(c)


def rebuild_and_replay(engine, t: int):
    """A schema change as the forests apply it: the operators are rebuilt for the
    new schema and the alive tuples of its relations replayed in arrival order;
    (ended, appeared) are the results of ``t`` before against after.  The meshes
    migrate instead (Section 4.4, ``streamspec.engines.kws.migration``); this is
    the baseline their benchmark compares with (``bench/kws/schema_change.py``)."""
    engine._advance(t)
    before = engine._current(t)
    rels = {r.name for r in engine.schema.relations}
    rows = sorted((r for r in engine._rows.values() if r.relation in rels), key=lambda r: r.seq)
    engine._rows, engine._expiry = {}, deque()
    engine._build()
    for row in rows:
        engine._route(row, None)
    after = engine._current(t)
    return before - after, after - before


class MeshEngine(KwsEngine):
    shared = True
    demand_driven = True
    purge = "lazy"
    index_buffers = True             # probe output buffers through hash indexes (else scan them)
    refuses = staticmethod(_holds)   # the join's refusal test (Figure 3.7)
    shrinks = False                  # operators are destroyed when their buffer is dry (PM)

    def __init__(self, params, **options):
        for k, v in options.items():
            if k not in ("shared", "demand_driven", "purge", "index_buffers"):
                raise TypeError(f"unknown option {k!r}")
            setattr(self, k, v)
        super().__init__(params)

    # -- construction ------------------------------------------------------------
    def _start(self) -> None:
        self.now = None
        self._eager = self.purge == "eager"   # only eager purging reads Op.end
        self._rows: dict = {}            # tid -> Row, alive tuples
        self._expiry: deque = deque()    # rows in arrival order (window model)
        self._arriving = None
        self._sweep_reset()
        self._build()

    def _sweep_reset(self) -> None:
        """Lazy purging in the window model: ``_unread`` ({op: None}), the filled buffers
        no probe reads (``_sweep``), and ``_sweep_at``, the instant of the next sweep."""
        self._unread = {} if self.purge == "lazy" and self.params.window is not None else None
        self._sweep_at = 0

    def _build(self) -> None:
        self._sweep_reset()   # the operators are new (also ``rebuild_and_replay``)
        with collector_off():   # millions of operators at |K| = 5, engine tables too
            self._build_ops()

    def _build_ops(self) -> None:
        schema, m, t_max = self.schema, len(self.keywords), self.params.t_max
        conds = {(e.id, left): join_condition(schema, (e.id, left)) for e in schema.edges for left in (True, False)}
        # the expanded schema CNGen ran over, kept for migrations (their nids stay)
        self._conds, self._xs, self._xs_schema = conds, expanded_schema(schema, m, t_max), schema
        self._cn_rows = self._waiting = self._pending = None
        if self.shared:  # the mesh from compiled CNGen, its CN joins as rows (``cn_joins``)
            self._ops, self._cn_rows = compact_mesh(schema, m, t_max, not self.demand_driven, conds,
                                                    xs=self._xs)
            if not self._cn_rows.rows:
                self._cn_rows = None
        else:
            self._ops = build(cngen(schema, m, t_max), False, not self.demand_driven, conds)
        self._sources = {(r.name, k): {} for r in schema.relations for k in range(1 << m)}
        self._roots: dict = {}
        by_right: dict = {n: [] for n in self._sources}
        for op in self._ops:
            if op.left is not None:
                by_right[op.node].append(op)
            else:
                self._roots.setdefault(op.node, []).append(op)
        self._by_right = {n: joins for n, joins in by_right.items() if joins}
        # a hash index per (right node, its join attribute) that some join probes
        inputs = {(n, j.label) for n, joins in self._by_right.items() for j in joins}
        if self._cn_rows is not None:
            inputs |= self._cn_rows.right_inputs()
        self._index: dict = {(n, conds[label][1]): {} for n, label in inputs}
        # demand-driven: the running joins of each right source, so that an arriving
        # tuple visits only those (a sleeping join ignores input anyway)
        self._running: dict = {}
        self._group_indexes()

    # -- the operators -------------------------------------------------------------
    _cn_rows = None   # CN joins not yet operators (``cn_joins.CnJoinRows``), FM only
    _waiting = None   # a migration's CN joins over live right nodes waiting for their left chain
    _pending = None   # the deferred part of the last schema change: an addition's CNs not searched
    #                   yet (``_migration_grow.PendingGrowth``), a removal's deletion
    #                   (``_migration_prune.PendingPrune``)

    @property
    def ops(self) -> list:
        """Every operator of the mesh, children before parents (a CN join still held as
        a row is made an operator first: ``cn_joins``)."""
        if self._cn_rows is not None or self._waiting is not None or self._pending is not None:
            self._materialise_all()
        return self._ops

    @ops.setter
    def ops(self, ops) -> None:
        self._ops = ops

    def _made_ops(self):
        """The operators made so far (a CN join still held as a row holds nothing)."""
        return self._ops

    def mesh_size(self) -> tuple[int, int]:
        """(operators, CN operators) of the mesh, the CN joins held as rows included."""
        if self._pending is not None:   # counted as the change would have left the mesh
            with collector_off():
                self._pending.complete(self)
        rows = sum(len(r) for r in (self._cn_rows, self._waiting) if r is not None)
        ops = self._made_ops()
        return len(ops) + rows, sum(1 for op in ops if op.cn) + rows

    def _materialise(self, node) -> None:
        """The CN joins of right node ``node`` become operators (its first tuple arrives)."""
        new = self._cn_rows.materialise(node, not self.demand_driven, self._conds)
        self._by_right.setdefault(node, []).extend(new)
        self._ops.extend(new)
        if not self._cn_rows.rows:
            self._cn_rows = None

    def _materialise_waiting(self, node) -> list:
        """The waiting CN joins keyed by ``node`` (an empty node of their left chains, whose
        first tuple arrives: ``_migration_grow``) become operators, asleep; the caller wakes
        those whose right node holds tuples (Pstart), as they would have run since the change."""
        new = self._waiting.materialise(node, not self.demand_driven, self._conds)
        by_right = self._by_right
        for op in new:
            by_right.setdefault(op.right, []).append(op)
        self._ops.extend(new)
        if not self._waiting.rows:
            self._waiting = None
        return new

    def _materialise_all(self) -> None:
        with collector_off():
            if self._pending is not None:
                self._pending.complete(self)
            while self._cn_rows is not None:
                self._materialise(next(iter(self._cn_rows.rows)))
            while self._waiting is not None:
                for j in self._materialise_waiting(next(iter(self._waiting.rows))):
                    if self.demand_driven and self._wants(j):
                        self._wake(j)

    def _index_source(self, node, attr) -> None:
        """A hash index of ``node``'s source on ``attr`` (a new join probes it there), filled
        from its alive tuples and entered by the ones to come; kept if there is one."""
        if (node, attr) in self._index:
            return
        ix = self._index[(node, attr)] = {}
        for row in self._sources[node].values():
            if row.values[attr] is not None:
                ix.setdefault(row.values[attr], []).append(row)
        self._node_indexes.setdefault(node, []).append((attr, ix))

    def _group_indexes(self) -> None:
        """node -> [(attribute, hash index)]: the indexes a tuple of the node enters."""
        self._node_indexes: dict = {}
        for (n, a), idx in self._index.items():
            self._node_indexes.setdefault(n, []).append((a, idx))

    # -- hooks ---------------------------------------------------------------------
    def _insert(self, row, t):
        self._advance(t)
        results = []
        self._route(row, results)
        return results

    def _delete(self, tid, t):
        self._advance(t)
        row = self._rows[tid]
        ops = self._made_ops()
        results = [self._result(op, c) for op in ops if op.cn
                   for c in op.out if c[0] > t and _holds(c[1], row)]
        for op in ops:  # the negative tuple expunges every composite holding it
            if op.out:
                op.out, op.idx = [c for c in op.out if not _holds(c[1], row)], None
        self._remove(row)
        return results

    def _schema_change(self, event, t):
        if not self.shared:
            return rebuild_and_replay(self, t)
        return migrate_full_mesh(self, event, t)

    # -- processing ----------------------------------------------------------------
    def _advance(self, t: int) -> None:
        if self.now == t:
            return
        self.now = t
        q, nodes, eager = self._expiry, set(), self._eager
        while q and q[0].t_end <= t:
            row = q.popleft()
            if self._rows.get(row.tid) is row:
                self._remove(row)
                if eager:
                    nodes.add((row.relation, row.kbits))
        if nodes:
            self._purge_eager(nodes, t)
        if t >= self._sweep_at and self._unread:
            self._sweep(t)

    def _sweep(self, t: int) -> None:
        """Lazy purging of the buffers no probe reads (joins without parents, the CN
        joins): their dead composites dropped, every ``w`` (``_advance``).  Readers of
        these buffers (deletions, schema changes) take only composites alive at ``t``."""
        self._sweep_at = t + self.params.window
        unread = self._unread
        for op in list(unread):
            out = op.out
            if out and not op.parents and self._exists(op):
                alive = [c for c in out if c[0] > t]
                if len(alive) != len(out):
                    op.out, op.idx = alive, None
                if alive:
                    continue
            del unread[op]

    def _purge_eager(self, nodes: set, t: int) -> None:
        """Eager purging, bottom-up (Section 4.3, Figure 4.5), once tuples of
        ``nodes`` expired: the operators that can hold an expired tuple are
        those whose source is its node; an operator that drops dead composites
        tells its parents.  No other buffer can hold one: a composite is dead
        from its earliest tuple's expiry on, and every buffer it entered holds
        it until this pass (no probe ran in between)."""
        stack = [op for n in nodes for op in self._roots.get(n, ())]
        stack += [op for n in nodes for op in self._by_right.get(n, ())]
        seen = set()
        while stack:
            op = stack.pop()
            # ``op.end`` bounds the buffer's earliest expiry from below: most buffers
            # an expired node reaches hold nothing dead, and are passed in O(1)
            if not op.out or op.end > t or id(op) in seen or not self._exists(op):
                continue
            seen.add(id(op))
            out, alive, end = op.out, [], INF
            for c in out:
                if c[0] > t:
                    alive.append(c)
                    if c[0] < end:
                        end = c[0]
            op.end = end
            if len(alive) == len(out):
                continue
            op.out, op.idx = alive, None
            if alive or not self._dried(op):
                stack.extend(op.parents)

    def _exists(self, op) -> bool:
        """Whether ``op`` is still part of the mesh (the partial mesh destroys operators)."""
        return True

    def _dried(self, op) -> bool:
        """``op``'s buffer ran dry in a purge; True when its parents are gone
        with it (the partial mesh), so there is nothing left to tell."""
        return False

    def _route(self, row, results) -> None:
        """Process an arriving tuple; new results go to ``results`` (None: discard)."""
        node = (row.relation, row.kbits)
        src = self._sources[node]
        waiting = ()
        pending = self._pending
        if pending is not None:
            # an addition's CNs this first tuple is the first to hold; a removal's deleted
            # operators in this node's tables, and a slice of the deletion
            # (``_migration_grow``, ``_migration_prune``)
            pending.arrive(self, node)
        if not src:
            if self._cn_rows is not None and node in self._cn_rows.rows:
                self._materialise(node)  # its CN joins, as they are, before its first tuple
            if self._waiting is not None and node in self._waiting.rows:
                waiting = self._materialise_waiting(node)
        if self.demand_driven:
            if not src:
                self._arriving = node
                for j in waiting:   # running since the change if their right node holds tuples
                    if not j.running and self._wants(j):
                        self._wake(j)
                for j in self._by_right.get(node, ()):
                    if not j.running and self._wants(j):
                        self._wake(j)
                self._arriving = None
            joins = self._running.get(node, ())  # no join wakes or sleeps below
        else:
            joins = tuple(self._by_right.get(node, ()))  # the partial mesh grows and shrinks it
        t_end, now, shrinks = (INF if row.t_end is None else row.t_end), self.now, self.shrinks
        indexed = self.index_buffers
        for op in self._roots.get(node, ()):
            self._emit(op, [(t_end, (row,))], results)
        for j in joins:
            if not j.running:
                continue
            pa, xa = j.cond
            xv = row.values[xa]
            if xv is None:
                continue
            left = j.left
            if not left.out:
                if shrinks:
                    self._live(left)  # lets the partial mesh shrink a dry operator
                continue
            pp = j.parent_pos
            if indexed:
                idx = left.idx
                ix = idx.get((pp, pa)) if idx is not None else None
                if ix is None:
                    ix = self._index_buffer(left, pp, pa)
                buf = ix.get(xv)
                if buf is None:
                    continue
            else:
                buf = left.out  # the paper's nested loop over the whole buffer
            # one pass: probe the live composites, note dead ones (lazy purge)
            new, refuses, dead = [], self.refuses, False
            for c in buf:
                if c[0] <= now:
                    dead = True
                elif c[1][pp].values[pa] == xv and not refuses(c[1], row):
                    new.append((min(c[0], t_end), c[1] + (row,)))
            if dead:
                self._live(left)
            if new:
                self._emit(j, new, results)
        # only now does the tuple enter its source
        src[row.tid] = row
        self._rows[row.tid] = row
        for a, idx in self._node_indexes.get(node, ()):
            if row.values[a] is not None:
                idx.setdefault(row.values[a], []).append(row)
        if row.t_end is not None:
            self._expiry.append(row)

    def _emit(self, op, new: list, results) -> None:
        if self._eager:
            end = min(c[0] for c in new)
            if end < op.end:
                op.end = end
        if op.out:
            op.out.extend(new)
            if op.idx:
                for (pp, pa), ix in op.idx.items():
                    _index_into(ix, new, pp, pa, None)
        else:
            op.out, op.idx = list(new), None
        if not op.parents and self._unread is not None:  # a buffer no probe reads: swept
            self._unread[op] = None
        if op.cn and results is not None:
            results.extend(self._result(op, c) for c in new)
        for q in op.parents:
            if q.running:
                more = self._probe_right(q, new)
                if more:
                    self._emit(q, more, results)

    def _probe_right(self, q, left: list) -> list:
        pa, xa = q.cond
        idx, pp, now = self._index[(q.node, xa)], q.parent_pos, self.now
        out, refuses = [], self.refuses
        for c in left:
            v = c[1][pp].values[pa]
            if v is None:
                continue
            for y in idx.get(v, ()):
                if not refuses(c[1], y):
                    te = INF if y.t_end is None else y.t_end
                    out.append((min(c[0], te), c[1] + (y,)))
        return [c for c in out if c[0] > now]

    def _index_buffer(self, op, pp, pa) -> dict:
        """A hash index of the op's live composites on the value a parent probes
        (attribute ``pa`` of position ``pp``); kept up to date by ``_emit``."""
        ix: dict = {}
        _index_into(ix, op.out, pp, pa, self.now)
        if op.idx is None:
            op.idx = {}
        op.idx[(pp, pa)] = ix
        return ix

    def _live(self, op) -> list:
        """The op's output buffer without dead composites (lazy purge)."""
        now, out = self.now, op.out
        alive = [c for c in out if c[0] > now]
        if len(alive) != len(out):
            op.out, op.idx = alive, None
        return alive

    def _remove(self, row) -> None:
        node = (row.relation, row.kbits)
        del self._rows[row.tid]
        src = self._sources[node]
        src.pop(row.tid, None)
        for a, idx in self._node_indexes.get(node, ()):
            bucket = idx.get(row.values[a])
            if bucket is not None:
                # a bucket holds the few alive tuples with one join value (a list is
                # a third of a dict's size); remove by identity
                for i, y in enumerate(bucket):
                    if y is row:
                        del bucket[i]
                        break
                if not bucket:
                    del idx[row.values[a]]
        if self.demand_driven and not src:
            for j in list(self._running.get(node, ())):
                self._sleep(j)

    # -- demand-driven execution (Section 4.1) -------------------------------------
    def _nonempty(self, node) -> bool:
        return bool(self._sources[node]) or node == self._arriving

    def _wants(self, j) -> bool:
        return self._nonempty(j.right) and (j.cn or any(p.running for p in j.parents))

    def _wake(self, j) -> None:
        j.running = True
        self._running.setdefault(j.right, {})[j] = None
        k = j.left
        if k.left is not None and not k.running and self._nonempty(k.right):
            self._wake(k)
        j.out, j.idx = self._probe_right(j, self._live(k)), None
        if self._eager:
            j.end = min((c[0] for c in j.out), default=INF)

    def _sleep(self, j) -> None:
        j.running = False
        self._running[j.right].pop(j, None)
        j.out, j.idx = (), None
        self._pstop(j.left)

    def _pstop(self, k) -> None:
        """Pstop: join ``k`` sleeps once none of its parents runs (a CN join feeds the output
        operator: it runs while its right source has tuples)."""
        if k.left is not None and k.running and not k.cn:
            for p in k.parents:
                if p.running:
                    return
            self._sleep(k)

    # -- results -------------------------------------------------------------------
    def _result(self, op, c) -> Result:
        rows = c[1]
        edges = []
        for i in range(1, len(rows)):
            p, (eid, parent_left) = op.shape[i]
            edges.append((eid, rows[p].tid, rows[i].tid) if parent_left
                         else (eid, rows[i].tid, rows[p].tid))
        return Result.of([r.tid for r in rows], edges)

    def _current(self, t) -> set:
        return {self._result(op, c) for op in self._made_ops() if op.cn for c in op.out if c[0] > t}
