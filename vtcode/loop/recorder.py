"""Turns loop happenings into ThreadEvents with upstream's emission conventions (reference §1.4).

Item ids are `item_<n>` from a per-session counter; a tool output's id is `<invocation id>:output`
and its `call_id` is the invocation's item id; streamed text emits `item.started` for the first
visible snapshot, `item.updated` with the WHOLE accumulated text afterwards, and `item.completed`
at the end (a non-streamed text is a lone `item.completed`; empty text is never emitted); streamed
tool arguments update at most 8 times per call and only after >= 512 new bytes.

Every snapshot repeats the whole text, so one per delta made the log quadratic in the answer (a
64 KiB answer wrote 90 MB and filled the drain queue). Text and reasoning therefore update only
once they have grown by max(`MIN_TEXT_UPDATE_BYTES`, the size last emitted): the snapshots double,
so all of them together are at most twice the answer and the log stays linear in its size (with
the completion, about 3x in the worst case). `MAX_TEXT_UPDATE_EVENTS` caps them per item besides.
Deltas are kept as a list of chunks with a running byte count and joined only when a snapshot is
emitted, so accumulation is linear in CPU as well.

A stream that fails or is cancelled after its text was shown closes the item with `abort`: the
completion carries the text received, then a `[response cut short: <why>]` line, so no consumer
takes a partial answer for a finished one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vtcode.events.enums import (
    FileChangeKind,
    HarnessEventKind,
    McpToolCallStatus,
    PatchApplyStatus,
    ToolCallStatus,
    ToolOutcome,
)
from vtcode.events.types import (
    AgentMessageItem,
    ErrorItem,
    FileChangeItem,
    FileUpdateChange,
    HarnessItem,
    ItemCompletedEvent,
    ItemStartedEvent,
    ItemUpdatedEvent,
    McpToolCallItem,
    PlanDeltaEvent,
    PlanItem,
    ReasoningItem,
    ThreadEvent,
    ThreadItem,
    ToolInvocationItem,
    ToolOutputItem,
    TurnCompletedEvent,
    TurnFailedEvent,
    TurnStartedEvent,
    Usage,
)

MIN_TOOL_ARG_UPDATE_BYTES = 512
MAX_TOOL_ARG_UPDATE_EVENTS = 8
MIN_TEXT_UPDATE_BYTES = 1024
MAX_TEXT_UPDATE_EVENTS = 16
MAX_PLAN_DELTA_BYTES = 1024
CUT_SHORT = "response cut short"

Emit = Callable[[ThreadEvent], None]


class _Chunks:
    """Text arriving in pieces: appended in O(1), joined only when the whole is asked for."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self.nbytes = 0

    def append(self, piece: str) -> None:
        self._parts.append(piece)
        self.nbytes += len(piece.encode())

    @property
    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""


class StreamingText:
    """One streamed agent_message or reasoning item."""

    def __init__(self, rec: Recorder, kind: str) -> None:
        self._rec = rec
        self._kind = kind
        self.item_id: str | None = None
        self._chunks = _Chunks()
        self._visible = False  # a non-whitespace character has arrived
        self._emitted_bytes = 0  # size of the last snapshot emitted
        self._updates = 0

    @property
    def text(self) -> str:
        """Everything received so far."""
        return self._chunks.text

    def _item(self, text: str) -> ThreadItem:
        assert self.item_id is not None
        details: AgentMessageItem | ReasoningItem = (
            AgentMessageItem(text=text)
            if self._kind == "agent_message"
            else ReasoningItem(text=text)
        )
        return ThreadItem(id=self.item_id, details=details)

    def push(self, delta: str) -> None:
        self._chunks.append(delta)
        if not self._visible:
            if not delta.strip():
                return
            self._visible = True
        size = self._chunks.nbytes
        if self.item_id is None:
            self.item_id = self._rec.next_item_id()
            self._emitted_bytes = size
            self._rec.emit(ItemStartedEvent(item=self._item(self.text)))
            return
        grown = size - self._emitted_bytes
        if (
            grown >= max(MIN_TEXT_UPDATE_BYTES, self._emitted_bytes)
            and self._updates < MAX_TEXT_UPDATE_EVENTS
        ):
            self._updates += 1
            self._emitted_bytes = size
            self._rec.emit(ItemUpdatedEvent(item=self._item(self.text)))

    def finish(self) -> None:
        """The stream completed: the item ends with the whole text."""
        if not self._visible:
            return
        if self.item_id is None:
            self.item_id = self._rec.next_item_id()
        self._rec.emit(ItemCompletedEvent(item=self._item(self.text)))

    def abort(self, why: str) -> None:
        """The stream failed or was cancelled: a started item ends marked as cut short.

        Nothing is emitted for text that was never shown (an unstarted item stays unwritten).
        """
        if self.item_id is None:
            return
        # The item keeps only what the model sent; the harness says it is torn in its own item,
        # so no consumer mistakes harness text for the model's, or the fragment for an answer.
        self._rec.emit(ItemCompletedEvent(item=self._item(self.text)))
        what = "message" if self._kind == "agent_message" else "reasoning"
        self._rec.warning(f"{CUT_SHORT}: {why}; the {what} above is incomplete")


