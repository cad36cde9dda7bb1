"""Durable file primitives: private folders, atomic replace, single-write appends.

All of vtcode's file I/O that must survive a crash goes through here, which also makes this the
one seam for fault-injection tests (ENOSPC, EIO, short writes).
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path
from typing import Any

import orjson

from vtcode.ownfile import open_own, read_own_prefix

DIR_MODE = 0o700
FILE_MODE = 0o600
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def fsync_dir(path: Path) -> None:
    """Persist directory entries (a new file or a rename) in `path`."""
    fd = os.open(path, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# vtcode's per-workspace folder. Every folder vtcode makes in a workspace is created through
# `ensure_private_dir`, so this is the one place that knows when `.vtcode/` comes into being.
STATE_DIR_NAME = ".vtcode"
GITIGNORE_ALL = b"# written by vtcode: its sessions and state are not part of the repository\n*\n"


def _ignore_everything(folder: Path) -> None:
    """A new `.vtcode/` gets a `.gitignore` of `*`, so `git status` never lists vtcode's state
    (sessions, loop state, spools) in the repository it works on, and `git add -A` never
    commits it. Written only when the folder is created: an existing one is the user's."""
    fd = os.open(
        folder / ".gitignore",
        os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC,
        0o644,
    )
    try:
        write_all(fd, GITIGNORE_ALL)
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_dir(folder)


def ensure_private_dir(path: Path) -> Path:
    """Create `path` (and parents) as 0700 folders, fsyncing each new entry's parent."""
    missing: list[Path] = []
    p = path
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    for d in reversed(missing):
        try:
            os.mkdir(d, DIR_MODE)
        except FileExistsError:
            continue
        if d.name == STATE_DIR_NAME:
            _ignore_everything(d)
        fsync_dir(d.parent)
    if path.is_symlink() or not path.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "not a directory (or a symlink)", str(path))
    return path


def write_all(fd: int, data: bytes) -> None:
    """Write every byte, looping on short writes (ENOSPC / RLIMIT_FSIZE can cut a write)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if n <= 0:  # pragma: no cover - os.write raises rather than returning 0 on regular files
            raise OSError(errno.EIO, "write returned 0")
        view = view[n:]


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace `path` whole: temp file in the same folder, fsync, `os.replace`, fsync folder."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        try:
            write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(path.parent)


def atomic_write_json(path: Path, data: Any, *, pretty: bool = False, durable: bool = True) -> None:
    """`atomic_write_bytes` of a JSON document (compact like upstream, or pretty)."""
    opts = orjson.OPT_INDENT_2 if pretty else 0
    body = orjson.dumps(data, option=opts)
    atomic_write_bytes(path, body + (b"\n" if pretty else b""), durable=durable)


def open_append(path: Path) -> int:
    """A read/append fd on a regular file that is not a symlink, created 0600 if missing
    (`vtcode.ownfile.open_own`: a FIFO, socket, device or folder there is refused at once)."""
    return open_own(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, FILE_MODE)


def read_regular(path: Path, limit: int | None = None) -> bytes:
    """Read a regular file without following a final symlink and without blocking on a FIFO
    (`vtcode.ownfile`); at most `limit` bytes when given (callers detect an oversized file by
    asking for one more byte than they accept)."""
    if limit is not None:
        return read_own_prefix(path, limit)
    fd = open_own(path)
    try:
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


def append_line_locked(path: Path, line: bytes, *, durable: bool = True) -> None:
    """Append one whole line with one write (callers hold the file's lock)."""
    fd = open_append(path)
    try:
        write_all(fd, line)
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
