"""Data of the AcquaTop experiments: the real follower snapshots, DS-CH-x, a mention stream.

Paper §6 (experimental setting: the follower-count snapshot file, the
DS-CH-x datasets and their parameters), and the authors' Java generator of
DS-CH-x (``BKGGenerator``).

- ``load_snapshots(path)``: ``{user: (times, followers)}`` from
  ``follower_snapshots.csv`` (no header; names may contain commas, so the
  fields are: first = id, second = screen name, last four = followers,
  friends, statuses, timestamp).
- ``dfc``: follower-count difference between consecutive snapshots (0 for
  the first).
- ``ds_ch(snapshots, target, seed)``: DS-CH-``target`` as the authors' data and
  generator show it was built: seeded noise ``5 + U{0..19}`` added to every
  dfc row first, then changes per invocation (distinct timestamp) scaled down
  proportionally to an average of ``target`` by setting randomly chosen
  changed users back to their previous value over the run of rows equal to
  the new value (one-step spikes A B A are skipped).  Seeded throughout.
- ``mentions(seed, ...)``: a seeded long-tailed (Zipf) Poisson mention stream
  over the 400 users, scaled so a 100 s window holds ~30 distinct users.
  The quality experiments draw it once, with ``STREAM_SEED``, and join that one
  stream with every DS-CH-x dataset (paper §6.1: one collected stream, five
  remote datasets per CH); its ids are the snapshot users, the keys of DS-CH-x.

All times are milliseconds, as in the authors' data.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

import os

# the data files sit in a data directory beside the checkout (not shipped);
# STREAMSPEC_SHARED_DATA points elsewhere
SHARED_DATA = Path(os.environ.get("STREAMSPEC_SHARED_DATA",
                                  Path(__file__).resolve().parents[2].parent / "shared" / "data"))
DATA = SHARED_DATA / "acquatop" / "follower_snapshots.csv"
T0 = 1420574422643          # the first tweet: the query's start
OMEGA, BETA, EVALUATIONS = 100_000, 60_000, 150
# the seed of the one seeded mention stream of the quality experiments (dataset 1's former stream,
# so the bundled sample, dataset 1 of DS-CH-20, is unchanged)
STREAM_SEED = 1


def load_snapshots(path: str | Path = DATA) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    rows: dict[int, list[tuple[int, int]]] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split(",")
            if len(fields) < 7:
                continue
            user, followers, ts = int(fields[0]), int(fields[-4]), int(fields[-1])
            rows.setdefault(user, []).append((ts, followers))
    out = {}
    for user, pairs in rows.items():
        pairs.sort()
        out[user] = (np.array([p[0] for p in pairs], np.int64), np.array([p[1] for p in pairs], np.int64))
    return out


def dfc(followers: np.ndarray) -> np.ndarray:
    return np.concatenate(([0], np.diff(followers))).astype(np.int64)


def changes_per_invocation(series: dict) -> dict[int, list]:
    """``{timestamp: [(user, row), ...]}`` of the rows whose value differs from the user's previous row."""
    out: dict[int, list] = {}
    for user, (times, values) in series.items():
        for j in np.flatnonzero(values[1:] != values[:-1]) + 1:
            out.setdefault(int(times[j]), []).append((user, int(j)))
    return out


def ds_ch(snapshots: dict, target: float, seed: int) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """DS-CH-``target``: ``{user: (times, dfc values)}`` (module docstring)."""
    rng = np.random.default_rng(seed)
    series = {u: (t, dfc(f) + 5 + rng.integers(0, 20, size=f.size)) for u, (t, f) in snapshots.items()}
    changes = changes_per_invocation(series)
    stamps = sorted(changes)
    avg = float(np.mean([len(changes[s]) for s in stamps]))
    if target >= avg:
        return series
    rows_at: dict[int, list] = {}
    for user, (times, _) in series.items():
        for j, t in enumerate(times.tolist()):
            rows_at.setdefault(t, []).append((user, j))
    for stamp in stamps:
        need = len(changes[stamp]) - int(round(len(changes[stamp]) * target / avg))
        cands = rows_at[stamp]
        for i in rng.permutation(len(cands)):
            if need <= 0:
                break
            user, j = cands[i]
            values = series[user][1]
            if j == 0:
                continue
            cur, prev = values[j], values[j - 1]
            nxt = values[j + 1] if j + 1 < values.size else prev + 1
            if cur != prev and nxt != prev:
                end = j
                while end < values.size and values[end] == cur:
                    end += 1
                values[j:end] = prev
                need -= 1
    return series


