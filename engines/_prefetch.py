"""The engines' software prefetch: ``streamspec.spec._prefetch`` (the spec layer's token
numbering uses it too, and the spec imports nothing from the engines)."""
from streamspec.spec._prefetch import prefetch, prefetch_row  # noqa: F401
