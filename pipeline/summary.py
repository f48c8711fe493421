"""The sentence every ``streamspec run`` job prints when it is done (issue 12).

One shape for the four problems, so a log reads the same whichever ran:
``connectivity: wrote 85 windows from 3000 edges (r=500, s=100, engine bic)
to out/connectivity in 3.2 s.``  The job adds its own detail lines after it
(per-query shares, the last answer...).
"""
from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 window``, ``2 windows``."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


def sentence(problem: str, wrote: str, source: str, settings: str, engine: str,
             output: str, elapsed: float) -> str:
    """``problem: wrote WROTE from SOURCE (SETTINGS, engine ENGINE) to OUTPUT in T s.``"""
    return (f"{problem}: wrote {wrote} from {source} ({settings}, engine {engine}) "
            f"to {output} in {elapsed:.1f} s.")
