"""The reader of the paper's real stream (``bench/topkjoin/real_stream.py``; paper §6; the Java's
windows and counters as ``bench/topkjoin/java_compat.py`` states them).

On the real file: every window's user count equals the authors' ``TotalResultNumber-CH20-B7.txt``
(the 150 evaluated windows it lists), the item stream's window ``sum`` / last item are the Java's
{1, 2} value and last mention on all 157 windows.  On files written here in the Java's format
from a random mention stream: the items give the same windows as ``java_compat.slide_presence``
of that stream.  Malformed or inconsistent files: a typed error naming ``file:line``.
"""
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamspec.bench.topkjoin import real_stream
from streamspec.bench.topkjoin.java_compat import slide_presence
from streamspec.reference.topkjoin import aggregate
from streamspec.spec.errors import InvalidParameter, InvalidRecord, MalformedRecord
from streamspec.spec.windows import SlidingWindows

HAVE_DATA = real_stream.SLIDES.exists() and real_stream.TOTALS.exists()
needs_data = pytest.mark.skipif(not HAVE_DATA, reason="shared AcquaTop data absent")


def _windows(ids, x, ts, t0, omega, beta, count):
    """``[{user: (sum of x, last ts)}]`` of windows ``0..count-1`` of an item stream."""
    w, out = SlidingWindows(omega, beta, t0), []
    for i in range(count):
        m = (ts >= w.start(i)) & (ts < w.end(i))
        rows = list(zip(ids[m].tolist(), x[m].tolist(), ts[m].tolist()))
        sums = aggregate(rows, "sum")
        out.append({u: (sums[u], t) for u, _, t in rows})   # rows are in ts order: last wins
    return out


@pytest.fixture(scope="module")
def real():
    return real_stream.read_slides()


@needs_data
def test_real_file_has_158_slides_and_157_windows(real):
    assert real.t0 == real_stream.T0
    assert (len(real.slides), real.windows) == (158, 157)
    assert all(set(p.count.values()) == {1} for p in real.slides)   # the Java's counter (§10.1)


@needs_data
def test_real_window_user_counts_match_the_authors_totals_on_every_window(real):
    totals = real_stream.read_totals()
    assert len(totals) == 150          # the file lists the 150 evaluated windows
    got = [(real.t0 + real.omega + k * real.beta, len(real.window(k))) for k in range(len(totals))]
    assert got == totals


@needs_data
def test_real_items_carry_the_javas_values_on_all_157_windows(real):
    ids, x, ts = real_stream.items(real)
    assert np.all(np.diff(ts) >= 0) and set(np.unique(x).tolist()) == {0.0, 1.0}
    got = _windows(ids, x, ts, real.t0, real.omega, real.beta, real.windows)
    for k in range(real.windows):
        want = {u: (float(v), t) for u, (v, t) in real.window(k).items()}
        assert got[k] == want, k
    values = {v for w in got for v, _ in w.values()}
    assert values == {1.0, 2.0}


def _write(path, ids, ts, t0, omega, beta, slides, window_comma=False):
    """The Java's format (data README): a slide line pair per slide, a Window line pair after it."""
    r = omega % beta

    def piece(lo, hi):
        m = (ts >= lo) & (ts < hi)
        last = dict(zip(ids[m].tolist(), ts[m].tolist()))
        return ", ".join(f"{u}=1" for u in last), ", ".join(f"{u}={t}" for u, t in last.items())

    lines = []
    for k in range(slides):
        lo = t0 + k * beta
        c, t = piece(lo, lo + beta)
        lines += [f"{lo} to {lo + beta + 7} slide{{{c}}}", f"time : {{{t}}}"]
        if k + 1 < slides:
            c2, t2 = piece(lo + beta, lo + beta + r)
            end = "," if window_comma else ""
            lines += [f"{lo + beta} TO {lo + beta + r + 3} Window : [{{{c}}}, {{{c2}}}]{end}",
                      f"time : [{{{t}}}, {{{t2}}}]{end}"]
    Path(path).write_text("\n".join(lines) + "\n")


@settings(deadline=None, max_examples=60)
@given(st.integers(2, 9), st.integers(2, 6), st.booleans(),
       st.lists(st.tuples(st.integers(0, 5), st.integers(0, 4)), max_size=50))
