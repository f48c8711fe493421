"""Seeded set-stream generators shaped like the SWOOP paper's data (Section 7.1, Table 3).

All return a ``streamspec.spec.simjoin.RecordBatch`` (int ids ``0..n-1``, int tokens,
timestamps ``0, 1, 2, ...`` scaled by ``rate`` sets per time unit, so a window
``w`` holds about ``w * rate`` sets).

- ``tweet_like``: ~13.4 tokens per set drawn from a Zipf(s) distribution over
  a large vocabulary (TWEET: 13.44 tokens per set, a heavy-tailed universe);
  a share ``dup`` of the sets are retweet-like near copies of a recent set
  (one token replaced with probability 1/2), as on Twitter, so the top-k
  scores are high, as in the paper's TWEET runs.
- ``enron_like``: ~300 tokens per set (ENRON: 302.2) from a Zipf vocabulary.
- ``dblp_like``: ~12 tokens per set whose *frequent tokens appear late*: the
  token ranks are permuted so the most frequent tokens are first drawn only
  after a warm-up (so first-appearance numbering guesses the order wrongly,
  the case of Section 5.6), and the arrival rate bursts (many sets per time
  unit in bursts, sparse otherwise).
"""
from __future__ import annotations

import numpy as np
from streamspec.spec._numba import njit

from streamspec.spec.simjoin import RecordBatch


def _zipf_sampler(rng, vocab: int, s: float):
    weights = 1.0 / np.arange(1, vocab + 1, dtype=np.float64) ** s
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    guide = np.searchsorted(cdf, np.arange(GUIDE) / GUIDE, side="right").astype(np.int64)
    return lambda size: _inverse_cdf(cdf, guide, rng.random(size))


GUIDE = 1 << 20


@njit(cache=True)
def _inverse_cdf(cdf, guide, u):
    """``searchsorted(cdf, u, side="right")`` through a guide table (Chen and
    Asau): ``guide[b]`` is the answer for ``b / GUIDE <= u``, so a short
    forward walk finishes it (same result, no cache-missing binary search)."""
    out = np.empty(u.size, np.int64)
    last = cdf.size - 1
    for x in range(u.size):
        v = u[x]
        i = guide[int(v * GUIDE)]
        while i < last and cdf[i] <= v:
            i += 1
        out[x] = i
    return out


def _batch(sizes: np.ndarray, tokens: np.ndarray, ts: np.ndarray) -> RecordBatch:
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return RecordBatch(np.arange(sizes.size, dtype=np.int64), ts, ptr, tokens)


def tweet_like(n: int, seed: int = 0, vocab: int = 1_000_000, s: float = 1.0,
               mean_size: float = 13.4, rate: int = 1, dup: float = 0.1,
               recent: int = 1000) -> RecordBatch:
    rng = np.random.default_rng(seed)
    sizes = np.maximum(1, rng.poisson(mean_size, n))
    tokens = _zipf_sampler(rng, vocab, s)(int(sizes.sum()))
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    if dup > 0 and n > 1:
        # retweets: a set that copies a recent set (sources precede copies)
        is_copy = rng.random(n) < dup
        is_copy[0] = False
        back = 1 + rng.integers(0, recent, n)
        fresh = _zipf_sampler(rng, vocab, s)(n)
        flip = rng.random(n) < 0.5
        sizes, tokens = _retweets(ptr.astype(np.int64), tokens, is_copy, back, fresh, flip)
    return _batch(sizes, tokens, np.arange(n, dtype=np.int64) // rate)


@njit(cache=True)
def _retweets(ptr, tokens, is_copy, back, fresh, flip):
    """Set ``i`` becomes a copy of set ``max(0, i - back[i])`` (itself possibly a
    copy) where ``is_copy[i]``, its first token replaced by ``fresh[i]`` where
    ``flip[i]``.  Compiled: a Python loop took 5 s for the 1e6-set windows."""
    n = ptr.size - 1
    sizes = np.empty(n, np.int64)
    src = np.empty(n, np.int64)            # the original set each set's tokens come from
    for i in range(n):
        src[i] = src[max(0, i - back[i])] if is_copy[i] else i
        sizes[i] = ptr[src[i] + 1] - ptr[src[i]]
    out = np.empty(sizes.sum(), np.int64)
    at = 0
    first = np.empty(n, np.int64)          # each set's first token, after its flips
    for i in range(n):
        a = ptr[src[i]]
        for q in range(sizes[i]):
            out[at + q] = tokens[a + q]
        if is_copy[i]:
            out[at] = fresh[i] if flip[i] else first[max(0, i - back[i])]
        first[i] = out[at]
        at += sizes[i]
    return sizes, out


def enron_like(n: int, seed: int = 0, vocab: int = 700_000, s: float = 1.0,
               mean_size: float = 300.0, rate: int = 1) -> RecordBatch:
    return tweet_like(n, seed, vocab, s, mean_size, rate)


def dblp_like(n: int, seed: int = 0, vocab: int = 1_000_000, s: float = 1.0,
              mean_size: float = 12.1, burst: int = 50, late: float = 0.3) -> RecordBatch:
    rng = np.random.default_rng(seed)
    sizes = np.maximum(1, rng.poisson(mean_size, n))
    ranks = _zipf_sampler(rng, vocab, s)(int(sizes.sum()))
    # the frequent tokens (small ranks) get ids that only occur after the warm-up
    hot = 1000
    owner = np.repeat(np.arange(n), sizes)
    warm = owner < int(late * n)
    ranks = np.where(warm & (ranks < hot), ranks + hot * (1 + rng.integers(0, 50, ranks.size)), ranks)
    # bursty arrivals: bursts of `burst` sets at one time unit, singles otherwise
    in_burst = (np.arange(n) // burst) % 4 == 0
    step = np.where(in_burst, 0, 1)
    ts = np.cumsum(step).astype(np.int64)
    return _batch(sizes, ranks, ts)
