"""The Super-MTK+N list: MinTopK's super-top-k list with K+N slots per window.

Yang et al., "Continuous top-k queries over sliding windows" (EDBT 2011,
MinTopK) as extended by Topk+N (paper §4.1, Algorithms 2-3); the clean
algorithm of analysis note §3.3 (insertion), §3.4 (expiration), §3.7 (the
rebuild formulation), §4.4 (indistinct arrivals).

One sorted list ``entries`` (total order ``(score desc, id asc)``); each entry
carries window marks ``sw``/``ew``: it is in the predicted top-(K+N) list
``P(w)`` of every window ``sw <= w <= ew``.  ``ew`` is the newest window
containing the entry's time.  Per active window ``w`` (``c .. h``): ``cnt[w]``
entries and, once ``cnt[w] == K+N``, the lower-bound pointer ``lbp[w]`` (the
lowest entry of ``P(w)``).  Every retained entry lies in the current window
``c``, so the first K entries are the current top-K.

- ``insert``: §3.3 (discard test against the LBPs, victims' ``sw`` moves up,
  entries with ``sw > ew`` leave, LBPs recomputed by a scan: the list holds
  O(K+N) entries per window, a scan is cheaper than pointer walking).
- ``replace`` (indistinct arrival or changed object): remove, ``rebuild`` (§3.7,
  which refills the freed slot from retained entries: Theorem 2's hole), insert.
- ``rescore``: new scores for many entries at once, then one ``rebuild``.
- ``purge``: §3.4, every entry with ``sw == c`` moves to ``c + 1``.
"""
from __future__ import annotations

import bisect

import attrs


@attrs.define(slots=True, eq=False)
class Entry:
    key: tuple          # (-score, external id): the list's total order
    dense: int          # the engine's dense id
    sval: float         # streaming score the entry was scored with
    ts: int             # time of the id's last item
    ew: int             # newest window containing ts
    sw: int = 0         # first window whose predicted list holds the entry

    @property
    def score(self) -> float:
        return -self.key[0]

    @property
    def id(self):
        return self.key[1]


class SuperTopKList:
    def __init__(self, cap: int, current: int = 0):
        self.cap = cap          # K + N
        self.c = current        # current (oldest active) window
        self.entries: list[Entry] = []
        self._keys: list[tuple] = []
        self.by_dense: dict[int, Entry] = {}
        self.cnt: dict[int, int] = {}
        self.lbp: dict[int, Entry] = {}

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, dense: int) -> bool:
        return dense in self.by_dense

    def top(self, k: int) -> list[Entry]:
        return self.entries[:k]

    # -- §3.3 insertion --------------------------------------------------------
    def insert(self, dense: int, key: tuple, sval: float, ts: int, ew: int) -> bool:
        """Offer a new object; False if it is discarded.  ``dense`` must not be in the list."""
        for w in range(self.c, ew + 1):
            self.cnt.setdefault(w, 0)
        sw = next((w for w in range(self.c, ew + 1)
                   if self.cnt[w] < self.cap or key < self.lbp[w].key), None)
        if sw is None:
            return False
        e = Entry(key, dense, sval, ts, ew, sw)
        at = bisect.bisect_left(self._keys, key)
        self.entries.insert(at, e)
        self._keys.insert(at, key)
        self.by_dense[dense] = e
        victims = []
        for w in range(sw, ew + 1):
            if self.cnt[w] < self.cap:
                self.cnt[w] += 1
            else:
                victims.append(self.lbp[w])
        for v in victims:
            v.sw += 1
        for v in victims:
            if v.sw > v.ew and v.dense in self.by_dense:
                self._drop(v)
        for w in range(sw, ew + 1):
            self._set_lbp(w)
        return True

    def _set_lbp(self, w: int) -> None:
        if self.cnt.get(w, 0) < self.cap:
            self.lbp.pop(w, None)
            return
        for e in reversed(self.entries):
            if e.sw <= w <= e.ew:
                self.lbp[w] = e
                return

    def _drop(self, e: Entry) -> None:
        at = bisect.bisect_left(self._keys, e.key)
        assert self.entries[at] is e
        del self.entries[at], self._keys[at]
        del self.by_dense[e.dense]

    # -- §3.7 rebuild and §4.4 indistinct arrivals --------------------------------
    def rebuild(self) -> None:
        """Recompute marks, counters and LBPs from the retained entries alone."""
        # entries re-scored with a later item may reach windows not registered yet
        last = max([self.c, *self.cnt, *(e.ew for e in self.entries)])
        windows = range(self.c, last + 1)
        seen: dict[int, int] = {}
        for w in windows:
            members = [e for e in self.entries if e.ew >= w][:self.cap]
            self.cnt[w] = len(members)
            for e in members:
                seen.setdefault(id(e), w)
            if len(members) == self.cap:
                self.lbp[w] = members[-1]
            else:
                self.lbp.pop(w, None)
        for e in list(self.entries):
            if id(e) in seen:
                e.sw = seen[id(e)]
            else:
                self._drop(e)

    def remove(self, dense: int) -> None:
        self._drop(self.by_dense[dense])
        self.rebuild()

    def replace(self, dense: int, key: tuple, sval: float, ts: int, ew: int) -> bool:
        """Indistinct arrival: the id's stale entry (if any) gives way to the new version."""
        if dense in self.by_dense:
            self.remove(dense)
        return self.insert(dense, key, sval, ts, ew)

    def rescore(self, new: dict) -> None:
        """``new[dense] = (key, sval, ts, ew)`` for entries in the list; others leave it."""
        for e in list(self.entries):
            if e.dense in new:
                e.key, e.sval, e.ts, e.ew = new[e.dense]
            else:
                self._drop(e)
        self.entries.sort(key=lambda e: e.key)
        self._keys = [e.key for e in self.entries]
        self.rebuild()

    # -- §3.4 expiration ---------------------------------------------------------
    def purge(self) -> None:
        """Window ``c`` has been evaluated: forget it and move to ``c + 1``."""
        c = self.c
        for e in list(self.entries):
            if e.sw == c:
                e.sw += 1
                if e.sw > e.ew:
                    self._drop(e)
        self.cnt.pop(c, None)
        self.lbp.pop(c, None)
        self.c = c + 1

    # -- for tests ---------------------------------------------------------------
    def marks(self) -> list[tuple]:
        return [(e.id, e.score, e.sw, e.ew) for e in self.entries]

    def rebuilt_marks(self) -> list[tuple]:
        """What §3.7 says the marks are (changes nothing)."""
        import copy
        twin = copy.deepcopy(self)
        twin.rebuild()
        return twin.marks()
