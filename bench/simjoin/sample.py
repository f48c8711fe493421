"""Writes the bundled sample set stream ``bench/simjoin/data/sample-tweets.jsonl``:
2,000 tweet-like records (``text`` over a Zipf vocabulary, retweet-like near
copies, a ``key`` of one of three cities, one record per second), so
``streamspec run simjoin`` can be tried without data.  Seeded: rerunning it
rewrites the same file.

    python -m streamspec.bench.simjoin.sample
"""
from __future__ import annotations

import json
import os

import numpy as np

from streamspec.bench.simjoin.generators import tweet_like

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "sample-tweets.jsonl")
CITIES = ("aalborg", "copenhagen", "salzburg")
SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "ta", "po", "si", "da", "ve")


def word(n: int) -> str:
    """A pronounceable word for vocabulary rank ``n`` (distinct ranks, distinct words)."""
    out = ""
    n += 1
    while n:
        n, r = divmod(n, len(SYLLABLES))
        out += SYLLABLES[r]
    return out


def main(path: str = PATH, n: int = 2000, seed: int = 3) -> str:
    batch = tweet_like(n, seed=seed, vocab=5000, mean_size=9.0, dup=0.15, recent=50)
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, len(CITIES), n)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        for i in range(n):
            toks = batch.tok[batch.tok_ptr[i]:batch.tok_ptr[i + 1]].tolist()
            f.write(json.dumps({"id": f"tw{i}", "ts": int(batch.ts[i]), "key": CITIES[keys[i]],
                                "text": " ".join(word(t) for t in toks)}) + "\n")
    return path


if __name__ == "__main__":
    print(main())
