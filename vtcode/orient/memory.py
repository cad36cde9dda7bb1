"""Loop memory: append-only `.vtcode/state/notes.md` and `decisions.md` (upstream's format).

Each file starts with a header written on the first append (`# Loop Notes\\n\\n`) and holds one
entry per line, `- [2026-01-01T00:00:00Z] text\\n`. Appends take the file's lock (many cron
processes may write at once), repair a torn tail first (a fragment after the last newline is
copied to `<file>.torn-<stamp>-<hex>` and cut off: no writer ever finished it), and then write
the whole entry, header included when the file is new, with one `write` and an fsync.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import errno
import os
import re
import secrets
from pathlib import Path

from vtcode.clock import compact_stamp, utcnow
from vtcode.errors import UsageError
from vtcode.fsutil import FILE_MODE, fsync_dir, open_append, write_all
from vtcode.orient.paths import DECISIONS, NOTES, ensure_state_dir, state_dir
from vtcode.ownfile import read_own

__all__ = [
    "MemoryEntry",
    "MemoryKind",
    "append_entry",
    "memory_path",
    "read_entries",
    "read_text",
]

APPEND_LOCK_TIMEOUT_SECS = 10.0
# Past this a memory file is refused (read, or appended to) rather than loaded: a year of cron
# steps writing a note each is about 1 MB; a 2 GiB sparse file planted there is not notes.
MEMORY_MAX_BYTES = 16 << 20
_ENTRY = re.compile(r"^- \[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\] (.*)$")
_TAIL_CHUNK = 64 * 1024


class MemoryKind(enum.Enum):
    """The two append-only stores and their headers."""

    NOTES = (NOTES, "# Loop Notes\n\n")
    DECISIONS = (DECISIONS, "# Loop Decisions\n\n")

    @property
    def filename(self) -> str:
        return self.value[0]

    @property
    def header(self) -> str:
        return self.value[1]


@dataclasses.dataclass(frozen=True, slots=True)
class MemoryEntry:
    timestamp: str
    text: str


def memory_path(workspace: Path, kind: MemoryKind) -> Path:
    return state_dir(workspace) / kind.filename


def _one_line(text: str) -> str:
    """Trimmed, with inner line breaks folded to spaces so that every entry stays one line."""
    return " ".join(part.strip() for part in text.strip().splitlines() if part.strip())


def _last_newline(fd: int, size: int) -> int:
    """Offset just past the last `\\n` in the file (0 when there is none)."""
    end = size
    while end > 0:
        start = max(0, end - _TAIL_CHUNK)
        chunk = os.pread(fd, end - start, start)
        i = chunk.rfind(b"\n")
        if i >= 0:
            return start + i + 1
        end = start
    return 0


def _repair_tail(fd: int, path: Path) -> int:
    """Quarantine and cut a torn last fragment; returns the (new) file size."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return size
    keep = _last_newline(fd, size)
    fragment = os.pread(fd, size - keep, keep)
    aside = path.with_name(f"{path.name}.torn-{compact_stamp()}-{secrets.token_hex(3)}")
    qfd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        write_all(qfd, fragment)
        os.fsync(qfd)
    finally:
        os.close(qfd)
    os.ftruncate(fd, keep)
    os.fsync(fd)
    fsync_dir(path.parent)
    return keep


def append_entry(
    workspace: Path,
    kind: MemoryKind,
    text: str,
    *,
    now: _dt.datetime | None = None,
    timeout: float = APPEND_LOCK_TIMEOUT_SECS,
) -> MemoryEntry | None:
    """Append one entry (None when `text` is blank: upstream ignores empty entries).

    Raises `LockBusyError` (exit 75) when the lock stays busy for `timeout` seconds.
    """
    from vtcode.store.locks import session_lock

    body = _one_line(text)
    if not body:
        return None
    stamp = (now or utcnow()).astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    line = f"- [{stamp}] {body}\n".encode()
    folder = ensure_state_dir(workspace)
    path = folder / kind.filename
    lock = session_lock(folder / f"{kind.filename}.lock")
    lock.acquire(timeout, what=f"loop memory {kind.filename}")
    try:
        existed = path.exists()
        fd = open_append(path)
        try:
            if os.fstat(fd).st_size > MEMORY_MAX_BYTES:
                raise OSError(errno.EFBIG, f"larger than {MEMORY_MAX_BYTES} bytes", str(path))
            size = _repair_tail(fd, path)
            data = (kind.header.encode() + line) if size == 0 else line
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if not existed:
            fsync_dir(folder)
    except OSError as e:
        why = "it is a symlink" if e.errno == errno.ELOOP else (e.strerror or str(e))
        raise UsageError(f"cannot append to {path}: {why}; nothing was written") from None
    finally:
        lock.release()
    return MemoryEntry(timestamp=stamp, text=body)


def read_text(workspace: Path, kind: MemoryKind) -> str:
    """The whole file ("" when missing), without a torn last fragment."""
    path = memory_path(workspace, kind)
    try:
        data = read_own(path, MEMORY_MAX_BYTES)
    except FileNotFoundError:
        return ""
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror or e}") from None
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
    return data.decode("utf-8", "replace")


def read_entries(workspace: Path, kind: MemoryKind) -> list[MemoryEntry]:
    """The entries in file order (header and foreign lines skipped)."""
    out: list[MemoryEntry] = []
    for line in read_text(workspace, kind).splitlines():
        m = _ENTRY.match(line)
        if m:
            out.append(MemoryEntry(timestamp=m.group(1), text=m.group(2)))
    return out
