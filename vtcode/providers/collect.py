"""What a stream of deltas adds up to: text, reasoning, tool calls, stop reason, usage.

Recording, tests and any caller that does not render deltas live use this one accumulator, so
"the same response" means the same thing everywhere (delta boundaries do not matter).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from vtcode.events.types import Usage
from vtcode.messages import (
    ReasoningDelta,
    ResponseCompleted,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
)

__all__ = ["MAX_COLLECTED_CALLS", "CollectedResponse", "ResponseAccumulator", "collect"]

# A response may stream any number of tool calls (one sent 200,000); the accumulator keeps the
# first this many and only counts the rest (`dropped_calls`), reading the stream to its end, so
# a recording (`--record`) stays bounded. The loop has its own, lower cap (loop/call_cap.py).
MAX_COLLECTED_CALLS = 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class CollectedResponse:
    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: str | None = None  # None: the stream did not complete
    usage: Usage = field(default_factory=Usage)
    reasoning_signature: str | None = None


@dataclass
class _Call:
    id: str | None = None
    name: str | None = None
    arguments: list[str] = field(default_factory=list)


class ResponseAccumulator:
    """Add stream events one by one; `result()` at any point (a partial stream is allowed)."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, _Call] = {}
        self.completed: ResponseCompleted | None = None
        self.deltas = 0
        self.dropped_calls = 0  # calls past MAX_COLLECTED_CALLS, counted by new highest index
        self._top = -1

    def add(self, event: StreamEvent) -> None:
        if isinstance(event, TextDelta):
            self._text.append(event.text)
        elif isinstance(event, ReasoningDelta):
            self._reasoning.append(event.text)
        elif isinstance(event, ToolCallDelta):
            call = self._calls.get(event.index)
            if call is None:
                new, self._top = event.index > self._top, max(self._top, event.index)
                if len(self._calls) >= MAX_COLLECTED_CALLS:
                    self.dropped_calls += new
                    return
                call = self._calls[event.index] = _Call()
            if event.id and call.id is None:
                call.id = event.id
            if event.name and call.name is None:
                call.name = event.name
            call.arguments.append(event.arguments)
        else:
            self.completed = event
            return
        self.deltas += 1

    def tool_calls(self) -> tuple[ToolCall, ...]:
        """Calls in index order; a call the server sent without an id gets `call_<index>`."""
        return tuple(
            ToolCall(
                id=c.id or f"call_{i}",
                name=c.name or "",
                arguments="".join(c.arguments),
            )
            for i, c in sorted(self._calls.items())
        )

    def result(self) -> CollectedResponse:
        done = self.completed
        return CollectedResponse(
            text="".join(self._text),
            reasoning="".join(self._reasoning),
            tool_calls=self.tool_calls(),
            stop_reason=None if done is None else done.stop_reason,
            usage=Usage() if done is None else done.usage,
            reasoning_signature=None if done is None else done.reasoning_signature,
        )


def collect(events: Iterable[StreamEvent]) -> CollectedResponse:
    """Drain a whole stream (provider errors propagate)."""
    acc = ResponseAccumulator()
    for event in events:
        acc.add(event)
    return acc.result()
