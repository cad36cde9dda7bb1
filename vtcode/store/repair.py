"""`vtcode sessions repair ID`: the explicit way out of a corrupt log.

Under the session lock: back the whole file up first (`events.jsonl.bak-<stamp>`, fsynced), move
every invalid line (and a torn final fragment) to `events.jsonl.quarantine-<stamp>`, drop exact
duplicates of lines already kept, renumber `seq` only where a gap or duplicate forces it, replace
the log atomically and rebuild manifest and index. Then, like every open for writing, close a last
run that a crash left without `thread.completed` (store/closeout.py: the missing item
completions, a `harness` item, `turn.failed` and `thread.completed`, all appended). The report
says exactly what was done.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import secrets
from pathlib import Path
from typing import Any

import orjson

from vtcode import fsutil
from vtcode.clock import compact_stamp
from vtcode.config.model import StoreConfig
from vtcode.errors import NotFoundError
from vtcode.ids import check_id
from vtcode.store.closed_index import record_closed
from vtcode.store.closeout import close_interrupted, scan_open_run
from vtcode.store.layout import (
    EVENTS,
    INDEX_DIR,
    ensure_root,
    is_real_dir,
    lock_path,
    sessions_root,
)
from vtcode.store.locks import session_lock
from vtcode.store.logstate import LINE_SLACK, BadLine, LineInfo, parse_line
from vtcode.store.manifest_io import mark_in_use
from vtcode.store.recovery import recover
from vtcode.store.repair_events import Replay, next_item_number, salvage
from vtcode.store.writer import SessionWriter


@dataclasses.dataclass
class DroppedLine:
    line: int
    offset: int
    length: int
    reason: str


@dataclasses.dataclass
class RepairReport:
    """What `repair_session` found and did."""

    session_id: str
    changed: bool = False
    backup: Path | None = None
    quarantine: Path | None = None
    dropped: list[DroppedLine] = dataclasses.field(default_factory=list)
    duplicates: list[int] = dataclasses.field(default_factory=list)  # line numbers removed
    renumbered: list[tuple[int, int, int]] = dataclasses.field(default_factory=list)
    events: int = 0
    cache_note: str | None = None
    closed_interrupted: int = 0  # events appended to close an interrupted last run
    salvaged: list[tuple[int, str]] = dataclasses.field(default_factory=list)  # (line, fixes)
    inserted: int = 0  # closing events inserted where a dropped line left something open
    rewritten: list[tuple[int, str]] = dataclasses.field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "changed": self.changed,
            "backup": str(self.backup) if self.backup else None,
            "quarantine": str(self.quarantine) if self.quarantine else None,
            "dropped": [dataclasses.asdict(d) for d in self.dropped],
            "duplicates": self.duplicates,
            "renumbered": [{"line": a, "from_seq": b, "to_seq": c} for a, b, c in self.renumbered],
            "events": self.events,
            "caches": self.cache_note,
            "closed_interrupted": self.closed_interrupted,
            "salvaged": [{"line": n, "fixes": f} for n, f in self.salvaged],
            "inserted": self.inserted,
            "rewritten": [{"line": n, "what": w} for n, w in self.rewritten],
        }

    def lines(self) -> list[str]:
        """Human summary, one fact per line."""
        if not self.changed:
            return [f"{self.session_id}: nothing to repair ({self.events} events)"]
        out = [f"backed up the log to {self.backup}"] if self.backup else []
        for n, fixes in self.salvaged:
            out.append(f"line {n}: kept after repairing its encoding ({fixes})")
        for d in self.dropped:
            at = f" at {d.offset}" if d.offset >= 0 else ""
            out.append(f"quarantined line {d.line} ({d.length} bytes{at}): {d.reason}")
        if self.quarantine:
            out.append(f"quarantined lines are in {self.quarantine}")
        for n in self.duplicates:
            out.append(f"removed line {n}: an exact duplicate of an earlier line")
        for n, what in self.rewritten:
            out.append(f"line {n}: {what}")
        if self.inserted:
            out.append(f"inserted {self.inserted} events to close what dropped lines left open")
        for line, old, new in self.renumbered[:_SHOWN]:
            out.append(f"line {line}: seq {old} renumbered to {new}")
        if len(self.renumbered) > _SHOWN:
            out.append(f"... and {len(self.renumbered) - _SHOWN} more lines renumbered")
        if self.dropped or self.duplicates or self.renumbered or self.inserted:
            out.append(f"{self.events} events kept; manifest and turn index rebuilt")
        if self.closed_interrupted:
            out.append(
                f"closed the interrupted last run: appended {self.closed_interrupted} events "
                "(turn.failed and thread.completed, outcome_code interrupted)"
            )
        return out


_SHOWN = 20  # renumbered lines listed one by one (all of them in --json)


def _write_new(path: Path, data: bytes) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, fsutil.FILE_MODE)
    try:
        fsutil.write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def repair_session(workspace: Path, session_id: str, cfg: StoreConfig) -> RepairReport:
    """Repair one session's log (see the module doc); raises `LockBusyError` when in use."""
    check_id(session_id)
    sdir = sessions_root(Path(workspace)) / session_id
    if not is_real_dir(sdir):
        raise NotFoundError(f"no session {session_id!r} in {sdir.parent}")
    ensure_root(Path(workspace))
    lock = session_lock(lock_path(workspace, session_id))
    lock.acquire(cfg.lock_timeout_secs, what=f"session {session_id}")
    try:
        mark_in_use(sdir)  # its index card, if any, stops vouching for it (listing)
        report = _repair(sdir, session_id, cfg.max_event_bytes + LINE_SLACK)
    finally:
        lock.release()
    max_line = cfg.max_event_bytes + LINE_SLACK
    if scan_open_run(sdir / EVENTS, max_line) is not None:
        # The lock is taken again by the writer (a second flock in one process would conflict).
        writer = SessionWriter.open_existing(workspace, session_id, cfg)
        try:
            report.closed_interrupted = close_interrupted(writer, cfg)
        except BaseException:
            writer.abort()
            raise
        writer.close()
        report.changed = True
        with contextlib.suppress(OSError):
            record_closed(workspace, session_id)
    return report


