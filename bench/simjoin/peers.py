"""Peers a user would try instead of SWOOP (issue 3; SWOOP Section 7 compares
with SCase and a static top-k join rerun per window): bench-only engines,
exact, behind the engine contract, measured against ``swoop`` in one run.

- ``scipy-bruteforce``: after every operation, the window's sets as a sparse
  0/1 CSR matrix ``A`` (sets x tokens); ``A @ A.T`` gives every pair's
  overlap, the score follows from the overlap and the two sizes (the same
  float64 expressions as ``streamspec.spec._simjoin_similarity``, so ties are bit for
  bit), and the top-k is the first k pairs in the canonical order.
- ``setsimilaritysearch``: the ``SetSimilaritySearch`` package's
  ``all_pairs`` (Bayardo et al.'s All-Pairs with prefix and position
  filters; jaccard and cosine only) rerun over the window after every
  operation at a threshold equal to the current k-th similarity (the k-th
  score of the previous list among its still valid pairs, or the lowest of
  them when fewer than k are left); when fewer than k pairs reach it, the
  threshold is halved (then 0) and the search rerun.
  Every pair at or above the threshold is found, so the top-k is exact.

``python -m streamspec.bench.simjoin.peers`` measures both against ``swoop`` on the
TWEET-like stream (CPU clock, a budget per engine) and writes ``peers.csv``
and ``peers.png``:

    python -m streamspec.bench.simjoin.peers --windows 100,1000,10000 --k 10 --budget 20

``swoop`` is measured by ``streamspec.bench.simjoin.throughput.measure``.  The peers are
measured by ``measure_peer``, the same loop (steady state after a full
window, CPU seconds, the rate over the sets done within the budget) except
two things that brute force needs: the window is filled by ``warm`` (one
top-k computation at the end instead of one per set: refilling 1e4 sets
through a per-set recomputation would take hours and is not measured anyway),
and sets are fed in small batches so the budget is checked often.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy import sparse

from streamspec.bench.simjoin.generators import tweet_like
from streamspec.bench.simjoin.throughput import measure, window_slice, write_csv
from streamspec.spec.errors import InvalidParameter
from streamspec.spec.simjoin import Params, RecordBatch, SimJoinEngine

SSS_SIMILARITIES = ("jaccard", "cosine")
LOWEST = 1e-3     # below this threshold the descent goes straight to 0 (every overlapping pair)


class WindowPeer(SimJoinEngine):
    """The window as plain lists (arrival order) and a from-scratch ``_top`` per operation."""

    exact = True

    def _start(self):
        self._seq: list[int] = []
        self._ts: list[float] = []
        self._side: list[int] = []
        self._tok: list[np.ndarray] = []     # sorted unique dense token ids
        self._last: tuple = ()
        self._deferred = False

    def warm(self, batch) -> None:
        """Benchmark warm-up: take ``batch`` into the window without computing a
        list per operation, then compute the list once (no output)."""
        self._deferred = True
        try:
            list(self.process(batch))
        finally:
            self._deferred = False
        self._last = self._top(self.index_time) if self.index_time is not None else ()

    def _apply(self, prep):
        changes = []
        wf = self.params.wf
        for p in range(len(prep.op)):
            t = float(prep.ts[p])
            if prep.op[p] == 0:
                self._seq.append(int(prep.seq[p]))
                self._ts.append(t)
                self._side.append(int(prep.side[p]))
                self._tok.append(np.unique(prep.tok[prep.tok_ptr[p]:prep.tok_ptr[p + 1]]))
            gone = 0        # times never decrease: the expired records are a prefix
            while gone < len(self._ts) and not t < self._ts[gone] + wf:
                gone += 1
            if gone:
                for lst in (self._seq, self._ts, self._side, self._tok):
                    del lst[:gone]
            if self._deferred:
                continue
            current = self._top(t)
            if current != self._last:
                changes.append((p, current))
                self._last = current
        return changes

    def _top(self, t: float) -> tuple:
        raise NotImplementedError

    def _first_k(self, a: np.ndarray, b: np.ndarray, score: np.ndarray) -> tuple:
        """The first k pairs in the canonical order ``(-score, -e, seq_i, seq_j)``
        of the window pairs ``(a, b)`` (window positions, ``a`` newer)."""
        k = self.params.k
        if score.size > k:
            # every top-k pair scores at least the k-th largest score
            kth = -np.partition(-score, k - 1)[k - 1]
            keep = score >= kth
            a, b, score = a[keep], b[keep], score[keep]
        seq = np.asarray(self._seq, np.int64)
        e = np.asarray(self._ts, np.float64)[b] + self.params.wf
        si, sj = seq[a], seq[b]
        order = np.lexsort((sj, si, -e, -score))[:k]
        return tuple((int(si[n]), int(sj[n]), float(score[n]), float(e[n])) for n in order.tolist())


def scores(similarity: str, lr: np.ndarray, ls: np.ndarray, o: np.ndarray) -> np.ndarray:
    """``streamspec.spec._simjoin_similarity.similarity`` over arrays (same float64 operations)."""
    lr, ls, o = (x.astype(np.int64) for x in (lr, ls, o))
    if similarity == "jaccard":
        return o / (lr + ls - o)
    if similarity == "cosine":
        return o / np.sqrt((lr * ls).astype(np.float64))
    if similarity == "dice":
        return (2 * o) / (lr + ls)
    if similarity == "overlap":
        return o.astype(np.float64)
    return -(lr + ls - 2 * o).astype(np.float64)


class ScipyBruteForce(WindowPeer):
    """Every pair's overlap from ``A @ A.T`` over the window's CSR token matrix, per operation."""

    name = "scipy-bruteforce"
    description = "sparse A @ A.T over the window after every set (numpy/scipy brute force)"

    def _top(self, t: float) -> tuple:
        n = len(self._tok)
        if n < 2:
            return ()
        sizes = np.fromiter((x.size for x in self._tok), np.int64, n)
        indptr = np.zeros(n + 1, np.int64)
        np.cumsum(sizes, out=indptr[1:])
        indices = np.concatenate(self._tok) if indptr[-1] else np.empty(0, np.int64)
        width = int(indices.max()) + 1 if indices.size else 1
        a = sparse.csr_matrix((np.ones(indices.size, np.int32), indices, indptr), shape=(n, width))
        pairs = sparse.triu(a @ a.T, k=1).tocoo()      # row < col: row is the older record
        old, new, o = pairs.row, pairs.col, pairs.data
        if self.params.join == "rs":
            side = np.asarray(self._side)
            keep = side[old] != side[new]
            old, new, o = old[keep], new[keep], o[keep]
        keep = o > 0
        old, new, o = old[keep], new[keep], o[keep]
        if o.size == 0:
            return ()
        return self._first_k(new, old, scores(self.params.similarity, sizes[new], sizes[old], o))


class SetSimilaritySearchPeer(WindowPeer):
    """``SetSimilaritySearch.all_pairs`` over the window at the current k-th similarity."""

    name = "setsimilaritysearch"
    description = "SetSimilaritySearch all_pairs rerun per set at the current k-th similarity"

    def _start(self):
        if self.params.similarity not in SSS_SIMILARITIES:
            raise InvalidParameter(f"setsimilaritysearch supports {SSS_SIMILARITIES}, "
                                   f"not {self.params.similarity!r}")
        from SetSimilaritySearch import all_pairs
        self._all_pairs = all_pairs
        super()._start()

    def _top(self, t: float) -> tuple:
        n, k = len(self._tok), self.params.k
        if n < 2:
            return ()
        still = [p for p in self._last if t < p[3]]      # a pair ends with its older record
        # the k-th similarity; with fewer valid pairs left, descend from the lowest of them
        tau = min(still[min(k, len(still)) - 1][2], 1.0) if still else 1.0
        sets = [x.tolist() for x in self._tok]
        side = self._side
        while True:
            found = [(x, y, s) for x, y, s in self._all_pairs(sets, self.params.similarity, tau)
                     if self.params.join == "self" or side[x] != side[y]]
            if len(found) >= k or tau == 0.0:
                break
            tau = tau / 2 if tau / 2 >= LOWEST else 0.0
        if not found:
            return ()
        new, old, score = (np.array(c) for c in zip(*found))    # all_pairs yields (larger, smaller)
        return self._first_k(new.astype(np.int64), old.astype(np.int64), score.astype(np.float64))


PEERS = {cls.name: cls for cls in (ScipyBruteForce, SetSimilaritySearchPeer)}


def measure_peer(cls, stream: RecordBatch, w: int, k: int, sets: int, budget: float,
                 similarity: str = "jaccard") -> dict:
    """``throughput.measure`` for a peer: warm-filled window, small batches (module docstring)."""
    eng = cls(Params(k=k, w=w, similarity=similarity))
    warm = min(w, len(stream) - sets)
    t0 = time.process_time()
    eng.warm(window_slice(stream, 0, warm))
    fill = time.process_time() - t0
    step = max(1, 1000 // w)
    done, spent, outputs = 0, 0.0, 0
    for a in range(warm, warm + sets, step):
        c = min(a + step, warm + sets)
        t = time.process_time()
        outputs += len(list(eng.process(window_slice(stream, a, c))))
        spent += time.process_time() - t
        done += c - a
        if spent > budget:
            break
    return {"engine": cls.name, "w": w, "k": k, "sets": done, "cpu_s": round(spent, 3),
            "sets_per_s": round(done / spent, 1) if spent else float("inf"),
            "fill_s": round(fill, 2), "outputs": outputs}


def plot(rows: list[dict], path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    for engine in dict.fromkeys(r["engine"] for r in rows):
        mine = [r for r in rows if r["engine"] == engine]
        ax.plot([r["w"] for r in mine], [r["sets_per_s"] for r in mine], marker="o", label=engine)
    ax.set_xscale("log"), ax.set_yscale("log")
    ax.set_xlabel("window size |W| (sets)"), ax.set_ylabel("sets / s (CPU)")
    ax.set_title(f"simjoin: swoop vs peers, TWEET-like, k={rows[0]['k']}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--windows", default="100,1000,10000")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--sets", type=int, default=20_000, help="sets measured per run at most")
    ap.add_argument("--budget", type=float, default=20.0, help="CPU seconds per run at most")
    ap.add_argument("--peers", default=",".join(PEERS))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.path.join("bench", "results", "simjoin"))
    args = ap.parse_args(argv)
    windows = [int(x) for x in args.windows.split(",")]
    stream = tweet_like(max(windows) + args.sets, seed=args.seed)
    rows = []
    for w in windows:
        row = measure("swoop", stream, w, args.k, args.sets, args.budget)
        rows.append({c: row[c] for c in ("engine", "w", "k", "sets", "cpu_s", "sets_per_s",
                                         "fill_s", "outputs")})
        print(rows[-1], flush=True)
        for name in args.peers.split(","):
            rows.append(measure_peer(PEERS[name], stream, w, args.k, args.sets, args.budget))
            print(rows[-1], flush=True)
    for row in rows:
        swoop = next(r for r in rows if r["engine"] == "swoop" and r["w"] == row["w"])
        row["swoop_speedup"] = round(swoop["sets_per_s"] / row["sets_per_s"], 1)
    os.makedirs(args.out, exist_ok=True)
    write_csv(rows, os.path.join(args.out, "peers.csv"))
    plot(rows, os.path.join(args.out, "peers.png"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
