"""On-disk shapes of the canonical session store: manifest and turn index (upstream schema 1)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from vtcode.jsontypes import U32, U64, Format

SESSION_STORE_SCHEMA_VERSION = 1
RFC3339 = Format("date-time")


class SessionStatus(StrEnum):
    """Status written in `manifest.json`; `abandoned` is derived at read time, never stored."""

    ACTIVE = "active"
    COMPLETED = "completed"


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxRecord:
    """vtcode: the effective exec_command sandbox of the session's latest run."""

    status: str = field(
        metadata={"doc": "enforced, off (danger-full-access + network), unavailable"}
    )
    mode: str = field(metadata={"doc": "read-only, workspace-write or danger-full-access"})
    network: bool = field(metadata={"doc": "whether commands could reach the network"})
    writable_roots: list[str] = field(default_factory=list)
    reason: str | None = field(default=None, metadata={"doc": "why no sandbox was available"})


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSummary:
    """vtcode: how one run of the session ended, from its `thread.completed` line."""

    seq: U64 = field(metadata={"doc": "seq of the run's thread.completed line"})
    subtype: str = field(
        metadata={"doc": "thread.completed subtype (success, error_max_turns, ...)"}
    )
    outcome_code: str = field(metadata={"doc": "thread.completed outcome_code"})
    num_turns: U64 = field(metadata={"doc": "thread.completed num_turns (model requests)"})


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionManifest:
    """`.vtcode/sessions/<id>/manifest.json`: a cache of the log, rebuilt from it on mismatch."""

    session_id: str
    schema_version: U32 = SESSION_STORE_SCHEMA_VERSION
    created_at: str = field(metadata={"doc": "RFC 3339 creation time"})
    updated_at: str = field(metadata={"doc": "RFC 3339 time of the last append"})
    turn_count: U64 = field(metadata={"doc": "closed turns"})
    event_count: U64 = field(metadata={"doc": "events retained in events.jsonl"})
    status: SessionStatus
    last_seq: U64 | None = field(default=None, metadata={"doc": "vtcode: seq of the last event"})
    log_bytes: U64 | None = field(
        default=None, metadata={"doc": "vtcode: size of events.jsonl this manifest describes"}
    )
    first_seq: U64 | None = field(
        default=None,
        metadata={"doc": "vtcode: seq of the first retained event (above 1 after eviction)"},
    )
    sandbox: SandboxRecord | None = field(
        default=None, metadata={"doc": "vtcode: exec_command's sandbox in the latest run"}
    )
    runs: list[RunSummary] | None = field(
        default=None,
        metadata={"doc": "vtcode: the ended runs whose thread.completed the log retains, in order"},
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnIndexEntry:
    """Byte range of one turn in events.jsonl (end exclusive)."""

    turn_number: U64
    start_offset: U64
    end_offset: U64
    event_count: U64
    ts: str
    start_seq: U64 | None = field(
        default=None, metadata={"doc": "vtcode: seq of the turn's `turn.started` line"}
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnIndex:
    """`.vtcode/sessions/<id>/index/turns.json`."""

    entries: list[TurnIndexEntry] = field(default_factory=list)
