"""The ThreadItem details of schema 0.11.0: what a thread's items can be.

Part of the one definition of the event contract (`vtcode.events.types` holds the events and
re-exports these); split out so each module stays readable. Field names, order, optionality
and tags follow upstream `vtcode-exec-events` exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar

from vtcode.events.enums import (
    FileChangeKind,
    HarnessEventKind,
    McpToolCallStatus,
    PatchApplyStatus,
    ToolCallStatus,
    ToolOutcome,
)
from vtcode.jsontypes import I32, U64, Doc, IntRange, TaggedUnion

# --------------------------------------------------------------------------------------------
# Item details (internally tagged by `type`, flattened into the item next to `id`)


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentMessageItem:
    """Assistant text."""

    TYPE: ClassVar[str] = "agent_message"
    TAG_KEY: ClassVar[str] = "type"
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanItem:
    """Plan markdown."""

    TYPE: ClassVar[str] = "plan"
    TAG_KEY: ClassVar[str] = "type"
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningItem:
    """Model reasoning text, optionally with a stage such as `analysis`."""

    TYPE: ClassVar[str] = "reasoning"
    TAG_KEY: ClassVar[str] = "type"
    text: str
    stage: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandExecutionItem:
    """A shell command run by the harness."""

    TYPE: ClassVar[str] = "command_execution"
    TAG_KEY: ClassVar[str] = "type"
    command: str
    arguments: Any | None = None
    aggregated_output: str = field(default="", metadata={"read_default": True})
    exit_code: I32 | None = None
    status: ToolCallStatus


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolInvocationItem:
    """A tool call requested by the model."""

    TYPE: ClassVar[str] = "tool_invocation"
    TAG_KEY: ClassVar[str] = "type"
    tool_name: str
    arguments: Any | None = None
    tool_call_id: Annotated[str | None, Doc("the provider's raw tool call id")] = None
    status: ToolCallStatus
    outcome: ToolOutcome | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolOutputItem:
    """The result of a tool call; `call_id` is the id of its `tool_invocation` item."""

    TYPE: ClassVar[str] = "tool_output"
    TAG_KEY: ClassVar[str] = "type"
    call_id: str
    tool_call_id: str | None = None
    spool_path: str | None = None
    output: str = field(default="", metadata={"read_default": True})
    exit_code: I32 | None = None
    status: ToolCallStatus


@dataclass(frozen=True, slots=True, kw_only=True)
class FileUpdateChange:
    """One changed path."""

    path: str
    kind: FileChangeKind


@dataclass(frozen=True, slots=True, kw_only=True)
class FileChangeItem:
    """Files added, deleted or updated by a tool."""

    TYPE: ClassVar[str] = "file_change"
    TAG_KEY: ClassVar[str] = "type"
    changes: list[FileUpdateChange]
    status: PatchApplyStatus


@dataclass(frozen=True, slots=True, kw_only=True)
class McpToolCallItem:
    """A call to a tool of an MCP server."""

    TYPE: ClassVar[str] = "mcp_tool_call"
    TAG_KEY: ClassVar[str] = "type"
    tool_name: str
    arguments: Any | None = None
    result: str | None = None
    status: McpToolCallStatus | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WebSearchItem:
    """A web search and its results."""

    TYPE: ClassVar[str] = "web_search"
    TAG_KEY: ClassVar[str] = "type"
    query: str
    provider: str | None = None
    results: list[str] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HarnessItem:
    """A harness milestone (verification, blocked handoff, retry, ...)."""

    TYPE: ClassVar[str] = "harness"
    TAG_KEY: ClassVar[str] = "type"
    event: HarnessEventKind
    message: str | None = None
    command: str | None = None
    path: str | None = None
    exit_code: I32 | None = None
    attempt: Annotated[int | None, IntRange(0, 2**32 - 1), Doc("1-based attempt number")] = None
    error_category: str | None = None
    duration_ms: U64 | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorItem:
    """A warning or error surfaced as an item."""

    TYPE: ClassVar[str] = "error"
    TAG_KEY: ClassVar[str] = "type"
    message: str


ItemDetails = (
    AgentMessageItem
    | PlanItem
    | ReasoningItem
    | CommandExecutionItem
    | ToolInvocationItem
    | ToolOutputItem
    | FileChangeItem
    | McpToolCallItem
    | WebSearchItem
    | HarnessItem
    | ErrorItem
)

ITEM_DETAILS = TaggedUnion(
    "ThreadItemDetails",
    "type",
    [
        AgentMessageItem,
        PlanItem,
        ReasoningItem,
        CommandExecutionItem,
        ToolInvocationItem,
        ToolOutputItem,
        FileChangeItem,
        McpToolCallItem,
        WebSearchItem,
        HarnessItem,
        ErrorItem,
    ],
    flattened=True,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ThreadItem:
    """An item: `{"id": ..., "type": ..., <details>}`."""

    __flatten__: ClassVar[str] = "details"
    id: str
    details: Annotated[ItemDetails, ITEM_DETAILS]

    @property
    def type(self) -> str:
        return self.details.TYPE