def timeline_rows(series: dict, first_at: int | None = T0 - 1):
    """``(key, time, value)`` rows of a DS-CH series.

    Each user's first snapshot (taken at about t0 + 15 s) is stamped ``first_at``
    (default ``t0 - 1``) so that the replica's bulk load at ``t0`` sees it, as
    the authors' code initialises the replica with each user's earliest row
    (as the authors' Java does); ``first_at=None`` keeps the real times.
    """
    for user, (times, values) in series.items():
        for j, (t, v) in enumerate(zip(times.tolist(), values.tolist())):
            yield user, (first_at if j == 0 and first_at is not None else t), float(v)


def mentions(users: list[int], seed: int, evaluations: int = EVALUATIONS, distinct: float = 30.0,
             per_window: float | None = None, zipf: float = 1.1) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, ts)`` of a seeded Poisson mention stream, Zipf-distributed over ``users``.

    By default the rate gives ``distinct`` expected distinct users per window;
    ``per_window`` fixes the expected mentions per window instead (throughput).
    """
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(users))
    weights = 1.0 / np.arange(1, len(users) + 1) ** zipf
    weights /= weights.sum()
    if per_window is None:
        lo, hi = 1.0, 1e6
        for _ in range(60):   # expected distinct users in a window for `mid` mentions
            mid = (lo + hi) / 2
            if np.sum(1 - np.exp(-mid * weights)) < distinct:
                lo = mid
            else:
                hi = mid
        per_window = lo
    span = OMEGA + BETA * (evaluations - 1)
    count = rng.poisson(per_window * span / OMEGA)
    ts = np.sort(T0 + rng.integers(0, span, size=count)).astype(np.int64)
    who = rng.choice(len(users), size=count, p=weights)
    ids = np.asarray(users, dtype=np.int64)[order][who]
    return ids, ts


def write_sample(directory: str | Path, evaluations: int = 30, seed: int = 1, ch: int = 20) -> None:
    """The bundled sample: ``mentions.csv`` (id,x,ts) and ``followers-dfc.csv`` (key,time,value),
    the first ``evaluations`` windows of dataset ``seed`` of DS-CH-``ch``; the timeline keeps the
    mentioned users only (the others never join), so the sample stays under 200 KB."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    snapshots = load_snapshots()
    ids, ts = mentions(list(snapshots), seed, evaluations=evaluations)
    end = T0 + OMEGA + (evaluations - 1) * BETA
    with open(directory / "mentions.csv", "w") as f:
        f.write("id,x,ts\n")
        f.writelines(f"{i},1,{t}\n" for i, t in zip(ids.tolist(), ts.tolist()))
    with open(directory / "followers-dfc.csv", "w") as f:
        f.write("key,time,value\n")
        mentioned = set(ids.tolist())
        f.writelines(f"{k},{t},{int(v)}\n" for k, t, v in timeline_rows(ds_ch(snapshots, ch, seed))
                     if t < end and k in mentioned)


# the sample ``streamspec demo`` runs (package data of ``pipeline``)
DEMO_SAMPLE = Path(__file__).resolve().parents[2] / "pipeline" / "data" / "topkjoin"

if __name__ == "__main__":
    import sys
    write_sample(sys.argv[1] if len(sys.argv) > 1 else DEMO_SAMPLE)
