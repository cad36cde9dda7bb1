"""The progress ledger: `sessions/<id>/derived/progress.json`, upstream's fields and rules.

The ledger is the harness's durable answer to "are we getting closer to done?": completion is
done/total milestones (1.0 when none are tracked), confidence moves +0.05 on an advancing turn
and -0.10 on a stalled one (clamped to 0..1), `stalled_since` marks the first stall and clears on
the next advance. vtcode adds `consecutive_stalls`, the signal the context layer's `on_stall`
reset reads. Milestones come from the task tracker (`.vtcode/tasks/current_task.md` checkboxes).
The file is small and replaced whole (atomic replace), so a reader never sees half a ledger.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import re
import threading
from pathlib import Path

import orjson

from vtcode.clock import parse_rfc3339, rfc3339
from vtcode.fsutil import atomic_write_bytes, atomic_write_json, ensure_private_dir, read_regular
from vtcode.jsontypes import DecodeError, decode, encode
from vtcode.orient.models import Milestone, MilestoneStatus, ProgressLedger
from vtcode.orient.paths import TASK_TRACKER, tasks_dir
from vtcode.ownfile import read_own
from vtcode.redact import Redactor
from vtcode.store.layout import DERIVED_DIR, is_real_dir, session_dir, sessions_root

__all__ = [
    "ProgressMonitor",
    "completion_ratio",
    "forget_monitor",
    "is_complete",
    "is_stalled",
    "latest_progress",
    "load_progress",
    "new_ledger",
    "note_advance",
    "note_stall",
    "parse_task_milestones",
    "previous_run_line",
    "progress_monitor",
    "progress_path",
    "read_task_milestones",
    "save_progress",
    "summary_line",
    "to_markdown",
]

PROGRESS_FILE = "progress.json"
ADVANCE_STEP = 0.05
STALL_STEP = 0.10
_MARKS = {
    MilestoneStatus.DONE: "[x]",
    MilestoneStatus.IN_PROGRESS: "[~]",
    MilestoneStatus.BLOCKED: "[!]",
    MilestoneStatus.PENDING: "[ ]",
}
# The box, then the rest of the line (the title, in `_title`): a lazy title beside `\s*$` was
# quadratic in a line's trailing blanks, and the task file is the workspace's.
_CHECKBOX = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[(.)\](\s.*)$")
_BOX_STATUS = {
    "x": MilestoneStatus.DONE,
    "X": MilestoneStatus.DONE,
    "~": MilestoneStatus.IN_PROGRESS,
    "-": MilestoneStatus.IN_PROGRESS,
    "!": MilestoneStatus.BLOCKED,
    " ": MilestoneStatus.PENDING,
}


# ------------------------------------------------------------------------------ pure rules


def new_ledger(session_id: str, goal: str, *, now: str | None = None) -> ProgressLedger:
    return ProgressLedger(session_id=session_id, goal=goal, updated_at=now or rfc3339())


def completion_ratio(ledger: ProgressLedger) -> float:
    """done / total; 1.0 when nothing is tracked (upstream's rule)."""
    if not ledger.milestones:
        return 1.0
    done = sum(1 for m in ledger.milestones if m.status is MilestoneStatus.DONE)
    return done / len(ledger.milestones)


def is_complete(ledger: ProgressLedger) -> bool:
    return completion_ratio(ledger) >= 1.0


def is_stalled(ledger: ProgressLedger) -> bool:
    return ledger.stalled_since is not None


def _clamp(value: float) -> float:
    # Rounded so that repeated +0.05/-0.10 steps stay readable (0.7, not 0.7000000000000001).
    return round(min(1.0, max(0.0, value)), 6)


def note_advance(ledger: ProgressLedger, *, now: str | None = None) -> ProgressLedger:
    """Forward progress: clear the stall, confidence +0.05 (at most 1)."""
    return dataclasses.replace(
        ledger,
        stalled_since=None,
        confidence=_clamp(ledger.confidence + ADVANCE_STEP),
        consecutive_stalls=0,
        updated_at=now or rfc3339(),
    )


def note_stall(ledger: ProgressLedger, *, now: str | None = None) -> ProgressLedger:
    """No progress: set `stalled_since` on the first stall, confidence -0.10 (at least 0)."""
    ts = now or rfc3339()
    return dataclasses.replace(
        ledger,
        stalled_since=ledger.stalled_since or ts,
        confidence=_clamp(ledger.confidence - STALL_STEP),
        consecutive_stalls=ledger.consecutive_stalls + 1,
        updated_at=ts,
    )


def summary_line(ledger: ProgressLedger) -> str:
    """The orientation's `### Progress` line (upstream's format)."""
    state = "STALLED" if is_stalled(ledger) else "on track"
    return (
        f"Goal: {ledger.goal} | Completion: {completion_ratio(ledger) * 100:.0f}% | "
        f"Confidence: {ledger.confidence:.2f} | {state}"
    )


def previous_run_line(workspace: Path, ledger: ProgressLedger | None) -> str | None:
    """Another session's goal and how it ended, as history for a new run's orientation.

    Never phrased as progress: a finished earlier task is not this task's completion. The
    ending comes from that session's manifest (its last run's subtype), when it can be read."""
    if ledger is None or not ledger.goal:
        return None
    from vtcode.errors import VtcodeError
    from vtcode.store.listing import summarize

    ended = "did not record how it ended"
    try:
        last = summarize(workspace, ledger.session_id).last_run
    except (OSError, VtcodeError):
        last = None
    if last is not None:
        ended = f"ended {last.subtype}"
    return (
        f"Previous session {ledger.session_id} (a different run, not this task) {ended} at"
        f" {ledger.updated_at}; its goal was: {ledger.goal}"
    )


def to_markdown(ledger: ProgressLedger) -> str:
    """Upstream's `to_markdown()`: `# Session Progress`, handoff lines, issues, milestones."""
    pct = math.floor(completion_ratio(ledger) * 100.0 + 0.5)  # Rust's round(): half away from 0
    out = ["# Session Progress\n\n"]
    out.append(f"**Goal:** {ledger.goal}\n")
    out.append(f"**Completion:** {pct}%\n")
    out.append(f"**Confidence:** {ledger.confidence:.2f}\n")
    if ledger.stalled_since is not None:
        out.append(f"**Stalled since:** {ledger.stalled_since}\n")
    out.append(f"**Updated:** {ledger.updated_at}\n\n")
    if ledger.previous_session_id is not None:
        out.append(f"**Handed off from:** {ledger.previous_session_id}\n")
    if ledger.handoff_summary is not None:
        out.append(f"**Handoff summary:** {ledger.handoff_summary}\n")
    if ledger.git_checkpoint is not None:
        out.append(f"**Git checkpoint:** `{ledger.git_checkpoint}`\n")
    if ledger.known_issues:
        out.append("\n## Known Issues\n\n")
        out.extend(f"- {issue}\n" for issue in ledger.known_issues)
    if not ledger.milestones:
        out.append("\n_No tracked milestones yet._\n")
    else:
        out.append("\n## Milestones\n\n")
        out.extend(f"{_MARKS[m.status]} {m.id} — {m.description}\n" for m in ledger.milestones)
    return "".join(out)


def _title(rest: str) -> str | None:
    """What `\\s+(.+?)\\s*$` took of the text after the box: its words without the blanks
    around them, or, when it is only blanks (two or more), the last of them."""
    words = rest.strip()
    if words:
        return words
    return rest[-1] if len(rest) >= 2 else None


def parse_task_milestones(text: str) -> list[Milestone]:
    """Checkbox items of a task tracker: `- [x]` done, `[~]`/`[-]` in progress, `[!]` blocked."""
    out: list[Milestone] = []
    for line in text.splitlines():
        m = _CHECKBOX.match(line)
        title = _title(m.group(2)) if m else None
        if m and title is not None and m.group(1) in _BOX_STATUS:
            out.append(
                Milestone(id=str(len(out) + 1), description=title, status=_BOX_STATUS[m.group(1)])
            )
    return out


def read_task_milestones(workspace: Path) -> list[Milestone] | None:
    """Milestones of `.vtcode/tasks/current_task.md` (None when there is no tracker)."""
    try:
        text = read_regular(tasks_dir(workspace) / TASK_TRACKER, limit=1 << 20)
    except OSError:
        return None
    return parse_task_milestones(text.decode("utf-8", "replace"))


# ------------------------------------------------------------------------------ persistence


def progress_path(workspace: Path, session_id: str) -> Path:

    return session_dir(workspace, session_id) / DERIVED_DIR / PROGRESS_FILE


def _read_ledger(path: Path) -> ProgressLedger | None:
    try:
        data = orjson.loads(read_regular(path, limit=4 << 20))
        return decode(ProgressLedger, data)
    except (OSError, orjson.JSONDecodeError, DecodeError):
        return None


def load_progress(workspace: Path, session_id: str) -> ProgressLedger | None:
    """The session's ledger; None when absent or unreadable (no signal, as upstream)."""
    return _read_ledger(progress_path(workspace, session_id))


def save_progress(workspace: Path, ledger: ProgressLedger, *, durable: bool = True) -> Path:
    """Replace the session's ledger atomically (compact JSON, like upstream's store).

    `durable=False` skips the fsyncs: the replace is still atomic (readers see the old or the
    new ledger, never a torn one) but a power cut may lose it; the loop saves that way after each
    turn and durably at the end of the run.
    """
    path = progress_path(workspace, ledger.session_id)
    if not path.parent.parent.is_dir():
        raise FileNotFoundError(f"session folder {path.parent.parent} does not exist")
    ensure_private_dir(path.parent)
    # The task text quotes the user's prompt: no credential in it is kept (`vtcode.redact`).
    atomic_write_json(path, Redactor.from_environ().value(encode(ledger)), durable=durable)
    _note_recent(workspace, ledger.session_id)
    return path


# The sessions whose ledgers were saved last, newest first, so `latest_progress` reads a few
# ledgers instead of one per session (100k sessions: seconds before the first event). A cache:
# missing means a full scan; a lost update under a race only costs that scan's precision.
RECENT_FILE = "progress-recent"
_RECENT_MAX = 16


def _recent_path(workspace: Path) -> Path:

    return sessions_root(workspace).parent / RECENT_FILE


def _read_recent(workspace: Path) -> list[str] | None:
    try:
        text = read_own(_recent_path(workspace), 64 * 1024).decode("utf-8", "replace")
    except OSError:
        return None
    return [line for line in text.splitlines() if line and not line.startswith(".")]


def _note_recent(workspace: Path, session_id: str) -> None:

    recent = [s for s in (_read_recent(workspace) or []) if s != session_id]
    body = "".join(f"{s}\n" for s in [session_id, *recent][:_RECENT_MAX])
    with contextlib.suppress(OSError):
        atomic_write_bytes(_recent_path(workspace), body.encode(), durable=False)


def latest_progress(workspace: Path, *, exclude: str | None = None) -> ProgressLedger | None:
    """The most recently updated ledger of any session in the workspace (skips unreadable ones).

    Reads the recently saved ledgers first (`progress-recent`); scans every session only when
    that list is missing or holds no usable ledger.
    """

    root = sessions_root(workspace)
    recent = _read_recent(workspace)
    if recent:
        found = _best_ledger(root, recent, exclude)
        if found is not None:
            return found
    try:
        names = [e.name for e in root.iterdir() if not e.name.startswith(".")]
    except OSError:
        return None
    return _best_ledger(root, names, exclude)


def _best_ledger(root: Path, names: list[str], exclude: str | None) -> ProgressLedger | None:

    best: tuple[float, str, ProgressLedger] | None = None
    for name in names:
        if "/" in name or name in ("", ".", ".."):
            continue
        if name == exclude or not is_real_dir(root / name):
            continue
        ledger = _read_ledger(root / name / DERIVED_DIR / PROGRESS_FILE)
        if ledger is None:
            continue
        moment = parse_rfc3339(ledger.updated_at)
        key = (moment.timestamp() if moment else 0.0, name, ledger)
        if best is None or key[:2] > best[:2]:
            best = key
    return best[2] if best else None


# ------------------------------------------------------------------------------ live monitor


class ProgressMonitor:
    """The live ledger of one running session; other parts read `consecutive_stalls`."""

    def __init__(self, ledger: ProgressLedger) -> None:
        self.ledger = ledger
        self._lock = threading.Lock()

    @property
    def consecutive_stalls(self) -> int:
        return self.ledger.consecutive_stalls

    def record(self, *, made_progress: bool) -> ProgressLedger:
        with self._lock:
            self.ledger = note_advance(self.ledger) if made_progress else note_stall(self.ledger)
            return self.ledger

    def update(self, **changes: object) -> ProgressLedger:
        with self._lock:
            self.ledger = dataclasses.replace(self.ledger, **changes)  # type: ignore[arg-type]
            return self.ledger


_MONITORS: dict[str, ProgressMonitor] = {}
_MONITORS_GUARD = threading.Lock()


def progress_monitor(
    session_id: str, *, create: ProgressLedger | None = None
) -> ProgressMonitor | None:
    """The monitor of a session running in this process (the context layer reads its stalls)."""
    with _MONITORS_GUARD:
        mon = _MONITORS.get(session_id)
        if mon is None and create is not None:
            mon = _MONITORS[session_id] = ProgressMonitor(create)
        return mon


def forget_monitor(session_id: str) -> None:
    with _MONITORS_GUARD:
        _MONITORS.pop(session_id, None)
