"""Exporters that render a run for the terminal: raw JSONL on stdout, progress on stderr.

They sit behind the dispatch gate like every exporter, so stdout sees events in exactly the
canonical order, once the canonical log has them (written; fsynced with `event` durability):
a consumer of `exec --json` never holds an event that a crash kept out of events.jsonl. They
run on the gate's dispatch thread, one drain batch behind the emit.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from typing import IO

import orjson

from vtcode.events.codec import encode_raw_line
from vtcode.events.describe import Line, clip, describe_item, event_line
from vtcode.events.enums import ToolOutcome
from vtcode.events.types import (
    AgentMessageItem,
    ItemCompletedEvent,
    ItemStartedEvent,
    ThreadCompletedEvent,
    ThreadEvent,
    ToolInvocationItem,
    ToolOutputItem,
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


def _says_cancelled(output: str) -> bool:
    """Whether a tool's JSON output reports the call cancelled (exec_command's `cancelled`)."""
    if not output.startswith("{"):
        return False
    try:
        doc = orjson.loads(output)
    except orjson.JSONDecodeError:
        return False
    return isinstance(doc, dict) and doc.get("cancelled") is True


# Lines of the shared description (vtcode.events.describe) that exec progress leaves out: an
# output without an exit code (the tool's done line said it), and turn ends (a headless run has
# one turn; its outcome line follows).
_QUIET_TAGS = frozenset({"output", "turn done"})


class HumanProgressSink:
    """Human progress on stderr (`[TOOL]`, `[WARNING]`, `[SUMMARY]`, `[OUTCOME]`, ...), from the
    one description of events for people (`vtcode.events.describe`)."""

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

    def _show(self, line: Line | None) -> None:
        if line is not None and line.tag not in _QUIET_TAGS:
            self._line(f"[{line.tag.upper()}]", line.text)

    def handle(self, event: ThreadEvent) -> None:
        """A tool's done line waits for its output: only the output says a command was
        cancelled (exec_command reports `cancelled` in it)."""
        if isinstance(event, ItemCompletedEvent):
            d = event.item.details
            if isinstance(d, ToolInvocationItem):
                self._flush()
                self._pending = (event.item.id, d)
                return
            if isinstance(d, ToolOutputItem) and self._pending and self._pending[0] == d.call_id:
                self._tool_done(self._pending[1], cancelled=_says_cancelled(d.output))
                self._pending = None
                self._show(describe_item(d).completed(d))
                return
        self._flush()
        self._render(event)

    def _flush(self) -> None:
        if self._pending is not None:
            self._tool_done(self._pending[1], cancelled=False)
            self._pending = None

    def _tool_done(self, d: ToolInvocationItem, *, cancelled: bool) -> None:
        if cancelled and d.outcome is not ToolOutcome.CANCELLED:
            d = dataclasses.replace(d, outcome=ToolOutcome.CANCELLED)
        self._show(describe_item(d).completed(d))

    def _render(self, event: ThreadEvent) -> None:
        if isinstance(event, ItemStartedEvent):
            d = event.item.details
            self._show(describe_item(d).started(d))
        elif isinstance(event, ItemCompletedEvent):
            d = event.item.details
            self._show(describe_item(d).completed(d))
        else:
            if isinstance(event, ThreadCompletedEvent) and event.result:
                self._line("[SUMMARY]", clip(event.result, 400))
            self._show(event_line(event))

    def finish(self) -> None:
        self._flush()
        self.stream.flush()


# The first line of an `-o` file whose run did not succeed (then the subtype, e.g.
# `error_max_turns`): no answer begins this way, and `head -1` tells a script what happened.
NOT_AN_ANSWER_PREFIX = "[vtcode] not an answer: "


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
        self.subtype: str | None = None  # thread.completed's, once the run closed

    def handle(self, event: ThreadEvent) -> None:
        if isinstance(event, ItemCompletedEvent):
            d = event.item.details
            if isinstance(d, AgentMessageItem) and d.text.strip():
                self.last_message = d.text
        elif isinstance(event, ThreadCompletedEvent):
            self.answer = event.result
            self.subtype = str(event.subtype)

    def finish(self) -> None:
        """Nothing to flush: the CLI reads the values once the run has closed."""

    @property
    def final_text(self) -> str | None:
        """The answer of a successful run, else the model's last message."""
        return self.answer if self.answer else self.last_message

    def output_file_text(self) -> str | None:
        """What `-o FILE` holds: a successful run's answer exactly (None: no message at all);
        any other run's file starts with `NOT_AN_ANSWER_PREFIX` and the subtype on a line of
        its own, then the model's last message. After a turn-limit stop the file held "Now run
        the test.", which a script reading it after `|| true` took for the answer."""
        if self.subtype == "success":
            return self.final_text
        why = self.subtype or "no result"
        header = f"{NOT_AN_ANSWER_PREFIX}{why}: the run ended without a final answer"
        last = self.last_message
        return f"{header}; the model's last message follows\n{last}" if last else header + "\n"
