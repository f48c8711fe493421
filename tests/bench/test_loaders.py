"""SNAP edge-list loader: formats, synthetic times, dropping, located errors."""
import gzip

import numpy as np
import pytest

from streamspec.spec.errors import MalformedRecord

from streamspec.bench.connectivity.loaders import load_edge_list


def write(tmp_path, text, name="g.txt"):
    path = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        path.write_text(text)
    return path


SNAP = """# Directed graph (each unordered pair of nodes is saved once): toy.txt
# FromNodeId\tToNodeId
0\t1
1\t2

2\t2
2\t1
3\t4  # trailing comment
0\t1
"""


@pytest.mark.parametrize("name", ["g.txt", "g.txt.gz"])
def test_synthetic_times_drop_loops_and_duplicates(tmp_path, name):
    s = load_edge_list(write(tmp_path, SNAP, name), edges_per_timestamp=2, time_step=1000, t0=5)
    assert list(zip(s.u.tolist(), s.v.tolist())) == [(0, 1), (1, 2), (3, 4)]
    assert s.t.tolist() == [5, 5, 1005]


def test_keep_everything_when_asked(tmp_path):
    s = load_edge_list(write(tmp_path, SNAP), drop_self_loops=False, drop_duplicates=False)
    assert len(s) == 6
    assert np.all(s.t == 0)                      # 100 edges per timestamp by default


def test_time_column_kept_and_sorted_stably(tmp_path):
    s = load_edge_list(write(tmp_path, "1 2 30\n3 4 10\n5 6 30\n7 8 20\n"))
    assert s.t.tolist() == [10, 20, 30, 30]
    assert s.u.tolist() == [3, 7, 1, 5]


def test_limit_and_custom_comment(tmp_path):
    s = load_edge_list(write(tmp_path, "% konect\n1 2\n3 4\n5 6\n"), comment="%", limit=2)
    assert s.u.tolist() == [1, 3]


def test_empty_file(tmp_path):
    assert len(load_edge_list(write(tmp_path, "# nothing\n"))) == 0


@pytest.mark.parametrize("text, line", [
    ("1 2\n3 x\n", 2),                  # not an integer
    ("1 2\n3 4 5\n", 2),                # more fields than the first line
    ("1 2 7\n# c\n3 4\n", 3),           # fewer fields than the first line
    ("1\n", 1),                         # too few fields
    ("1 2 3 4\n", 1),                   # too many fields
    ("1 2\n3 4.5\n", 2),                # a float
])
def test_malformed_lines_are_located(tmp_path, text, line):
    path = write(tmp_path, text)
    with pytest.raises(MalformedRecord) as err:
        load_edge_list(path)
    assert err.value.location == f"{path}:{line}"
    assert f"{path}:{line}" in str(err.value)
