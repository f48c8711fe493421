"""Every tuple id a kws stream has used (``streamspec.spec.kws``: a duplicate tid is an
``InvalidRecord``, also long after the first tuple left the window).

The record grows with the stream, so it is kept compact for the common case:
int tids that mostly increase (sequence numbers, primary keys) are runs
``[lo, hi]`` of consecutive ids, one run per gap, not one entry per tuple; an
int that arrives below the last run goes in a set, as do str tids.
"""
from __future__ import annotations

from bisect import bisect_right


class SeenTids:
    def __init__(self):
        self._lo: list[int] = []      # runs of consecutive int tids, increasing
        self._hi: list[int] = []
        self._others: set = set()     # str tids and ints that came below the last run

    def __contains__(self, tid) -> bool:
        if tid in self._others:
            return True
        if isinstance(tid, str) or not self._lo:
            return False
        k = bisect_right(self._lo, tid) - 1
        return k >= 0 and tid <= self._hi[k]

    def add(self, tid) -> None:
        """Record ``tid`` (the caller has checked it is new)."""
        if isinstance(tid, str):
            self._others.add(tid)
        elif self._hi and tid == self._hi[-1] + 1:
            self._hi[-1] = tid        # the usual case: the next id
        elif not self._hi or tid > self._hi[-1]:
            self._lo.append(tid)      # a gap: a new run
            self._hi.append(tid)
        else:
            self._others.add(tid)

    def __len__(self) -> int:
        return sum(h - l + 1 for l, h in zip(self._lo, self._hi)) + len(self._others)
