"""The orient phase: gather durable artifacts and render the `[Orientation Context]` section.

Every session starts here (and `vtcode orient` prints the same text): the progress ledger, the
harness artifacts under `.vtcode/tasks/`, the recent git log, loop notes and decisions, the last
compaction summary, a pending context-reset manifest and a handoff. Each read is best effort (a
missing or unreadable artifact is simply absent) and the section carries summaries and
references, never whole files, so the system prompt stays lean. Section order and headings are
upstream's (`orient.rs`).
"""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path
from typing import Any

from vtcode.context.archive import compaction_summary_path
from vtcode.errors import UsageError
from vtcode.orient import gitutil
from vtcode.orient.memory import MemoryKind, memory_path, read_text
from vtcode.orient.models import HandoffRequest
from vtcode.orient.paths import tasks_dir
from vtcode.ownfile import SMALL_TEXT, OwnFileRefused, read_own

__all__ = ["ARTIFACTS", "OrientationContext", "gather_orientation", "read_artifact_summary"]

SUMMARY_PREVIEW_CHARS = 280
SUMMARY_LINES = 4
MEMORY_TAIL_ENTRIES = 20
COMPACTION_SUMMARY_MAX_CHARS = 4000
RESET_BANNER = (
    "This session starts from a clean context. Previous conversation history was deliberately "
    "discarded to clear noise and bad assumptions. Reorient from the artifacts below."
)

# field -> (file under .vtcode/tasks/, summary label), upstream's names.
ARTIFACTS: dict[str, tuple[str, str]] = {
    "spec_summary": ("current_spec.md", "Spec"),
    "contract_summary": ("current_contract.md", "Contract"),
    "sprint_contract_summary": ("current_sprint_contract.md", "SprintContract"),
    "evaluation_summary": ("current_evaluation.md", "Evaluation"),
    "outcome_verification_summary": ("current_outcome_verification.md", "OutcomeVerification"),
    "feature_list_summary": ("current_feature_list.md", "FeatureList"),
}


@dataclasses.dataclass(slots=True)
class OrientationContext:
    """Upstream's `OrientationContext`: every part optional; the handoff is kept rendered too."""

    progress_summary: str | None = None
    # vtcode: the previous session's goal and how it ended, as history (never as progress).
    previous_run: str | None = None
    spec_summary: str | None = None
    contract_summary: str | None = None
    sprint_contract_summary: str | None = None
    evaluation_summary: str | None = None
    outcome_verification_summary: str | None = None
    recent_git_log: str | None = None
    loop_notes: str | None = None
    loop_decisions: str | None = None
    compaction_summary: str | None = None
    feature_list_summary: str | None = None
    context_reset_manifest: str | None = None
    handoff: HandoffRequest | None = None
    handoff_prompt: str | None = None  # the rendered handoff (also a hand-written .md)
    # vtcode: exec_command's sandbox when it is not the default (workspace-write, no network)
    # or missing, so the model knows what its commands may do (the manifest records it always).
    sandbox: str | None = None
    # vtcode: one message per artifact that was there but refused (a FIFO, socket, folder,
    # symlink or oversized file planted under .vtcode/): skipped, and shown as a warning.
    skipped: list[str] = dataclasses.field(default_factory=list)

    def to_prompt_section(self) -> str | None:
        """`[Orientation Context]` and its `###` sections, or None when there is nothing."""
        sections = [
            ("Progress", self.progress_summary),
            ("Previous Run", self.previous_run),
            ("Spec", self.spec_summary),
            ("Contract", self.contract_summary),
            ("Sprint Contract", self.sprint_contract_summary),
            ("Last Evaluation", self.evaluation_summary),
            ("Outcome Verification", self.outcome_verification_summary),
            ("Recent Git Log", self.recent_git_log),
            ("Loop Notes", self.loop_notes),
            ("Loop Decisions", self.loop_decisions),
            ("Previous Session Summary", self.compaction_summary),
            ("Feature List", self.feature_list_summary),
        ]
        sections.append(("Sandbox", self.sandbox))
        parts = [f"### {title}\n{body}" for title, body in sections if body is not None]
        if self.context_reset_manifest is not None:
            parts.append(f"### Context Reset\n{RESET_BANNER}\n\n{self.context_reset_manifest}")
        if self.handoff_prompt is not None:
            parts.append(self.handoff_prompt)
        if not parts:
            return None
        return "[Orientation Context]\n\n" + "\n\n".join(parts)

    def to_json(self) -> dict[str, Any]:
        from vtcode.jsontypes import encode

        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if v is not None and f.name != "skipped":
                out[f.name] = encode(v)
        out["section"] = self.to_prompt_section()
        return out


def _truncate_within(text: str, limit: int, ellipsis: str = "...") -> str:
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(ellipsis))] + ellipsis