class StreamingPlan:
    """The text of one response in a planning turn, streamed as a `plan` item.

    Upstream's shape: `item.started` (a plan item with empty text), `plan.delta` events carrying
    the item's id, then `item.completed` with the whole plan; the deltas concatenate to exactly
    the completed text. Provider deltas are often a few characters each, so they are coalesced:
    a delta goes out at each line end, or once `MAX_PLAN_DELTA_BYTES` are waiting, and the rest
    with the completion. A response that never shows a visible character records nothing.
    """

    def __init__(self, rec: Recorder, thread_id: str, turn_id: str) -> None:
        self._rec = rec
        self.thread_id = thread_id
        self.turn_id = turn_id
        self.item_id: str | None = None
        self._whole = _Chunks()
        self._waiting = _Chunks()

    @property
    def text(self) -> str:
        return self._whole.text

    def push(self, delta: str) -> None:
        if self.item_id is None:
            self._waiting.append(delta)
            if not delta.strip():
                return
            self.item_id = self._rec.next_item_id()
            self._rec.emit(ItemStartedEvent(item=self._item("")))
        else:
            self._waiting.append(delta)
        if "\n" in delta or self._waiting.nbytes >= MAX_PLAN_DELTA_BYTES:
            self._flush()

    def _flush(self) -> None:
        waiting = self._waiting.text
        if not waiting or self.item_id is None:
            return
        self._waiting = _Chunks()
        self._whole.append(waiting)
        self._rec.emit(
            PlanDeltaEvent(
                thread_id=self.thread_id, turn_id=self.turn_id, item_id=self.item_id, delta=waiting
            )
        )

    def _item(self, text: str) -> ThreadItem:
        assert self.item_id is not None
        return ThreadItem(id=self.item_id, details=PlanItem(text=text))

    def finish(self) -> None:
        """The response is whole: the last delta, then the completed plan item."""
        if self.item_id is None:
            return
        self._flush()
        self._rec.emit(ItemCompletedEvent(item=self._item(self.text)))

    def abort(self) -> None:
        """The stream failed or was cancelled: the started item closes with what arrived.

        The cut-short warning that follows belongs to the message item streamed beside it
        (`StreamingText.abort`); one warning says the response is torn.
        """
        self.finish()


class StreamingToolCall:
    """One tool invocation whose arguments stream in."""

    def __init__(self, rec: Recorder, name: str, tool_call_id: str | None) -> None:
        self._rec = rec
        self.name = name
        self.tool_call_id = tool_call_id
        self.item_id = rec.next_item_id()
        self._args = _Chunks()
        self._last_update_len = 0
        self._updates = 0
        rec.emit(ItemStartedEvent(item=self._item(None, ToolCallStatus.IN_PROGRESS, None)))

    def _item(
        self, arguments: Any, status: ToolCallStatus, outcome: ToolOutcome | None
    ) -> ThreadItem:
        return ThreadItem(
            id=self.item_id,
            details=ToolInvocationItem(
                tool_name=self.name,
                arguments=arguments,
                tool_call_id=self.tool_call_id,
                status=status,
                outcome=outcome,
            ),
        )

    @property
    def raw_args(self) -> str:
        """The argument text received so far."""
        return self._args.text

    def push(self, delta: str) -> None:
        self._args.append(delta)
        grown = self._args.nbytes - self._last_update_len
        if grown >= MIN_TOOL_ARG_UPDATE_BYTES and self._updates < MAX_TOOL_ARG_UPDATE_EVENTS:
            self._updates += 1
            self._last_update_len = self._args.nbytes
            self._rec.emit(
                ItemUpdatedEvent(item=self._item(self.raw_args, ToolCallStatus.IN_PROGRESS, None))
            )

    def complete(self, arguments: Any, status: ToolCallStatus, outcome: ToolOutcome) -> None:
        self._rec.emit(ItemCompletedEvent(item=self._item(arguments, status, outcome)))

    def output(
        self,
        output: str,
        status: ToolCallStatus,
        *,
        exit_code: int | None = None,
        spool_path: str | None = None,
        started: bool = False,
    ) -> None:
        item = ThreadItem(
            id=f"{self.item_id}:output",
            details=ToolOutputItem(
                call_id=self.item_id,
                tool_call_id=self.tool_call_id,
                spool_path=spool_path,
                output=output,
                exit_code=exit_code,
                status=status,
            ),
        )
        if started:
            self._rec.emit(
                ItemStartedEvent(
                    item=ThreadItem(
                        id=item.id,
                        details=ToolOutputItem(
                            call_id=self.item_id,
                            tool_call_id=self.tool_call_id,
                            status=ToolCallStatus.IN_PROGRESS,
                        ),
                    )
                )
            )
        self._rec.emit(ItemCompletedEvent(item=item))


