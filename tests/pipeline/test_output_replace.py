"""kill -9 at every step of an output replacement (``run --overwrite``), then the next run.

Each case runs the writer's steps in a subprocess that SIGKILLs itself just before its
k-th file-system step (writing a file of the new dataset, a rename or exchange, one
unlink of the old output's deletion), for every k until the write completes.  After
each kill the output path must hold the old or the new dataset, whole (pyarrow reads
it), and ``recover_output`` (what the next run calls first) must leave the output and
nothing else, with a one-line message per leftover it handled.  Both schemes are
killed: the atomic exchange (local Linux file systems) and the two-rename fallback.
No Spark: the Spark side only writes the temporary directory.
"""
from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import textwrap

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from streamspec.pipeline.io import OutputExists, recover_output, rename_exchange, replace_output

OLD = [[1, 2], [3]]
NEW = [[10, 20], [30], [40]]

SCRIPT = textwrap.dedent("""
    import os, shutil, signal, sys
    import pyarrow as pa, pyarrow.parquet as pq
    import streamspec.pipeline.io as sio

    out, tmp, old, kill_at, scheme = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    steps = [0]

    def step():
        if steps[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        steps[0] += 1

    def counted(f):
        def g(*a, **k):
            step()
            return f(*a, **k)
        return g

    if scheme == "renames":         # a file system without RENAME_EXCHANGE
        def no_exchange(a, b):
            raise OSError(22, "Invalid argument")
        sio.rename_exchange = no_exchange
    else:
        sio.rename_exchange = counted(sio.rename_exchange)
    os.rename = counted(os.rename)
    os.unlink = counted(os.unlink)
    os.mkdir(tmp)                   # what Spark's df.write.parquet does, one file at a time
    for i, part in enumerate(%(new)r):
        step()
        pq.write_table(pa.table({"x": part}), os.path.join(tmp, f"part-{i:05d}.parquet"))
    step()
    open(os.path.join(tmp, "_SUCCESS"), "w").close()
    sio.replace_output(tmp, out, True, old)
    print("done", steps[0])
""" % {"new": NEW})


def write_dataset(path, parts):
    os.mkdir(path)
    for i, part in enumerate(parts):
        pq.write_table(pa.table({"x": part}), os.path.join(path, f"part-{i:05d}.parquet"))


def rows(path):
    return sorted(pq.read_table(path).column("x").to_pylist())


def flat(parts):
    return sorted(x for p in parts for x in p)


def exchange_works(tmp_path):
    a, b = tmp_path / "xa", tmp_path / "xb"
    a.mkdir(), b.mkdir()
    try:
        rename_exchange(str(a), str(b))
        return True
    except OSError:
        return False
    finally:
        a.rmdir(), b.rmdir()


@pytest.mark.parametrize("scheme", ["exchange", "renames"])
def test_kill_at_every_step_of_overwrite(tmp_path, scheme):
    if scheme == "exchange" and not exchange_works(tmp_path):
        pytest.skip("no renameat2 RENAME_EXCHANGE on this system or file system")
    script = tmp_path / "writer.py"
    script.write_text(SCRIPT)
    seen_new_before_cleanup = False
    for k in range(100):
        case = tmp_path / f"k{k}"
        case.mkdir()
        out, tmp, old = case / "out", case / ".out.tmp-0123abcd", case / ".out.old-0123abcd"
        write_dataset(out, OLD)
        done = subprocess.run([sys.executable, str(script), str(out), str(tmp), str(old), str(k), scheme],
                              capture_output=True, text=True, timeout=120)
        if done.returncode == 0:
            assert done.stdout.startswith("done"), done.stdout
            assert rows(out) == flat(NEW) and sorted(os.listdir(case)) == ["out"]
            break
        assert done.returncode == -signal.SIGKILL, done.stderr
        names = set(os.listdir(case))
        if scheme == "exchange":    # the path holds the old or the new output at every moment
            assert "out" in names, (k, names)
            assert rows(out) in (flat(OLD), flat(NEW)), k
        elif "out" in names:
            assert rows(out) in (flat(OLD), flat(NEW)), k
        else:                       # killed between the two renames: the next run heals it
            assert names == {".out.tmp-0123abcd", ".out.old-0123abcd"}, (k, names)
        err = io.StringIO()
        said = recover_output(str(out), err=err)
        assert sorted(os.listdir(case)) == ["out"], (k, os.listdir(case))
        assert rows(out) in (flat(OLD), flat(NEW)), k
        assert err.getvalue().splitlines() == said and len(said) == len(names - {"out"}), (k, said)
        for line in said:
            assert line.startswith(f"streamspec: {out}: ") and ("removed .out." in line
                                                                 or "into place" in line
                                                                 or "restored" in line), line
        if rows(out) == flat(NEW) and said:
            seen_new_before_cleanup = True
        assert recover_output(str(out), err=io.StringIO()) == []    # nothing left to say
    else:
        pytest.fail("the writer never completed")
    assert k >= 6               # every data file, _SUCCESS, the renames and the deletion were killed
    assert seen_new_before_cleanup  # some kill landed after the new output was in place


