"""The Super-MTK+N list: a worked example, and the numpy/numba list against a
plain-Python model of MinTopK's incremental algorithm (LBPs, victims, insertion and expiration, the paper's §4.4 replace).

The model is the engine's first implementation (entries as objects, one LBP per window); the
array list recomputes the staircase instead, and the two must agree after every operation.
"""
import bisect

import attrs
from hypothesis import given, settings, strategies as st

from streamspec.engines.topkjoin.super_list import SuperTopKList


def test_worked_example_of_analysis_3_6():
    # K = 2, N = 1, beta = 1, omega = 2 (times x10 to stay integral); ids A.. are ties 1..
    lst = SuperTopKList(3, span=2)

    def put(name, score, t):
        lst.insert(ord(name), (-score, ord(name) - 64), score, t, t // 10)
        assert lst.marks() == lst.rebuilt_marks()

    def marks():
        return [(chr(64 + t), s, sw, ew) for t, s, sw, ew in lst.marks()]

    for name, score, t in [("A", 5, 2), ("B", 3, 5), ("C", 4, 8), ("D", 6, 11)]:
        put(name, score, t)
    assert marks() == [("D", 6, 0, 1), ("A", 5, 0, 0), ("C", 4, 0, 0)]   # B evicted
    assert lst.lbp(0) == 2                                               # C
    put("E", 2, 14), put("F", 1, 16)
    assert [chr(d) for d, _ in lst.top(2)] == ["D", "A"]
    lst.purge()
    assert marks() == [("D", 6, 1, 1), ("E", 2, 1, 1), ("F", 1, 1, 1)]
    put("G", 7, 23), put("H", 2.5, 26)
    assert marks() == [("G", 7, 1, 2), ("D", 6, 1, 1), ("H", 2.5, 1, 2)]
    assert [chr(d) for d, _ in lst.top(2)] == ["G", "D"]
    lst.purge()
    assert marks() == [("G", 7, 2, 2), ("H", 2.5, 2, 2)]


@settings(deadline=None, max_examples=300)
@given(cap=st.integers(1, 4), beta=st.integers(1, 5), span=st.integers(1, 4),
       ops=st.lists(st.tuples(st.sampled_from(["insert", "insert", "replace", "remove", "purge"]),
                              st.integers(0, 9), st.integers(0, 6), st.integers(0, 4)),
                    max_size=60))
def test_array_list_equals_the_incremental_model(cap, beta, span, ops):
    lst, model, now = SuperTopKList(cap, span), ModelList(cap), 0
    for op, key, score, step in ops:
        now += step
        if op == "purge":
            if now >= (lst.c + 1) * beta:      # the current window may only close once it is over
                lst.purge()
                model.purge()
        elif op == "remove":
            if key in model:
                model.remove(key)
                lst.remove(key)
        else:
            # an item's windows: c .. its newest window, at most span of them
            t = min(max(now, lst.c * beta), (lst.c + span) * beta - 1)
            entry = ((-score, key), float(score), t, t // beta)
            if key in model:
                if op == "replace":
                    model.replace(key, *entry)
                    lst.replace(key, *entry)
            else:
                assert model.insert(key, *entry) == lst.insert(key, *entry)
        assert lst.marks() == model.marks()
        assert lst.marks() == lst.rebuilt_marks()
        for w in range(lst.c, lst.c + span):  # each window's predicted list holds at most cap entries
            assert sum(sw <= w <= ew for _, _, sw, ew in lst.marks()) <= cap


# -- the model ------------------------------------------------------------------------------
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


class ModelList:
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
