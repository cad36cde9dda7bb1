"""What compaction writes to disk: the full pre-compaction history, the envelope, the summary
for the next session's orientation, and spool files for previewed messages.

- `.vtcode/history/<session>_<turn:04>_<YYYYmmddTHHMMSSZ>.jsonl`: first line `HistoryArchiveMeta`,
  then one transcript-format message per line (the same codec as `transcript.jsonl`).
- `<same stem>.memory.json`: the `SessionMemoryEnvelope` (pretty JSON).
- `.vtcode/memories/compaction_summary.md`: the latest summary. Upstream writes workspace-root
  `memories/`; vtcode keeps every artifact under `.vtcode/` (orientation reads it from there).
- `.vtcode/context/compaction/<sha256>.txt`: full text of each message shown as a preview.

Every file is written atomically (temp, fsync, replace, fsync folder), 0600 in 0700 folders, so a
crash leaves either the old file or the new one. Like the event log, none of them keeps a
credential (`vtcode.redact`): history, envelope, summary and previews are redacted on the way out.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import orjson

from vtcode.clock import compact_stamp, rfc3339
from vtcode.context.compaction import Spool
from vtcode.context.models import HistoryArchiveMeta, SessionMemoryEnvelope
from vtcode.fsutil import atomic_write_bytes, atomic_write_json, ensure_private_dir
from vtcode.ids import check_id
from vtcode.jsontypes import encode
from vtcode.messages import Message
from vtcode.redact import Redactor

__all__ = [
    "ArchivePaths",
    "compaction_summary_path",
    "history_dir",
    "plan_archive",
    "write_archive",
    "write_compaction_summary",
    "write_spools",
]

HISTORY_DIR = ".vtcode/history"
MEMORIES_DIR = ".vtcode/memories"
COMPACTION_SUMMARY = "compaction_summary.md"


@dataclasses.dataclass(frozen=True, slots=True)
class ArchivePaths:
    """Where one compaction's archive goes (absolute) and how events name it (relative)."""

    history: Path
    envelope: Path
    relative: str  # workspace-relative history path, as `history_artifact_path`

    @property
    def envelope_relative(self) -> str:
        return str(Path(self.relative).with_name(self.envelope.name))


def history_dir(workspace: Path) -> Path:
    return Path(workspace) / HISTORY_DIR


def compaction_summary_path(workspace: Path) -> Path:
    return Path(workspace) / MEMORIES_DIR / COMPACTION_SUMMARY


def plan_archive(
    workspace: Path, session_id: str, turn: int, stamp: str | None = None
) -> ArchivePaths:
    """A fresh (not yet existing) archive name; a same-second repeat gets `-2`, `-3`, ..."""
    check_id(session_id)
    base = f"{session_id}_{turn:04d}_{stamp or compact_stamp()}"
    folder = history_dir(workspace)
    stem, n = base, 1
    while (folder / f"{stem}.jsonl").exists() or (folder / f"{stem}.memory.json").exists():
        n += 1
        stem = f"{base}-{n}"
    return ArchivePaths(
        history=folder / f"{stem}.jsonl",
        envelope=folder / f"{stem}.memory.json",
        relative=f"{HISTORY_DIR}/{stem}.jsonl",
    )


def write_archive(
    paths: ArchivePaths,
    meta: HistoryArchiveMeta,
    history: list[Message],
    envelope: SessionMemoryEnvelope,
) -> None:
    """The full pre-compaction history (metadata first) and the envelope beside it."""
    from vtcode.store.transcript import message_to_json

    ensure_private_dir(paths.history.parent)
    meta = dataclasses.replace(meta, envelope_path=paths.envelope_relative)
    redactor = Redactor.from_environ()
    lines = [orjson.dumps(encode(meta))]
    lines.extend(redactor.encode(message_to_json(m)) for m in history)
    atomic_write_bytes(paths.history, b"\n".join(lines) + b"\n")
    atomic_write_json(paths.envelope, redactor.value(encode(envelope)), pretty=True)


def write_compaction_summary(
    workspace: Path,
    summary: str,
    *,
    session_id: str,
    trigger: str,
    history_artifact_path: str | None,
) -> Path:
    """`.vtcode/memories/compaction_summary.md`, replaced at every compaction."""
    path = compaction_summary_path(workspace)
    ensure_private_dir(path.parent)
    lines = [
        "# Compaction Summary",
        "",
        f"- **Session:** {session_id}",
        f"- **Trigger:** {trigger}",
        f"- **Generated at:** {rfc3339()}",
    ]
    if history_artifact_path:
        lines.append(f"- **History artifact:** {history_artifact_path}")
    text = "\n".join(lines) + "\n\n" + Redactor.from_environ().text(summary.strip()) + "\n"
    atomic_write_bytes(path, text.encode("utf-8", "replace"))
    return path


def write_spools(workspace: Path, spools: list[Spool]) -> None:
    """Write each spool file once (names are content hashes, so an existing one is identical)."""
    redactor = Redactor.from_environ()
    for s in spools:
        path = Path(workspace) / s.path
        if path.exists():
            continue
        ensure_private_dir(path.parent)
        atomic_write_bytes(path, redactor.text(s.content).encode("utf-8", "surrogatepass"))
