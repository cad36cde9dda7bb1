"""Opening a session for writing: repair a torn tail, refuse on corruption, refresh the caches.

Rules (reference/reliability.md §0):
- bytes after the last valid line (a fragment without a newline, NULs, complete-but-invalid
  lines with nothing valid after them) are torn: moved to `events.jsonl.torn-<stamp>` beside the
  log, then truncated away. No writer ever acknowledged them as durable.
- an invalid line followed by a valid one is corruption: `CorruptLogError` (file:line), and
  nothing is changed; `vtcode sessions repair` is the explicit way out.
- `manifest.json` and `index/turns.json` are caches. When both parse and fit the log, the log is
  scanned only from the manifest's `log_bytes` (which was fsynced before the manifest was
  written); otherwise both are rebuilt from byte 0.

Only a writer holding the session lock calls this; readers never repair.
"""

from __future__ import annotations

import dataclasses
import mmap
import os
import secrets
from pathlib import Path
from typing import Any

import orjson

from vtcode import fsutil
from vtcode.clock import compact_stamp
from vtcode.errors import CorruptLogError, EnvironmentIOError
from vtcode.jsontypes import DecodeError, decode
from vtcode.store.layout import EVENTS, INDEX_DIR, MANIFEST, TURNS
from vtcode.store.logstate import BadLine, LogState, check_line
from vtcode.store.manifest_io import load_manifest
from vtcode.store.models import TurnIndex

MAX_CACHE_BYTES = 64 * 1024 * 1024
TORN_TAIL_MAX = 64 << 20  # see _refuse_huge_tail


@dataclasses.dataclass(frozen=True, slots=True)
class Recovery:
    """What opening a session found and did."""

    state: LogState
    torn_bytes: int = 0
    quarantine: Path | None = None
    rebuilt: bool = False
    reason: str | None = None  # why the caches were rebuilt or refreshed


def load_json_file(path: Path, limit: int = MAX_CACHE_BYTES) -> Any:
    """Parse a small JSON file without following symlinks (None if missing or invalid)."""
    try:
        data = fsutil.read_regular(path, limit + 1)
    except OSError:
        return None
    if len(data) > limit:
        return None
    try:
        return orjson.loads(data)
    except (orjson.JSONDecodeError, RecursionError):
        return None


def load_index(sdir: Path) -> TurnIndex | None:
    obj = load_json_file(sdir / INDEX_DIR / TURNS)
    if obj is None:
        return None
    try:
        return decode(TurnIndex, obj)
    except (DecodeError, RecursionError):
        return None


def cache_bytes(state: LogState) -> tuple[bytes, bytes]:
    """(index, manifest) file contents for `state` (compact JSON, as upstream writes them)."""
    return orjson.dumps(state.index_json()), orjson.dumps(state.manifest_json())


def write_cache_bytes(sdir: Path, index: bytes, manifest: bytes, *, durable: bool) -> None:
    """Index then manifest, each replaced atomically (temp, fsync, replace, fsync dir); the
    manifest goes last because it vouches for the log."""
    fsutil.atomic_write_bytes(sdir / INDEX_DIR / TURNS, index, durable=durable)
    fsutil.atomic_write_bytes(sdir / MANIFEST, manifest, durable=durable)


def write_cache(sdir: Path, state: LogState, *, durable: bool) -> None:
    """Write the caches of `state` now."""
    write_cache_bytes(sdir, *cache_bytes(state), durable=durable)


@dataclasses.dataclass(slots=True)
class ScanResult:
    """The outcome of scanning lines from `state.size` to the end of the data."""

    valid_end: int
    bad_line: int | None = None  # 1-based line number of the first invalid line after valid_end
    bad_reason: str | None = None


def scan_lines(data: Any, size: int, state: LogState, max_line: int, path: Path) -> ScanResult:
    """Apply every valid line from `state.size` on to `state`; raise on corruption.

    `data` is bytes-like (bytes or mmap). Stops at the end; anything after the last valid line is
    reported through `valid_end` (the caller decides to quarantine it).
    """
    pos = state.size
    line_no = state.event_count
    first_bad: tuple[int, str, int] | None = None  # (line number, reason, offset)
    while pos < size:
        nl = data.find(b"\n", pos, size)
        if nl < 0:
            if first_bad is None:
                first_bad = (line_no + 1, "torn final line (no newline)", pos)
            break
        line_no += 1
        raw = data[pos:nl]
        try:
            # After a bad line, any structurally valid line (whatever its seq) proves corruption.
            expected = state.expected_seq if first_bad is None else None
            info = check_line(raw, expected, max_line)
        except BadLine as e:
            if first_bad is None:
                first_bad = (line_no, str(e), pos)
            pos = nl + 1
            continue
        if first_bad is not None:
            bad_no, reason, _ = first_bad
            raise CorruptLogError(
                f"invalid line ({reason}) followed by a valid line {line_no}; "
                "refusing to append to a corrupt log",
                location=f"{path}:{bad_no}:1",
                hint="`vtcode sessions repair ID` backs the file up, then drops the bad lines",
            )
        state.apply(info.etype, info.seq, info.ts, nl + 1 - pos, info.run)
        pos = nl + 1
    if first_bad is None:
        return ScanResult(valid_end=state.size)
    return ScanResult(valid_end=state.size, bad_line=first_bad[0], bad_reason=first_bad[1])


