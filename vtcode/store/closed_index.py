"""The index of closed sessions that lets automatic retention skip scanning every session.

`<workspace>/.vtcode/closed-sessions.index` holds one line per closed session,
`<updated_at> <id>\\n` (the manifest's end time, RFC 3339 UTC, so text order is time order),
appended when a run closes its session. A later line for the same id wins (a resumed session
closes again). It is a cache, like the manifest: a missing line only means the session waits for
`vtcode sessions gc`, whose full scan rewrites the index from the manifests; a torn or foreign
line is ignored. Appends and rewrites take `.vtcode/closed-sessions.lock`, so a rewrite never
loses a concurrent append. No fsync: losing the index costs a rebuild, never a session. Both
files sit beside `sessions/`, not in it, so nothing in `sessions/` is unknown to retention.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path

from vtcode import fsutil
from vtcode.clock import parse_rfc3339
from vtcode.errors import InvalidIdError, LockBusyError
from vtcode.ids import check_id
from vtcode.ownfile import open_own
from vtcode.store.layout import sessions_root
from vtcode.store.locks import SessionLock, session_lock
from vtcode.store.models import SessionStatus
from vtcode.store.recovery import load_manifest

INDEX_NAME = "closed-sessions.index"
_LOCK_NAME = "closed-sessions.lock"
_LOCK_WAIT = 5.0  # seconds; a busy index is skipped, never waited on for long
_MAX_INDEX_BYTES = 256 * 1024 * 1024


def index_path(workspace: Path) -> Path:
    return sessions_root(Path(workspace)).parent / INDEX_NAME


def index_lock(workspace: Path) -> SessionLock:
    return session_lock(sessions_root(Path(workspace)).parent / _LOCK_NAME)


def _take(lock: SessionLock) -> bool:
    try:
        lock.acquire(_LOCK_WAIT, what="the closed-session index")
    except (LockBusyError, OSError):  # busy, or a FIFO/folder planted at the lock: skip
        return False
    return True


def _valid(session_id: str, updated_at: str) -> bool:
    try:
        check_id(session_id)
    except InvalidIdError:
        return False
    return parse_rfc3339(updated_at) is not None


def _line(session_id: str, updated_at: str) -> bytes | None:
    if not updated_at or any(c.isspace() for c in updated_at) or not session_id.isascii():
        return None
    return f"{updated_at} {session_id}\n".encode()


def record_closed(workspace: Path, session_id: str) -> bool:
    """Append a completed session to the index (True when recorded).

    Reads the end time from the session's manifest (the drain wrote it at `thread.completed`);
    a session that is not completed is not recorded. Raises OSError on I/O trouble (callers
    treat the index as best effort).
    """
    check_id(session_id)
    root = sessions_root(Path(workspace))
    m = load_manifest(root / session_id, session_id)
    if m is None or m.status is not SessionStatus.COMPLETED:
        return False
    line = _line(session_id, m.updated_at)
    if line is None:
        return False
    lock = index_lock(workspace)
    if not _take(lock):
        return False
    try:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        fd = open_own(index_path(workspace), flags, fsutil.FILE_MODE)
        try:
            fsutil.write_all(fd, line)
        finally:
            os.close(fd)
    finally:
        lock.release()
    return True


def index_exists(workspace: Path) -> bool:
    try:
        return index_path(workspace).lstat().st_size >= 0
    except OSError:
        return False


def read_index(workspace: Path) -> dict[str, str] | None:
    """id -> end time of every indexed session (the last line per id wins); None when the
    index is missing or unreadable (not a regular file, too large).

    Ids are NOT checked here (100k lines must parse in milliseconds): a caller that turns an
    entry into a path checks it first (`check_id`).
    """
    try:
        data = fsutil.read_regular(index_path(workspace), _MAX_INDEX_BYTES + 1)
    except OSError:
        return None
    if len(data) > _MAX_INDEX_BYTES:
        return None
    text = data.decode("ascii", "replace")
    out: dict[str, str] = {}
    for raw in text.split("\n")[:-1]:  # a final fragment without newline is torn: ignored
        ts, sep, sid = raw.partition(" ")
        if sep and sid and ts:
            out[sid] = ts
    return out


def write_index(workspace: Path, entries: Mapping[str, str]) -> None:
    """Replace the index with `entries` (the caller holds `index_lock`)."""
    lines = (_line(sid, ts) for sid, ts in entries.items())
    body = b"".join(line for line in lines if line is not None)
    fsutil.atomic_write_bytes(index_path(workspace), body, durable=False)


def rebuild_index(workspace: Path, entries: Mapping[str, str], since: str) -> bool:
    """Replace the index with a full scan's `entries`, keeping lines appended after `since`
    (sessions that closed while the scan ran). False when the index is busy."""
    lock = index_lock(workspace)
    if not _take(lock):
        return False
    try:
        merged = dict(entries)
        for sid, ts in (read_index(workspace) or {}).items():
            if ts >= since and sid not in merged and _valid(sid, ts):
                merged[sid] = ts
        with contextlib.suppress(FileNotFoundError):
            write_index(workspace, merged)
    finally:
        lock.release()
    return True
