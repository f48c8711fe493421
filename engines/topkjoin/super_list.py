"""The Super-MTK+N list: MinTopK's super-top-k list with K+N slots per window, as arrays.

Yang et al., "Continuous top-k queries over sliding windows" (EDBT 2011,
MinTopK) as extended by Topk+N (paper §4.1, Algorithms 2-3; §4.4
indistinct arrivals): MinTopK's insertion and expiration, and a rebuild
formulation equivalent to them that the tests check against.  The kernels are in ``_super_list_kernels``.

Entries are the columns ``dense, score, tie, sval, ts, sw, ew`` over ``[:m]``,
sorted by the total order ``(score desc, tie asc)`` (``tie`` ranks external
ids).  An entry is in the predicted top-(K+N) list ``P(w)`` of every window
``sw <= w <= ew``; ``ew`` is the newest window containing its time.  Every
retained entry lies in the current window ``c``, so the first K entries are
the current top-K.  Windows ``c .. c + span - 1`` can be active (``span =
ceil(omega / beta)``), so at most ``cap * span`` entries are kept: memory
O(K+N) per active window, independent of the stream rate and of the remote
dataset.

Marks are kept equal to a rebuild of the retained entries (the
conformance suite checks it): each operation rescans the O(cap * span) list,
which for these sizes is cheaper than MinTopK's pointer walks and identical
in effect (an object MinTopK discards is one below every window's
``cap``-th).  LBPs are therefore implicit: ``lbp(w)`` is the last entry of
``P(w)`` once it holds ``cap`` entries.
"""
from __future__ import annotations

import numpy as np

from streamspec.engines.topkjoin import _acquatop_kernels
from streamspec.engines.topkjoin import _super_list_kernels as kern

COLUMNS = ("dense", "score", "tie", "sval", "ts", "sw", "ew")


class SuperTopKList:
    def __init__(self, cap: int, span: int = 1024, current: int = 0):
        self.cap = cap          # K + N
        self.span = span        # windows an entry can reach: c .. c + span - 1
        self.c = current        # current (oldest active) window
        size = cap * span + 2
        self.dense = np.zeros(size, np.int64)
        self.score = np.zeros(size, np.float64)
        self.tie = np.zeros(size, np.int64)
        self.sval = np.zeros(size, np.float64)
        self.ts = np.zeros(size, np.int64)
        self.sw = np.zeros(size, np.int64)
        self.ew = np.zeros(size, np.int64)
        self.cnt = np.zeros(span, np.int64)      # scratch of the staircase
        self.m = 0

    def _cols(self):
        return self.dense, self.score, self.tie, self.sval, self.ts, self.sw, self.ew

    def __len__(self) -> int:
        return self.m

    def __contains__(self, dense) -> bool:
        return kern.find(self.dense, self.m, int(dense)) >= 0

    def find(self, dense) -> int:
        """Position of ``dense`` in the list, or -1."""
        return kern.find(self.dense, self.m, int(dense))

    def ids(self) -> list[int]:
        """Dense ids in list order."""
        return self.dense[:self.m].tolist()

    def top(self, k: int) -> list[tuple[int, float]]:
        """``(dense id, score)`` of the first k entries."""
        k = min(k, self.m)
        return list(zip(self.dense[:k].tolist(), self.score[:k].tolist()))

    # -- the window arrives (the Java's batch flow) ----------------------------------------------------------
    def arrive(self, ids, scores, w_val, w_ts, tie, t0: int, beta: int) -> None:
        """Every id of window ``c`` arrives: the list becomes the staircase of the window."""
        self.m = kern.arrivals(ids, scores, w_val, w_ts, tie, t0, beta, self.c, self.cap,
                               self.span, *self._cols(), self.cnt)

    # -- MinTopK insertion, §4.4 indistinct arrivals -------------------------------------------
    def insert(self, dense: int, key: tuple, sval: float, ts: int, ew: int) -> bool:
        """Offer a new object ``key = (-score, tie)``; False if it is discarded."""
        self.m = kern.offer(*self._cols(), self.m, self.c, self.cap, self.span, self.cnt,
                            int(dense), float(-key[0]), int(key[1]), float(sval), int(ts), int(ew))
        return dense in self

    def remove(self, dense: int) -> None:
        """``dense`` leaves; the marks are rebuilt from the retained entries."""
        self.m = kern.remove(*self._cols(), self.m, self.c, self.cap, self.span, self.cnt,
                             int(dense))

    def replace(self, dense: int, key: tuple, sval: float, ts: int, ew: int) -> bool:
        """Indistinct arrival: the id's stale entry (if any) gives way to the new version."""
        self.remove(dense)
        return self.insert(dense, key, sval, ts, ew)

    # -- MinTopK expiration ------------------------------------------------------------------
    def purge(self) -> None:
        """Window ``c`` has been evaluated: forget it and move to ``c + 1``."""
        self.m = kern.purge(*self._cols(), self.m, self.c)
        self.c += 1

    def renumber(self, remap: np.ndarray) -> None:
        """Dense ids after a compaction of the id index (``remap``: old -> new)."""
        _acquatop_kernels.renumber(self.dense, self.m, remap)

    # -- pickling (Spark keeps engines in group state between micro-batches) ---------------
    def __getstate__(self):
        """The ``m`` entries, not the ``cap * span`` slots (``cnt`` is scratch)."""
        state = dict(self.__dict__)
        for name in COLUMNS:
            state[name] = state[name][:self.m].copy()
        del state["cnt"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        size = self.cap * self.span + 2
        for name in COLUMNS:
            full = np.zeros(size, state[name].dtype)
            full[:self.m] = state[name]
            setattr(self, name, full)
        self.cnt = np.zeros(self.span, np.int64)

    # -- for tests ------------------------------------------------------------------------
    def marks(self) -> list[tuple]:
        """``(tie, score, sw, ew)`` of every entry, in list order."""
        m = self.m
        return list(zip(self.tie[:m].tolist(), self.score[:m].tolist(), self.sw[:m].tolist(),
                        self.ew[:m].tolist()))

    def rebuilt_marks(self) -> list[tuple]:
        """What the rebuild says the marks are (changes nothing)."""
        import copy
        twin = copy.deepcopy(self)
        twin.m = kern.staircase(*twin._cols(), twin.m, twin.c, twin.cap, twin.span, twin.cnt)
        return twin.marks()

    def lbp(self, w: int) -> int | None:
        """Position of the lower-bound pointer of window ``w`` (None while ``P(w)`` is not full)."""
        members = [i for i in range(self.m) if self.sw[i] <= w <= self.ew[i]]
        return members[-1] if len(members) == self.cap else None
