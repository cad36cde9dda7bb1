"""File-level steps of the session writer: undoing a failed create, copying a kept tail,
turning OSErrors into located `PersistenceError`s. Split from `writer.py` (one job: the drain).
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vtcode import fsutil
from vtcode.errors import NotFoundError, PersistenceError, VtcodeError
from vtcode.events.types import ThreadEvent, UnknownEvent
from vtcode.ownfile import open_own
from vtcode.store.layout import EVENTS, INDEX_DIR, MANIFEST, TURNS


class Control:
    """A request to the drain (flush, barrier, close, closing events), answered through `done`."""

    __slots__ = ("done", "events", "kind", "written")

    def __init__(self, kind: str, events: tuple[ThreadEvent, ...] = ()) -> None:
        self.kind = kind
        self.done = threading.Event()
        self.events = events  # "closing": the events to write after a failure
        self.written: list[tuple[int, ThreadEvent]] = []


def etype(event: ThreadEvent) -> str:
    return event.type if isinstance(event, UnknownEvent) else event.TYPE


O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def keep_tail(fd: int, sdir: Path, start: int, end: int, durable: bool) -> int:
    """Replace `sdir`'s events.jsonl by its bytes [start, end); returns the new fd.

    Eviction (`store.max_events`): at a boundary past the cap, whole oldest closed turns go by
    writing the kept tail to a new file (fsync, replace, fsync dir) under the lock. `seq` values
    are kept as written, so `seq` is gapless within what is retained: a log whose first line has
    seq N > 1 (the manifest's `first_seq`) had N - 1 events evicted. Turn numbers in the index
    count from 1 within the retained log (the index can always be rebuilt from the log alone).
    """
    tmp = sdir / f".{EVENTS}.evict-{os.getpid()}.tmp"
    try:
        new_fd = copy_tail(fd, start, end, tmp, durable=durable)
        os.replace(tmp, sdir / EVENTS)
        if durable:
            fsutil.fsync_dir(sdir)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return new_fd


def copy_tail(fd: int, start: int, end: int, tmp: Path, *, durable: bool) -> int:
    """A new O_APPEND file holding bytes [start, end) of `fd`, fsynced; returns its fd."""
    out = open_own(tmp, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC, fsutil.FILE_MODE)
    try:
        pos = start
        while pos < end:
            chunk = os.pread(fd, min(1 << 20, end - pos), pos)
            if not chunk:
                raise OSError(errno.EIO, "events.jsonl shrank while evicting")
            fsutil.write_all(out, chunk)
            pos += len(chunk)
        if durable:
            os.fsync(out)
    except BaseException:
        os.close(out)
        raise
    return out


def io_step(what: str, fn: Callable[[], Any]) -> Any:
    """Run an I/O step, turning an OSError into a one-line `PersistenceError`."""
    try:
        return fn()
    except VtcodeError:
        raise
    except OSError as e:
        where = e.filename if isinstance(e.filename, str) else None
        raise PersistenceError(f"cannot {what}: {e.strerror or e}", location=where) from None


def not_found(session_id: str, root: Path, sdir: Path) -> NotFoundError:
    if sdir.is_symlink():
        return NotFoundError(f"session {session_id} is a symlink ({sdir}); refusing to follow it")
    return NotFoundError(
        f"no session {session_id!r} in {root}", hint="`vtcode sessions list` shows the sessions"
    )


def remove_created(sdir: Path, made: list[Path]) -> None:
    """Undo a failed create: remove exactly what it made (deepest first)."""
    for p in (sdir / MANIFEST, sdir / INDEX_DIR / TURNS):
        with contextlib.suppress(OSError):
            os.unlink(p)
    for p in reversed(made):
        with contextlib.suppress(OSError):
            if p.is_dir() and not p.is_symlink():
                p.rmdir()
            else:
                os.unlink(p)
