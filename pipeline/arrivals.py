"""The order in which ``streamspec stream`` takes the files of ``--source``: by name.

Spark's file source takes new files by modification time, and files with equal times
(copied together, unpacked from an archive, written within the file system's time
resolution) in whatever order the directory lists them; with ``--files-per-batch`` a
later-named file could then be replayed in an earlier micro-batch than its predecessors
(a spurious "earlier than" rejection, repeated on every restart from that checkpoint).

So the query does not read ``--source`` itself.  The driver lists ``--source``, and
appends the files it has not taken yet, sorted by name, to an arrival log in the
checkpoint (``CHECKPOINT/streamspec-arrivals``): a symbolic link per file (same name)
and an entry in a ``_spark_metadata`` log in the format of Spark's own file sink, whose
modification times are the arrival numbers 1, 2, 3...  Spark's file source reads a
directory holding such a log from the log (as it reads another query's file-sink
output), sorts by those times and so takes the files in (listing, name) order, whatever
their real modification times.  Without ``--trigger-once`` the driver lists ``--source``
again between micro-batches.  A file is taken once, under its name; a file whose name
sorts before files already taken is taken in the next listing (arrival order wins over
name order across listings: name files in arrival order).

This applies to a local ``--source`` directory and a local ``--checkpoint``; a
checkpoint made before the arrival log existed (it has ``sources/`` but no arrival log)
keeps reading ``--source`` directly, as do remote file systems and globs (Spark's order).
"""
from __future__ import annotations

import json
import os
import pathlib
import threading

from streamspec.pipeline.flags import local_of

DIRNAME = "streamspec-arrivals"
_LOG = "_spark_metadata"
_VERSION = "v1"
_COMPACT_INTERVAL = 10          # Spark's default spark.sql.streaming.fileSink.log.compactInterval


class Arrivals:
    """The arrival log of one query (module docstring)."""

    def __init__(self, source: str, checkpoint: str, check=None):
        self.source = source
        self.dir = os.path.join(checkpoint, DIRNAME)
        self.log = os.path.join(self.dir, _LOG)
        self._lock = threading.Lock()
        # ``check(path)`` raises a located ``RecordError`` for a file the stream must not
        # take (a CSV file the project's readers refuse); the first such error is kept here
        # and no file from it on is logged
        self.check, self.error = check, None

    @classmethod
    def of(cls, args, check=None) -> "Arrivals | None":
        """The arrival log for ``args`` (``--source``, ``--checkpoint``), or None where
        the query reads ``--source`` directly (module docstring)."""
        source, checkpoint = local_of(args.source), local_of(args.checkpoint)
        if source is None or checkpoint is None or not os.path.isdir(source):
            return None
        if os.path.isdir(os.path.join(checkpoint, "sources")) and \
                not os.path.isdir(os.path.join(checkpoint, DIRNAME)):
            return None             # a checkpoint that read --source directly: keep doing so
        return cls(source, checkpoint, check)

    def _batches(self) -> list[tuple[int, str]]:
        return _log_batches(self.log)

    def entries(self) -> list[dict]:
        """Every file logged so far, in arrival order."""
        return log_entries(self.log)

    def update(self) -> int:
        """Log the files of ``--source`` not taken yet, by name; how many were added.  With
        ``check``, only the files before the first one it refuses (kept in ``error``)."""
        with self._lock:
            if self.error is not None:
                return 0
            os.makedirs(self.log, exist_ok=True)
            entries = self.entries()
            taken = {pathlib.PurePosixPath(_uri_path(e["path"])).name for e in entries}
            new = sorted(n for n in os.listdir(self.source)
                         if not n.startswith(("_", ".")) and n not in taken
                         and os.path.isfile(os.path.join(self.source, n)))
            if self.check is not None:
                from streamspec.spec.errors import RecordError
                for k, name in enumerate(new):
                    try:
                        self.check(os.path.join(self.source, name))
                    except RecordError as err:
                        self.error, new = err, new[:k]
                        break
            if not new:
                return 0
            added = []
            for k, name in enumerate(new, start=len(entries) + 1):
                link = os.path.join(self.dir, name)
                if os.path.lexists(link):   # made by a run killed before it logged the file
                    os.unlink(link)
                os.symlink(os.path.join(self.source, name), link)
                added.append({"path": pathlib.Path(link).as_uri(),
                              "size": os.path.getsize(link), "isDir": False,
                              "modificationTime": k, "blockReplication": 1,
                              "blockSize": 33554432, "action": "add"})
            batch = self._batches()[-1][0] + 1 if self._batches() else 0
            compact = (batch + 1) % _COMPACT_INTERVAL == 0
            name = f"{batch}.compact" if compact else str(batch)
            body = [_VERSION] + [json.dumps(e, separators=(",", ":"))
                                 for e in (entries + added if compact else added)]
            tmp = os.path.join(self.log, f".{name}.tmp")
            with open(tmp, "w", encoding="utf-8") as f:
                f.write("\n".join(body) + "\n")
            os.rename(tmp, os.path.join(self.log, name))
            return len(added)

    def follow(self, every: float) -> threading.Event:
        """List ``--source`` again every ``every`` seconds on a daemon thread until the
        returned event is set."""
        stop = threading.Event()

        def loop():
            while not stop.wait(every):
                try:
                    self.update()
                except OSError:
                    pass            # the next listing tries again
        threading.Thread(target=loop, name="streamspec-arrivals", daemon=True).start()
        return stop


