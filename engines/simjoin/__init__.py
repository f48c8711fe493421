"""Continuous top-k set similarity join engines (SWOOP, PVLDB): ``base``, ``swoop``,
the competitors ``scase`` and ``static``, and the ablations ``swoop-noindex`` and
``swoop-noincrement`` (paper Figure 13)."""
