"""ThreadEvent -> ATIF v1.4 trajectory (reference §11), as `derived/atif-trajectory.json`.

Mapping follows upstream's `AtifTrajectoryBuilder`: agent_message / plan / reasoning /
command_execution / mcp_tool_call -> agent steps; a tool_invocation is held until its
tool_output and both become one agent step (tool_calls + observation); `turn.completed` -> system
step "turn_completed"; `turn.failed`, `error` and error items -> system steps with the message;
file_change -> "file_changes: path: Kind, ..."; web_search -> "web_search: <query>" with the
results as observations `search_<i>`; harness -> "harness: <Kind>"; compact boundary ->
"context_compaction: N messages -> M messages (trigger)"; context reset -> a system step with
the event in `extra`. Started/updated items, plan deltas, plan approvals, permissions and
interjections are skipped. Final metrics come from per-turn usage (thread usage only when no turn
reported any) and `total_cost_usd` from `thread.completed`.

Differences, to stay valid for Harbor's own models (extra fields forbidden; `metrics`,
`tool_calls`, `reasoning_content` and `model_name` belong to agent steps; at least one step):
a trajectory with no step gets one system step saying how the thread ended; a system step's
usage goes to `extra.metrics` rather than `metrics`; every step has a `message` ("" when upstream
had none); tool-call `arguments` is always a JSON object (`{}` when absent, `{"input": x}` for a
non-object).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from vtcode import __version__, fsutil
from vtcode.clock import rfc3339
from vtcode.events.codec import encode_event
from vtcode.events.enums import ToolCallStatus
from vtcode.events.types import (
    AgentMessageItem,
    CommandExecutionItem,
    ContextResetEvent,
    ErrorItem,
    FileChangeItem,
    HarnessItem,
    ItemCompletedEvent,
    McpToolCallItem,
    PlanItem,
    ReasoningItem,
    ThreadCompactBoundaryEvent,
    ThreadCompletedEvent,
    ThreadErrorEvent,
    ThreadEvent,
    ThreadStartedEvent,
    ToolInvocationItem,
    ToolOutputItem,
    TurnCompletedEvent,
    TurnFailedEvent,
    Usage,
    WebSearchItem,
)

ATIF_SCHEMA_VERSION = "ATIF-v1.4"
Json = dict[str, Any]


def _camel(value: str) -> str:
    """`verification_failed` -> `VerificationFailed` (upstream prints Rust `Debug` names)."""
    return "".join(p.capitalize() for p in value.split("_"))


def _metrics(u: Usage) -> Json:
    out: Json = {"prompt_tokens": u.input_tokens, "completion_tokens": u.output_tokens}
    if u.cached_input_tokens:
        out["cached_tokens"] = u.cached_input_tokens
    if u.cache_creation_tokens:
        out["extra"] = {"cache_creation_tokens": u.cache_creation_tokens}
    return out


def _arguments(value: Any) -> Json:
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    return {"input": value}


@dataclasses.dataclass
class _Pending:
    call_id: str
    tool_call_id: str | None
    tool_name: str
    arguments: Any
    ts: str


class AtifBuilder:
    """Collects steps from ThreadEvents; `build()` returns the trajectory document."""

    def __init__(self, session_id: str | None = None, model_name: str | None = None) -> None:
        self.session_id = session_id
        self.model_name = model_name
        self.steps: list[Json] = []
        self._pending: list[_Pending] = []
        self._turn = Usage()
        self._turn_seen = False
        self._thread: Usage | None = None
        self._cost: float | None = None
        self._num_turns = 0
        self._end: tuple[str, str] | None = None

    def _step(self, source: str, message: str, ts: str, **fields: Any) -> Json:
        step: Json = {"step_id": len(self.steps) + 1, "timestamp": ts, "source": source}
        if source == "agent" and self.model_name:
            step["model_name"] = self.model_name
        step["message"] = message
        step.update({k: v for k, v in fields.items() if v is not None})
        self.steps.append(step)
        return step

    def process(self, event: ThreadEvent, ts: str | None = None) -> None:
        ts = ts or rfc3339()
        if isinstance(event, ThreadStartedEvent):
            self.session_id = self.session_id or event.thread_id
        elif isinstance(event, ThreadCompletedEvent):
            self.session_id = self.session_id or event.session_id
            self._end = (f"thread_completed: {event.subtype.value}", ts)
            self._thread = event.usage
            self._cost = event.total_cost_usd
            self._num_turns = event.num_turns
        elif isinstance(event, TurnCompletedEvent):
            self._turn = self._turn.add(event.usage)
            self._turn_seen = True
            self._num_turns += 1
            self._step("system", "turn_completed", ts, extra={"metrics": _metrics(event.usage)})
        elif isinstance(event, TurnFailedEvent):
            extra = None
            if event.usage is not None:
                self._turn = self._turn.add(event.usage)
                self._turn_seen = True
                extra = {"metrics": _metrics(event.usage)}
            self._step("system", event.message, ts, extra=extra)
        elif isinstance(event, ThreadCompactBoundaryEvent):
            msg = (
                f"context_compaction: {event.original_message_count} messages -> "
                f"{event.compacted_message_count} messages ({event.trigger.value})"
            )
            self._step("system", msg, ts)
        elif isinstance(event, ContextResetEvent):
            data = encode_event(event)
            data.pop("type")
            self._step("system", f"context_reset: {event.trigger.value}", ts, extra=data)
        elif isinstance(event, ThreadErrorEvent):
            self._step("system", event.message, ts)
        elif isinstance(event, ItemCompletedEvent):
            self._item(event.item.id, event.item.details, ts)

    def _item(self, item_id: str, d: Any, ts: str) -> None:
        if isinstance(d, AgentMessageItem):
            self._step("agent", d.text, ts)
        elif isinstance(d, PlanItem):
            self._step("agent", d.text, ts, extra={"vtcode_item_type": "plan"})
        elif isinstance(d, ReasoningItem):
            self._step("agent", "", ts, reasoning_content=d.text)
        elif isinstance(d, ToolInvocationItem):
            self._pending.append(_Pending(item_id, d.tool_call_id, d.tool_name, d.arguments, ts))
        elif isinstance(d, ToolOutputItem):
            self._tool_output(d, ts)
        elif isinstance(d, CommandExecutionItem):
            call = {
                "tool_call_id": item_id,
                "function_name": "command_execution",
                "arguments": {"command": d.command, "arguments": d.arguments},
            }
            obs = {"results": [{"source_call_id": item_id, "content": d.aggregated_output}]}
            extra = {"exit_code": d.exit_code} if d.exit_code is not None else None
            self._step("agent", "", ts, tool_calls=[call], observation=obs, extra=extra)
        elif isinstance(d, McpToolCallItem):
            call = {
                "tool_call_id": item_id,
                "function_name": d.tool_name,
                "arguments": _arguments(d.arguments),
            }
            obs = None
            if d.result is not None:
                obs = {"results": [{"source_call_id": item_id, "content": d.result}]}
            self._step("agent", "", ts, tool_calls=[call], observation=obs)
        elif isinstance(d, FileChangeItem):
            changes = ", ".join(f"{c.path}: {_camel(c.kind.value)}" for c in d.changes)
            self._step("system", f"file_changes: {changes}", ts)
        elif isinstance(d, WebSearchItem):
            obs = None
            if d.results is not None:
                obs = {
                    "results": [
                        {"source_call_id": f"search_{i}", "content": r}
                        for i, r in enumerate(d.results)
                    ]
                }
            self._step("system", f"web_search: {d.query}", ts, observation=obs)
        elif isinstance(d, HarnessItem):
            note = {"harness_message": d.message} if d.message is not None else None
            self._step("system", f"harness: {_camel(d.event.value)}", ts, extra=note)
        elif isinstance(d, ErrorItem):
            self._step("system", d.message, ts)

    def _tool_output(self, d: ToolOutputItem, ts: str) -> None:
        match = next((p for p in self._pending if p.call_id == d.call_id), None)
        if match is not None:
            self._pending.remove(match)
            name, args, raw_id, when = (
                match.tool_name,
                match.arguments,
                match.tool_call_id,
                match.ts,
            )
        else:
            name, args, raw_id, when = "unknown", None, d.tool_call_id, ts
        call_id = raw_id or d.call_id
        suffix = {ToolCallStatus.FAILED: " [FAILED]", ToolCallStatus.IN_PROGRESS: " [IN_PROGRESS]"}
        content = d.output + suffix.get(d.status, "")
        self._step(
            "agent",
            "",
            when,
            tool_calls=[
                {"tool_call_id": call_id, "function_name": name, "arguments": _arguments(args)}
            ],
            observation={"results": [{"source_call_id": call_id, "content": content}]},
        )

    def build(self) -> Json:
        if not self.steps:  # Harbor requires at least one step: record how the thread ended
            msg, when = self._end or ("no steps recorded", rfc3339())
            self._step("system", msg, when)
        usage = self._turn if self._turn_seen or self._thread is None else self._thread
        final: Json = {
            "total_prompt_tokens": usage.input_tokens,
            "total_completion_tokens": usage.output_tokens,
        }
        if usage.cached_input_tokens:
            final["total_cached_tokens"] = usage.cached_input_tokens
        if self._cost is not None:
            final["total_cost_usd"] = self._cost
        final["total_steps"] = len(self.steps)
        final["extra"] = {"num_turns": self._num_turns}
        agent: Json = {"name": "vtcode", "version": __version__}
        if self.model_name:
            agent["model_name"] = self.model_name
        return {
            "schema_version": ATIF_SCHEMA_VERSION,
            "session_id": self.session_id or "unknown",
            "agent": agent,
            "steps": self.steps,
            "final_metrics": final,
        }


class AtifExporter:
    """Live derived export: the trajectory is written once, atomically, at `finish`."""

    name = "atif export"

    def __init__(self, path: Path, session_id: str, model_name: str | None = None) -> None:
        self.path = path
        self._builder = AtifBuilder(session_id, model_name)
        self._done = False

    def handle(self, event: ThreadEvent) -> None:
        self._builder.process(event)

    def finish(self) -> None:
        if not self._done:
            self._done = True
            fsutil.atomic_write_json(self.path, self._builder.build(), pretty=True)
