"""The lines of a long command output that report an error, read from the part a preview left out.

A command's preview keeps the output's tail (errors usually come last), so a failure in the
middle of a long output is lost: `python3 job.py` printing 100,000 log lines with one ERROR line
in the middle (the public suite's log-needle) shows a small model 6 KiB of INFO lines. A person
would grep; a 0.5B model does not. So the compact view (`tools/compact_catalog.py`) adds the
lines of the full output (the spool file) that carry a strong error marker.

Only strong markers count, case-sensitive: an upper-case level word (`ERROR`, `FATAL`,
`CRITICAL`, `FAIL`, `FAILED`, `PANIC`), a Python traceback's first line, a `NameError:`-style
exception, or a compiler's `error:` at a line's start. A lower-case "error" is everywhere in
healthy logs ("errors=0", "no error in batch"): counting it would bury the one line that matters.

The scan reads at most `MAX_SCAN_BYTES` of a regular file (never a FIFO or a symlink: the spool
lives in the workspace, where a command could have replaced it), a line at a time.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from vtcode.tools.beneath import open_regular_in

__all__ = ["MAX_SCAN_BYTES", "Salient", "salient_lines"]

MAX_SCAN_BYTES = 32 * 1024 * 1024
_LINE_CHARS = 200
_MAX_EXAMINED = 10_000  # marked lines compared with what is shown; the rest are only counted
_MARKER = re.compile(
    rb"\b(?:ERROR|FATAL|CRITICAL|FAIL|FAILED|PANIC)\b"
    rb"|Traceback \(most recent call last\)"
    rb"|\b[A-Z]\w{0,60}(?:Error|Exception):"
    rb"|^\s{0,8}(?:error|fatal)(?:\[\w{1,12}\])?:"
)


@dataclass(frozen=True, slots=True)
class Salient:
    """The first `limit` marked lines not already shown, and how many lines were marked in all
    (shown or not)."""

    lines: tuple[str, ...]
    total: int


def salient_lines(path: Path, *, shown: str = "", limit: int = 8) -> Salient:
    """The marked lines of the file at `path` that `shown` does not already hold."""
    try:
        parent = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return Salient((), 0)
    try:
        fd = open_regular_in(parent, path.name)
    finally:
        os.close(parent)
    if fd is None:
        return Salient((), 0)
    found: list[str] = []
    total = 0
    with os.fdopen(fd, "rb") as f:
        read = 0
        for raw in f:
            read += len(raw)
            if read > MAX_SCAN_BYTES:
                break
            if _MARKER.search(raw) is None:
                continue
            total += 1
            if len(found) >= limit or total > _MAX_EXAMINED:
                continue
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            line = line if len(line) <= _LINE_CHARS else line[:_LINE_CHARS] + " [...]"
            if line not in found and line not in shown:
                found.append(line)
    return Salient(tuple(found), total)
