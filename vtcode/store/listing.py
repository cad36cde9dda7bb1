"""`vtcode sessions list`: one summary row per session, from the closed-session index where it
can, from the session's own files otherwise (see `list_sessions`).

Like the log reader, listing never takes a session lock and never repairs; the only write is
the best-effort append of index cards (store/closed_index.py), which never waits.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, cast

from vtcode.ids import is_id
from vtcode.ownfile import open_own
from vtcode.store.closed_index import append_cards, read_cards
from vtcode.store.layout import EVENTS, LOCKS_DIR, MANIFEST, session_events_path, sessions_root
from vtcode.store.list_card import make_card, parse_card
from vtcode.store.locks import LockProbe
from vtcode.store.manifest_io import load_manifest, manifest_stat, read_manifest
from vtcode.store.models import RunSummary, SessionManifest, SessionStatus


class DisplayStatus:
    """Status strings of `sessions list` (manifest status plus what the lock says)."""

    ACTIVE = "active"
    COMPLETED = "completed"
    ABANDONED = "abandoned"  # manifest says active, but no process holds the lock
    UNREADABLE = "unreadable"  # a folder with a session name but no readable manifest


@dataclasses.dataclass(frozen=True, slots=True)
class SessionSummary:
    """One row of `vtcode sessions list` (the public row; the listing builds `Row`s and makes
    these from them)."""

    session_id: str
    status: str
    turns: int
    events: int
    created_at: str | None
    updated_at: str | None
    path: Path
    live: bool
    runs: int = 0  # ended runs the log retains (each `thread.completed`)
    num_turns: int = 0  # model requests of those runs: the sum of their num_turns
    last_run: RunSummary | None = None  # how the latest ended run ended; None before any ended
    has_manifest: bool = False  # a manifest naming this id was read (or its index card was)
    _manifest: SessionManifest | None = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def manifest(self) -> SessionManifest | None:
        """The session's manifest, None when it has no readable one. A row listed from its
        closed-session index card was built without reading the manifest: it is read here, on
        first use."""
        if self._manifest is None and self.has_manifest:
            object.__setattr__(self, "_manifest", load_manifest(self.path, self.session_id))
        return self._manifest

    def to_json(self) -> dict[str, Any]:
        return row_json(self, str(self.path))


class Row(NamedTuple):
    """A `SessionSummary` as the listing builds it: a NamedTuple, since a listing makes 20,000
    of them and a frozen dataclass costs five times as much to build (`sessions list` renders
    these directly; `list_sessions` turns them into summaries)."""

    session_id: str
    status: str
    turns: int
    events: int
    created_at: str | None
    updated_at: str | None
    folder: str  # the session folder's path (SessionSummary.path as a string)
    live: bool
    runs: int
    num_turns: int
    last_run: RunSummary | None
    has_manifest: bool
    manifest: SessionManifest | None  # when it was read (never for a row from its index card)

    def to_json(self) -> dict[str, Any]:
        return row_json(self, self.folder)


def row_json(r: SessionSummary | Row, path: str) -> dict[str, Any]:
    """The `--json` row of a session (one definition for `Row` and `SessionSummary`)."""
    last = r.last_run
    out: dict[str, Any] = {
        "session_id": r.session_id,
        "status": r.status,
        "subtype": None if last is None else last.subtype,
        "outcome_code": None if last is None else last.outcome_code,
        "runs": r.runs,
        "num_turns": r.num_turns,
        "turns": r.turns,
        "events": r.events,
        "live": r.live,
        "path": path,
    }
    if r.created_at is not None:
        out["created_at"] = r.created_at
    if r.updated_at is not None:
        out["updated_at"] = r.updated_at
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
            # not an id: .locks, .trash-*, odd names
            if is_id(entry.name) and entry.is_dir(follow_symlinks=False):
                yield entry


def summarize(workspace: Path, session_id: str) -> SessionSummary:
    """The summary of one session (NotFoundError when it does not exist)."""
    path = session_events_path(workspace, session_id).parent
    where = _Where.of(workspace)
    with LockProbe(where.locks) as probe:
        return where.summary(_read_row(session_id, path, probe)[0])


class _Where(NamedTuple):
    """Where a listing finds things, as strings it can extend without pathlib."""

    root: Path  # sessions/
    folders: str  # "<sessions>/": a session folder is folders + id
    locks: str  # the lock folder: lock_path(workspace, id) is locks/id.lock, spelled absolute
    child: Callable[[str], Path]  # id -> root / id

    @classmethod
    def of(cls, workspace: Path) -> _Where:
        root = sessions_root(workspace)
        locks = str((root / LOCKS_DIR).absolute())
        return cls(root, f"{root}{os.sep}", locks, _child_maker(root))

    def summary(self, r: Row) -> SessionSummary:
        return SessionSummary(
            session_id=r.session_id,
            status=r.status,
            turns=r.turns,
            events=r.events,
            created_at=r.created_at,
            updated_at=r.updated_at,
            path=self.child(r.session_id),
            live=r.live,
            runs=r.runs,
            num_turns=r.num_turns,
            last_run=r.last_run,
            has_manifest=r.has_manifest,
            _manifest=r.manifest,
        )


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


def _read_row(session_id: str, path: Path, probe: LockProbe) -> tuple[Row, str | None]:
    """The row of a session read from its folder, and its index card when it is completed and
    not in use (None otherwise). The lock is probed after the manifest was read: a card is
    made only from a manifest read while no process held the session."""
    m, stat = read_manifest(path, session_id)
    live = probe.held(f"{session_id}.lock")
    events = 0
    if m is not None:
        events = m.event_count
        # An active manifest may lag its log (written at boundaries): count what the log holds.
        if m.status is SessionStatus.ACTIVE and (m.log_bytes is not None or not m.event_count):
            events += _lines_past(path / EVENTS, m.log_bytes or 0)
    runs = (m.runs or []) if m is not None else []
    row = Row(
        session_id=session_id,
        status=display_status(m, live),
        turns=m.turn_count if m else 0,
        events=events,
        created_at=m.created_at if m else None,
        updated_at=m.updated_at if m else None,
        folder=str(path),
        live=live,
        runs=len(runs),
        num_turns=sum(r.num_turns for r in runs),
        last_run=runs[-1] if runs else None,
        has_manifest=m is not None,
        manifest=m,
    )
    card = None if m is None or stat is None or live else make_card(m, stat)
    return row, card


def _child_maker(root: Path) -> Callable[[str], Path]:
    """`root / name` for a checked session id (one path component): pathlib's own child
    constructor, which its directory walks use, when this Python has it (`Path(str)` parses the
    whole string again: a tenth of a listing's time over 20,000 rows)."""
    make = getattr(root, "_make_child_relpath", None)
    return (lambda name: root / name) if make is None else cast(Callable[[str], Path], make)


def _card_row(session_id: str, text: str, folders: str) -> Row | None:
    """The row of a completed session from its index card, or None when the card is damaged
    or no longer describes the manifest on disk (list_card.py).

    Its lock is not probed: a card is made only from a manifest read while the lock was free,
    and whoever takes the lock afterwards moves the manifest's mtime first
    (manifest_io.mark_in_use), so a card that still matches was not taken since.
    """
    card = parse_card(text)
    if card is None:
        return None
    folder = f"{folders}{session_id}"
    try:
        st = os.lstat(f"{folder}{os.sep}{MANIFEST}")
    except OSError:
        return None
    if manifest_stat(st) != card.manifest_stat:
        return None
    return Row(
        session_id,
        DisplayStatus.COMPLETED,
        card.turns,
        card.events,
        card.created_at,
        card.updated_at,
        folder,
        False,
        card.runs,
        card.num_turns,
        card.last_run,
        True,
        None,
    )


def _order(r: Row) -> tuple[str, str, str]:
    return (r.updated_at or "", r.created_at or "", r.session_id)


def list_rows(workspace: Path, *, use_index: bool = True) -> list[Row]:
    """Every session folder's `Row`, most recently updated first (unreadable ones last).

    A completed session is listed from its closed-session index card while the card still
    matches the manifest's stat (one `lstat`, no read, no lock probe); any other session is
    read as before, and the card of a completed one read so is appended to the index (best
    effort, never waiting), so the next listing need not read it again. `use_index=False`
    reads every session and leaves the index alone (the full scan, bench/sessions_list.py).
    """
    where = _Where.of(workspace)
    cards = (read_cards(workspace) or {}) if use_index else {}
    rows: list[Row] = []
    learned: dict[str, tuple[str, str]] = {}
    with LockProbe(where.locks) as probe:
        for e in session_folders(where.root):
            name = e.name
            text = cards.get(name)
            row = _card_row(name, text, where.folders) if text else None
            if row is None:
                row, card = _read_row(name, Path(e.path), probe)
                if card is not None and row.updated_at is not None and use_index:
                    learned[name] = (row.updated_at, card)
            rows.append(row)
    if learned:
        with contextlib.suppress(OSError):
            append_cards(workspace, learned)
    rows.sort(key=_order, reverse=True)
    return rows


def list_sessions(workspace: Path, *, use_index: bool = True) -> list[SessionSummary]:
    """Every session, most recently updated first (unreadable ones last): `list_rows` as
    `SessionSummary`s."""
    summary = _Where.of(workspace).summary
    return [summary(r) for r in list_rows(workspace, use_index=use_index)]


def latest_session_id(workspace: Path) -> str | None:
    """The most recently updated session with a readable manifest (`exec resume --last`)."""
    for row in list_rows(workspace):
        if row.has_manifest:
            return row.session_id
    return None
