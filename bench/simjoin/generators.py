"""Seeded set-stream generators shaped like the SWOOP paper's data (Section 7.1, Table 3).

All return a ``spec.simjoin.RecordBatch`` (int ids ``0..n-1``, int tokens,
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

from spec.simjoin import RecordBatch


def _zipf_sampler(rng, vocab: int, s: float):
    weights = 1.0 / np.arange(1, vocab + 1, dtype=np.float64) ** s
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    return lambda size: np.searchsorted(cdf, rng.random(size), side="right").astype(np.int64)


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
        parts = []
        for i in range(n):
            if is_copy[i]:
                seg = parts[max(0, i - int(back[i]))].copy()
                if flip[i]:
                    seg[0] = fresh[i]
            else:
                seg = tokens[ptr[i]:ptr[i + 1]]
            parts.append(seg)
        sizes = np.array([len(x) for x in parts], dtype=np.int64)
        tokens = np.concatenate(parts).astype(np.int64)
    return _batch(sizes, tokens, np.arange(n, dtype=np.int64) // rate)


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
