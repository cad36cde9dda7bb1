"""The manifest-based context reset (`agent.harness.context_reset_mode`), upstream's format.

When a reset triggers (`on_stall`: that many consecutive stalled turns; `on_compaction`: after an
auto-compaction), `.vtcode/tasks/current_context_reset.md` is written; the next orientation
shows it under `### Context Reset` (the orient package renders the banner and consumes the
manifest as it does; the context part also consumes it at the fresh context's first request in
case no orientation did), and the conversation restarts from orientation only. No
`context.reset` event is emitted for this mechanism (upstream emits that only for the
plan-approval handoff, see `fresh.py`).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from vtcode.clock import utcnow
from vtcode.config.model import ContextResetMode
from vtcode.fsutil import atomic_write_bytes, ensure_private_dir, read_regular

__all__ = [
    "RESET_MANIFEST",
    "ContextResetManifest",
    "consume_reset_manifest",
    "parse_reset_manifest",
    "read_reset_manifest",
    "render_reset_manifest",
    "reset_manifest_path",
    "should_reset",
    "write_reset_manifest",
]

RESET_MANIFEST = ".vtcode/tasks/current_context_reset.md"
ResetTrigger = Literal["stall", "compaction"]


@dataclass(frozen=True, slots=True)
class ContextResetManifest:
    triggered_at: str  # `2026-01-01T00:00:00Z`
    trigger: str
    stall_count: int = 0


def reset_manifest_path(workspace: Path) -> Path:
    return Path(workspace) / RESET_MANIFEST


def render_reset_manifest(m: ContextResetManifest) -> str:
    """Upstream's exact text (note the single space before each `- **`)."""
    return (
        "# Context Reset Manifest\n"
        "\n"
        f" - **Triggered at:** {m.triggered_at}\n"
        f" - **Trigger:** {m.trigger}\n"
        f" - **Stall count:** {m.stall_count}\n"
        "\n"
        "This session starts fresh from external artifacts only.\n"
        "Read the current feature list and progress tracker to reorient.\n"
    )


def parse_reset_manifest(text: str) -> ContextResetManifest | None:
    """Upstream's tolerant parser: trimmed lines; `Triggered at` and `Trigger` are required."""
    fields: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line.startswith("- **") or ":**" not in line:
            continue
        key, _, value = line[4:].partition(":**")
        fields[key.strip().lower()] = value.strip()
    at, trigger = fields.get("triggered at"), fields.get("trigger")
    if not at or not trigger:
        return None
    try:
        stalls = int(fields.get("stall count", "0") or 0)
    except ValueError:
        stalls = 0
    return ContextResetManifest(triggered_at=at, trigger=trigger, stall_count=stalls)


def write_reset_manifest(
    workspace: Path,
    *,
    trigger: ResetTrigger,
    stall_count: int = 0,
    now: _dt.datetime | None = None,
) -> Path:
    path = reset_manifest_path(workspace)
    ensure_private_dir(path.parent)
    stamp = (now or utcnow()).strftime("%Y-%m-%dT%H:%M:%SZ")
    body = render_reset_manifest(ContextResetManifest(stamp, trigger, stall_count))
    atomic_write_bytes(path, body.encode())
    return path


def read_reset_manifest(workspace: Path) -> str | None:
    """The manifest's text when one is pending and parses, else None."""
    try:
        text = read_regular(reset_manifest_path(workspace), limit=64 * 1024).decode(
            "utf-8", "replace"
        )
    except (FileNotFoundError, IsADirectoryError, OSError):
        return None
    return text if parse_reset_manifest(text) is not None else None


def consume_reset_manifest(workspace: Path) -> bool:
    """Delete a pending manifest (one-shot); True when one was removed."""
    with contextlib.suppress(FileNotFoundError):
        reset_manifest_path(workspace).unlink()
        return True
    return False


def should_reset(
    mode: ContextResetMode, *, compaction: bool, stall_count: int, threshold: int
) -> tuple[bool, str]:
    """Upstream's `should_reset`: (reset?, reason)."""
    if mode is ContextResetMode.ON_COMPACTION and compaction:
        return True, "compaction triggered reset"
    if mode is ContextResetMode.ON_STALL and stall_count >= max(threshold, 1):
        return True, f"stall {stall_count}>={threshold}"
    return False, ""