def _read_text(path: Path, skipped: list[str] | None = None) -> str | None:
    """The file's text; None when missing or unreadable. One that is there but is not a
    regular file, is a symlink or is larger than 1 MiB is also noted in `skipped`."""
    try:
        return read_own(path, SMALL_TEXT).decode("utf-8", "replace")
    except OwnFileRefused as e:
        if skipped is not None:
            skipped.append(f"{path}: {e.strerror}; skipped")
        return None
    except OSError:
        return None


def read_artifact_summary(path: Path, label: str, skipped: list[str] | None = None) -> str | None:
    """First 4 non-heading lines joined by ` | `, at most 280 chars (upstream's preview)."""
    content = _read_text(path, skipped)
    if content is None:
        return None
    lines = [ln.strip() for ln in content.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("#")][:SUMMARY_LINES]
    if not lines:
        return None
    return f"{label}: {_truncate_within(' | '.join(lines), SUMMARY_PREVIEW_CHARS)}"


def _memory_summary(
    workspace: Path, kind: MemoryKind, skipped: list[str] | None = None
) -> str | None:
    """The memory file; past 20 entries only the newest 20, with a pointer to the whole file.
    An unreadable one (a FIFO, a folder, too large) is skipped with a note, never fatal here."""
    try:
        text = read_text(workspace, kind)
    except UsageError as e:
        if skipped is not None:
            skipped.append(f"{e}; skipped")
        return None
    if not text.strip():
        return None
    lines = text.rstrip("\n").splitlines()
    entries = [ln for ln in lines if ln.startswith("- [")]
    if len(entries) <= MEMORY_TAIL_ENTRIES:
        return text.rstrip("\n")
    rel = memory_path(workspace, kind).relative_to(workspace)
    head = kind.header.strip()
    shown = entries[-MEMORY_TAIL_ENTRIES:]
    return "\n".join(
        [head, "", f"(newest {len(shown)} of {len(entries)} entries; all of them: {rel})", *shown]
    )


def _compaction_summary(workspace: Path, skipped: list[str] | None = None) -> str | None:
    text = _read_text(compaction_summary_path(workspace), skipped)
    if text is None or not text.strip():
        return None
    text = text.strip("\n")
    if len(text) > COMPACTION_SUMMARY_MAX_CHARS:
        rel = compaction_summary_path(workspace).relative_to(workspace)
        text = _truncate_within(text, COMPACTION_SUMMARY_MAX_CHARS) + f"\n(full summary: {rel})"
    return text


def read_reset_manifest(workspace: Path) -> str | None:
    """The pending context-reset manifest, through the context layer when it is installed."""
    try:
        reset: Any = importlib.import_module("vtcode.context.reset")
    except ModuleNotFoundError as e:
        if e.name != "vtcode.context.reset":
            raise
        value: Any = _read_text(tasks_dir(workspace) / "current_context_reset.md")
    else:
        value = reset.read_reset_manifest(workspace)
    return value.rstrip("\n") if isinstance(value, str) and value.strip() else None


def consume_reset_manifest(workspace: Path) -> None:
    """One-shot: the context layer removes the manifest once a session has oriented from it."""
    try:
        reset: Any = importlib.import_module("vtcode.context.reset")
    except ModuleNotFoundError as e:
        if e.name != "vtcode.context.reset":
            raise
        return
    reset.consume_reset_manifest(workspace)


def gather_orientation(workspace: Path, session_id: str | None = None) -> OrientationContext:
    """Read every artifact (best effort). The ledger is this session's, else the latest one."""
    from vtcode.orient.handoff import load_handoff
    from vtcode.orient.progress import (
        latest_progress,
        load_progress,
        previous_run_line,
        summary_line,
    )

    ws = Path(workspace)
    if session_id is None:  # `vtcode orient`: no task of its own, the latest ledger is the news
        latest = latest_progress(ws)
        ctx = OrientationContext(progress_summary=summary_line(latest) if latest else None)
    else:
        # A run's `### Progress` is its own goal only. Another session's ledger is history: its
        # "Completion: 100%" shown as this task's progress told a new task it was already done.
        own = load_progress(ws, session_id)
        ctx = OrientationContext(
            progress_summary=summary_line(own) if own is not None and own.goal else None,
            previous_run=previous_run_line(ws, latest_progress(ws, exclude=session_id)),
        )
    for name, (filename, label) in ARTIFACTS.items():
        setattr(ctx, name, read_artifact_summary(tasks_dir(ws) / filename, label, ctx.skipped))
    ctx.recent_git_log = gitutil.recent_log(ws)
    ctx.loop_notes = _memory_summary(ws, MemoryKind.NOTES, ctx.skipped)
    ctx.loop_decisions = _memory_summary(ws, MemoryKind.DECISIONS, ctx.skipped)
    ctx.compaction_summary = _compaction_summary(ws, ctx.skipped)
    ctx.context_reset_manifest = read_reset_manifest(ws)
    ctx.handoff, ctx.handoff_prompt = load_handoff(ws)
    return ctx
