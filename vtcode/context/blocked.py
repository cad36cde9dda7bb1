"""Blocked handoff artifacts: what a run that cannot go on leaves for whoever resumes it.

Written for hard blocks (`tool_loop_limit_reached`, `loop_detected`) and for a recovery that
failed twice (`blocked`), in upstream's `blocked_handoff.rs` shape: YAML-ish front matter
(`session_id`, `outcome`, `created_at`, `workspace`) and the sections `# Blocker Summary`,
`# Current Tracker Snapshot`, `# Relevant Paths`, `# Resume Metadata`. The same text goes to
`.vtcode/tasks/current_blocked.md` (replaced) and to a timestamped archive under
`.vtcode/tasks/blockers/` (kept).
"""

from __future__ import annotations

from pathlib import Path

from vtcode.clock import compact_stamp, rfc3339
from vtcode.fsutil import atomic_write_bytes, ensure_private_dir, read_regular
from vtcode.ids import check_id

__all__ = ["BLOCKED_CURRENT", "BLOCKERS_DIR", "render_blocked_handoff", "write_blocked_handoff"]

BLOCKED_CURRENT = ".vtcode/tasks/current_blocked.md"
BLOCKERS_DIR = ".vtcode/tasks/blockers"
TASK_TRACKER = ".vtcode/tasks/current_task.md"
_TRACKER_LIMIT = 8 * 1024


def _tracker_text(workspace: Path) -> str | None:
    try:
        raw = read_regular(Path(workspace) / TASK_TRACKER, limit=_TRACKER_LIMIT)
    except OSError:
        return None
    return raw.decode("utf-8", "replace").strip() or None


def render_blocked_handoff(
    *,
    workspace: Path,
    session_id: str,
    outcome_code: str,
    summary: str,
    created_at: str,
    tracker: str | None,
    paths: list[str],
) -> str:
    session_rel = f".vtcode/sessions/{session_id}"
    lines = [
        "---",
        f"session_id: {session_id}",
        f"outcome: {outcome_code}",
        f"created_at: {created_at}",
        f"workspace: {workspace}",
        "---",
        "",
        "# Blocker Summary",
        "",
        summary.strip() or "The run stopped without a summary.",
        "",
        "# Current Tracker Snapshot",
        "",
        tracker or "No task tracker snapshot available.",
        "",
        "# Relevant Paths",
        "",
        *[f"- {p}" for p in paths],
        "",
        "# Resume Metadata",
        "",
        f"- Session: {session_id}",
        f"- Outcome: {outcome_code}",
        f"- Resume: `vtcode exec resume {session_id}`",
        f"- Events: {session_rel}/events.jsonl",
        f"- Transcript: {session_rel}/transcript.jsonl",
        "",
    ]
    return "\n".join(lines)


def write_blocked_handoff(
    workspace: Path,
    session_id: str,
    outcome_code: str,
    summary: str,
    tracker: str | None = None,
    *,
    extra_paths: list[str] | None = None,
) -> tuple[Path, Path]:
    """Write the current blocked handoff and its archive; returns (current, archive)."""
    ws = Path(workspace)
    check_id(session_id)
    tracker = tracker if tracker is not None else _tracker_text(ws)
    paths = [f".vtcode/sessions/{session_id}/events.jsonl", *(extra_paths or [])]
    if (ws / TASK_TRACKER).exists():
        paths.append(TASK_TRACKER)
    text = render_blocked_handoff(
        workspace=ws.resolve(),
        session_id=session_id,
        outcome_code=outcome_code,
        summary=summary,
        created_at=rfc3339(),
        tracker=tracker,
        paths=paths,
    ).encode("utf-8", "replace")
    current = ws / BLOCKED_CURRENT
    archive_dir = ws / BLOCKERS_DIR
    ensure_private_dir(archive_dir)
    base = f"{compact_stamp()}-{session_id}"
    archive, n = archive_dir / f"{base}.md", 1
    while archive.exists():
        n += 1
        archive = archive_dir / f"{base}-{n}.md"
    atomic_write_bytes(archive, text)
    atomic_write_bytes(current, text)
    return current, archive
