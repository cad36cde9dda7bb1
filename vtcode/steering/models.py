"""The durable steering inbox of one session: `.vtcode/sessions/<id>/steering/queue.json`."""

from __future__ import annotations

from dataclasses import dataclass, field

from vtcode.context.models import QueuedFollowUpIntent
from vtcode.jsontypes import U32

STEERING_QUEUE_SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class SteeringQueueState:
    """Pending intents (at most 16, oldest first) and the window of applied ids (last 64)."""

    schema_version: U32 = STEERING_QUEUE_SCHEMA_VERSION
    session_id: str
    pending: list[QueuedFollowUpIntent] = field(default_factory=list)
    applied_intent_ids: list[str] = field(default_factory=list)
    updated_at: str
