"""ThreadEvent and ThreadItem, schema 0.11.0: the one Python definition of the event contract
(the item details live in `vtcode.events.items` and are re-exported here).

Field names, order, optionality and tags follow upstream `vtcode-exec-events` exactly: absent
optionals are omitted (never `null`), `type` is the first key of an event, and an item serializes
as `{"id": ..., "type": ..., <details>}`. `jsontypes` derives encoding, decoding and the published
JSON Schemas (`schemas/thread-event*.schema.json`) from these classes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

from vtcode.events.enums import (
    CompactionMode,
    CompactionTrigger,
    ContextResetTrigger,
    InterjectionSource,
    PermissionDecision,
    PlanApprovalDecision,
    ThreadCompletionSubtype,
)
from vtcode.events.items import (
    ITEM_DETAILS,
    AgentMessageItem,
    CommandExecutionItem,
    ErrorItem,
    FileChangeItem,
    FileUpdateChange,
    HarnessItem,
    ItemDetails,
    McpToolCallItem,
    PlanItem,
    ReasoningItem,
    ThreadItem,
    ToolInvocationItem,
    ToolOutputItem,
    WebSearchItem,
)
from vtcode.jsontypes import U32, U64, Doc, IntRange, TaggedUnion

__all__ = [
    "EVENT_TYPES",
    "ITEM_DETAILS",
    "ITEM_TYPES",
    "KNOWN_EVENT_CLASSES",
    "LIFECYCLE_ITEM_EVENTS",
    "THREAD_EVENT",
    "AgentMessageItem",
    "CommandExecutionItem",
    "ContextResetEvent",
    "ErrorItem",
    "FileChangeItem",
    "FileUpdateChange",
    "HarnessItem",
    "InterjectedEvent",
    "ItemCompletedEvent",
    "ItemDetails",
    "ItemStartedEvent",
    "ItemUpdatedEvent",
    "McpToolCallItem",
    "PermissionRequestedEvent",
    "PermissionResolvedEvent",
    "PlanApprovalRequestedEvent",
    "PlanApprovalResolvedEvent",
    "PlanDeltaEvent",
    "PlanItem",
    "ReasoningItem",
    "ThreadCompactBoundaryEvent",
    "ThreadCompletedEvent",
    "ThreadErrorEvent",
    "ThreadEvent",
    "ThreadItem",
    "ThreadStartedEvent",
    "TokenBreakdown",
    "ToolInvocationItem",
    "ToolOutputItem",
    "TurnCompletedEvent",
    "TurnFailedEvent",
    "TurnStartedEvent",
    "UnknownEvent",
    "Usage",
    "WebSearchItem",
]

_SAT = 2**64 - 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Token usage: `input_tokens` is the TOTAL prompt, including cached and cache-creation."""

    input_tokens: U64 = 0
    cached_input_tokens: U64 = 0
    cache_creation_tokens: U64 = 0
    output_tokens: U64 = 0

    def add(self, other: Usage) -> Usage:
        """Saturating sum, as upstream's `Usage::add`."""
        return Usage(
            input_tokens=min(_SAT, self.input_tokens + other.input_tokens),
            cached_input_tokens=min(_SAT, self.cached_input_tokens + other.cached_input_tokens),
            cache_creation_tokens=min(
                _SAT, self.cache_creation_tokens + other.cache_creation_tokens
            ),
            output_tokens=min(_SAT, self.output_tokens + other.output_tokens),
        )

    @property
    def uncached_input_tokens(self) -> int:
        return max(0, self.input_tokens - self.cached_input_tokens - self.cache_creation_tokens)

    @property
    def cache_hit_rate(self) -> float | None:
        return None if self.input_tokens == 0 else self.cached_input_tokens / self.input_tokens

    @property
    def is_zero(self) -> bool:
        return not (
            self.input_tokens
            or self.cached_input_tokens
            or self.cache_creation_tokens
            or self.output_tokens
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenBreakdown:
    """Where the prompt tokens of a turn went (optional on `turn.started`)."""

    system_prompt_tokens: U64
    tool_schema_tokens: U64
    instruction_file_tokens: U64
    message_history_tokens: U64
    cache_read_tokens: U64
    cache_write_tokens: U64
    cache_miss_tokens: U64
    subagent_bootstrap_tokens: U64 | None = None


# --------------------------------------------------------------------------------------------
# Events (internally tagged by `type`)


@dataclass(frozen=True, slots=True, kw_only=True)
class ThreadStartedEvent:
    """The first event of every thread (Agent SDK: SystemMessage(init))."""

    TYPE: ClassVar[str] = "thread.started"
    TAG_KEY: ClassVar[str] = "type"
    thread_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ThreadCompletedEvent:
    """The terminal result, exactly once, last (Agent SDK: ResultMessage)."""

    TYPE: ClassVar[str] = "thread.completed"
    TAG_KEY: ClassVar[str] = "type"
    thread_id: str
    session_id: str
    subtype: ThreadCompletionSubtype
    outcome_code: str
    result: Annotated[str | None, Doc("final summary, on success only")] = None
    stop_reason: str | None = None
    usage: Annotated[Usage, Doc("aggregate usage of the whole thread")]
    total_cost_usd: Annotated[float | None, Doc("omitted when pricing is unknown")] = None
    num_turns: U64


@dataclass(frozen=True, slots=True, kw_only=True)
class ThreadCompactBoundaryEvent:
    """History was compacted; the segment/prefix/catalog fields describe the cache transition."""

    TYPE: ClassVar[str] = "thread.compact_boundary"
    TAG_KEY: ClassVar[str] = "type"
    thread_id: str
    trigger: CompactionTrigger
    mode: CompactionMode
    original_message_count: U64
    compacted_message_count: U64
    history_artifact_path: str | None = None
    previous_segment_id: str | None = None
    new_segment_id: str | None = None
    previous_prefix_hash: str | None = None
    new_prefix_hash: str | None = None
    previous_catalog_hash: str | None = None
    new_catalog_hash: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextResetEvent:
    """The plan-to-build fresh-context handoff cleared the live transcript."""

    TYPE: ClassVar[str] = "context.reset"
    TAG_KEY: ClassVar[str] = "type"
    thread_id: str
    turn_id: str
    trigger: ContextResetTrigger
    plan_preserved: bool
    # upstream reads a u8: 101..255 is readable (a warning), above 255 is refused
    previous_context_usage_percent: Annotated[int, IntRange(0, 100, reader_maximum=255)]
    tool_budget_reset: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStartedEvent:
    """A turn begins (usually just `{"type":"turn.started"}`)."""

    TYPE: ClassVar[str] = "turn.started"
    TAG_KEY: ClassVar[str] = "type"
    token_breakdown: TokenBreakdown | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnCompletedEvent:
    """A turn ended normally; `usage` is this turn's own usage, not the running total."""

    TYPE: ClassVar[str] = "turn.completed"
    TAG_KEY: ClassVar[str] = "type"
    usage: Usage


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnFailedEvent:
    """A turn ended in failure, cancellation or a limit."""

    TYPE: ClassVar[str] = "turn.failed"
    TAG_KEY: ClassVar[str] = "type"
    message: str
    usage: Usage | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemStartedEvent:
    """First snapshot of an item."""

    TYPE: ClassVar[str] = "item.started"
    TAG_KEY: ClassVar[str] = "type"
    item: ThreadItem


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemUpdatedEvent:
    """A later full snapshot of a started item (never a delta)."""

    TYPE: ClassVar[str] = "item.updated"
    TAG_KEY: ClassVar[str] = "type"
    item: ThreadItem


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemCompletedEvent:
    """The final snapshot of an item (a lone completion is a non-streamed item)."""

    TYPE: ClassVar[str] = "item.completed"
    TAG_KEY: ClassVar[str] = "type"
    item: ThreadItem


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionRequestedEvent:
    """The harness asked for permission to run a tool."""

    TYPE: ClassVar[str] = "permission.requested"
    TAG_KEY: ClassVar[str] = "type"
    tool_name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionResolvedEvent:
    """A permission prompt was answered after `wait_ms`."""

    TYPE: ClassVar[str] = "permission.resolved"
    TAG_KEY: ClassVar[str] = "type"
    tool_name: str
    decision: PermissionDecision
    wait_ms: U64


@dataclass(frozen=True, slots=True, kw_only=True)
class InterjectedEvent:
    """The user interjected while the agent was working."""

    TYPE: ClassVar[str] = "interjected"
    TAG_KEY: ClassVar[str] = "type"
    source: InterjectionSource
    image_count: U32
    redirect_kind: Literal["interjection"] = "interjection"


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanDeltaEvent:
    """A streamed piece of a plan."""

    TYPE: ClassVar[str] = "plan.delta"
    TAG_KEY: ClassVar[str] = "type"
    thread_id: str
    turn_id: str
    item_id: str
    delta: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanApprovalRequestedEvent:
    """A plan awaits the user's decision."""

    TYPE: ClassVar[str] = "plan.approval.requested"
    TAG_KEY: ClassVar[str] = "type"
    thread_id: str
    turn_id: str
    plan_file: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanApprovalResolvedEvent:
    """The user (or auto-accept) decided on a plan."""

    TYPE: ClassVar[str] = "plan.approval.resolved"
    TAG_KEY: ClassVar[str] = "type"
    thread_id: str
    turn_id: str
    decision: PlanApprovalDecision
    automatic: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ThreadErrorEvent:
    """A thread-level error."""

    TYPE: ClassVar[str] = "error"
    TAG_KEY: ClassVar[str] = "type"
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownEvent:
    """An event type this version does not know (upstream's read-only `Unknown` catch-all).

    Unlike upstream, the raw object is kept, so passing a log through vtcode loses nothing.
    """

    TYPE: ClassVar[str] = "unknown"
    type: str
    raw: dict[str, Any] = dataclasses.field(default_factory=dict)


ThreadEvent = (
    ThreadStartedEvent
    | ThreadCompletedEvent
    | ThreadCompactBoundaryEvent
    | ContextResetEvent
    | TurnStartedEvent
    | TurnCompletedEvent
    | TurnFailedEvent
    | ItemStartedEvent
    | ItemUpdatedEvent
    | ItemCompletedEvent
    | PermissionRequestedEvent
    | PermissionResolvedEvent
    | InterjectedEvent
    | PlanDeltaEvent
    | PlanApprovalRequestedEvent
    | PlanApprovalResolvedEvent
    | ThreadErrorEvent
    | UnknownEvent
)

KNOWN_EVENT_CLASSES: list[type[Any]] = [
    ThreadStartedEvent,
    ThreadCompletedEvent,
    ThreadCompactBoundaryEvent,
    ContextResetEvent,
    TurnStartedEvent,
    TurnCompletedEvent,
    TurnFailedEvent,
    ItemStartedEvent,
    ItemUpdatedEvent,
    ItemCompletedEvent,
    PermissionRequestedEvent,
    PermissionResolvedEvent,
    InterjectedEvent,
    PlanDeltaEvent,
    PlanApprovalRequestedEvent,
    PlanApprovalResolvedEvent,
    ThreadErrorEvent,
]

THREAD_EVENT = TaggedUnion("ThreadEvent", "type", KNOWN_EVENT_CLASSES, unknown=UnknownEvent)

EVENT_TYPES: frozenset[str] = frozenset(THREAD_EVENT.by_tag)
ITEM_TYPES: frozenset[str] = frozenset(ITEM_DETAILS.by_tag)
LIFECYCLE_ITEM_EVENTS: frozenset[str] = frozenset(
    {"item.started", "item.updated", "item.completed"}
)
