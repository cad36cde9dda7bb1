"""One description of each event and item for people: its label and the line it shows as.

`vtcode exec`'s progress (stderr), the chat and the HTML timeline all read this table, so an
item type is described once and the three cannot drift apart. A line is a tag and a text; each
front end draws it its own way (`[TOOL DONE] …` on stderr, `[tool done] …` in the chat) and
makes the text inert itself. The table is checked at import against the item union: a new item
type without a description fails on import.

The machine translations (Open Responses, ATIF, OpenTelemetry) keep their own mappings: they
describe items for other programs, not for people.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from typing import Any

import orjson

from vtcode.events.types import (
    AgentMessageItem,
    CommandExecutionItem,
    ContextResetEvent,
    ErrorItem,
    FileChangeItem,
    HarnessItem,
    ItemDetails,
    McpToolCallItem,
    PlanItem,
    ReasoningItem,
    ThreadCompactBoundaryEvent,
    ThreadCompletedEvent,
    ThreadEvent,
    ToolInvocationItem,
    ToolOutputItem,
    TurnCompletedEvent,
    TurnFailedEvent,
    WebSearchItem,
)

__all__ = ["ITEMS", "ItemDescription", "Line", "clip", "describe_item", "event_line", "json_text"]


@dataclasses.dataclass(frozen=True, slots=True)
class Line:
    """What one happening shows as: a tag (lowercase, ours) and a text (not yet made inert)."""

    tag: str
    text: str


def clip(text: str, n: int = 160) -> str:
    """One line of at most `n` characters (whitespace runs folded), `…` where it was cut."""
    one = " ".join(text.split())
    return one if len(one) <= n else one[: n - 1] + "…"


def json_text(value: object) -> str:
    """Tool arguments as JSON (what the model sent), not Python's repr of a dict."""
    if isinstance(value, str):
        return value
    return orjson.dumps(value, default=str).decode()


def _tool_done(d: ToolInvocationItem) -> Line:
    args = "" if d.arguments is None else clip(json_text(d.arguments), 120)
    outcome = d.outcome.value if d.outcome else d.status.value
    return Line("tool done", f"{d.tool_name} {outcome} {args}".rstrip())


def _mcp_done(d: McpToolCallItem) -> Line:
    status = d.status.value if d.status else "completed"
    return Line("tool done", f"{d.tool_name} {status} {clip(d.result or '', 100)}".rstrip())


def _output(d: ToolOutputItem) -> Line:
    if d.exit_code is None:
        return Line("output", clip(d.output, 100))
    return Line("command", f"exit {d.exit_code}: {clip(d.output, 100)}")


def _shell_done(d: CommandExecutionItem) -> Line:
    code = "no exit code" if d.exit_code is None else f"exit {d.exit_code}"
    return Line("shell done", f"{d.status.value}, {code}")


def _files(d: FileChangeItem) -> Line:
    return Line("files", ", ".join(f"{c.path} ({c.kind.value})" for c in d.changes))


def _harness(d: HarnessItem) -> Line:
    return Line("harness", f"{d.event.value} {d.message or d.path or ''}".rstrip())


def _none(_: Any) -> Line | None:
    return None


@dataclasses.dataclass(frozen=True, slots=True)
class ItemDescription:
    """An item type for people: its label (the timeline's tag) and its start and end lines."""

    label: str
    started: Callable[[Any], Line | None] = _none
    completed: Callable[[Any], Line | None] = _none
    streamed: bool = False  # its text grows in item.updated snapshots (front ends stream it)


ITEMS: dict[type[Any], ItemDescription] = {
    AgentMessageItem: ItemDescription(
        "message", completed=lambda d: Line("message", clip(d.text, 400)), streamed=True
    ),
    ReasoningItem: ItemDescription("reasoning", streamed=True),
    PlanItem: ItemDescription("plan", completed=lambda d: Line("plan", "proposed (a plan item)")),
    ToolInvocationItem: ItemDescription(
        "tool", started=lambda d: Line("tool", d.tool_name), completed=_tool_done
    ),
    McpToolCallItem: ItemDescription(
        "mcp", started=lambda d: Line("tool", d.tool_name), completed=_mcp_done
    ),
    ToolOutputItem: ItemDescription("output", completed=_output),
    CommandExecutionItem: ItemDescription(
        "command", started=lambda d: Line("shell", f"$ {d.command}"), completed=_shell_done
    ),
    FileChangeItem: ItemDescription("files", completed=_files),
    ErrorItem: ItemDescription("warning", completed=lambda d: Line("warning", d.message)),
    HarnessItem: ItemDescription("harness", completed=_harness),
    WebSearchItem: ItemDescription("search", completed=lambda d: Line("search", d.query)),
}

_missing = set(typing.get_args(ItemDetails)) - set(ITEMS)
if _missing:  # pragma: no cover - fails at import, which the suite would show at once
    raise RuntimeError(f"item types without a description: {sorted(t.__name__ for t in _missing)}")


def describe_item(details: ItemDetails) -> ItemDescription:
    return ITEMS[type(details)]


def _outcome(e: ThreadCompletedEvent) -> Line:
    u = e.usage
    cost = "" if e.total_cost_usd is None else f", ${e.total_cost_usd:.4f}"
    return Line(
        "outcome",
        f"{e.subtype.value} ({e.outcome_code}) after {e.num_turns} turns; "
        f"tokens in {u.input_tokens} / out {u.output_tokens}{cost}; session {e.session_id}",
    )


def _compact(e: ThreadCompactBoundaryEvent) -> Line:
    """A boundary whose history grew (a recovery after a transient failure on a short history:
    nothing older to drop, a summary added) is not called compaction (issue 26)."""
    how = f"{e.trigger.value}/{e.mode.value}"
    counts = f"{e.original_message_count} -> {e.compacted_message_count} messages"
    if e.compacted_message_count > e.original_message_count:
        return Line("context", f"{how}: nothing older to compact; a summary was added ({counts})")
    return Line("compact", f"{how}: {counts}")


_EVENT_LINES: dict[type[Any], Callable[[Any], Line]] = {
    ThreadCompactBoundaryEvent: _compact,
    ContextResetEvent: lambda e: Line(
        "context reset",
        f"transcript cleared (was {e.previous_context_usage_percent}% full); "
        f"the approved plan is {'kept' if e.plan_preserved else 'dropped'}",
    ),
    TurnCompletedEvent: lambda e: Line(
        "turn done", f"tokens in {e.usage.input_tokens} / out {e.usage.output_tokens}"
    ),
    TurnFailedEvent: lambda e: Line("turn failed", e.message),
    ThreadCompletedEvent: _outcome,
}


def event_line(event: ThreadEvent) -> Line | None:
    """The line of an event that is not an item (compaction, reset, turn end, the outcome)."""
    describe = _EVENT_LINES.get(type(event))
    return None if describe is None else describe(event)