_MCP_STATUS = {
    ToolCallStatus.IN_PROGRESS: McpToolCallStatus.STARTED,
    ToolCallStatus.COMPLETED: McpToolCallStatus.COMPLETED,
    ToolCallStatus.FAILED: McpToolCallStatus.FAILED,
}
MCP_TOOL_CALL = "mcp_tool_call"


class StreamingMcpCall(StreamingToolCall):
    """An MCP tool call: ONE `mcp_tool_call` item instead of `tool_invocation` + `tool_output`.

    Started (status `started`) when the call streams in, updated like a tool invocation while
    its arguments stream, completed once with the arguments and the result text (`completed`,
    or `failed` for a refused, failed or cancelled call). `complete()` only remembers the
    arguments: the runner's `complete` + `output` pair becomes that one completion.
    """

    _arguments: Any = None

    def _item(
        self,
        arguments: Any,
        status: ToolCallStatus,
        outcome: ToolOutcome | None,
        result: str | None = None,
    ) -> ThreadItem:
        return ThreadItem(
            id=self.item_id,
            details=McpToolCallItem(
                tool_name=self.name,
                arguments=arguments,
                result=result,
                status=_MCP_STATUS[status],
            ),
        )

    def complete(self, arguments: Any, status: ToolCallStatus, outcome: ToolOutcome) -> None:
        self._arguments = arguments

    def output(
        self,
        output: str,
        status: ToolCallStatus,
        *,
        exit_code: int | None = None,
        spool_path: str | None = None,
        started: bool = False,
    ) -> None:
        item = self._item(self._arguments, status, None, result=output)
        self._rec.emit(ItemCompletedEvent(item=item))


class Recorder:
    """Emits every event of a run through one callable (the dispatch gate)."""

    def __init__(self, emit: Emit, *, first_item_index: int = 0) -> None:
        self.emit = emit
        self._next = first_item_index
        self.turn_open = False
        # every file a completed file_change item of this run named, with its latest kind (the
        # files `automation.full_auto.verify_mutations` has re-read before a success)
        self.changed: dict[str, FileChangeKind] = {}

    def next_item_id(self) -> str:
        n = self._next
        self._next += 1
        return f"item_{n}"

    def text(self) -> StreamingText:
        return StreamingText(self, "agent_message")

    def reasoning(self) -> StreamingText:
        return StreamingText(self, "reasoning")

    def plan(self, thread_id: str, turn_id: str) -> StreamingPlan:
        return StreamingPlan(self, thread_id, turn_id)

    def tool_call(
        self, name: str, tool_call_id: str | None, kind: str = "tool_invocation"
    ) -> StreamingToolCall:
        """A call recorded as `tool_invocation` + `tool_output`, or as `mcp_tool_call`."""
        if kind == MCP_TOOL_CALL:
            return StreamingMcpCall(self, name, tool_call_id)
        return StreamingToolCall(self, name, tool_call_id)

    def message(self, text: str) -> None:
        """A non-streamed assistant message (a lone `item.completed`)."""
        if text.strip():
            item = ThreadItem(id=self.next_item_id(), details=AgentMessageItem(text=text))
            self.emit(ItemCompletedEvent(item=item))

    def warning(self, message: str) -> None:
        """Upstream's `warning(msg)`: an `error` item, completed."""
        item = ThreadItem(id=self.next_item_id(), details=ErrorItem(message=message))
        self.emit(ItemCompletedEvent(item=item))

    def file_changes(self, changes: list[tuple[str, FileChangeKind]], ok: bool = True) -> None:
        if ok:
            self.changed.update(changes)
        item = ThreadItem(
            id=self.next_item_id(),
            details=FileChangeItem(
                changes=[FileUpdateChange(path=p, kind=k) for p, k in changes],
                status=PatchApplyStatus.COMPLETED if ok else PatchApplyStatus.FAILED,
            ),
        )
        self.emit(ItemCompletedEvent(item=item))

    def harness(self, event: HarnessEventKind, **fields: Any) -> None:
        item = ThreadItem(id=self.next_item_id(), details=HarnessItem(event=event, **fields))
        self.emit(ItemCompletedEvent(item=item))

    def turn_started(self) -> None:
        self.turn_open = True
        self.emit(TurnStartedEvent())

    def turn_completed(self, usage: Usage) -> None:
        self.turn_open = False
        self.emit(TurnCompletedEvent(usage=usage))

    def turn_failed(self, message: str, usage: Usage | None = None) -> None:
        self.turn_open = False
        self.emit(TurnFailedEvent(message=message, usage=usage))