def test_items_equal_slide_presence_of_the_mentions(tmp_path_factory, slides, beta, comma, pairs):
    omega, t0 = beta + max(1, beta // 2), 1000       # one slide plus an early piece (omega mod beta)
    ids = np.array([p[0] for p in pairs], np.int64)
    ts = (t0 + np.cumsum([p[1] for p in pairs])).astype(np.int64)
    keep = ts < t0 + slides * beta
    ids, ts = ids[keep], ts[keep]
    path = tmp_path_factory.mktemp("s") / "slides.txt"
    _write(path, ids, ts, t0, omega, beta, slides, comma)
    stream = real_stream.read_slides(path, omega, beta)
    assert (len(stream.slides), stream.windows) == (slides, slides - 1)
    got = _windows(*real_stream.items(stream), t0, omega, beta, slides - 1)
    want = _windows(*slide_presence(ids, ts, t0, omega, beta), t0, omega, beta, slides - 1)
    assert got == want


GOOD = ["100 to 170 slide{1=1, 2=1}", "time : {1=130, 2=120}",
        "160 TO 205 Window : [{1=1, 2=1}, {2=1}]", "time : [{1=130, 2=120}, {2=170}]",
        "160 to 230 slide{2=1, 3=1}", "time : {2=170, 3=210}"]


def _bad(tmp_path, lineno, text):
    lines = list(GOOD)
    lines[lineno - 1] = text
    path = tmp_path / "slides.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_good_sample_parses(tmp_path):
    path = tmp_path / "ok.txt"
    path.write_text("\n".join(GOOD) + "\n")
    s = real_stream.read_slides(path, omega=100, beta=60)
    assert s.window(0) == {1: (1, 130), 2: (2, 170)}


@pytest.mark.parametrize("lineno, text, error, words", [
    (1, "100 to 170 slide{1=1, 2=x}", MalformedRecord, "user=number"),
    (1, "100 to 170 slide{1=1, 1=1}", MalformedRecord, "twice"),
    (1, "100 from 170 slide{1=1}", MalformedRecord, "expected 'FROM"),
    (2, "time : 1=130, 2=120", MalformedRecord, "time :"),
    (2, "time : {1=130}", InvalidRecord, "users differ"),
    (2, "time : {1=130, 2=99}", InvalidRecord, "outside"),
    (1, "100 to 170 slide{1=0, 2=1}", InvalidRecord, "below 1"),
    (1, "90 to 170 slide{1=1, 2=1}", InvalidRecord, None),        # fine alone: t0 = 90 ...
    (3, "170 TO 205 Window : [{1=1, 2=1}, {2=1}]", InvalidRecord, "second piece starts"),
    (3, "160 TO 205 Window : [{1=1}, {2=1}]", InvalidRecord, None),
    (4, "time : [{1=130, 2=120}, {2=165}]", InvalidRecord, "no consistent last"),
    (4, "time : [{1=130, 2=120}, {2=175}]", InvalidRecord, "no consistent last"),
    (4, "time : [{1=130, 2=120}, {2=170}", MalformedRecord, "time : ["),
    (5, "time : {2=170}", MalformedRecord, "expected 'FROM"),
    (5, "220 to 230 slide{2=1, 3=1}", InvalidRecord, "starts at 220"),
])
def test_malformed_input_is_a_typed_error_at_file_line(tmp_path, lineno, text, error, words):
    path = _bad(tmp_path, lineno, text)
    with pytest.raises(error) as e:
        real_stream.read_slides(path, omega=100, beta=60)
    assert e.value.location is not None and e.value.location.startswith(f"{path}:")
    if words:
        assert words in str(e.value)
    if lineno != 1 or words:       # errors found while reading name the line they are about
        assert e.value.location in (f"{path}:{lineno}", f"{path}:{lineno + 1}", f"{path}:{lineno - 1}")


def test_early_piece_missing_a_user_of_the_next_slides_first_part(tmp_path):
    # user 3 is last mentioned at 180 < 160 + 40 in slide 1, so window 0's second piece must list it
    path = _bad(tmp_path, 6, "time : {2=170, 3=180}")
    with pytest.raises(InvalidRecord, match="not in window 0's second piece") as e:
        real_stream.read_slides(path, omega=100, beta=60)
    assert e.value.location == f"{path}:4"


def test_crlf_line_ends_parse(tmp_path):
    path = tmp_path / "crlf.txt"
    path.write_bytes(("\r\n".join(GOOD) + "\r\n").encode())
    assert real_stream.read_slides(path, omega=100, beta=60).window(0) == {1: (1, 130), 2: (2, 170)}


def test_truncated_pair_and_empty_file(tmp_path):
    path = tmp_path / "cut.txt"
    path.write_text("\n".join(GOOD[:5]) + "\n")
    with pytest.raises(MalformedRecord, match="without its time line") as e:
        real_stream.read_slides(path, omega=100, beta=60)
    assert e.value.location == f"{path}:5"
    path.write_text("")
    with pytest.raises(MalformedRecord, match="no slide"):
        real_stream.read_slides(path, omega=100, beta=60)


def test_window_layout_needs_omega_between_beta_and_twice_beta(tmp_path):
    path = tmp_path / "ok.txt"
    path.write_text("\n".join(GOOD) + "\n")
    with pytest.raises(InvalidParameter):
        real_stream.read_slides(path, omega=120, beta=60)


def test_totals_reader_names_the_bad_line(tmp_path):
    path = tmp_path / "tot.txt"
    path.write_text("1,2\n3;4\n")
    with pytest.raises(MalformedRecord) as e:
        real_stream.read_totals(path)
    assert e.value.location == f"{path}:2"
