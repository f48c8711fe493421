"""A progress line for long runs, on stderr.

``Progress`` redraws one status line (``\\r``), at most every ``interval``
seconds, so a tight loop can call ``update`` freely.  It is off when stderr is
not a terminal (logs and CI stay clean) unless asked for (``enabled=True``,
the CLI's ``--progress``); ``--no-progress`` turns it off on a terminal.

``SparkProgress`` feeds a ``Progress`` from Spark's status tracker in a
daemon thread: the active stages and their finished/total task counts.
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Callable, TextIO


def wanted(flag: bool | None, stream: TextIO | None = None) -> bool:
    """``flag`` when given, else whether ``stream`` (stderr) is a terminal."""
    if flag is not None:
        return bool(flag)
    stream = stream or sys.stderr
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """One throttled status line: ``label: done/total (pct) note  elapsed``."""

    def __init__(self, label: str, *, enabled: bool | None = None, stream: TextIO | None = None,
                 interval: float = 0.5, clock: Callable[[], float] = time.monotonic):
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = wanted(enabled, self.stream)
        self.interval = interval
        self.clock = clock
        self.started = clock()
        self._last_draw = None
        self._width = 0
        self._lock = threading.Lock()

    def update(self, done: int, total: int | None = None, note: str = "", force: bool = False) -> bool:
        """Redraw if the last drawing is ``interval`` old (or ``force``); True if drawn."""
        if not self.enabled:
            return False
        now = self.clock()
        with self._lock:
            if not force and self._last_draw is not None and now - self._last_draw < self.interval:
                return False
            self._last_draw = now
            text = f"{self.label}: {done}"
            if total:
                text += f"/{total} ({100 * done / total:.0f}%)"
            if note:
                text += f" {note}"
            text += f"  {now - self.started:.1f}s"
            pad = max(0, self._width - len(text))
            self._width = len(text)
            self.stream.write("\r" + text + " " * pad)
            self.stream.flush()
            return True

    def close(self) -> None:
        """End the line (only if anything was drawn)."""
        with self._lock:
            if self.enabled and self._last_draw is not None:
                self.stream.write("\r" + " " * self._width + "\r")
                self.stream.flush()
                self._last_draw = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def stage_summary(tracker) -> tuple[int, int, str] | None:
    """``(done, total, note)`` over Spark's active stages, or None when idle."""
    done = total = 0
    names = []
    for stage_id in sorted(tracker.getActiveStageIds()):
        info = tracker.getStageInfo(stage_id)
        if info is None:
            continue
        done += info.numCompletedTasks
        total += info.numTasks
        names.append(str(stage_id))
    if not names:
        return None
    return done, total, f"tasks (stage {', '.join(names)})"


class SparkProgress:
    """Poll Spark's status tracker while a job runs: ``with SparkProgress(spark, enabled): ...``."""

    def __init__(self, spark, enabled: bool | None = None, label: str = "spark",
                 interval: float = 0.5, stream: TextIO | None = None):
        self.progress = Progress(label, enabled=enabled, stream=stream, interval=interval)
        self.tracker = spark.sparkContext.statusTracker()
        self.interval = interval
        self._stop = threading.Event()
        self._thread = None

    def _poll(self):
        while not self._stop.wait(self.interval):
            summary = stage_summary(self.tracker)
            if summary is not None:
                self.progress.update(*summary)

    def __enter__(self):
        if self.progress.enabled:
            self._thread = threading.Thread(target=self._poll, name="streamspec-progress",
                                            daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.progress.close()
