"""Real set streams of text for the simjoin benchmarks (SWOOP Section 7.1 uses
real tweets, DBLP records, photo tags, e-mails and workflows; none of them ships
with a package, so the real stream here is a text corpus that does).

``fortunes``: the fortune cookie database of BSD ``fortune(6)`` as Debian ships
it in the packages ``fortunes`` and ``fortunes-min`` (43 files under
``/usr/share/games/fortunes``, 15,217 non-empty fortunes, version 1:1.99.1-7.3; licence BSD, as the packages'
``/usr/share/doc/fortunes/copyright`` states).  Install it with::

    apt-get install -y --no-install-recommends fortunes

It is a benchmark input only, not a dependency of streamspec.

How the corpus becomes a stream of sets:

- a set is one fortune (the text between two ``%`` lines), tokenized by the
  pipeline's documented text rule (``streamspec.pipeline.io.simjoin.tokenize``:
  lower-cased runs of word characters), duplicates collapsed; fortunes with no
  word are skipped;
- order: the files by name, the fortunes of a file in file order (so the
  topics drift as in a real stream: all ``linux`` fortunes, then ``literature``
  ones...);
- token ids: dense, by first appearance in that order (what the engines do to
  any token anyway, SWOOP Section 5.6), so the stream is the same ints on
  every machine with the same package version;
- timestamps: the corpus has none; set ``n`` arrives at time ``n`` (one set a
  time unit, so a window of duration ``w`` holds ``w`` sets, the convention of
  ``streamspec.bench.simjoin.throughput``);
- ids ``0..n-1``.
"""
from __future__ import annotations

import os

import numpy as np

from streamspec.pipeline.io.simjoin import tokenize
from streamspec.spec.simjoin import RecordBatch

FORTUNES_DIR = "/usr/share/games/fortunes"
INSTALL = "apt-get install -y --no-install-recommends fortunes"
LICENCE = "BSD (Debian packages fortunes, fortunes-min; /usr/share/doc/fortunes/copyright)"


def fortune_texts(root: str = FORTUNES_DIR) -> list[str]:
    """The fortunes of every data file under ``root`` (not the ``.dat`` indexes nor
    the ``.u8`` links), files by name, each file's fortunes in order."""
    if not os.path.isdir(root):
        raise FileNotFoundError(f"no fortune corpus at {root}: install it with `{INSTALL}`")
    texts: list[str] = []
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if name.endswith((".dat", ".u8")) or os.path.islink(path) or not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            chunk: list[str] = []
            for line in f:
                if line.rstrip("\n") == "%":
                    texts.append("".join(chunk))
                    chunk = []
                else:
                    chunk.append(line)
            texts.append("".join(chunk))
    return texts


def text_batch(texts: list[str]) -> RecordBatch:
    """Texts as a ``RecordBatch``: tokenized, token ids by first appearance, empty
    sets skipped, set ``n`` at time ``n``."""
    ids: dict[str, int] = {}
    ptr, tok = [0], []
    for text in texts:
        toks = dict.fromkeys(tokenize(text))
        if not toks:
            continue
        tok.extend(ids.setdefault(t, len(ids)) for t in toks)
        ptr.append(len(tok))
    n = len(ptr) - 1
    return RecordBatch(np.arange(n, dtype=np.int64), np.arange(n, dtype=np.int64),
                       np.asarray(ptr, np.int64), np.asarray(tok, np.int64))


def fortunes(n: int | None = None, seed: int = 0, root: str = FORTUNES_DIR) -> RecordBatch:
    """The first ``n`` sets of the fortune stream (all of it for ``None``).  ``seed``
    is accepted for the generators' signature and ignored: the order is the corpus's."""
    b = text_batch(fortune_texts(root))
    if n is None:
        return b
    if n > len(b):
        raise ValueError(f"the fortune stream has {len(b)} sets, {n} asked "
                         "(throughput: keep max(--windows) + --sets within it)")
    return RecordBatch(b.id[:n], b.ts[:n], b.tok_ptr[:n + 1], b.tok[:b.tok_ptr[n]])


LOADERS = {"fortunes": fortunes}
