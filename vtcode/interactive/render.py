"""The conversation on the terminal, rendered from the run's events as they arrive.

`ChatRenderer` is an exporter behind the dispatch gate (like `exec`'s progress sink), so the
screen shows exactly what the canonical log records, in the same order. Streamed text items carry
their whole text in every snapshot; the renderer prints only what is new since the last one.
"""

from __future__ import annotations

from vtcode.events.describe import describe_item, event_line
from vtcode.events.types import (
    AgentMessageItem,
    CommandExecutionItem,
    ItemCompletedEvent,
    ItemStartedEvent,
    ItemUpdatedEvent,
    McpToolCallItem,
    ReasoningItem,
    ThreadEvent,
    ToolInvocationItem,
    TurnCompletedEvent,
    TurnFailedEvent,
    TurnStartedEvent,
)
from vtcode.interactive.markdown import render_markdown
from vtcode.interactive.terminal import Terminal
from vtcode.termtext import inert

__all__ = ["ChatRenderer"]


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
            return
        line = event_line(event)  # the one description of events for people
        if line is not None:
            self._tag(f"[{line.tag}]", line.text)

    def _item(self, event: ItemStartedEvent | ItemUpdatedEvent | ItemCompletedEvent) -> None:
        item = event.item
        d = item.details
        described = describe_item(d)
        done = isinstance(event, ItemCompletedEvent)
        if isinstance(d, AgentMessageItem) and self.t.rich_mode:
            self._answer(item.id, d.text, done=done)
            return
        if isinstance(d, AgentMessageItem | ReasoningItem):
            self._stream(item.id, d.text, done=done, reasoning=isinstance(d, ReasoningItem))
            return
        if isinstance(event, ItemStartedEvent):
            line = described.started(d)
            if line is not None:
                self._tag(f"[{line.tag}]", line.text)
                # what works now, for the activity line
                self.t.busy(
                    "shell"
                    if isinstance(d, CommandExecutionItem)
                    else inert(line.text, newlines=False)
                )
            return
        if not done:
            return
        if isinstance(d, ToolInvocationItem | McpToolCallItem):
            self.t.busy("model")
        elif isinstance(d, CommandExecutionItem):  # a `!CMD` the user ran: its whole output
            self.t.busy(None)
            text = inert(d.aggregated_output).rstrip("\n")
            if text:
                self.t.line(text)
        line = described.completed(d)
        if line is not None:
            self._tag(f"[{line.tag}]", line.text)

    def finish(self) -> None:
        self.t.newline()
