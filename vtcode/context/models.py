"""Shapes of context-management artifacts: the schema-v3 session memory envelope."""

from __future__ import annotations

from dataclasses import dataclass, field

from vtcode.jsontypes import U32
from vtcode.steering.models import QueuedFollowUpIntent

SESSION_MEMORY_ENVELOPE_SCHEMA_VERSION = 3
MEMORY_LIST_LIMIT = 5


@dataclass(frozen=True, slots=True, kw_only=True)
class GroundedFactRecord:
    """A fact with where it came from, rendered `[source] fact`."""

    fact: str
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionMemoryEnvelope:
    """The structured memory injected at every compaction boundary (schema v3)."""

    session_id: str = ""
    schema_version: U32 | None = SESSION_MEMORY_ENVELOPE_SCHEMA_VERSION
    summary: str
    objective: str | None = None
    task_summary: str | None = None
    spec_summary: str | None = None
    evaluation_summary: str | None = None
    verification_summary: str | None = None
    constraints: list[str] = field(default_factory=list)
    grounded_facts: list[GroundedFactRecord] = field(default_factory=list)
    touched_files: list[str] = field(default_factory=list)
    open_questions: list[str] = field(default_factory=list)
    verification_todo: list[str] = field(default_factory=list)
    delegation_notes: list[str] = field(default_factory=list)
    pending_intents: list[QueuedFollowUpIntent] = field(default_factory=list)
    applied_intent_ids: list[str] = field(default_factory=list)
    history_artifact_path: str | None = None
    generated_at: str


HISTORY_ARCHIVE_SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryArchiveMeta:
    """First line of `.vtcode/history/<session>_<turn:04>_<stamp>.jsonl`; messages follow.

    `mode` is upstream's (who compacted: always `local` for vtcode, which builds every compacted
    history itself); `summary_source` says who wrote the summary text (`provider` or `local`).
    """

    kind: str = "vtcode.history_archive"
    schema_version: U32 = HISTORY_ARCHIVE_SCHEMA_VERSION
    session_id: str
    turn: U32
    created_at: str
    trigger: str
    mode: str
    summary_source: str
    original_message_count: U32
    compacted_message_count: U32
    envelope_path: str | None = None