def _repair(sdir: Path, session_id: str, max_line: int) -> RepairReport:
    path = sdir / EVENTS
    report = RepairReport(session_id=session_id)
    data = fsutil.read_regular(path) if path.exists() else b""
    lines: list[tuple[int, bytes, dict[str, Any]]] = []  # (line number, raw, envelope object)
    raws: dict[int, bytes] = {}
    objs: dict[int, dict[str, Any]] = {}
    bad: list[bytes] = []
    seen: set[bytes] = set()
    expected: int | None = None
    pos = line_no = 0
    while pos < len(data):
        nl = data.find(b"\n", pos)
        end = len(data) if nl < 0 else nl
        raw = data[pos:end]
        line_no += 1
        try:
            if nl < 0:
                raise BadLine("torn final line (no newline)")
            raw, info, obj = _parse_or_salvage(raw, line_no, max_line, report)
        except BadLine as e:
            report.dropped.append(DroppedLine(line_no, pos, end - pos, str(e)))
            bad.append(raw + b"\n")
            pos = end + 1
            continue
        pos = end + 1
        if raw in seen and expected is not None and info.seq < expected:
            report.duplicates.append(line_no)
            continue
        seen.add(raw)
        expected = (info.seq if expected is None else expected) + 1
        lines.append((line_no, raw, obj))
        raws[line_no] = raw
        objs[line_no] = obj
    replay = Replay(session_id, next_item_number([obj for _, _, obj in lines]))
    first_seq = 1  # a log's seq is 1-based and gapless (the validator's rule)
    for n, _, obj in lines:
        replay.feed(n, obj)
    for n, reason in replay.refused:
        report.dropped.append(DroppedLine(n, -1, len(raws[n]), reason))
        bad.append(raws[n] + b"\n")
    report.inserted, report.rewritten = replay.inserted, replay.rewritten
    kept: list[bytes] = []
    for i, k in enumerate(replay.out):
        want = first_seq + i
        untouched = k.line > 0 and k.obj is objs[k.line]  # the replay did not rewrite it
        if k.line and "seq" in k.obj and k.obj["seq"] != want:
            report.renumbered.append((k.line, k.obj["seq"], want))
            untouched = False
        if k.line == 0 or "seq" in k.obj:
            k.obj["seq"] = want
        kept.append(raws[k.line] + b"\n" if untouched else orjson.dumps(k.obj) + b"\n")
    report.events = len(kept)
    report.changed = bool(
        report.dropped
        or report.duplicates
        or report.renumbered
        or report.salvaged
        or report.inserted
        or report.rewritten
    )
    if report.changed:
        stamp = f"{compact_stamp()}-{secrets.token_hex(2)}"
        report.backup = sdir / f"{EVENTS}.bak-{stamp}"
        _write_new(report.backup, data)
        if bad:
            report.quarantine = sdir / f"{EVENTS}.quarantine-{stamp}"
            _write_new(report.quarantine, b"".join(bad))
        fsutil.fsync_dir(sdir)
        fsutil.atomic_write_bytes(path, b"".join(kept))
    if not is_real_dir(sdir / INDEX_DIR):  # a deleted cache folder, as the writer's open does
        os.mkdir(sdir / INDEX_DIR, fsutil.DIR_MODE)
    rec = recover(sdir, session_id, max_line=max_line)
    report.cache_note = rec.reason or "manifest and turn index agree with the log"
    return report


def _parse_or_salvage(
    raw: bytes, line_no: int, max_line: int, report: RepairReport
) -> tuple[bytes, LineInfo, dict[str, Any]]:
    """The line parsed as it is, else after undoing encoding damage (`salvage`)."""
    try:
        info, obj = parse_line(raw, None, max_line)
        return raw, info, obj
    except BadLine:
        fixed, fixes = salvage(raw)
        if not fixes:
            raise
        try:
            info, obj = parse_line(fixed, None, max_line)
        except BadLine:
            raise BadLine(f"{'; '.join(fixes)}, still not an event") from None
        report.salvaged.append((line_no, "; ".join(fixes)))
        return fixed, info, obj
