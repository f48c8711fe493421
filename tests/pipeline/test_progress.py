"""The progress line: throttled, on stderr only when it is a terminal unless asked."""
from __future__ import annotations

import io

from streamspec.pipeline.progress import Progress, stage_summary, wanted


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_off_when_not_a_terminal_unless_asked():
    assert not wanted(None, io.StringIO())
    assert wanted(None, Tty())
    assert wanted(True, io.StringIO()) and not wanted(False, Tty())
    out = io.StringIO()
    p = Progress("job", stream=out)
    assert not p.update(1, 10, force=True)
    p.close()
    assert out.getvalue() == ""


def test_throttled_redraws():
    out, clock = io.StringIO(), Clock()
    p = Progress("job", enabled=True, stream=out, interval=0.5, clock=clock)
    assert p.update(1, 4)
    clock.now = 0.2
    assert not p.update(2, 4)
    clock.now = 0.7
    assert p.update(3, 4, note="tasks")
    assert out.getvalue().count("\r") == 2
    assert "job: 3/4 (75%) tasks  0.7s" in out.getvalue()
    p.close()
    assert out.getvalue().endswith("\r")


def test_shorter_line_overwrites_a_longer_one():
    out, clock = io.StringIO(), Clock()
    p = Progress("j", enabled=True, stream=out, interval=0, clock=clock)
    p.update(1000000, note="a long note here")
    p.update(1)
    last = out.getvalue().split("\r")[-1]
    assert last.startswith("j: 1  0.0s") and len(last) == len("j: 1000000 a long note here  0.0s")


class Stage:
    def __init__(self, done, total):
        self.numCompletedTasks, self.numTasks = done, total


class Tracker:
    def __init__(self, stages):
        self.stages = stages

    def getActiveStageIds(self):
        return list(self.stages)

    def getStageInfo(self, i):
        return self.stages[i]


def test_stage_summary():
    assert stage_summary(Tracker({})) is None
    assert stage_summary(Tracker({3: Stage(1, 4), 2: Stage(2, 2)})) == (3, 6, "tasks (stage 2, 3)")
