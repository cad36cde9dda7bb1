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
from vtcode.events.enums import ToolOutcome
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


def _says_cancelled(output: str) -> bool:
    """Whether a tool's JSON output reports the call cancelled (exec_command's `cancelled`)."""
    if not output.startswith("{"):
        return False
    try:
        doc = orjson.loads(output)
    except orjson.JSONDecodeError:
        return False
    return isinstance(doc, dict) and doc.get("cancelled") is True


def _clip(text: str, n: int = 160) -> str:
    one = " ".join(text.split())
    return one if len(one) <= n else one[: n - 1] + "…"


class HumanProgressSink:
    """Human progress on stderr (`[TOOL]`, `[WARNING]`, `[SUMMARY]`, `[OUTCOME]`, ...).

    A tool's `[TOOL DONE]` line waits for its `tool_output` (the next event of a call): the
    invocation item says how the call was dispatched, but only the output says that the command
    was cancelled while it ran, and such a command is shown `cancelled`, never `success`.
    Arguments are shown as the JSON the model sent.
    """

    def __init__(self, stream: IO[str] | None = None, *, color: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.color = color
        # A completed tool_invocation waiting for its tool_output (item id, item).
        self._pending: tuple[str, ToolInvocationItem] | None = None

    def _line(self, tag: str, text: str) -> None:
        text = inert(text)  # model- or repository-controlled: no escape sequences reach stderr
        if self.color:
            tag = f"\x1b[1m{tag}\x1b[0m"
        self.stream.write(f"{tag} {text}\n")
        self.stream.flush()

    def handle(self, event: ThreadEvent) -> None:
        if isinstance(event, ItemCompletedEvent):
            d = event.item.details
            if isinstance(d, ToolInvocationItem):
                # Rendered once its output arrives: only the output says a command was cancelled.
                self._flush()
                self._pending = (event.item.id, d)
                return
            if isinstance(d, ToolOutputItem) and self._pending and self._pending[0] == d.call_id:
                self._tool_done(self._pending[1], cancelled=_says_cancelled(d.output))
                self._pending = None
                if d.exit_code is not None:
                    self._line("[COMMAND]", f"exit {d.exit_code}: {_clip(d.output, 100)}")
                return
        self._flush()
        self._render(event)

    def _flush(self) -> None:
        if self._pending is not None:
            self._tool_done(self._pending[1], cancelled=False)
            self._pending = None

    def _tool_done(self, d: ToolInvocationItem, *, cancelled: bool) -> None:
        args = "" if d.arguments is None else _clip(_json_text(d.arguments), 120)
        if cancelled or d.outcome is ToolOutcome.CANCELLED:
            outcome = ToolOutcome.CANCELLED.value
        else:
            outcome = d.outcome.value if d.outcome else d.status.value
        self._line("[TOOL DONE]", f"{d.tool_name} {outcome} {args}".rstrip())

    def _render(self, event: ThreadEvent) -> None:
        if isinstance(event, ItemStartedEvent):
            d: Any = event.item.details
            if isinstance(d, ToolInvocationItem | McpToolCallItem):
                self._line("[TOOL]", d.tool_name)
        elif isinstance(event, ItemCompletedEvent):
            d = event.item.details
            if isinstance(d, McpToolCallItem):
                status = d.status.value if d.status else "completed"
                self._line("[TOOL DONE]", f"{d.tool_name} {status} {_clip(d.result or '', 100)}")
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
        self._flush()
        self.stream.flush()


class FinalAnswerSink:
    """Keeps what a run answered, for text mode's stdout and `-o/--output-last-message`.

    `answer` is `thread.completed.result`: the model's final answer, present only when the run
    succeeded (text mode prints it, like `codex exec` and `claude -p`). `last_message` is the text
    of the last `agent_message` item the model completed, whatever the outcome: what `-o` writes
    (codex's `last_agent_message`). Harness outcomes are `error` items and `turn.failed`
    messages, never agent messages, so neither value can hold harness text. The events arrive
    redacted (the gate redacts before any exporter), so neither can hold a credential.
    """

    def __init__(self) -> None:
        self.answer: str | None = None
        self.last_message: str | None = None

    def handle(self, event: ThreadEvent) -> None:
        if isinstance(event, ItemCompletedEvent):
            d = event.item.details
            if isinstance(d, AgentMessageItem) and d.text.strip():
                self.last_message = d.text
        elif isinstance(event, ThreadCompletedEvent):
            self.answer = event.result

    def finish(self) -> None:
        """Nothing to flush: the CLI reads the values once the run has closed."""

    @property
    def final_text(self) -> str | None:
        """What `-o` writes: the answer of a successful run, else the model's last message."""
        return self.answer if self.answer else self.last_message
