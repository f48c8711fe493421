"""The Table 3-shaped streams and the text loader (bench/simjoin/table3.py, loaders.py):
statistics of small streams, cheap (no engine runs)."""
import numpy as np
import pytest

from streamspec.bench.simjoin import loaders, table3
from streamspec.bench.simjoin.table3 import TABLE3, VOCAB, ZIPF_S


def _sets(b):
    return [b.tok[b.tok_ptr[i]:b.tok_ptr[i + 1]] for i in range(len(b))]


@pytest.mark.parametrize("name,n", [("tweet", 3000), ("flickr", 3000), ("enron", 300),
                                    ("industry", 3000)])
def test_stream_statistics(name, n):
    b = table3.GENERATORS[f"table3-{name}"](n, seed=3)
    assert len(b) == n and b.tok_ptr[-1] == b.tok.size
    sizes = np.diff(b.tok_ptr)
    assert abs(sizes.mean() - TABLE3[name][1]) < 0.06 * TABLE3[name][1]
    assert all(len(np.unique(s)) == len(s) for s in _sets(b))          # sets, no repeats
    assert b.tok.min() >= 0 and b.tok.max() < VOCAB[name]
    assert np.all(np.diff(b.ts) >= 0)
    assert abs(b.ts[-1] / n - 1) < 0.25                                  # one set a unit on average
    # a prefix of the same seed is the same stream
    short = table3.GENERATORS[f"table3-{name}"](n // 2, seed=3)
    assert np.array_equal(short.tok, b.tok[:short.tok_ptr[-1]])


def test_vocabularies_give_the_papers_universe():
    for name, (length, mean, universe) in TABLE3.items():
        got = table3.expected_universe(length * mean, ZIPF_S, VOCAB[name])
        assert abs(got / universe - 1) < 0.01, name


def test_dblp_late_tokens_and_spikes():
    scale = 0.01                                        # 55,000 sets, spikes up to 3,382
    b = table3.dblp(12_000, seed=0, scale=scale)
    v = VOCAB["dblp"]
    owner = np.repeat(np.arange(len(b)), np.diff(b.tok_ptr))
    assert owner[b.tok == v + 1].min() == table3.DBLP_FIRST[0]          # "page"
    assert owner[b.tok == v].min() == table3.DBLP_FIRST[1]              # "home"
    full = int(TABLE3["dblp"][0] * scale)
    day, home, sizes = table3.dblp_layout(full, np.random.default_rng(0))
    assert abs((sizes.sum() + 2 * home.sum()) / full - 12.1) < 0.3      # with "home", "page"
    per_day = np.bincount(day)
    peak = table3.DBLP_PEAK * scale
    assert peak <= per_day.max() < 1.1 * peak                           # the w = 1 day spike
    assert home[per_day[day] >= peak / 2].mean() > 0.9                  # the late tokens peak there
    ts = np.repeat(np.arange(4.0), [3, 0, 5, 2])
    assert table3.window_sizes(ts, 1.0).tolist() == [1, 2, 3, 1, 2, 3, 4, 5, 1, 2]


def test_fortune_loader(tmp_path):
    (tmp_path / "b").write_text("Ham, ham & eggs!\n%\n%\nEggs again\n")
    (tmp_path / "a").write_text("A fool and\nhis money.\n%\nham\n")
    (tmp_path / "a.dat").write_bytes(b"\x00\x01")
    b = loaders.fortunes(root=str(tmp_path))
    # files by name, fortunes in order, the empty one skipped, tokens by first appearance
    assert [s.tolist() for s in _sets(b)] == [[0, 1, 2, 3, 4], [5], [5, 6], [6, 7]]
    assert b.ts.tolist() == [0, 1, 2, 3]
    assert len(loaders.fortunes(2, root=str(tmp_path))) == 2
    with pytest.raises(ValueError, match="4 sets"):
        loaders.fortunes(5, root=str(tmp_path))
    with pytest.raises(FileNotFoundError, match="apt-get install"):
        loaders.fortunes(root=str(tmp_path / "missing"))
