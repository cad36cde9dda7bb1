"""The lines of a file too big to show whole that the task is about, and a block written back
over them.

qwen0.5b, told to change `REQUEST_TIMEOUT = 30` in a 2,000-line settings.py it was shown only
by name, answered "Done." (public suite, edit-big-file, every pass), and qwen1.5b too; before a
block over an unseen file was refused, it wrote a 40-line settings.py over it. A small model
rewrites what it is shown. So a compact run's first request shows, of each file too big to
inline, the lines that hold a name or a quoted span of the task, with a few lines around them
(`find_excerpts`), and a block the model writes under that file's path is read against them
(`splice`):

- the block has as many lines as an excerpt and keeps at least half of them (more than of any
  other excerpt): it replaces that excerpt's lines;
- the block is a few lines, each of which sets a name (`NAME = ...`, `name: ...`) that exactly
  one excerpt line sets: each replaces that line.

Anything else stays refused, as before. The file must still hold the excerpt's lines as they
were shown (a command may have changed it since); the write goes through the `write_file` tool
with the whole new text, so permissions, hooks, the sandbox and the log see an ordinary write.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from vtcode.loop.file_blocks import fence_for

__all__ = ["Excerpt", "find_excerpts", "render", "splice"]

CONTEXT_LINES = 3
MAX_LINES_PER_FILE = 40
MAX_FILES = 3
MAX_KEYS = 12
_MAX_SPLICE_LINES = 4  # a block this short may set names line by line
_MAX_SCAN_LINES = 20_000
_MAX_FILES_READ = 16  # files too big to show that are searched (the first, as listed)
# What names a spot in a file: a span in backticks, a quoted string, or a name that is no
# plain word (with `_`, a digit or an inner capital: REQUEST_TIMEOUT, calc_total, maxRetries).
_KEY = re.compile(
    r"`([^`\n]{2,80})`|\"([^\"\n]{2,80})\"|'([^'\n]{2,80})'"
    r"|\b([A-Za-z_]\w{0,60}(?:_|\d|[a-z][A-Z])\w{0,60})\b"
)
_SETS = re.compile(r"^\s{0,40}([\w.\-\"']{1,80})\s{0,8}[:=]")


@dataclass(frozen=True, slots=True)
class Excerpt:
    """Lines `start`..`start + len(lines) - 1` (0-based) of `path`, which has `total` lines."""

    path: str
    start: int
    lines: tuple[str, ...]
    total: int


def _keys(task: str) -> list[str]:
    found: list[str] = []
    for m in _KEY.finditer(task):
        key = next(g for g in m.groups() if g is not None).strip()
        if len(key) >= 3 and key not in found:
            found.append(key)
        if len(found) == MAX_KEYS:
            break
    return found


def find_excerpts(
    task: str, paths: Sequence[str], read: Callable[[str], str | None]
) -> list[Excerpt]:
    """The excerpts of `paths` (files not shown whole) around the lines naming the task's keys:
    at most `MAX_FILES` files, `MAX_LINES_PER_FILE` lines each, windows merged."""
    keys = _keys(task)
    if not keys:
        return []
    out: list[Excerpt] = []
    for path in paths[:_MAX_FILES_READ]:
        text = read(path)
        if text is None:
            continue
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        hits = [i for i, line in enumerate(lines[:_MAX_SCAN_LINES]) if any(k in line for k in keys)]
        if not hits:
            continue
        windows: list[list[int]] = []
        for i in hits:
            lo, hi = max(0, i - CONTEXT_LINES), min(len(lines), i + CONTEXT_LINES + 1)
            if windows and lo <= windows[-1][1]:
                windows[-1][1] = hi
            else:
                windows.append([lo, hi])
        budget = MAX_LINES_PER_FILE
        for lo, hi in windows:
            hi = min(hi, lo + budget)
            if hi <= lo:
                break
            out.append(Excerpt(path, lo, tuple(lines[lo:hi]), len(lines)))
            budget -= hi - lo
        if len({e.path for e in out}) >= MAX_FILES:
            break
    return out


def render(excerpts: Sequence[Excerpt]) -> str:
    """The excerpts as the first request shows them: each under the file's bare path, in the
    block form the model writes, after one sentence saying what they are. A probe on the local
    server (qwen0.5b, edit-big-file's first request, temperature 0.2, 2026-12-07) wrote the one
    changed line under the path in 8 of 8 replies this way, with or without the sentence; with
    "lines 1372-1378 of 2000 ..." on the path's line, in 0 to 4 of 6 (it wrote a whole new file
    from the generator it was shown, or a note)."""
    if not excerpts:
        return ""
    parts = [
        "Lines of the big files that the task is about (a block under such a file's path "
        "changes only these lines):"
    ]
    for e in excerpts:
        body = "\n".join(e.lines)
        fence = fence_for(body)
        parts.append(f"{e.path}\n{fence}\n{body}\n{fence}")
    return "\n\n".join(parts)


def splice(excerpts: Sequence[Excerpt], path: str, current: str, block: str) -> str | None:
    """`current` (the file's text now) with `block` written over the excerpt it rewrites, or
    None when the block fits no excerpt of `path` or the file no longer holds the lines shown."""
    mine = [e for e in excerpts if e.path == path]
    if not mine:
        return None
    lines = current.split("\n")
    ends_with_newline = bool(lines) and lines[-1] == ""
    if ends_with_newline:
        lines.pop()
    if any(tuple(lines[e.start : e.start + len(e.lines)]) != e.lines for e in mine):
        return None  # changed since it was shown
    new = block.split("\n")
    if new and new[-1] == "":
        new.pop()
    best = _rewritten(mine, [line.rstrip("\r") for line in new])
    if best is not None:
        span = range(best.start, best.start + len(best.lines))
        lines[span.start : span.stop] = [_like(lines[i], x) for i, x in zip(span, new, strict=True)]
    elif 0 < len(new) <= _MAX_SPLICE_LINES:
        at = [_the_line_setting(mine, line) for line in new]
        if any(i is None for i in at) or len(set(at)) != len(at):
            return None
        for i, line in zip(at, new, strict=True):
            assert i is not None
            indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            lines[i] = _like(lines[i], indent + line.lstrip())  # its indentation kept
    else:
        return None
    return "\n".join(lines) + ("\n" if ends_with_newline else "")


def _like(old: str, new: str) -> str:
    """`new` with `old`'s line ending: a model writes "\n" lines into a CRLF file."""
    new = new.rstrip("\r")
    return new + "\r" if old.endswith("\r") else new


def _rewritten(excerpts: Sequence[Excerpt], new: list[str]) -> Excerpt | None:
    """The one excerpt of `new`'s length that `new` keeps at least half of, line for line,
    more than it keeps of any other."""
    scored = sorted(
        ((sum(a.rstrip("\r") == b for a, b in zip(e.lines, new, strict=True)), i) for i, e in
         enumerate(excerpts) if len(e.lines) == len(new)),
        reverse=True,
    )  # fmt: skip
    if not scored or 2 * scored[0][0] < len(new):
        return None
    if len(scored) > 1 and scored[1][0] == scored[0][0]:
        return None
    return excerpts[scored[0][1]]


def _the_line_setting(excerpts: Sequence[Excerpt], line: str) -> int | None:
    """The index (in the file) of the one excerpt line that sets the name `line` sets."""
    m = _SETS.match(line)
    if m is None:
        return None
    name = m.group(1)
    found = [
        e.start + j
        for e in excerpts
        for j, shown in enumerate(e.lines)
        if (s := _SETS.match(shown)) is not None and s.group(1) == name
    ]
    return found[0] if len(found) == 1 else None
