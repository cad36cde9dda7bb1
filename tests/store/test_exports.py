"""Exports: compatibility `--events` file, Open Responses and ATIF derived views, on-demand."""

from __future__ import annotations

import dataclasses
import io
import os
import stat
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator
from syrupy.assertion import SnapshotAssertion
from test_store import CFG, completed, run_session, script

from vtcode.config.model import (
    AgentConfig,
    HarnessConfig,
    OpenResponsesConfig,
    TelemetryConfig,
    VtcodeConfig,
)
from vtcode.errors import ExitCode, UsageError
from vtcode.events.enums import (
    CompactionMode,
    CompactionTrigger,
    ContextResetTrigger,
    FileChangeKind,
    HarnessEventKind,
    PatchApplyStatus,
    PlanApprovalDecision,
    ThreadCompletionSubtype,
    ToolCallStatus,
)
from vtcode.events.types import (
    AgentMessageItem,
    CommandExecutionItem,
    ContextResetEvent,
    ErrorItem,
    FileChangeItem,
    FileUpdateChange,
    HarnessItem,
    ItemCompletedEvent,
    ItemStartedEvent,
    ItemUpdatedEvent,
    PlanApprovalRequestedEvent,
    PlanApprovalResolvedEvent,
    ReasoningItem,
    ThreadCompactBoundaryEvent,
    ThreadCompletedEvent,
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
from vtcode.providers.sse import iter_sse
from vtcode.runtime.exporters import make_exporters
from vtcode.schemas import fast_validator
from vtcode.store import DispatchGate, SessionWriter, sessions_root
from vtcode.store.exports import (
    AtifBuilder,
    ExportFormat,
    OpenResponsesBuilder,
    export_session,
    resolve_events_path,
)
from vtcode.store.exports.sse import SseWriter

SID = "exp-1"
TS = "2026-01-15T10:30:00.000000+00:00"


def item(iid: str, details: Any) -> ThreadItem:
    return ThreadItem(id=iid, details=details)


def fixed_events() -> list[ThreadEvent]:
    """A two-turn session touching every mapping rule of both derived exports."""
    return [
        ThreadStartedEvent(thread_id=SID),
        TurnStartedEvent(),
        ItemStartedEvent(item=item("item_0", ReasoningItem(text="Let me"))),
        ItemUpdatedEvent(item=item("item_0", ReasoningItem(text="Let me look."))),
        ItemCompletedEvent(item=item("item_0", ReasoningItem(text="Let me look."))),
        ItemStartedEvent(item=item("item_1", AgentMessageItem(text="I'll list"))),
        ItemUpdatedEvent(item=item("item_1", AgentMessageItem(text="I'll list the files."))),
        ItemCompletedEvent(item=item("item_1", AgentMessageItem(text="I'll list the files."))),
        ItemStartedEvent(
            item=item(
                "item_2",
                ToolInvocationItem(
                    tool_name="exec_command",
                    arguments={"command": "ls"},
                    tool_call_id="call_0",
                    status=ToolCallStatus.IN_PROGRESS,
                ),
            )
        ),
        ItemCompletedEvent(
            item=item(
                "item_2",
                ToolInvocationItem(
                    tool_name="exec_command",
                    arguments={"command": "ls"},
                    tool_call_id="call_0",
                    status=ToolCallStatus.COMPLETED,
                ),
            )
        ),
        ItemCompletedEvent(
            item=item(
                "item_2:output",
                ToolOutputItem(
                    call_id="item_2",
                    tool_call_id="call_0",
                    output="README.md\n",
                    exit_code=0,
                    status=ToolCallStatus.COMPLETED,
                ),
            )
        ),
        ItemCompletedEvent(
            item=item(
                "item_3",
                CommandExecutionItem(
                    command="git status",
                    aggregated_output="clean",
                    exit_code=0,
                    status=ToolCallStatus.COMPLETED,
                ),
            )
        ),
        ItemCompletedEvent(
            item=item(
                "item_4",
                FileChangeItem(
                    changes=[FileUpdateChange(path="a.py", kind=FileChangeKind.UPDATE)],
                    status=PatchApplyStatus.COMPLETED,
                ),
            )
        ),
        ItemCompletedEvent(item=item("item_5", WebSearchItem(query="fsync", results=["r1", "r2"]))),
        ItemCompletedEvent(
            item=item(
                "item_6",
                HarnessItem(event=HarnessEventKind.VERIFICATION_PASSED, message="tests ok"),
            )
        ),
        ItemCompletedEvent(item=item("item_7", ErrorItem(message="a warning"))),
        TurnCompletedEvent(usage=Usage(input_tokens=100, cached_input_tokens=20, output_tokens=7)),
        ThreadCompactBoundaryEvent(
            thread_id=SID,
            trigger=CompactionTrigger.AUTO,
            mode=CompactionMode.LOCAL,
            original_message_count=12,
            compacted_message_count=5,
        ),
        PlanApprovalRequestedEvent(thread_id=SID, turn_id="turn-2", plan_file="plan.md"),
        PlanApprovalResolvedEvent(
            thread_id=SID,
            turn_id="turn-2",
            decision=PlanApprovalDecision.FRESH_CONTEXT,
            automatic=False,
        ),
        ContextResetEvent(
            thread_id=SID,
            turn_id="turn-2",
            trigger=ContextResetTrigger.PLAN_APPROVAL,
            plan_preserved=True,
            previous_context_usage_percent=71,
            tool_budget_reset=True,
        ),
        TurnStartedEvent(),
        ItemCompletedEvent(item=item("item_8", AgentMessageItem(text="Done."))),
        TurnFailedEvent(message="turn limit", usage=Usage(input_tokens=50, output_tokens=3)),
        ThreadCompletedEvent(
            thread_id=SID,
            session_id=SID,
            subtype=ThreadCompletionSubtype.ERROR_MAX_TURNS,
            outcome_code="turn_limit_reached",
            stop_reason="max_turns",
            usage=Usage(input_tokens=150, cached_input_tokens=20, output_tokens=10),
            total_cost_usd=0.0125,
            num_turns=2,
        ),
    ]


def open_responses_bytes(events: list[ThreadEvent]) -> bytes:
    buf = io.BytesIO()
    builder = OpenResponsesBuilder(SID, "replay-1", now=lambda: 1768473000)
    sse = SseWriter(buf)
    for e in events:
        sse.write(builder.process(e))
    sse.finish()
    return buf.getvalue()


def parse_sse(data: bytes) -> tuple[list[dict[str, Any]], int]:
    events, done = [], 0
    for ev in iter_sse([data]):
        if ev.data == "[DONE]":
            done += 1
            continue
        obj = orjson.loads(ev.data)
        assert ev.event == obj["type"]
        events.append(obj)
    return events, done


def test_open_responses_snapshot(snapshot_json: SnapshotAssertion) -> None:
    data = open_responses_bytes(fixed_events())
    events, done = parse_sse(data)
    assert done == 1 and data.endswith(b"data: [DONE]\n\n")
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    custom = [e["event_type"] for e in events if e["type"] == "response.custom_event"]
    assert custom == [
        "vtcode.thread_compact_boundary",
        "vtcode.plan_approval_requested",
        "vtcode.plan_approval_resolved",
        "vtcode.context_reset",
        "vtcode.thread_completed",
    ]
    kinds = [e["type"] for e in events]
    assert kinds.count("response.completed") == 1 and kinds.count("response.failed") == 1
    deltas = [e["delta"] for e in events if e["type"].endswith(".delta")]
    assert deltas == [" look.", " the files."]
    assert events == snapshot_json


def test_atif_snapshot_and_schema(snapshot_json: SnapshotAssertion) -> None:
    builder = AtifBuilder(model_name="replay-1")
    for e in fixed_events():
        builder.process(e, TS)
    doc = builder.build()
    assert_atif_valid(doc)
    assert doc["final_metrics"]["total_prompt_tokens"] == 150  # per-turn usage summed
    assert doc["final_metrics"]["total_cost_usd"] == 0.0125
    tool = next(s for s in doc["steps"] if s.get("tool_calls"))
    assert tool["tool_calls"][0]["tool_call_id"] == "call_0"
    assert tool["observation"]["results"][0]["content"] == "README.md\n"
    assert doc == snapshot_json


def test_atif_uses_thread_usage_without_turn_usage() -> None:
    builder = AtifBuilder()
    builder.process(ThreadStartedEvent(thread_id="t"), TS)
    builder.process(completed("t", 0), TS)
    doc = builder.build()
    assert doc["session_id"] == "t"
    assert doc["final_metrics"]["total_prompt_tokens"] == 10
    assert_atif_valid(doc)


# ATIF v1.4 as Harbor's pydantic models define it (extra fields forbidden everywhere), written
# from the RFC's documented fields because `harbor` needs Python >= 3.12 and cannot be installed
# into this 3.11 venv.
_METRICS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "prompt_tokens": {"type": "integer", "minimum": 0},
        "completion_tokens": {"type": "integer", "minimum": 0},
        "cached_tokens": {"type": "integer", "minimum": 0},
        "cost_usd": {"type": "number", "minimum": 0},
        "logprobs": {"type": "array", "items": {"type": "number"}},
        "completion_token_ids": {"type": "array", "items": {"type": "integer"}},
        "prompt_token_ids": {"type": "array", "items": {"type": "integer"}},
        "extra": {"type": "object"},
    },
}
ATIF_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["schema_version", "session_id", "agent", "steps"],
    "properties": {
        "schema_version": {"const": "ATIF-v1.4"},
        "session_id": {"type": "string", "minLength": 1},
        "agent": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name", "version"],
            "properties": {
                "name": {"type": "string"},
                "version": {"type": "string"},
                "model_name": {"type": "string"},
                "extra": {"type": "object"},
            },
        },
        "steps": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/step"}},
        "notes": {"type": "string"},
        "final_metrics": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "total_prompt_tokens": {"type": "integer", "minimum": 0},
                "total_completion_tokens": {"type": "integer", "minimum": 0},
                "total_cached_tokens": {"type": "integer", "minimum": 0},
                "total_cost_usd": {"type": "number", "minimum": 0},
                "total_steps": {"type": "integer", "minimum": 0},
                "extra": {"type": "object"},
            },
        },
        "extra": {"type": "object"},
    },
    "$defs": {
        "step": {
            "type": "object",
            "additionalProperties": False,
            "required": ["step_id", "source", "message"],
            "properties": {
                "step_id": {"type": "integer", "minimum": 1},
                "timestamp": {"type": "string", "format": "date-time"},
                "source": {"enum": ["system", "user", "agent"]},
                "model_name": {"type": "string"},
                "message": {"type": "string"},
                "reasoning_content": {"type": "string"},
                "tool_calls": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["tool_call_id", "function_name", "arguments"],
                        "properties": {
                            "tool_call_id": {"type": "string"},
                            "function_name": {"type": "string"},
                            "arguments": {"type": "object"},
                        },
                    },
                },
                "observation": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["results"],
                    "properties": {
                        "results": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "additionalProperties": False,
                                "properties": {
                                    "source_call_id": {"type": "string"},
                                    "content": {"type": "string"},
                                },
                            },
                        }
                    },
                },
                "metrics": _METRICS,
                "extra": {"type": "object"},
            },
            # agent-only fields
            "if": {"properties": {"source": {"enum": ["system", "user"]}}},
            "then": {
                "not": {
                    "anyOf": [
                        {"required": ["model_name"]},
                        {"required": ["reasoning_content"]},
                        {"required": ["tool_calls"]},
                        {"required": ["metrics"]},
                    ]
                }
            },
        }
    },
}