def _log_batches(log: str) -> list[tuple[int, str]]:
    out = []
    for name in os.listdir(log):
        stem = name[:-len(".compact")] if name.endswith(".compact") else name
        if stem.isdigit():
            out.append((int(stem), name))
    return sorted(out)


def log_entries(log: str) -> list[dict]:
    """The entries of a ``_spark_metadata`` log (Spark's file sink format: the last
    compaction holds every entry before it), in order."""
    batches = _log_batches(log)
    compact = max((i for i, n in batches if n.endswith(".compact")), default=-1)
    entries = []
    for i, name in batches:
        if i >= compact:
            with open(os.path.join(log, name), encoding="utf-8") as f:
                lines = f.read().splitlines()
            entries += [json.loads(line) for line in lines[1:] if line.strip()]
    return entries


def tidy_output(output: str, err=None) -> list[str]:
    """Remove the part files of a local streaming ``output`` that its sink log
    (``OUTPUT/_spark_metadata``) does not list: written by a micro-batch that never
    committed (the query was killed, or stopped on a rejected record), they are not part
    of the output, and plain Parquet readers (pyarrow, pandas) would read them, or trip on
    one of 0 bytes.  Says so on ``err`` (stderr); returns the names removed.  Only with no
    query running on ``output``; nothing is done without a sink log."""
    import sys

    path = local_of(output)
    log = os.path.join(path, _LOG) if path is not None else None
    if log is None or not os.path.isdir(log):
        return []
    kept = {pathlib.PurePosixPath(_uri_path(e["path"])).name for e in log_entries(log)
            if e.get("action", "add") == "add"}
    removed = []
    for name in sorted(os.listdir(path)):
        if name.startswith("part-") and name not in kept:
            os.unlink(os.path.join(path, name))
            crc = os.path.join(path, f".{name}.crc")
            if os.path.exists(crc):
                os.unlink(crc)
            removed.append(name)
    if removed:
        print(f"streamspec: {output}: removed {len(removed)} part file(s) of a micro-batch that "
              f"never committed (not in the sink log _spark_metadata): {', '.join(removed)}",
              file=err or sys.stderr, flush=True)
    return removed


def _uri_path(uri: str) -> str:
    from urllib.parse import unquote, urlparse
    return unquote(urlparse(uri).path)
