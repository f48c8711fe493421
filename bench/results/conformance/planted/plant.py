"""Generate connectivity engine packages with `streamspec new-engine`, plant one bug in each."""
import re, subprocess, sys
from pathlib import Path
BIN = Path("/tmp/rv/venv/bin")
BUGS = {
    "okuf": None,
    # window boundary: an edge at the window's start expired with the older ones (a first
    # try, `time <= end` in the union, is no bug in this engine: an edge at a window's end is
    # only appended after that window was evaluated, so both versions answer alike)
    "bugend": ("self._edges = [e for e in self._edges if e[2] >= start]",
               "self._edges = [e for e in self._edges if e[2] > start]"),
    # state dropped at the next window's start: edges of the overlap forgotten
    "bugdrop": ("self._edges = [e for e in self._edges if e[2] >= start]",
                "self._edges = [e for e in self._edges if e[2] >= end - 1]"),
}
PICKLE = {
    # pickling: the newest edge lost when pickled
    "bugtail": '''
    def __getstate__(self):
        state = dict(self.__dict__)
        if state.get("_edges"):
            state["_edges"] = state["_edges"][:-1]
        return state
''',
    # pickling: the ad-hoc answers' state (last window's roots) left out
    "bugadhoc": '''
    def __getstate__(self):
        state = dict(self.__dict__)
        state["_root"] = {}
        return state
''',
}
# the driver's pre-warm contract (ConnectivityEngine._answer_dry): a dry answer cached and
# reused by the next trigger without invalidation, so edges that arrive between the pre-warm
# and the trigger are left out of that window
DRY = {
    "bugdry": ("    def _evaluate_window(self, n: int) -> list[bool]:\n",
               "    def _evaluate_window(self, n: int) -> list[bool]:\n"
               "        memo = getattr(self, \"_memo\", None)\n"
               "        if memo is not None and memo[0] == n:\n"
               "            return memo[1]\n",
               '''
    _answers_dry = True

    def _answer_dry(self, lo):
        row = self._evaluate_window(lo)
        self._memo = (lo, row)
        return np.array([row], dtype=bool)
'''),
}
for name in list(BUGS) + list(PICKLE) + list(DRY):
    d = Path(f"/tmp/rv/pkgs/{name}")
    subprocess.run([BIN / "streamspec", "new-engine", "connectivity", name, str(d)], check=True,
                   capture_output=True)
    engine = next(d.rglob("engine.py"))
    src = engine.read_text()
    if BUGS.get(name):
        a, b = BUGS[name]
        assert a in src, (name, a)
        src = src.replace(a, b)
    if name in PICKLE:
        src = src.rstrip("\n") + "\n" + PICKLE[name]
    if name in DRY:
        a, b, tail = DRY[name]
        assert a in src, (name, a)
        src = src.replace(a, b).rstrip("\n") + "\n" + tail
    engine.write_text(src)
    subprocess.run([BIN / "pip", "install", "-q", str(d)], check=True, capture_output=True)
    print("installed", name)
