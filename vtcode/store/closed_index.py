"""The index of closed sessions that lets automatic retention and `sessions list` skip reading
every session.

`<workspace>/.vtcode/closed-sessions.index` holds one line per closed session,
`<updated_at> <id> <card>\\n`: the manifest's end time (RFC 3339 UTC, so text order is time
order) and the session's `sessions list` row (store/list_card.py). A run appends the line when it
closes its session; a line without a card (an older vtcode wrote it) still serves retention. A
later line for the same id wins (a resumed session closes again). It is a cache, like the
manifest: a missing line only means that retention leaves the session to `vtcode sessions gc`,
whose full scan rewrites the index from the manifests, and that `sessions list` reads the session
itself (and then appends its line). A torn or foreign line is ignored. Appends and rewrites take
`.vtcode/closed-sessions.lock`, so a rewrite never loses a concurrent append. No fsync: losing
the index costs a rebuild, never a session. Both files sit beside `sessions/`, not in it, so
nothing in `sessions/` is unknown to retention.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from vtcode import fsutil
from vtcode.clock import parse_rfc3339
from vtcode.errors import InvalidIdError, LockBusyError
from vtcode.ids import check_id
from vtcode.ownfile import open_own, read_own
from vtcode.store.layout import lock_path, sessions_root
from vtcode.store.list_card import make_card
from vtcode.store.locks import SessionLock, lock_is_held, session_lock
from vtcode.store.manifest_io import read_manifest

INDEX_NAME = "closed-sessions.index"
_LOCK_NAME = "closed-sessions.lock"
_LOCK_WAIT = 5.0  # seconds; a busy index is skipped, never waited on for long
_MAX_INDEX_BYTES = 256 * 1024 * 1024


def index_path(workspace: Path) -> Path:
    return sessions_root(Path(workspace)).parent / INDEX_NAME


def index_lock(workspace: Path) -> SessionLock:
    return session_lock(sessions_root(Path(workspace)).parent / _LOCK_NAME)


def _take(lock: SessionLock, wait: float = _LOCK_WAIT) -> bool:
    try:
        lock.acquire(wait, what="the closed-session index")
    except (LockBusyError, OSError):  # busy, or a FIFO/folder planted at the lock: skip
        return False
    return True


def _valid(session_id: str, updated_at: str) -> bool:
    try:
        check_id(session_id)
    except InvalidIdError:
        return False
    return parse_rfc3339(updated_at) is not None


def _line(session_id: str, updated_at: str, card: str = "") -> bytes | None:
    if not updated_at or any(c.isspace() for c in updated_at) or not session_id.isascii():
        return None
    if any(c.isspace() for c in session_id):
        return None
    if not card.isascii() or "\n" in card:
        card = ""  # damaged: the line still serves retention; a listing reads the session
    return (
        f"{updated_at} {session_id} {card}\n".encode()
        if card
        else f"{updated_at} {session_id}\n".encode()
    )


def record_closed(workspace: Path, session_id: str) -> bool:
    """Append a completed session to the index (True when recorded).

    Reads the end time and the list card from the session's manifest (the drain wrote it at
    `thread.completed`); a session that is not completed is not recorded. The lock is probed
    once the manifest is read: held (resumed meanwhile), the line gets no card, since a card
    must never describe a session in use (manifest_io.mark_in_use). Raises OSError on I/O
    trouble (callers treat the index as best effort).
    """
    check_id(session_id)
    root = sessions_root(Path(workspace))
    m, stat = read_manifest(root / session_id, session_id)
    if m is None or stat is None:
        return False
    card = make_card(m, stat)
    if card is not None and lock_is_held(lock_path(workspace, session_id)):
        card = ""
    line = None if card is None else _line(session_id, m.updated_at, card)
    if line is None:
        return False
    return _append(workspace, [line], _LOCK_WAIT)


def append_cards(workspace: Path, cards: Mapping[str, tuple[str, str]]) -> bool:
    """Append `id -> (end time, card)` lines for completed sessions a listing had to read in
    full (never indexed: a crash before `record_closed`, a writer that does not record, an
    older vtcode; or changed since). Never waits for the lock; False when it was busy."""
    lines = [_line(sid, ts, card) for sid, (ts, card) in cards.items()]
    body = [line for line in lines if line is not None]
    return bool(body) and _append(workspace, body, 0.0)


def _append(workspace: Path, lines: list[bytes], wait: float) -> bool:
    lock = index_lock(workspace)
    if not _take(lock, wait):
        return False
    try:
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT
        fd = open_own(index_path(workspace), flags, fsutil.FILE_MODE)
        try:
            size = os.fstat(fd).st_size
            # A torn final fragment (a crash mid-append) is ended first, so it stays one
            # ignored line instead of swallowing the first line appended now.
            torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
            body = (b"\n" if torn else b"") + b"".join(lines)
            fsutil.write_all(fd, body)  # one write: readers never see half a line
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
    entries = read_entries(workspace)
    return None if entries is None else {sid: ts for sid, (ts, _) in entries.items()}


def read_entries(workspace: Path) -> dict[str, tuple[str, str]] | None:
    """id -> (end time, card, "" when the line has none); as `read_index`."""
    lines = _read_lines(workspace)
    if lines is None:
        return None
    return {f[1]: (f[0], f[2] if len(f) == 3 else "") for f in lines}


def read_cards(workspace: Path) -> dict[str, str] | None:
    """id -> card ("" when the line has none): `read_entries` without the end times, which a
    listing does not need (one tuple fewer per line)."""
    lines = _read_lines(workspace)
    if lines is None:
        return None
    return {f[1]: f[2] if len(f) == 3 else "" for f in lines}


def _read_lines(workspace: Path) -> Iterator[list[str]] | None:
    """The fields `[end time, id]` or `[end time, id, card]` of each complete line, in file
    order; None when the index is missing or unreadable (see `read_index`)."""
    try:
        data = read_own(index_path(workspace), _MAX_INDEX_BYTES)  # larger: refused unread
    except OSError:
        return None
    text = data.decode("ascii", "replace")
    # A final fragment without newline is torn: ignored. Fields are split at the first two
    # spaces (a card may hold more); an empty end time or id makes the line foreign.
    fields = (raw.split(" ", 2) for raw in text.split("\n")[:-1])
    return (f for f in fields if len(f) > 1 and f[0] and f[1])


def write_index(
    workspace: Path, entries: Mapping[str, str], cards: Mapping[str, str] | None = None
) -> None:
    """Replace the index with `entries`, each with its card from `cards` when there is one
    (the caller holds `index_lock`)."""
    cards = cards or {}
    lines = (_line(sid, ts, cards.get(sid, "")) for sid, ts in entries.items())
    body = b"".join(line for line in lines if line is not None)
    fsutil.atomic_write_bytes(index_path(workspace), body, durable=False)


def rebuild_index(
    workspace: Path,
    entries: Mapping[str, str],
    since: str,
    cards: Mapping[str, str] | None = None,
) -> bool:
    """Replace the index with a full scan's `entries` (and their `cards`), keeping lines
    appended after `since` (sessions that closed while the scan ran). False when busy."""
    lock = index_lock(workspace)
    if not _take(lock):
        return False
    try:
        merged = dict(entries)
        all_cards = dict(cards or {})
        for sid, (ts, card) in (read_entries(workspace) or {}).items():
            if ts >= since and sid not in merged and _valid(sid, ts):
                merged[sid] = ts
                all_cards[sid] = card
        with contextlib.suppress(FileNotFoundError):
            write_index(workspace, merged, all_cards)
    finally:
        lock.release()
    return True