def test_recover_restores_the_previous_output_without_a_new_one(tmp_path):
    out = tmp_path / "out"
    write_dataset(tmp_path / ".out.old-00aa", OLD)
    err = io.StringIO()
    said = recover_output(str(out), err=err)
    assert rows(out) == flat(OLD) and sorted(os.listdir(tmp_path)) == ["out"]
    assert said == [f"streamspec: {out}: a run killed while replacing this output left it aside: "
                    "restored .out.old-00aa"]


def test_recover_removes_only_this_outputs_leftovers(tmp_path):
    out = tmp_path / "out"
    write_dataset(out, OLD)
    for name in (".out.tmp-01", ".out.staging-02", ".out.old-03", ".other.tmp-04", ".outx.tmp-05"):
        write_dataset(tmp_path / name, NEW)
    (tmp_path / ".out.tmp-notes").write_text("not ours: the tag is no hex")
    said = recover_output(str(out), err=io.StringIO())
    assert sorted(os.listdir(tmp_path)) == [".other.tmp-04", ".out.tmp-notes", ".outx.tmp-05", "out"]
    assert said == [f"streamspec: {out}: removed .out.old-03 (a replaced output left by a killed run)",
                    f"streamspec: {out}: removed .out.staging-02 (staged input left by a killed run)",
                    f"streamspec: {out}: removed .out.tmp-01 (an unfinished output left by a killed run)"]
    assert rows(out) == flat(OLD)


def test_replace_without_overwrite_refuses_an_output_that_appeared(tmp_path):
    out, tmp = tmp_path / "out", tmp_path / ".out.tmp-aa"
    write_dataset(out, OLD)
    write_dataset(tmp, NEW)
    with pytest.raises(OutputExists):
        replace_output(str(tmp), str(out), False, str(tmp_path / ".out.old-aa"))
    assert rows(out) == flat(OLD)


def test_next_run_reports_leftovers_before_spark(tmp_path):
    """The CLI: a run refused before Spark starts (the output exists) has already
    cleaned what a killed run left, one stderr line each."""
    edges = tmp_path / "edges.txt"
    edges.write_text("1 2 0\n2 3 5\n")
    queries = tmp_path / "queries.txt"
    queries.write_text("1 3\n")
    out = tmp_path / "out"
    write_dataset(out, OLD)
    write_dataset(tmp_path / ".out.tmp-5e", NEW)
    write_dataset(tmp_path / ".out.staging-6f", NEW)
    cli = os.path.join(os.path.dirname(sys.executable), "streamspec")
    done = subprocess.run([cli, "run", "connectivity", "--input", str(edges), "--output", str(out),
                           "--window", "10", "--slide", "5", "--queries", str(queries)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "output exists" in done.stderr
    assert f"streamspec: {out}: removed .out.tmp-5e (an unfinished output left by a killed run)" \
        in done.stderr.splitlines()
    assert f"streamspec: {out}: removed .out.staging-6f (staged input left by a killed run)" \
        in done.stderr.splitlines()
    assert sorted(os.listdir(tmp_path)) == ["edges.txt", "out", "queries.txt"]
    assert "Traceback" not in done.stderr
