"""The Super-MTK+N list: the analysis note's worked example and incremental == rebuild."""
from hypothesis import given, settings, strategies as st

from engines.topkjoin.super_list import SuperTopKList


def test_worked_example_of_analysis_3_6():
    # K = 2, N = 1, beta = 1, omega = 2 (times x10 to stay integral)
    lst = SuperTopKList(3)

    def put(name, score, t):
        lst.insert(ord(name), (-score, name), score, t, t // 10)
        assert lst.marks() == lst.rebuilt_marks()

    for name, score, t in [("A", 5, 2), ("B", 3, 5), ("C", 4, 8), ("D", 6, 11)]:
        put(name, score, t)
    assert lst.marks() == [("D", 6, 0, 1), ("A", 5, 0, 0), ("C", 4, 0, 0)]   # B evicted
    assert lst.lbp[0].id == "C"
    put("E", 2, 14), put("F", 1, 16)
    assert [e.id for e in lst.top(2)] == ["D", "A"]
    lst.purge()
    assert lst.marks() == [("D", 6, 1, 1), ("E", 2, 1, 1), ("F", 1, 1, 1)]
    put("G", 7, 23), put("H", 2.5, 26)
    assert lst.marks() == [("G", 7, 1, 2), ("D", 6, 1, 1), ("H", 2.5, 1, 2)]
    assert [e.id for e in lst.top(2)] == ["G", "D"]
    lst.purge()
    assert lst.marks() == [("G", 7, 2, 2), ("H", 2.5, 2, 2)]


@settings(deadline=None, max_examples=300)
@given(cap=st.integers(1, 4), beta=st.integers(1, 5),
       ops=st.lists(st.tuples(st.sampled_from(["insert", "insert", "replace", "purge"]),
                              st.integers(0, 9), st.integers(0, 6), st.integers(0, 4)),
                    max_size=60))
def test_incremental_marks_equal_the_rebuild(cap, beta, ops):
    lst, now = SuperTopKList(cap), 0
    for op, key, score, step in ops:
        now += step
        if op == "purge":
            if now >= (lst.c + 1) * beta:      # the current window may only close once it is over
                lst.purge()
        else:
            t = max(now, lst.c * beta)
            entry = ((-score, key), float(score), t, t // beta)
            if key in lst:
                lst.replace(key, *entry) if op == "replace" else None
            else:
                lst.insert(key, *entry)
        assert lst.marks() == lst.rebuilt_marks()
        # each window's predicted list holds at most cap entries
        for w in range(lst.c, max([lst.c, *(e.ew for e in lst.entries)]) + 1):
            assert sum(e.sw <= w <= e.ew for e in lst.entries) <= cap
