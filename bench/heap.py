"""The collector around a measured call: the harness's heap frozen, the measured code's own.

``frozen()`` is ``gc.collect(); gc.freeze()`` before the block and ``gc.unfreeze()``
after: a collector pass during the measured call walks only the objects made since (the
engine's), never the harness's, so a full pass does not land in one run and not another
(``bench.standard``, ``bench.connectivity.measure``).

A process that froze objects of its own before (``gc.get_freeze_count() > 0``: the
project's test session freezes the heap alive before each test, ``tests/conftest.py``)
keeps them frozen: ``gc.unfreeze()`` would thaw those too, and every later
``gc.collect()`` would walk that whole heap again.  What the block froze then stays
frozen until that process unfreezes (the rule ``engines.kws.cngen.collector_off``
follows too).
"""
from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def frozen():
    """``gc.collect(); gc.freeze()`` for the block, ``gc.unfreeze()`` after (see above)."""
    outer = gc.get_freeze_count() > 0
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        if not outer:
            gc.unfreeze()
