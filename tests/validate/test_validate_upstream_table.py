"""Upstream's verdict, line by line: the table of what `vtcode-exec-events`' reader accepts.

Every expected value is written here by hand from upstream's type definitions
(`crates/common/vtcode-exec-events/src/lib.rs`, vinhnx/vtcode) and serde / serde_json semantics,
never computed by the code under test; each row names its source (the `WHY_*` notes). The first
13 rows are the cases where vtcode's reader used to be stricter than upstream's (issue 27).
`--profile upstream` must give exactly this verdict on every line; the default profile may be
stricter (its `strict`/`envelope`/`lifecycle` groups) but never prints a Python repr.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from vtcode.lineshape import LineShape
from vtcode.validate.upstream import upstream_for

RunVtcode = Callable[..., tuple[int, str, str]]

WHY_OPTION = "Option<T>: serde reads null as None"
WHY_DEFAULT_NULL = "#[serde(default)] String: may be absent, but null is not a String"
WHY_DEFAULT_ABSENT = "#[serde(default)] String: absent reads as an empty string"
WHY_REQUIRED = "a non-Option field with no #[serde(default)] is required: `missing field`"
WHY_NOT_NULL = "a non-Option field refuses null: `invalid type: null`"
WHY_UNKNOWN = "no deny_unknown_fields: serde ignores an unknown key, a repeated one too"
WHY_DUP = "serde derive: a known field given twice is `duplicate field`"
WHY_DUP_TAG = '#[serde(tag = "type")]: a second tag is `duplicate field `type``'
WHY_VALUE = "serde_json::Value (arguments): a repeated map key overwrites, the last wins"
WHY_FLOAT_INT = "serde_json reads `.`/exponent/-0 literals as f64; an integer field refuses f64"
WHY_RANGE = "the Rust integer type's range (u8 0..=255, u32, i32, u64)"
WHY_NUMBER = "total_cost_usd: Option<serde_json::Number> takes any finite JSON number"
WHY_OTHER = "#[serde(other)] Unknown: a catch-all enum takes any string"
WHY_CLOSED = "an enum without #[serde(other)] refuses an unknown variant"
WHY_EVENT_OTHER = "ThreadEvent has #[serde(other)] Unknown: any type string reads, payload ignored"
WHY_ITEM_CLOSED = "ThreadItemDetails has no catch-all: an unknown item type fails"
WHY_TYPE = "serde checks each field's JSON type against the Rust type"
WHY_SYNTAX = "serde_json::from_str: not one JSON value (EOF, NaN, lone surrogate, bad token)"
WHY_WS = "serde_json skips JSON whitespace and decodes \\u escapes: spacing is not shape"
WHY_DEPTH = "serde_json's recursion limit: 127 nested containers read, the 128th fails"
WHY_ORDER = "serde maps: key order does not matter (internally tagged enums buffer the map)"
WHY_ENVELOPE = "VersionedThreadEvent {schema_version: String, event}: seq/ts are unknown keys"
WHY_BASE = "a well-formed event of a type upstream defines"

USAGE = {
    "input_tokens": 1,
    "cached_input_tokens": 0,
    "cache_creation_tokens": 0,
    "output_tokens": 2,
}
BREAKDOWN = {
    "system_prompt_tokens": 1,
    "tool_schema_tokens": 2,
    "instruction_file_tokens": 3,
    "message_history_tokens": 4,
    "cache_read_tokens": 5,
    "cache_write_tokens": 6,
    "cache_miss_tokens": 7,
}
COMPLETED = {
    "type": "thread.completed",
    "thread_id": "t",
    "session_id": "t",
    "subtype": "success",
    "outcome_code": "success",
    "result": "done",
    "usage": USAGE,
    "total_cost_usd": 1.25,
    "num_turns": 1,
}
BOUNDARY = {
    "type": "thread.compact_boundary",
    "thread_id": "t",
    "trigger": "auto",
    "mode": "local",
    "original_message_count": 9,
    "compacted_message_count": 2,
}
RESET = {
    "type": "context.reset",
    "thread_id": "t",
    "turn_id": "u",
    "trigger": "plan_approval",
    "plan_preserved": True,
    "previous_context_usage_percent": 40,
    "tool_budget_reset": False,
}
RESOLVED = {"type": "permission.resolved", "tool_name": "x", "decision": "allow", "wait_ms": 5}
INTERJECTED = {
    "type": "interjected",
    "source": "direct",
    "image_count": 0,
    "redirect_kind": "interjection",
}
APPROVAL = {
    "type": "plan.approval.resolved",
    "thread_id": "t",
    "turn_id": "u",
    "decision": "execute",
    "automatic": False,
}
ITEMS: dict[str, dict[str, Any]] = {
    "agent_message": {"text": "hi"},
    "plan": {"text": "1. do"},
    "reasoning": {"text": "hm", "stage": "analysis"},
    "command_execution": {
        "command": "ls",
        "aggregated_output": "a\n",
        "exit_code": 0,
        "status": "completed",
    },
    "tool_invocation": {
        "tool_name": "read_file",
        "arguments": {"path": "a"},
        "tool_call_id": "c0",
        "status": "completed",
        "outcome": "success",
    },
    "tool_output": {"call_id": "i1", "output": "x", "exit_code": 0, "status": "completed"},
    "file_change": {"changes": [{"path": "a", "kind": "update"}], "status": "completed"},
    "mcp_tool_call": {"tool_name": "s.t", "arguments": {}, "result": "r", "status": "completed"},
    "web_search": {"query": "q", "provider": "p", "results": ["a"]},
    "harness": {"event": "verification_passed", "message": "m", "attempt": 1, "duration_ms": 3},
    "error": {"message": "boom"},
}


def dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def item(kind: str, **changes: Any) -> str:
    """An item.completed line of `kind`; a change to None writes null, `...` drops the key."""
    body = {"id": "i1", "type": kind, **ITEMS[kind]}
    for k, v in changes.items():
        if v is ...:
            body.pop(k, None)
        else:
            body[k] = v
    return dump({"type": "item.completed", "item": body})


def ev(base: dict[str, Any], **changes: Any) -> str:
    body = dict(base)
    for k, v in changes.items():
        if v is ...:
            body.pop(k, None)
        else:
            body[k] = v
    return dump(body)


def nested_args(lists: int) -> str:
    """A tool_invocation whose arguments nest `lists` arrays (the line's depth is lists + 2)."""
    return (
        '{"type":"item.completed","item":{"id":"i","type":"tool_invocation","tool_name":"t",'
        '"status":"completed","arguments":' + "[" * lists + "]" * lists + "}}"
    )


TS = '{"type":"thread.started","thread_id":"t"}'
TOOL_ARGS = '{"id":"i","type":"tool_invocation","tool_name":"t","status":"completed","arguments":'

RAW: list[tuple[str, str, bool, str]] = [
    # the 13 cases where vtcode used to be stricter than upstream (issue 27)
    ("exit_code null", item("tool_output", exit_code=None), True, WHY_OPTION),
    (
        "turn.failed usage null",
        '{"type":"turn.failed","message":"m","usage":null}',
        True,
        WHY_OPTION,
    ),
    ("token_breakdown null", '{"type":"turn.started","token_breakdown":null}', True, WHY_OPTION),
    ("web_search results null", item("web_search", results=None), True, WHY_OPTION),
    ("mcp status null", item("mcp_tool_call", status=None), True, WHY_OPTION),
    (
        "duplicate key in arguments",
        '{"type":"item.completed","item":' + TOOL_ARGS + '{"a":1,"a":2}}}',
        True,
        WHY_VALUE,
    ),
    (
        "duplicate ignored field",
        '{"type":"turn.started","note":1,"note":2}',
        True,
        WHY_UNKNOWN,
    ),
    ("blank line", "", False, WHY_SYNTAX),
    # the envelope's five are in WRAPPED below: duplicate seq, string seq, seq 0,
    # schema_version "", ts "yesterday"
    ("command exit_code null", item("command_execution", exit_code=None), True, WHY_OPTION),
    # every event type upstream defines
    ("thread.started", TS, True, WHY_BASE),
    ("thread.completed", ev(COMPLETED), True, WHY_BASE),
    ("thread.compact_boundary", ev(BOUNDARY), True, WHY_BASE),
    ("context.reset", ev(RESET), True, WHY_BASE),
    ("turn.started", '{"type":"turn.started"}', True, WHY_BASE),
    (
        "turn.started breakdown",
        dump({"type": "turn.started", "token_breakdown": BREAKDOWN}),
        True,
        WHY_BASE,
    ),
    ("turn.completed", dump({"type": "turn.completed", "usage": USAGE}), True, WHY_BASE),
    ("turn.failed", '{"type":"turn.failed","message":"m"}', True, WHY_BASE),
    ("permission.requested", '{"type":"permission.requested","tool_name":"x"}', True, WHY_BASE),
    ("permission.resolved", ev(RESOLVED), True, WHY_BASE),
    ("interjected", ev(INTERJECTED), True, WHY_BASE),
    (
        "plan.delta",
        '{"type":"plan.delta","thread_id":"t","turn_id":"u","item_id":"i","delta":"d"}',
        True,
        WHY_BASE,
    ),
    (
        "plan.approval.requested",
        '{"type":"plan.approval.requested","thread_id":"t","turn_id":"u"}',
        True,
        WHY_BASE,
    ),
    ("plan.approval.resolved", ev(APPROVAL), True, WHY_BASE),
    ("error event", '{"type":"error","message":"m"}', True, WHY_BASE),
    # every item type
    *[(f"item {k}", item(k), True, WHY_BASE) for k in sorted(ITEMS)],
    ("tool args list", item("tool_invocation", arguments=["a", 1]), True, WHY_BASE),
    ("tool args string", item("tool_invocation", arguments="raw"), True, WHY_BASE),
    # Option<T> fields given null
    ("tool_output tool_call_id null", item("tool_output", tool_call_id=None), True, WHY_OPTION),
    ("tool_output spool_path null", item("tool_output", spool_path=None), True, WHY_OPTION),
    ("invocation arguments null", item("tool_invocation", arguments=None), True, WHY_OPTION),
    ("invocation tool_call_id null", item("tool_invocation", tool_call_id=None), True, WHY_OPTION),
    ("invocation outcome null", item("tool_invocation", outcome=None), True, WHY_OPTION),
    ("command arguments null", item("command_execution", arguments=None), True, WHY_OPTION),
    ("mcp arguments null", item("mcp_tool_call", arguments=None), True, WHY_OPTION),
    ("mcp result null", item("mcp_tool_call", result=None), True, WHY_OPTION),
    ("web_search provider null", item("web_search", provider=None), True, WHY_OPTION),
    ("harness message null", item("harness", message=None), True, WHY_OPTION),
    ("harness attempt null", item("harness", attempt=None), True, WHY_OPTION),
    ("harness duration null", item("harness", duration_ms=None), True, WHY_OPTION),
    ("harness exit_code null", item("harness", exit_code=None), True, WHY_OPTION),
    ("reasoning stage null", item("reasoning", stage=None), True, WHY_OPTION),
    ("completed result null", ev(COMPLETED, result=None), True, WHY_OPTION),
    ("completed stop_reason null", ev(COMPLETED, stop_reason=None), True, WHY_OPTION),
    ("completed cost null", ev(COMPLETED, total_cost_usd=None), True, WHY_OPTION),
    ("boundary artifact null", ev(BOUNDARY, history_artifact_path=None), True, WHY_OPTION),
    (
        "approval plan_file null",
        '{"type":"plan.approval.requested","thread_id":"t","turn_id":"u","plan_file":null}',
        True,
        WHY_OPTION,
    ),
    (
        "breakdown subagent null",
        dump(
            {
                "type": "turn.started",
                "token_breakdown": {**BREAKDOWN, "subagent_bootstrap_tokens": None},
            }
        ),
        True,
        WHY_OPTION,
    ),
    # #[serde(default)] Strings
    ("tool_output output null", item("tool_output", output=None), False, WHY_DEFAULT_NULL),
    (
        "aggregated_output null",
        item("command_execution", aggregated_output=None),
        False,
        WHY_DEFAULT_NULL,
    ),
    ("tool_output output absent", item("tool_output", output=...), True, WHY_DEFAULT_ABSENT),
    (
        "aggregated_output absent",
        item("command_execution", aggregated_output=...),
        True,
        WHY_DEFAULT_ABSENT,
    ),
    # required fields: null or absent
    ("thread_id null", '{"type":"thread.started","thread_id":null}', False, WHY_NOT_NULL),
    ("text null", item("agent_message", text=None), False, WHY_NOT_NULL),
    ("turn usage null", '{"type":"turn.completed","usage":null}', False, WHY_NOT_NULL),
    ("tool_output status null", item("tool_output", status=None), False, WHY_NOT_NULL),
    ("item null", '{"type":"item.completed","item":null}', False, WHY_NOT_NULL),
    ("thread_id absent", '{"type":"thread.started"}', False, WHY_REQUIRED),
    ("turn usage absent", '{"type":"turn.completed"}', False, WHY_REQUIRED),
    (
        "item id absent",
        '{"type":"item.completed","item":{"type":"agent_message","text":"x"}}',
        False,
        WHY_REQUIRED,
    ),
    (
        "item type absent",
        '{"type":"item.completed","item":{"id":"i","text":"x"}}',
        False,
        WHY_REQUIRED,
    ),
    ("event type absent", '{"thread_id":"t"}', False, WHY_REQUIRED),
    ("num_turns absent", ev(COMPLETED, num_turns=...), False, WHY_REQUIRED),
    (
        "usage field absent",
        dump(
            {
                "type": "turn.completed",
                "usage": {k: v for k, v in USAGE.items() if k != "output_tokens"},
            }
        ),
        False,
        WHY_REQUIRED,
    ),
    ("tool_name absent", '{"type":"permission.requested"}', False, WHY_REQUIRED),
    # unknown fields
    (
        "unknown field on event",
        '{"type":"thread.started","thread_id":"t","x":1}',
        True,
        WHY_UNKNOWN,
    ),
    ("unknown field on item", item("agent_message", extra={"a": [1]}), True, WHY_UNKNOWN),
    (
        "unknown field in usage",
        dump({"type": "turn.completed", "usage": {**USAGE, "reasoning_tokens": 3}}),
        True,
        WHY_UNKNOWN,
    ),
    (
        "unknown null field",
        '{"type":"thread.started","thread_id":"t","parent":null}',
        True,
        WHY_UNKNOWN,
    ),
    (
        "repeated unknown field on item",
        '{"type":"item.completed","item":{"id":"i","type":"plan","text":"p","z":1,"z":2}}',
        True,
        WHY_UNKNOWN,
    ),
    # repeated known fields
    (
        "repeated type",
        '{"type":"thread.started","type":"thread.started","thread_id":"t"}',
        False,
        WHY_DUP_TAG,
    ),
    (
        "repeated thread_id",
        '{"type":"thread.started","thread_id":"t","thread_id":"t"}',
        False,
        WHY_DUP,
    ),
    (
        "repeated item",
        '{"type":"item.completed","item":{"id":"i","type":"error","message":"m"},'
        '"item":{"id":"i","type":"error","message":"m"}}',
        False,
        WHY_DUP,
    ),
    (
        "repeated item id",
        '{"type":"item.completed","item":{"id":"i","id":"j","type":"error","message":"m"}}',
        False,
        WHY_DUP,
    ),
    (
        "repeated item type",
        '{"type":"item.completed","item":{"id":"i","type":"error","type":"error","message":"m"}}',
        False,
        WHY_DUP_TAG,
    ),
    (
        "repeated item text",
        '{"type":"item.completed","item":{"id":"i","type":"plan","text":"a","text":"b"}}',
        False,
        WHY_DUP,
    ),
    (
        "repeated usage field",
        '{"type":"turn.completed","usage":{"input_tokens":1,"input_tokens":1,'
        '"cached_input_tokens":0,"cache_creation_tokens":0,"output_tokens":0}}',
        False,
        WHY_DUP,
    ),
    (
        "repeated message",
        '{"type":"turn.failed","message":"a","message":"b"}',
        False,
        WHY_DUP,
    ),
    # serde_json::Value keeps the last of repeated keys
    (
        "nested repeat in arguments",
        '{"type":"item.completed","item":' + TOOL_ARGS + '{"a":{"b":1,"b":2}}}}',
        True,
        WHY_VALUE,
    ),
    (
        "repeat inside an arguments list",
        '{"type":"item.completed","item":' + TOOL_ARGS + '[{"k":1,"k":1}]}}',
        True,
        WHY_VALUE,
    ),
    (
        "repeat in mcp arguments",
        '{"type":"item.completed","item":{"id":"i","type":"mcp_tool_call","tool_name":"t",'
        '"arguments":{"q":1,"q":"x"}}}',
        True,
        WHY_VALUE,
    ),
    # integers
    (
        "num_turns 1.0",
        ev(COMPLETED).replace('"num_turns":1', '"num_turns":1.0'),
        False,
        WHY_FLOAT_INT,
    ),
    (
        "output_tokens 1e3",
        dump({"type": "turn.completed", "usage": USAGE}).replace(
            '"output_tokens":2', '"output_tokens":1e3'
        ),
        False,
        WHY_FLOAT_INT,
    ),
    (
        "exit_code -0",
        item("tool_output").replace('"exit_code":0', '"exit_code":-0'),
        False,
        WHY_FLOAT_INT,
    ),
    ("exit_code -1", item("tool_output", exit_code=-1), True, WHY_RANGE),
    ("exit_code past i32", item("tool_output", exit_code=2147483648), False, WHY_RANGE),
    ("exit_code i32 min", item("command_execution", exit_code=-2147483648), True, WHY_RANGE),
    ("percent 255", ev(RESET, previous_context_usage_percent=255), True, WHY_RANGE),
    ("percent 256", ev(RESET, previous_context_usage_percent=256), False, WHY_RANGE),
    (
        "percent 140 (u8, not a percent check)",
        ev(RESET, previous_context_usage_percent=140),
        True,
        WHY_RANGE,
    ),
    ("image_count past u32", ev(INTERJECTED, image_count=4294967296), False, WHY_RANGE),
    ("wait_ms u64 max", ev(RESOLVED, wait_ms=18446744073709551615), True, WHY_RANGE),
    ("wait_ms past u64", ev(RESOLVED, wait_ms=18446744073709551616), False, WHY_RANGE),
    (
        "input_tokens negative",
        dump({"type": "turn.completed", "usage": {**USAGE, "input_tokens": -1}}),
        False,
        WHY_RANGE,
    ),
    ("num_turns string", ev(COMPLETED, num_turns="3"), False, WHY_TYPE),
    ("attempt 0", item("harness", attempt=0), True, WHY_RANGE),
    # total_cost_usd: serde_json::Number
    (
        "cost 1e-3",
        ev(COMPLETED).replace('"total_cost_usd":1.25', '"total_cost_usd":1e-3'),
        True,
        WHY_NUMBER,
    ),
    ("cost integer", ev(COMPLETED, total_cost_usd=5), True, WHY_NUMBER),
    ("cost string", ev(COMPLETED, total_cost_usd="1.25"), False, WHY_TYPE),
    (
        "cost 1e308",
        ev(COMPLETED).replace('"total_cost_usd":1.25', '"total_cost_usd":1e308'),
        True,
        WHY_NUMBER,
    ),
    # floats in free-form arguments
    ("float in arguments", item("tool_invocation", arguments={"timeout_s": 1.5}), True, WHY_VALUE),
    (
        "1e400 in arguments",
        '{"type":"item.completed","item":' + TOOL_ARGS + '{"n":1e400}}}',
        False,
        WHY_SYNTAX,
    ),
    # enums
    ("subtype unknown", ev(COMPLETED, subtype="future"), True, WHY_OTHER),
    ("trigger unknown", ev(BOUNDARY, trigger="future"), True, WHY_OTHER),
    ("mode unknown", ev(BOUNDARY, mode="future"), True, WHY_OTHER),
    ("approval decision unknown", ev(APPROVAL, decision="future_decision"), True, WHY_OTHER),
    ("reset trigger unknown", ev(RESET, trigger="future"), True, WHY_OTHER),
    ("tool status unknown", item("tool_output", status="done"), False, WHY_CLOSED),
    ("outcome unknown", item("tool_invocation", outcome="future"), False, WHY_CLOSED),
    ("harness event unknown", item("harness", event="future"), False, WHY_CLOSED),
    ("permission decision unknown", ev(RESOLVED, decision="maybe"), False, WHY_CLOSED),
    ("mcp status unknown", item("mcp_tool_call", status="running"), False, WHY_CLOSED),
    (
        "change kind unknown",
        item("file_change", changes=[{"path": "a", "kind": "rename"}]),
        False,
        WHY_CLOSED,
    ),
    ("patch status in_progress", item("file_change", status="in_progress"), False, WHY_CLOSED),
    ("subtype number", ev(COMPLETED, subtype=5), False, WHY_TYPE),
    ("interjection source unknown", ev(INTERJECTED, source="voice"), False, WHY_CLOSED),
    # event and item types
    ("unknown event type", '{"type":"turn.paused"}', True, WHY_EVENT_OTHER),
    (
        "unknown event type with any payload",
        '{"type":"future.thing","thread_id":5,"a":[1,{"b":null}],"a":2}',
        True,
        WHY_EVENT_OTHER,
    ),
    (
        "unknown item type",
        '{"type":"item.completed","item":{"id":"i","type":"image"}}',
        False,
        WHY_ITEM_CLOSED,
    ),
    ("type true", '{"type":true}', False, WHY_TYPE),
    # JSON types of fields
    ("text number", item("agent_message", text=5), False, WHY_TYPE),
    ("thread_id object", '{"type":"thread.started","thread_id":{}}', False, WHY_TYPE),
    ("results with a number", item("web_search", results=["a", 1]), False, WHY_TYPE),
    ("changes not a list", item("file_change", changes={"path": "a"}), False, WHY_TYPE),
    ("plan_preserved string", ev(RESET, plan_preserved="true"), False, WHY_TYPE),
    ("automatic 1", ev(APPROVAL, automatic=1), False, WHY_TYPE),
    (
        "item id number",
        '{"type":"item.completed","item":{"id":1,"type":"error","message":"m"}}',
        False,
        WHY_TYPE,
    ),
    # JSON syntax and spacing
    ("whitespace-only line", "   ", False, WHY_SYNTAX),
    ("trailing comma", '{"type":"turn.started",}', False, WHY_SYNTAX),
    ("NaN", item("tool_invocation").replace('{"path":"a"}', "NaN"), False, WHY_SYNTAX),
    ("lone surrogate", '{"type":"error","message":"\\ud800"}', False, WHY_SYNTAX),
    ("array line", '[{"type":"turn.started"}]', False, WHY_TYPE),
    ("string line", '"turn.started"', False, WHY_TYPE),
    (
        "json.dumps default spacing",
        json.dumps({"type": "thread.started", "thread_id": "t"}),
        True,
        WHY_WS,
    ),
    (
        "ensure_ascii escapes",
        json.dumps({"type": "error", "message": "héllo ✓ 😀"}),
        True,
        WHY_WS,
    ),
    ("CRLF ending", TS + "\r", True, WHY_WS),
    ("indent inside", '{ "type" : "thread.started" ,\t"thread_id" : "t" }', True, WHY_WS),
    ("depth 127", nested_args(125), True, WHY_DEPTH),
    ("depth 128", nested_args(126), False, WHY_DEPTH),
    # key order
    ("type last", '{"thread_id":"t","type":"thread.started"}', True, WHY_ORDER),
    (
        "item id after details",
        '{"item":{"text":"x","type":"agent_message","id":"i"},"type":"item.started"}',
        True,
        WHY_ORDER,
    ),
]

EVENT = '"event":{"type":"turn.started"}'
WRAPPED: list[tuple[str, str, bool, str]] = [
    (
        "duplicate seq",
        '{"schema_version":"0.11.0","seq":1,"seq":1,' + EVENT + "}",
        True,
        WHY_ENVELOPE,
    ),
    ("string seq", '{"schema_version":"0.11.0","seq":"1",' + EVENT + "}", True, WHY_ENVELOPE),
    ("seq 0", '{"schema_version":"0.11.0","seq":0,' + EVENT + "}", True, WHY_ENVELOPE),
    ('schema_version ""', '{"schema_version":"",' + EVENT + "}", True, WHY_ENVELOPE),
    (
        "ts yesterday",
        '{"schema_version":"0.11.0","ts":"yesterday",' + EVENT + "}",
        True,
        WHY_ENVELOPE,
    ),
    ("upstream envelope", '{"schema_version":"0.11.0",' + EVENT + "}", True, WHY_BASE),
    ("newer schema_version", '{"schema_version":"0.14.0",' + EVENT + "}", True, WHY_ENVELOPE),
    ("seq float", '{"schema_version":"0.11.0","seq":1.5,' + EVENT + "}", True, WHY_ENVELOPE),
    (
        "extra envelope key",
        '{"schema_version":"0.11.0","host":"h",' + EVENT + "}",
        True,
        WHY_UNKNOWN,
    ),
    ("schema_version number", '{"schema_version":5,' + EVENT + "}", False, WHY_TYPE),
    ("schema_version absent", "{" + EVENT + "}", False, WHY_REQUIRED),
    ("event absent", '{"schema_version":"0.11.0"}', False, WHY_REQUIRED),
    ("event null", '{"schema_version":"0.11.0","event":null}', False, WHY_NOT_NULL),
    ("event repeated", '{"schema_version":"0.11.0",' + EVENT + "," + EVENT + "}", False, WHY_DUP),
    (
        "schema_version repeated",
        '{"schema_version":"0.11.0","schema_version":"0.11.0",' + EVENT + "}",
        False,
        WHY_DUP,
    ),
    (
        "unknown event type",
        '{"schema_version":"0.11.0","event":{"type":"x.y"}}',
        True,
        WHY_EVENT_OTHER,
    ),
    (
        "event missing field",
        '{"schema_version":"0.11.0","event":{"type":"error"}}',
        False,
        WHY_REQUIRED,
    ),
    ("event order", '{"event":{"type":"turn.started"},"schema_version":"0.11.0"}', True, WHY_ORDER),
    ("blank line", "", False, WHY_SYNTAX),
]


def _ids(rows: list[tuple[str, str, bool, str]]) -> list[str]:
    return [r[0] for r in rows]


def test_the_table_is_large_enough_and_names_its_sources() -> None:
    assert len(RAW) + len(WRAPPED) >= 113
    assert len(set(_ids(RAW))) == len(RAW) and len(set(_ids(WRAPPED))) == len(WRAPPED)
    assert all(why.strip() for *_, why in RAW + WRAPPED)


def _verdict(shape: LineShape, line: str) -> bool:
    return upstream_for(shape).accepts(line.encode("utf-8"))


@pytest.mark.parametrize(("name", "line", "accepts", "why"), RAW, ids=_ids(RAW))
def test_raw_line_gets_upstreams_verdict(name: str, line: str, accepts: bool, why: str) -> None:
    assert _verdict(LineShape.RAW, line) is accepts, why


@pytest.mark.parametrize(("name", "line", "accepts", "why"), WRAPPED, ids=_ids(WRAPPED))
def test_wrapped_line_gets_upstreams_verdict(name: str, line: str, accepts: bool, why: str) -> None:
    assert _verdict(LineShape.WRAPPED, line) is accepts, why


def _rejected_lines(report: dict[str, Any]) -> set[int]:
    return {p["line"] for p in report["problems"] if p["severity"] == "error"}


def test_cli_profile_upstream_gives_the_table_verdict_on_every_line(
    run_vtcode: RunVtcode, tmp_path: Path
) -> None:
    """One CLI run over both tables: errors on exactly the lines upstream refuses, each
    `upstream-rejects` (or a syntax code) in the `shape` group; the default profile on the same
    files never prints Python's words (`None`, `True`)."""
    raw = tmp_path / "raw.jsonl"
    wrapped = tmp_path / "wrapped.jsonl"
    # the first line fixes the shape: a valid line of each kind leads
    raw_rows = [("lead", TS, True, WHY_BASE), *RAW]
    wrapped_rows = [("lead", '{"schema_version":"0.11.0",' + EVENT + "}", True, WHY_BASE), *WRAPPED]
    raw.write_text("".join(r[1] + "\n" for r in raw_rows), encoding="utf-8")
    wrapped.write_text("".join(r[1] + "\n" for r in wrapped_rows), encoding="utf-8")
    args = ["validate", "--json", "--max-problems", "100000", str(raw), str(wrapped)]
    rc, out, _ = run_vtcode([*args[:1], "--profile", "upstream", *args[1:]])
    assert rc == 1
    report = orjson.loads(out)
    assert report["options"]["profile"] == "upstream"
    for rows, file in zip((raw_rows, wrapped_rows), report["files"], strict=True):
        want = {i + 1 for i, r in enumerate(rows) if not r[2]}
        got = _rejected_lines(file)
        wrong = sorted(want ^ got)
        assert not wrong, [(n, rows[n - 1][0]) for n in wrong]
        assert {p["rule"] for p in file["problems"]} == {"shape"}
        assert not [p for p in file["problems"] if p["severity"] != "error"]
    rc, out, _ = run_vtcode(args)
    assert rc == 1
    messages = [p["message"] for f in orjson.loads(out)["files"] for p in f["problems"]]
    assert messages and not [m for m in messages if "None" in m or "True" in m]


def test_default_profile_keeps_vtcodes_rules_only_on_logs_with_vtcodes_envelope() -> None:
    """`auto`: a raw log or upstream's bare envelope gets upstream's verdict line by line; a log
    whose lines carry vtcode's `seq`/`ts` keeps the envelope and lifecycle rules."""
    import io

    from vtcode.validate import FileStatus, Profile, ValidateOptions, validate_stream

    # no thread.started, an orphan tool_output, a null optional, an unknown event type
    raw = (
        item("tool_output", exit_code=None) + "\n" + '{"type":"turn.paused"}\n'
        '{"type":"turn.completed","usage":' + dump(USAGE) + "}\n"
    ).encode()
    default = validate_stream(io.BytesIO(raw), "raw")
    assert (default.status, default.errors, default.warnings) == (FileStatus.VALID, 0, 0)
    vtcode = validate_stream(io.BytesIO(raw), "raw", ValidateOptions(profile=Profile.VTCODE))
    assert vtcode.status is FileStatus.INVALID
    assert {p.rule.value for p in vtcode.problems} >= {"lifecycle", "strict"}
    bad = raw + b'{"type":"turn.completed"}\n'
    upstream = validate_stream(io.BytesIO(bad), "raw")
    assert [(p.line, p.code.value, p.rule.value) for p in upstream.problems] == [
        (4, "upstream-rejects", "shape")
    ]

    def wrapped(envelope: str) -> bytes:
        lines = raw.decode().splitlines()
        return "".join(
            '{"schema_version":"0.11.0",' + envelope.format(n=n) + '"event":' + ln + "}\n"
            for n, ln in enumerate(lines, 1)
        ).encode()

    bare = validate_stream(io.BytesIO(wrapped("")), "bare")
    assert (bare.status, bare.errors) == (FileStatus.VALID, 0)
    ours = validate_stream(io.BytesIO(wrapped('"seq":{n},')), "ours")
    assert ours.status is FileStatus.INVALID
    assert "lifecycle" in {p.rule.value for p in ours.problems}
    strict = validate_stream(io.BytesIO(raw), "raw", ValidateOptions(strict=True))
    assert strict.status is FileStatus.INVALID  # --strict asks for vtcode's rules by name