def assert_atif_valid(doc: dict[str, Any]) -> None:
    v = Draft202012Validator(ATIF_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)
    errors = sorted(v.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]
    assert [s["step_id"] for s in doc["steps"]] == list(range(1, len(doc["steps"]) + 1))
    fm = doc.get("final_metrics")
    if fm and "total_steps" in fm:
        assert fm["total_steps"] == len(doc["steps"])


# ------------------------------------------------------------------------------------------
# compatibility export


def cfg_with(event_log_path: str | None = None, *, orx: bool = False, atif: bool = False) -> Any:
    return VtcodeConfig(
        agent=AgentConfig(
            model="replay-1",
            harness=HarnessConfig(event_log_path=event_log_path),
            open_responses=OpenResponsesConfig(enabled=orx),
        ),
        telemetry=TelemetryConfig(atif_enabled=atif),
    )


def run_with_exports(ws: Path, sid: str, config: Any, cli: str | None) -> Path:
    w = SessionWriter.create(ws, sid, CFG)
    gate = DispatchGate(w, make_exporters(ws, sid, config, cli))
    for e in script(sid):
        gate.emit(e)
    gate.close()
    return sessions_root(ws) / sid


def test_events_file_gets_raw_lines(tmp_path: Path) -> None:
    out = tmp_path / "out" / "events.jsonl"
    run_with_exports(tmp_path, "s1", cfg_with(), str(out))
    lines = out.read_bytes().splitlines()
    canonical = (sessions_root(tmp_path) / "s1" / "events.jsonl").read_bytes().splitlines()
    assert [orjson.loads(x) for x in lines] == [orjson.loads(x)["event"] for x in canonical]
    validator = fast_validator("thread-event")
    for x in lines:
        validator.validate(orjson.loads(x))
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600


