"""Read-only access to sessions: events for resume and show, summaries for list.

Readers never take the lock and never repair: they work on read-only mounts and cannot race a
writer. A torn final line (a live writer mid-write, or a crash) is skipped; an invalid line
followed by a valid one raises `CorruptLogError` with file:line.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vtcode.config.model import StoreConfig
from vtcode.errors import CorruptLogError, InvalidIdError, NotFoundError
from vtcode.events.codec import Envelope, LineShape, decode_envelope
from vtcode.events.types import UnknownEvent
from vtcode.ids import check_id
from vtcode.jsontypes import DecodeError
from vtcode.ownfile import open_own
from vtcode.store.layout import EVENTS, lock_path, sessions_root
from vtcode.store.locks import lock_is_held
from vtcode.store.logstate import LINE_SLACK, BadLine, parse_line
from vtcode.store.models import RunSummary, SessionManifest, SessionStatus
from vtcode.store.recovery import load_manifest

DEFAULT_MAX_LINE = StoreConfig().max_event_bytes + LINE_SLACK


@dataclasses.dataclass(frozen=True, slots=True)
class LogLine:
    """One valid line of a canonical log with where it sits."""

    line_no: int
    offset: int
    raw: bytes  # without the newline
    envelope: Envelope


def _to_envelope(obj: Any, seq: int) -> Envelope:
    try:
        env = decode_envelope(obj, LineShape.WRAPPED)
    except (DecodeError, RecursionError):
        # Structurally a line, but an event this version cannot decode (a newer item type, say):
        # keep it whole, as upstream's `Unknown` catch-all would (but without losing the value).
        event = obj["event"]
        env = Envelope(
            event=UnknownEvent(type=event["type"], raw=event),
            shape=LineShape.WRAPPED,
            schema_version=obj["schema_version"],
            seq=seq,
            ts=obj.get("ts") if isinstance(obj.get("ts"), str) else None,
        )
    if env.seq is None:
        env = dataclasses.replace(env, seq=seq)
    return env


def iter_log(path: Path, max_line: int = DEFAULT_MAX_LINE) -> Iterator[LogLine]:
    """The valid lines of a canonical log file, in order (see the module doc for errors)."""
    fd = open_own(path)
    with os.fdopen(fd, "rb") as f:
        offset = 0
        line_no = 0
        expected: int | None = None
        bad: tuple[int, str] | None = None
        while True:
            raw = f.readline(max_line + 2)
            if not raw:
                return
            start = offset
            offset += len(raw)
            if not raw.endswith(b"\n"):
                if len(raw) < max_line + 2:
                    return  # torn final fragment (or a writer mid-line): not an event yet
                rest = f.readline(1 << 20)  # an over-long line: skip to its end, 1 MiB at a time
                while rest and not rest.endswith(b"\n"):
                    offset += len(rest)
                    rest = f.readline(1 << 20)
                offset += len(rest)
                line_no += 1
                bad = bad or (line_no, f"line is longer than {max_line} bytes")
                continue
            line_no += 1
            body = raw[:-1]
            try:
                info, obj = parse_line(body, expected if bad is None else None, max_line)
            except BadLine as e:
                bad = bad or (line_no, str(e))
                continue
            if bad is not None:
                raise CorruptLogError(
                    f"invalid line ({bad[1]}) followed by a valid line {line_no}",
                    location=f"{path}:{bad[0]}:1",
                    hint="`vtcode sessions repair ID` backs the file up, then drops the bad lines",
                )
            expected = info.seq + 1
            yield LogLine(line_no, start, body, _to_envelope(obj, info.seq))


def session_events_path(workspace: Path, session_id: str) -> Path:
    """events.jsonl of an existing session (NotFoundError otherwise; symlinks refused)."""
    root = sessions_root(workspace)
    sdir = root / check_id(session_id)
    if sdir.is_symlink() or not sdir.is_dir():
        raise NotFoundError(
            f"no session {session_id!r} in {root}",
            hint="`vtcode sessions list` shows the sessions",
        )
    return sdir / EVENTS


def session_exists(workspace: Path, session_id: str) -> bool:
    """A real session folder (not a symlink) exists for this id (the id is checked first)."""
    sdir = sessions_root(workspace) / check_id(session_id)
    return sdir.is_dir() and not sdir.is_symlink()


def read_session_events(workspace: Path, session_id: str) -> Iterator[Envelope]:
    """Every event of a session in order, with its `seq` and `ts` (for resume and show)."""
    path = session_events_path(workspace, session_id)
    if not path.exists():
        return iter(())
    return (line.envelope for line in iter_log(path))


class DisplayStatus:
    """Status strings of `sessions list` (manifest status plus what the lock says)."""

    ACTIVE = "active"
    COMPLETED = "completed"
    ABANDONED = "abandoned"  # manifest says active, but no process holds the lock
    UNREADABLE = "unreadable"  # a folder with a session name but no readable manifest


@dataclasses.dataclass(frozen=True, slots=True)
class SessionSummary:
    """One row of `vtcode sessions list`."""

    session_id: str
    status: str
    turns: int
    events: int
    created_at: str | None
    updated_at: str | None
    path: Path
    live: bool
    manifest: SessionManifest | None = None

    @property
    def runs(self) -> int:
        """Ended runs the log retains (each `thread.completed`)."""
        return len(self.manifest.runs or ()) if self.manifest else 0

    @property
    def num_turns(self) -> int:
        """Model requests of those runs: the sum of their `thread.completed` num_turns."""
        return sum(r.num_turns for r in (self.manifest.runs or ())) if self.manifest else 0

    @property
    def last_run(self) -> RunSummary | None:
        """How the latest ended run ended (subtype, outcome_code); None before any ended."""
        runs = self.manifest.runs if self.manifest else None
        return runs[-1] if runs else None

    def to_json(self) -> dict[str, Any]:
        last = self.last_run
        out: dict[str, Any] = {
            "session_id": self.session_id,
            "status": self.status,
            "subtype": None if last is None else last.subtype,
            "outcome_code": None if last is None else last.outcome_code,
            "runs": self.runs,
            "num_turns": self.num_turns,
            "turns": self.turns,
            "events": self.events,
            "live": self.live,
            "path": str(self.path),
        }
        if self.created_at is not None:
            out["created_at"] = self.created_at
        if self.updated_at is not None:
            out["updated_at"] = self.updated_at
        return out


def display_status(manifest: SessionManifest | None, live: bool) -> str:
    if live:
        return DisplayStatus.ACTIVE
    if manifest is None:
        return DisplayStatus.UNREADABLE
    if manifest.status is SessionStatus.ACTIVE:
        return DisplayStatus.ABANDONED
    return DisplayStatus.COMPLETED


def session_folders(root: Path) -> Iterator[os.DirEntry[str]]:
    """Direct child folders of the sessions root named like a session id (never symlinks)."""
    try:
        it = os.scandir(root)
    except FileNotFoundError:
        return
    with it:
        for entry in it:
            try:
                check_id(entry.name)
            except InvalidIdError:
                continue  # .locks, .trash-*, odd names
            if entry.is_dir(follow_symlinks=False):
                yield entry


def summarize(workspace: Path, session_id: str) -> SessionSummary:
    """The summary of one session (NotFoundError when it does not exist)."""
    path = session_events_path(workspace, session_id).parent
    return _summary(workspace, session_id, path)


TAIL_COUNT_LIMIT = 64 * 1024 * 1024  # bytes past the manifest's log_bytes that a listing reads


def _lines_past(log: Path, offset: int) -> int:
    """Complete lines in `log` after byte `offset`: the events a run appended after the manifest
    was last written (a run killed by SIGKILL never updates it). At most TAIL_COUNT_LIMIT bytes
    are read, so a huge or sparse log costs a listing a bounded time."""
    try:
        fd = open_own(log)
    except OSError:
        return 0
    try:
        os.lseek(fd, offset, os.SEEK_SET)
        count = read = 0
        while read < TAIL_COUNT_LIMIT:
            chunk = os.read(fd, min(1 << 20, TAIL_COUNT_LIMIT - read))
            if not chunk:
                break
            count += chunk.count(b"\n")
            read += len(chunk)
        return count
    except OSError:
        return 0
    finally:
        os.close(fd)


def _summary(workspace: Path, session_id: str, path: Path) -> SessionSummary:
    m = load_manifest(path, session_id)
    live = lock_is_held(lock_path(workspace, session_id))
    events = 0
    if m is not None:
        events = m.event_count
        # An active manifest may lag its log (written at boundaries): count what the log holds.
        if m.status is SessionStatus.ACTIVE and (m.log_bytes is not None or not m.event_count):
            events += _lines_past(path / EVENTS, m.log_bytes or 0)
    return SessionSummary(
        session_id=session_id,
        status=display_status(m, live),
        turns=m.turn_count if m else 0,
        events=events,
        created_at=m.created_at if m else None,
        updated_at=m.updated_at if m else None,
        path=path,
        live=live,
        manifest=m,
    )


def list_sessions(workspace: Path) -> list[SessionSummary]:
    """Every session folder, most recently updated first (unreadable ones last)."""
    root = sessions_root(workspace)
    rows = [_summary(workspace, e.name, Path(e.path)) for e in session_folders(root)]
    rows.sort(key=lambda r: (r.updated_at or "", r.created_at or "", r.session_id), reverse=True)
    return rows


def latest_session_id(workspace: Path) -> str | None:
    """The most recently updated session with a readable manifest (`exec resume --last`)."""
    for row in list_sessions(workspace):
        if row.manifest is not None:
            return row.session_id
    return None
