"""The durable steering inbox of one session: `.vtcode/sessions/<id>/steering/queue.json`."""

from __future__ import annotations

from dataclasses import dataclass, field

from vtcode.jsontypes import U32

STEERING_QUEUE_SCHEMA_VERSION = 1
MAX_QUEUED_FOLLOW_UP_INTENTS = 16
MAX_APPLIED_FOLLOW_UP_INTENT_IDS = 64


@dataclass(frozen=True, slots=True, kw_only=True)
class QueuedFollowUpIntent:
    """A steering follow-up, tagged with a UUIDv4 so recovery never replays it twice.

    Defined here (steering owns follow-ups); the session memory envelope (`vtcode.context`)
    carries the pending ones across a compaction.
    """

    id: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SteeringQueueState:
    """Pending intents (at most 16, oldest first) and the window of applied ids (last 64)."""

    schema_version: U32 = STEERING_QUEUE_SCHEMA_VERSION
    session_id: str
    pending: list[QueuedFollowUpIntent] = field(default_factory=list)
    applied_intent_ids: list[str] = field(default_factory=list)
    updated_at: str