def _cache_fits(data: Any, size: int, state: LogState, max_line: int) -> bool:
    """Does the log really contain the prefix the manifest describes?"""
    if state.size > size:
        return False
    if state.event_count == 0:
        return state.size == 0
    end = state.size
    if data[end - 1 : end] != b"\n":
        return False
    start = data.rfind(b"\n", 0, end - 1) + 1
    first_nl = data.find(b"\n", 0, end)
    try:
        last = check_line(data[start : end - 1], state.last_seq, max_line)
        first = check_line(data[0:first_nl], state.first_seq, max_line)
    except BadLine:
        return False
    return last.seq == state.last_seq and first.seq == state.first_seq


def _quarantine(sdir: Path, data: bytes, *, durable: bool) -> Path:
    name = f"{EVENTS}.torn-{compact_stamp()}-{secrets.token_hex(2)}"
    path = sdir / name
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, fsutil.FILE_MODE)
    try:
        fsutil.write_all(fd, data)
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
    if durable:
        fsutil.fsync_dir(sdir)
    return path


def _refuse_huge_tail(path: Path, tail: int, max_line: int) -> None:
    """A torn write leaves at most a few unacknowledged lines (and the zeroed blocks a crash
    can leave behind them); gigabytes after the last valid line were put there (a 2 GiB sparse
    file planted in `.vtcode/`). Refused, not copied aside: exit 2, nothing changed."""
    if tail > max(TORN_TAIL_MAX, 4 * max_line):
        raise EnvironmentIOError(
            f"{tail} bytes after the last valid line, more than a torn write leaves; "
            "not repaired automatically",
            location=str(path),
            hint="move the file away or run `vtcode sessions repair ID`",
        )


def _map(fd: int, size: int) -> Any:
    if size == 0:
        return b""
    return mmap.mmap(fd, size, access=mmap.ACCESS_READ)


def recover(
    sdir: Path,
    session_id: str,
    *,
    max_line: int,
    durable: bool = True,
    fd: int | None = None,
) -> Recovery:
    """Bring a session's log and caches into agreement (the caller holds the session lock).

    `fd` is an open read/append descriptor of events.jsonl (opened here when None and closed
    again). Raises `CorruptLogError` without changing anything when the log is corrupt.
    """
    own_fd = fd is None
    if fd is None:
        fd = fsutil.open_append(sdir / EVENTS)
    try:
        return _recover(sdir, session_id, fd, max_line=max_line, durable=durable)
    finally:
        if own_fd:
            os.close(fd)


def _recover(sdir: Path, session_id: str, fd: int, *, max_line: int, durable: bool) -> Recovery:
    path = sdir / EVENTS
    size = os.fstat(fd).st_size
    manifest = load_manifest(sdir, session_id)
    index = load_index(sdir)
    data = _map(fd, size)
    try:
        state: LogState | None = None
        reason: str | None = None
        if manifest is None:
            reason = "manifest missing or unreadable"
        elif index is None:
            reason = "turn index missing or unreadable"
        else:
            state = LogState.from_cache(manifest, index)
            if state is None:
                reason = "manifest and turn index disagree"
            elif not _cache_fits(data, size, state, max_line):
                state, reason = None, "manifest does not match events.jsonl"
        rebuilt = state is None
        if state is None:
            state = LogState.empty(session_id, manifest.created_at if manifest else None)
        scanned_from = state.size
        result = scan_lines(data, size, state, max_line, path)
        _refuse_huge_tail(path, size - result.valid_end, max_line)
        tail = bytes(data[result.valid_end : size]) if result.valid_end < size else b""
    finally:
        if isinstance(data, mmap.mmap):
            data.close()
    quarantine: Path | None = None
    if tail:
        quarantine = _quarantine(sdir, tail, durable=durable)
        os.ftruncate(fd, result.valid_end)
        if durable:
            os.fsync(fd)
        reason = reason or f"torn tail of {len(tail)} bytes ({result.bad_reason})"
    if reason is None and state.size != scanned_from:
        reason = "events after the last manifest update"
    if reason is not None or rebuilt:
        write_cache(sdir, state, durable=durable)
    return Recovery(
        state=state,
        torn_bytes=len(tail),
        quarantine=quarantine,
        rebuilt=rebuilt,
        reason=reason,
    )