def test_events_folder_and_precedence(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    run_with_exports(tmp_path, "s1", cfg_with("from-config.jsonl"), f"{folder}/")  # slash: folder
    [name] = os.listdir(folder)
    assert name.startswith("harness-s1-") and name.endswith("Z.jsonl")
    assert len(name) == len("harness-s1-20260101T000000Z.jsonl")
    assert not (tmp_path / "from-config.jsonl").exists()  # the CLI wins
    run_with_exports(tmp_path, "s2", cfg_with("from-config.jsonl"), None)
    assert (tmp_path / "from-config.jsonl").exists()  # relative to the workspace
    run_with_exports(tmp_path, "s3", cfg_with("other.jsonl"), "")  # empty CLI value: off
    assert not (tmp_path / "other.jsonl").exists()
    assert resolve_events_path("", "x") is None
    assert resolve_events_path("   ", "x") is None


def test_old_harness_logs_are_pruned(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    old = folder / "harness-old-20200101T000000Z.jsonl"
    old.write_text("")
    keep = folder / "notes.jsonl"
    keep.write_text("")
    os.utime(old, (0, 0))
    os.utime(keep, (0, 0))
    resolve_events_path(str(folder), "s1")
    assert not old.exists() and keep.exists()


def test_unwritable_events_path_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "taken.jsonl").mkdir()
    with pytest.raises(UsageError) as ei:
        make_exporters(tmp_path, "s1", cfg_with(), str(tmp_path / "taken.jsonl"))
    assert ei.value.exit_code == ExitCode.USAGE
    assert str(tmp_path / "taken.jsonl") in str(ei.value)


def test_derived_exports_written_by_a_run(tmp_path: Path) -> None:
    sdir = run_with_exports(tmp_path, "s1", cfg_with(orx=True, atif=True), None)
    data = (sdir / "derived" / "open-responses.jsonl").read_bytes()
    events, done = parse_sse(data)
    assert done == 1 and events[0]["type"] == "response.created"
    doc = orjson.loads((sdir / "derived" / "atif-trajectory.json").read_bytes())
    assert_atif_valid(doc)
    assert doc["session_id"] == "s1"
    # off by default
    sdir2 = run_with_exports(tmp_path, "s2", cfg_with(), None)
    assert os.listdir(sdir2 / "derived") == []


# ------------------------------------------------------------------------------------------
# on demand


def test_on_demand_exports_match(tmp_path: Path) -> None:
    events = fixed_events()
    sdir = run_session(tmp_path, SID, events)
    raw = io.BytesIO()
    assert export_session(tmp_path, SID, ExportFormat.RAW, raw) == len(events)
    canonical = (sdir / "events.jsonl").read_bytes()
    assert [orjson.loads(x) for x in raw.getvalue().splitlines()] == [
        orjson.loads(x)["event"] for x in canonical.splitlines()
    ]
    wrapped = io.BytesIO()
    export_session(tmp_path, SID, ExportFormat.WRAPPED, wrapped)
    assert wrapped.getvalue() == canonical
    orx = io.BytesIO()
    export_session(tmp_path, SID, ExportFormat.OPEN_RESPONSES, orx, model="replay-1")
    got, done = parse_sse(orx.getvalue())
    want, _ = parse_sse(open_responses_bytes(events))

    def strip(evs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [orjson.loads(orjson.dumps(e).replace(b"1768473000", b"0")) for e in evs]

    assert done == 1 and len(got) == len(want)
    assert [e["type"] for e in got] == [e["type"] for e in want]
    atif = io.BytesIO()
    export_session(tmp_path, SID, ExportFormat.ATIF, atif)
    doc = orjson.loads(atif.getvalue())
    assert_atif_valid(doc)
    ts = [orjson.loads(x)["ts"] for x in canonical.splitlines()]
    assert all(s["timestamp"] in ts for s in doc["steps"])  # each step dated by its line


def test_exporter_sees_same_order_as_canonical(tmp_path: Path) -> None:
    """The gate order: canonical first, then exporters; both see the same sequence."""
    seen: list[str] = []

    @dataclasses.dataclass
    class Recorder:
        def handle(self, event: ThreadEvent) -> None:
            seen.append(type(event).__name__)

        def finish(self) -> None:
            seen.append("finish")

    w = SessionWriter.create(tmp_path, "s1", CFG)
    gate = DispatchGate(w, [Recorder()])
    for e in script("s1"):
        gate.emit(e)
    gate.close()
    lines = (sessions_root(tmp_path) / "s1" / "events.jsonl").read_bytes().splitlines()
    names = [orjson.loads(x)["event"]["type"] for x in lines]
    assert len(seen) == len(names) + 1 and seen[-1] == "finish"
