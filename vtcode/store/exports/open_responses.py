"""ThreadEvent -> Open Responses stream (reference §10), as `derived/open-responses.jsonl`.

Mapping follows upstream's `ResponseBuilder::process_event`: `thread.started` -> created +
in_progress; items -> output_item.added / content_part.added / deltas / *.done /
output_item.done; `turn.completed` -> response.completed (usage mapped); `turn.failed` ->
response.failed (model_error); `error` -> response.failed (server_error); the vtcode-only events
become `response.custom_event` with `event_type` `vtcode.thread_completed`,
`vtcode.thread_compact_boundary`, `vtcode.context_reset`, `vtcode.plan_approval_requested`,
`vtcode.plan_approval_resolved`; `turn.started`, `plan.delta`, `permission.*`, `interjected` and
unknown events are ignored.

Differences, on purpose: every event carries the stream's `sequence_number` (custom events too,
where upstream put the output index); a `turn.started` after a finished response opens a new
response (`resp_<session>_<n>`) so each turn of a multi-turn session gets its own
`response.completed` (upstream's builder goes silent after the first). The file is SSE:
`event: <type>` / `data: <json>` / blank line, ending with `data: [DONE]` exactly once.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vtcode.events.codec import dumps, encode_event
from vtcode.events.enums import McpToolCallStatus, PatchApplyStatus, ToolCallStatus
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
    PlanApprovalRequestedEvent,
    PlanApprovalResolvedEvent,
    PlanItem,
    ReasoningItem,
    ThreadCompactBoundaryEvent,
    ThreadCompletedEvent,
    ThreadErrorEvent,
    ThreadEvent,
    ThreadItem,
    ThreadStartedEvent,
    ToolInvocationItem,
    ToolOutputItem,
    TurnCompletedEvent,
    TurnFailedEvent,
    TurnStartedEvent,
    Usage,
    WebSearchItem,
)
from vtcode.jsontypes import encode
from vtcode.ownfile import open_own
from vtcode.store.exports.sse import SseWriter

Json = dict[str, Any]


def _usage(u: Usage) -> Json:
    out: Json = {
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "total_tokens": u.input_tokens + u.output_tokens,
    }
    if u.cached_input_tokens:
        out["input_tokens_details"] = {"cached_tokens": u.cached_input_tokens}
    return out


def _tool_output_text(o: ToolOutputItem) -> str:
    if o.output:
        return o.output
    return f"Output saved to {o.spool_path}" if o.spool_path else ""


def _status(details: Any) -> str:
    if isinstance(details, CommandExecutionItem | ToolInvocationItem | ToolOutputItem):
        return {
            ToolCallStatus.COMPLETED: "completed",
            ToolCallStatus.FAILED: "failed",
            ToolCallStatus.IN_PROGRESS: "in_progress",
        }[details.status]
    if isinstance(details, FileChangeItem):
        return "completed" if details.status is PatchApplyStatus.COMPLETED else "failed"
    if isinstance(details, McpToolCallItem):
        if details.status is McpToolCallStatus.COMPLETED:
            return "completed"
        return "failed" if details.status is McpToolCallStatus.FAILED else "in_progress"
    if isinstance(details, ErrorItem):
        return "failed"
    return "completed"


def _text(text: str) -> Json:
    return {"type": "output_text", "text": text}


class OpenResponsesBuilder:
    """Turns ThreadEvents into Open Responses stream events (dicts without sequence numbers)."""

    def __init__(
        self,
        session_id: str,
        model: str = "unknown",
        now: Callable[[], int] = lambda: int(time.time()),
    ) -> None:
        self.session_id = session_id
        self.model = model
        self._now = now
        self._n = 0
        self.response = self._new_response()
        self._index: dict[str, int] = {}
        self._prev_text: dict[str, str] = {}
        self._call_ids: dict[str, str] = {}
        self._used_call_ids: set[str] = set()

    def _new_response(self) -> Json:
        rid = f"resp_{self.session_id}" if self._n == 0 else f"resp_{self.session_id}_{self._n}"
        self._n += 1
        return {
            "id": rid,
            "object": "response",
            "created_at": self._now(),
            "status": "in_progress",
            "model": self.model,
            "output": [],
        }

    @property
    def _rid(self) -> str:
        return str(self.response["id"])

    def _terminal(self) -> bool:
        return self.response["status"] in ("completed", "failed", "incomplete")

    def _snapshot(self) -> Json:
        return dict(self.response, output=list(self.response["output"]))

    def _custom(self, event_type: str, data: Json) -> Json:
        return {
            "type": "response.custom_event",
            "response_id": self._rid,
            "event_type": event_type,
            "data": data,
        }

    def process(self, event: ThreadEvent) -> list[Json]:
        out: list[Json] = []
        if isinstance(event, ThreadStartedEvent):
            if not self.response["output"]:
                self.response["created_at"] = self._now()
            out.append({"type": "response.created", "response": self._snapshot()})
            out.append({"type": "response.in_progress", "response": self._snapshot()})
        elif isinstance(event, TurnStartedEvent):
            if self._terminal():
                self.response = self._new_response()
                self._index.clear()
                out.append({"type": "response.created", "response": self._snapshot()})
                out.append({"type": "response.in_progress", "response": self._snapshot()})
        elif isinstance(event, TurnCompletedEvent):
            if not self._terminal():
                self.response["usage"] = _usage(event.usage)
                self.response["status"] = "completed"
                self.response["completed_at"] = self._now()
                out.append({"type": "response.completed", "response": self._snapshot()})
        elif isinstance(event, TurnFailedEvent | ThreadErrorEvent):
            if not self._terminal():
                kind = "model_error" if isinstance(event, TurnFailedEvent) else "server_error"
                self.response["status"] = "failed"
                self.response["error"] = {"type": kind, "message": event.message}
                self.response["completed_at"] = self._now()
                out.append({"type": "response.failed", "response": self._snapshot()})
        elif isinstance(event, ThreadCompletedEvent):
            out.append(
                self._custom(
                    "vtcode.thread_completed",
                    {
                        "thread_id": event.thread_id,
                        "session_id": event.session_id,
                        "subtype": event.subtype.value,
                        "outcome_code": event.outcome_code,
                        "result": event.result,
                        "stop_reason": event.stop_reason,
                        "usage": encode(event.usage),
                        "total_cost_usd": event.total_cost_usd,
                        "num_turns": event.num_turns,
                    },
                )
            )
        elif isinstance(event, ThreadCompactBoundaryEvent):
            out.append(
                self._custom(
                    "vtcode.thread_compact_boundary",
                    {
                        "thread_id": event.thread_id,
                        "trigger": event.trigger.value,
                        "mode": event.mode.value,
                        "original_message_count": event.original_message_count,
                        "compacted_message_count": event.compacted_message_count,
                        "history_artifact_path": event.history_artifact_path,
                    },
                )
            )
        elif isinstance(
            event, ContextResetEvent | PlanApprovalRequestedEvent | PlanApprovalResolvedEvent
        ):
            name = {
                ContextResetEvent: "vtcode.context_reset",
                PlanApprovalRequestedEvent: "vtcode.plan_approval_requested",
                PlanApprovalResolvedEvent: "vtcode.plan_approval_resolved",
            }[type(event)]
            data = encode_event(event)
            data.pop("type")
            if isinstance(event, PlanApprovalRequestedEvent):
                data.setdefault("plan_file", None)
            out.append(self._custom(name, data))
        elif isinstance(event, ItemStartedEvent):
            out.extend(self._started(event.item))
        elif isinstance(event, ItemUpdatedEvent):
            out.extend(self._updated(event.item))
        elif isinstance(event, ItemCompletedEvent):
            out.extend(self._completed(event.item))
        return out

    # ------------------------------------------------------------------------------------
    # items

    def _correlation(self, harness_id: str, raw: str | None) -> str:
        if harness_id in self._call_ids:
            return self._call_ids[harness_id]
        cid = raw if raw is not None and raw not in self._used_call_ids else harness_id
        if raw is not None:
            self._used_call_ids.add(raw)
        self._call_ids[harness_id] = cid
        return cid

    def _convert(self, item: ThreadItem, status: str) -> Json:
        d = item.details
        if isinstance(d, AgentMessageItem):
            return {
                "type": "message",
                "id": item.id,
                "status": status,
                "role": "assistant",
                "content": [_text(d.text)],
            }
        if isinstance(d, ReasoningItem):
            return {"type": "reasoning", "id": item.id, "status": status, "content": d.text}
        if isinstance(d, ToolInvocationItem):
            return {
                "type": "function_call",
                "id": item.id,
                "status": status,
                "name": d.tool_name,
                "arguments": d.arguments if d.arguments is not None else {},
                "call_id": self._correlation(item.id, d.tool_call_id),
            }
        if isinstance(d, ToolOutputItem):
            return {
                "type": "function_call_output",
                "id": item.id,
                "status": status,
                "call_id": self._correlation(d.call_id, d.tool_call_id),
                "output": _tool_output_text(d),
            }
        if isinstance(d, McpToolCallItem):
            return {
                "type": "function_call",
                "id": item.id,
                "status": status,
                "name": d.tool_name,
                "arguments": d.arguments if d.arguments is not None else {},
                "call_id": item.id,
            }
        custom_type, data = self._custom_item(d)
        return {"type": custom_type, "id": item.id, "status": status, "data": data}

    @staticmethod
    def _custom_item(d: Any) -> tuple[str, Json]:
        if isinstance(d, PlanItem):
            return "vtcode:plan", {"text": d.text}
        if isinstance(d, CommandExecutionItem):
            return "vtcode:command_execution", {
                "command": d.command,
                "arguments": d.arguments,
                "aggregated_output": d.aggregated_output,
                "exit_code": d.exit_code,
                "status": d.status.value,
            }
        if isinstance(d, FileChangeItem):
            return "vtcode:file_change", {
                "changes": [{"path": c.path, "kind": c.kind.value} for c in d.changes],
                "status": d.status.value,
            }
        if isinstance(d, WebSearchItem):
            return "vtcode:web_search", {
                "query": d.query,
                "provider": d.provider,
                "results": d.results,
            }
        if isinstance(d, HarnessItem):
            return "vtcode:harness_event", {
                "event": d.event.value,
                "message": d.message,
                "command": d.command,
                "path": d.path,
                "exit_code": d.exit_code,
            }
        assert isinstance(d, ErrorItem)
        return "vtcode:error", {"message": d.message}

    @staticmethod
    def _item_text(item: ThreadItem) -> str:
        d = item.details
        if isinstance(d, AgentMessageItem | PlanItem | ReasoningItem):
            return d.text
        if isinstance(d, ToolOutputItem):
            return _tool_output_text(d)
        return ""

    def _place(self, item: ThreadItem, converted: Json) -> int:
        out = self.response["output"]
        idx = self._index.get(item.id)
        if idx is None:
            idx = len(out)
            self._index[item.id] = idx
            out.append(converted)
        else:
            out[idx] = converted
        return idx

    def _added(self, item: ThreadItem, converted: Json, idx: int) -> list[Json]:
        evs: list[Json] = [
            {
                "type": "response.output_item.added",
                "response_id": self._rid,
                "output_index": idx,
                "item": converted,
            }
        ]
        part: Json | None = None
        if converted["type"] == "message":
            part = converted["content"][0]
        elif converted["type"] == "reasoning":
            part = _text(str(converted.get("content", "")))
        if part is not None:
            evs.append(
                {
                    "type": "response.content_part.added",
                    "response_id": self._rid,
                    "item_id": item.id,
                    "output_index": idx,
                    "content_index": 0,
                    "part": part,
                }
            )
        return evs

    def _started(self, item: ThreadItem) -> list[Json]:
        converted = self._convert(item, "in_progress")
        idx = self._place(item, converted)
        self._prev_text[item.id] = self._item_text(item)
        evs = self._added(item, converted, idx)
        if converted["type"] == "reasoning":
            return evs[:1]  # upstream adds a content part for reasoning only on completion
        return evs

    def _updated(self, item: ThreadItem) -> list[Json]:
        evs: list[Json] = []
        if item.id not in self._prev_text:
            evs.extend(self._started(item))
        d = item.details
        if not isinstance(d, AgentMessageItem | ReasoningItem | ToolOutputItem):
            return evs
        current = self._item_text(item)
        prev = self._prev_text.get(item.id, "")
        delta = current[len(prev) :] if current.startswith(prev) else current
        if not delta:
            return evs
        self._prev_text[item.id] = current
        idx = self._index[item.id]
        kind = "response.reasoning.delta" if isinstance(d, ReasoningItem) else None
        ev: Json = {
            "type": kind or "response.output_text.delta",
            "response_id": self._rid,
            "item_id": item.id,
            "output_index": idx,
        }
        if kind is None:
            ev["content_index"] = 0
        ev["delta"] = delta
        evs.append(ev)
        return evs

    def _completed(self, item: ThreadItem) -> list[Json]:
        was_started = item.id in self._index
        converted = self._convert(item, _status(item.details))
        idx = self._place(item, converted)
        evs: list[Json] = [] if was_started else self._added(item, converted, idx)
        rid = self._rid
        common = {"response_id": rid, "item_id": item.id, "output_index": idx}
        t = converted["type"]
        if t == "message":
            text = converted["content"][0]["text"]
            evs.append(
                {"type": "response.output_text.done", **common, "content_index": 0, "text": text}
            )
            evs.append(
                {
                    "type": "response.content_part.done",
                    **common,
                    "content_index": 0,
                    "part": converted["content"][0],
                }
            )
        elif t == "reasoning":
            evs.append({"type": "response.reasoning.done", **common, "item": converted})
            evs.append(
                {
                    "type": "response.content_part.done",
                    **common,
                    "content_index": 0,
                    "part": _text(str(converted.get("content", ""))),
                }
            )
        elif t == "function_call":
            evs.append(
                {
                    "type": "response.function_call_arguments.done",
                    **common,
                    "arguments": dumps(converted["arguments"]).decode(),
                }
            )
        elif t == "function_call_output" and converted["output"]:
            evs.append(
                {
                    "type": "response.output_text.done",
                    **common,
                    "content_index": 0,
                    "text": converted["output"],
                }
            )
        self._prev_text.pop(item.id, None)
        evs.append(
            {
                "type": "response.output_item.done",
                "response_id": rid,
                "output_index": idx,
                "item": converted,
            }
        )
        return evs


class OpenResponsesExporter:
    """Live derived export to `<session>/derived/open-responses.jsonl` (regenerable)."""

    name = "open responses export"

    def __init__(self, path: Path, session_id: str, model: str = "unknown") -> None:
        self.path = path
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        self._file = os.fdopen(open_own(path, flags, 0o600), "wb")
        self._builder = OpenResponsesBuilder(session_id, model)
        self._sse = SseWriter(self._file)

    def handle(self, event: ThreadEvent) -> None:
        self._sse.write(self._builder.process(event))

    def finish(self) -> None:
        if self._file.closed:
            return
        try:
            self._sse.finish()
            self._file.flush()
            os.fsync(self._file.fileno())
        finally:
            self._file.close()
