"""The conversation on the terminal, rendered from the run's events as they arrive.

`ChatRenderer` is an exporter behind the dispatch gate (like `exec`'s progress sink), so the
screen shows exactly what the canonical log records, in the same order. Streamed text items carry
their whole text in every snapshot; the renderer prints only what is new since the last one.
"""

from __future__ import annotations

from typing import Any

import orjson

from vtcode.events.types import (
    AgentMessageItem,
    CommandExecutionItem,
    ContextResetEvent,
    ErrorItem,
    FileChangeItem,
    HarnessItem,
    ItemCompletedEvent,
    ItemStartedEvent,
    ItemUpdatedEvent,
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
    TurnStartedEvent,
)
from vtcode.interactive.markdown import render_markdown
from vtcode.interactive.terminal import Terminal
from vtcode.termtext import inert

__all__ = ["ChatRenderer", "clip"]


def _json(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value, default=str).decode()


def clip(text: str, n: int = 160) -> str:
    one = " ".join(text.split())
    return one if len(one) <= n else one[: n - 1] + "…"


class ChatRenderer:
    """Prints streamed assistant text and one line per tool, warning, boundary and turn end."""

    name = "chat"

    def __init__(self, terminal: Terminal) -> None:
        self.t = terminal
        self._shown: dict[str, int] = {}  # streamed item id -> characters already printed

    def _tag(self, tag: str, text: str) -> None:
        """One line: our tag, then `text` (model- or repository-controlled) made inert."""
        self.t.line(f"{self.t.style(tag, '1')} {inert(text)}".rstrip())

    def _stream(self, item_id: str, text: str, *, done: bool, reasoning: bool) -> None:
        # The whole text is made inert before slicing, so an escape sequence split across two
        # deltas is removed whole rather than printed in halves.
        text = inert(text)
        shown = self._shown.get(item_id)
        if shown is None:
            self.t.newline()
            if reasoning:
                self.t.write(self.t.style("thinking: ", "2"))
            shown = 0
        new = text[shown:]
        self.t.write(self.t.style(new, "2") if reasoning else new)
        if done:
            self._shown.pop(item_id, None)
            self.t.newline()
        else:
            self._shown[item_id] = len(text)

    def _answer(self, item_id: str, text: str, *, done: bool) -> None:
        """On a real terminal an answer is shown once, whole, as markdown (the activity line
        says it is being written meanwhile)."""
        if not done:
            self.t.busy("writing")
            return
        self.t.newline()
        self.t.write(render_markdown(text, width=self.t.width(), color=self.t.color))
        self.t.busy("model")

    def handle(self, event: ThreadEvent) -> None:
        if isinstance(event, TurnStartedEvent):
            self.t.busy("model")
        elif isinstance(event, TurnCompletedEvent | TurnFailedEvent):
            self.t.busy(None)
        if isinstance(event, ItemStartedEvent | ItemUpdatedEvent | ItemCompletedEvent):
            self._item(event)
        elif isinstance(event, ThreadCompactBoundaryEvent):
            self._tag(
                "[compact]",
                f"{event.trigger.value}: {event.original_message_count} -> "
                f"{event.compacted_message_count} messages",
            )
        elif isinstance(event, ContextResetEvent):
            self._tag(
                "[context reset]",
                f"transcript cleared (was {event.previous_context_usage_percent}% full); "
                "the approved plan is kept",
            )
        elif isinstance(event, TurnCompletedEvent):
            u = event.usage
            self._tag("[turn done]", f"tokens in {u.input_tokens} / out {u.output_tokens}")
        elif isinstance(event, TurnFailedEvent):
            self._tag("[turn failed]", event.message)
        elif isinstance(event, ThreadCompletedEvent):
            u = event.usage
            cost = "" if event.total_cost_usd is None else f", ${event.total_cost_usd:.4f}"
            self._tag(
                "[session]",
                f"{event.outcome_code} ({event.subtype.value}) after {event.num_turns} model "
                f"requests; tokens in {u.input_tokens} / out {u.output_tokens}{cost}; "
                f"session {event.session_id}",
            )

    def _item(self, event: ItemStartedEvent | ItemUpdatedEvent | ItemCompletedEvent) -> None:
        item = event.item
        d: Any = item.details
        done = isinstance(event, ItemCompletedEvent)
        if isinstance(d, AgentMessageItem) and self.t.rich_mode:
            self._answer(item.id, d.text, done=done)
        elif isinstance(d, AgentMessageItem | ReasoningItem):
            self._stream(item.id, d.text, done=done, reasoning=isinstance(d, ReasoningItem))
        elif isinstance(d, ToolInvocationItem | McpToolCallItem):
            if isinstance(event, ItemStartedEvent):
                self._tag("[tool]", d.tool_name)
                self.t.busy(inert(d.tool_name, newlines=False))
            elif done:
                self.t.busy("model")
                status = getattr(d, "outcome", None) or d.status
                args = "" if d.arguments is None else clip(_json(d.arguments), 120)
                self._tag("[tool done]", f"{d.tool_name} {getattr(status, 'value', status)} {args}")
        elif isinstance(d, CommandExecutionItem):  # a `!CMD` the user ran
            if isinstance(event, ItemStartedEvent):
                self._tag("[shell]", f"$ {d.command}")
                self.t.busy("shell")
            elif done:
                self.t.busy(None)
                self._command_output(d)
        elif isinstance(d, ToolOutputItem) and done:
            prefix = f"exit {d.exit_code}: " if d.exit_code is not None else ""
            self._tag("[output]", prefix + clip(d.output, 100))
        elif isinstance(d, ErrorItem) and done:
            self._tag("[warning]", d.message)
        elif isinstance(d, FileChangeItem):
            self._tag("[files]", ", ".join(f"{c.path} ({c.kind.value})" for c in d.changes))
        elif isinstance(d, HarnessItem):
            self._tag("[harness]", f"{d.event.value} {d.message or d.path or ''}")
        elif isinstance(d, PlanItem) and done:
            self._tag("[plan]", "proposed (a plan item)")

    def _command_output(self, d: CommandExecutionItem) -> None:
        """The whole output of the user's own command (made inert), then its exit status."""
        text = inert(d.aggregated_output).rstrip("\n")
        if text:
            self.t.line(text)
        code = "no exit code" if d.exit_code is None else f"exit {d.exit_code}"
        self._tag("[shell done]", f"{d.status.value}, {code}")

    def finish(self) -> None:
        self.t.newline()
