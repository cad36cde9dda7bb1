"""Exporters that render a run for the terminal: raw JSONL on stdout, progress on stderr.

They sit behind the dispatch gate like every exporter, so stdout sees events in exactly the
canonical order, once the canonical log has them (written; fsynced with `event` durability):
a consumer of `exec --json` never holds an event that a crash kept out of events.jsonl. They
run on the gate's dispatch thread, one drain batch behind the emit.
"""

from __future__ import annotations

import contextlib
import sys
from typing import IO, Any

import orjson

from vtcode.events.codec import encode_raw_line
from vtcode.events.types import (
    AgentMessageItem,
    ErrorItem,
    FileChangeItem,
    HarnessItem,
    ItemCompletedEvent,
    ItemStartedEvent,
    McpToolCallItem,
    ThreadCompactBoundaryEvent,
    ThreadCompletedEvent,
    ThreadEvent,
    ToolInvocationItem,
    ToolOutputItem,
    TurnFailedEvent,
)
from vtcode.termtext import inert


class StdoutJsonSink:
    """`exec --json`: one raw ThreadEvent per line on stdout, flushed per event."""

    def __init__(self, stream: IO[bytes] | None = None) -> None:
        self.stream = stream or sys.stdout.buffer

    def handle(self, event: ThreadEvent) -> None:
        try:
            self.stream.write(encode_raw_line(event))
            self.stream.flush()
        except BrokenPipeError:
            # The consumer went away; the canonical log still has everything.
            self.stream = _Null()

    def finish(self) -> None:
        with contextlib.suppress(BrokenPipeError):
            self.stream.flush()


class _Null:
    def write(self, data: bytes) -> int:
        return len(data)

    def flush(self) -> None:
        pass


def _json_text(value: object) -> str:
    """Tool arguments as JSON (what the model sent), not Python's repr of a dict."""
    if isinstance(value, str):
        return value
    return orjson.dumps(value, default=str).decode()


def _clip(text: str, n: int = 160) -> str:
    one = " ".join(text.split())
    return one if len(one) <= n else one[: n - 1] + "…"


class HumanProgressSink:
    """Human progress on stderr (`[TOOL]`, `[WARNING]`, `[SUMMARY]`, `[OUTCOME]`, ...)."""

    def __init__(self, stream: IO[str] | None = None, *, color: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.color = color

    def _line(self, tag: str, text: str) -> None:
        text = inert(text)  # model- or repository-controlled: no escape sequences reach stderr
        if self.color:
            tag = f"\x1b[1m{tag}\x1b[0m"
        self.stream.write(f"{tag} {text}\n")
        self.stream.flush()

    def handle(self, event: ThreadEvent) -> None:
        if isinstance(event, ItemStartedEvent):
            d: Any = event.item.details
            if isinstance(d, ToolInvocationItem | McpToolCallItem):
                self._line("[TOOL]", d.tool_name)
        elif isinstance(event, ItemCompletedEvent):
            d = event.item.details
            if isinstance(d, McpToolCallItem):
                status = d.status.value if d.status else "completed"
                self._line("[TOOL DONE]", f"{d.tool_name} {status} {_clip(d.result or '', 100)}")
            elif isinstance(d, ToolInvocationItem):
                args = "" if d.arguments is None else _clip(_json_text(d.arguments), 120)
                outcome = d.outcome.value if d.outcome else d.status.value
                self._line("[TOOL DONE]", f"{d.tool_name} {outcome} {args}".rstrip())
            elif isinstance(d, ToolOutputItem) and d.exit_code is not None:
                self._line("[COMMAND]", f"exit {d.exit_code}: {_clip(d.output, 100)}")
            elif isinstance(d, ErrorItem):
                self._line("[WARNING]", d.message)
            elif isinstance(d, FileChangeItem):
                files = ", ".join(f"{c.path} ({c.kind.value})" for c in d.changes)
                self._line("[FILES]", files)
            elif isinstance(d, HarnessItem):
                self._line("[HARNESS]", f"{d.event.value} {d.message or d.path or ''}".rstrip())
            elif isinstance(d, AgentMessageItem):
                self._line("[MESSAGE]", _clip(d.text, 400))
        elif isinstance(event, ThreadCompactBoundaryEvent):
            self._line(
                "[COMPACT]",
                f"{event.trigger.value}/{event.mode.value}: {event.original_message_count} -> "
                f"{event.compacted_message_count} messages",
            )
        elif isinstance(event, TurnFailedEvent):
            self._line("[TURN FAILED]", event.message)
        elif isinstance(event, ThreadCompletedEvent):
            if event.result:
                self._line("[SUMMARY]", _clip(event.result, 400))
            u = event.usage
            cost = "" if event.total_cost_usd is None else f", ${event.total_cost_usd:.4f}"
            self._line(
                "[OUTCOME]",
                f"{event.subtype.value} ({event.outcome_code}) after {event.num_turns} turns; "
                f"tokens in {u.input_tokens} / out {u.output_tokens}{cost}; "
                f"session {event.session_id}",
            )

    def finish(self) -> None:
        self.stream.flush()
