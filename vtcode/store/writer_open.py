"""Opening a session for the writer: create its folder and log, or reopen one to append
(recovering a torn tail), holding its lock. Split from `writer.py`, whose job is the drain.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

from vtcode import fsutil
from vtcode.config.model import Durability, StoreConfig
from vtcode.errors import UsageError
from vtcode.ids import check_id
from vtcode.store.layout import (
    DERIVED_DIR,
    EVENTS,
    INDEX_DIR,
    ensure_root,
    is_real_dir,
    lock_path,
    sessions_root,
)
from vtcode.store.locks import SessionLock, session_lock
from vtcode.store.logstate import LINE_SLACK, LogState
from vtcode.store.manifest_io import mark_in_use
from vtcode.store.recovery import Recovery, recover, write_cache
from vtcode.store.writer_io import O_CLOEXEC, O_NOFOLLOW, io_step, not_found, remove_created


@dataclass(frozen=True, slots=True)
class Opened:
    """What a `SessionWriter` is built from: its folder, lock, log fd and log state."""

    sdir: Path
    lock: SessionLock
    fd: int
    state: LogState
    recovery: Recovery | None


def open_new(workspace: Path, session_id: str, cfg: StoreConfig) -> Opened:
    """Create `<ws>/.vtcode/sessions/<id>/` and take its lock (exit 75 when busy)."""
    check_id(session_id)
    root = io_step("create the sessions folder", lambda: ensure_root(Path(workspace)))
    lock = session_lock(lock_path(workspace, session_id))
    lock.acquire(cfg.lock_timeout_secs, what=f"session {session_id}")
    sdir = root / session_id
    made: list[Path] = []
    fd = -1
    try:
        try:
            os.mkdir(sdir, fsutil.DIR_MODE)
        except FileExistsError:
            raise UsageError(
                f"session {session_id} already exists ({sdir})",
                hint="resume it with `vtcode exec resume ID`, or choose another id",
            ) from None
        made.append(sdir)

        def build() -> int:
            fsutil.fsync_dir(root)
            for sub in (INDEX_DIR, DERIVED_DIR):
                os.mkdir(sdir / sub, fsutil.DIR_MODE)
                made.append(sdir / sub)
            flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC
            new_fd = os.open(sdir / EVENTS, flags, fsutil.FILE_MODE)
            made.append(sdir / EVENTS)
            return new_fd

        fd = io_step(f"create session {session_id}", build)
        state = LogState.empty(session_id)
        io_step(
            f"write the manifest of {session_id}",
            lambda: write_cache(sdir, state, durable=True),
        )
    except BaseException:
        if fd >= 0:
            os.close(fd)
        remove_created(sdir, made)
        lock.release()
        raise
    return Opened(sdir=sdir, lock=lock, fd=fd, state=state, recovery=None)


def open_append(workspace: Path, session_id: str, cfg: StoreConfig) -> Opened:
    """Open a session to append (resume): repairs a torn tail, refuses a corrupt log."""
    check_id(session_id)
    root = sessions_root(Path(workspace))
    sdir = root / session_id
    if not is_real_dir(sdir):
        raise not_found(session_id, root, sdir)
    io_step("create the sessions folder", lambda: ensure_root(Path(workspace)))
    lock = session_lock(lock_path(workspace, session_id))
    lock.acquire(cfg.lock_timeout_secs, what=f"session {session_id}")
    fd = -1
    try:
        if not is_real_dir(sdir):  # removed by retention while we waited for the lock
            raise not_found(session_id, root, sdir)
        mark_in_use(sdir)  # its index card, if any, stops vouching for it (listing)

        def prepare() -> int:
            for sub in (INDEX_DIR, DERIVED_DIR):
                if not is_real_dir(sdir / sub):
                    os.mkdir(sdir / sub, fsutil.DIR_MODE)
            new_fd = fsutil.open_append(sdir / EVENTS)
            nlink = os.fstat(new_fd).st_nlink
            if nlink != 1:
                os.close(new_fd)
                raise OSError(errno.EMLINK, f"events.jsonl has {nlink} hard links; refusing")
            return new_fd

        fd = io_step(f"open session {session_id}", prepare)
        max_line = cfg.max_event_bytes + LINE_SLACK
        durable = cfg.durability is not Durability.OS
        the_fd = fd
        rec = io_step(
            f"recover session {session_id}",
            lambda: recover(sdir, session_id, max_line=max_line, durable=durable, fd=the_fd),
        )
    except BaseException:
        if fd >= 0:
            os.close(fd)
        lock.release()
        raise
    return Opened(sdir=sdir, lock=lock, fd=fd, state=rec.state, recovery=rec)
