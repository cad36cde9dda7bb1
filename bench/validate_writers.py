"""Logs as other writers write them, for bench/validate.py (issue 27: fast for every writer).

Each variant re-writes the same valid event sequence (bench/validate.py's generator, plus a turn
with every event and item type) the way another writer would: upstream's Rust types (compact,
serde field order, no `seq`/`ts`), Python's `json.dumps` defaults (`", "`/`": "` spacing and
`ensure_ascii`), other key order, floats inside tool arguments, 8 KiB outputs, raw or wrapped.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

Event = dict[str, Any]
SID = "3b7e2c1a-9f4d-4e8a-b1c2-7d5e9a0f6b13"
USAGE = {
    "input_tokens": 9,
    "cached_input_tokens": 3,
    "cache_creation_tokens": 0,
    "output_tokens": 4,
}


def _item(kind: str, iid: str, **fields: Any) -> Event:
    return {"id": iid, "type": kind, **fields}


def every_type_turn(t: int) -> Iterator[Event]:
    """One turn with every event and item type (valid in order), non-ASCII text included."""
    i = f"m{t}_"
    yield {
        "type": "turn.started",
        "token_breakdown": {
            "system_prompt_tokens": 100,
            "tool_schema_tokens": 50,
            "instruction_file_tokens": 10,
            "message_history_tokens": 7,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
            "cache_miss_tokens": 167,
        },
    }
    yield {"type": "permission.requested", "tool_name": "exec_command"}
    yield {
        "type": "permission.resolved",
        "tool_name": "exec_command",
        "decision": "allow",
        "wait_ms": 12,
    }
    yield {
        "type": "interjected",
        "source": "queue",
        "image_count": 0,
        "redirect_kind": "interjection",
    }
    yield {
        "type": "plan.delta",
        "thread_id": SID,
        "turn_id": f"turn_{t}",
        "item_id": i + "plan",
        "delta": "1. read — then écrire ✓",
    }
    yield {
        "type": "plan.approval.requested",
        "thread_id": SID,
        "turn_id": f"turn_{t}",
        "plan_file": "plan.md",
    }
    yield {
        "type": "plan.approval.resolved",
        "thread_id": SID,
        "turn_id": f"turn_{t}",
        "decision": "execute",
        "automatic": True,
    }
    items = [
        _item("plan", i + "plan", text="1. read — then écrire ✓"),
        _item("reasoning", i + "r", text="naïve café, 日本語 ok", stage="analysis"),
        _item(
            "tool_invocation",
            i + "ti",
            tool_name="grep",
            arguments=["-n", "todo", 3, 1.5],
            tool_call_id=f"c{t}",
            status="completed",
            outcome="success",
        ),
        _item(
            "tool_output",
            i + "ti:output",
            call_id=i + "ti",
            tool_call_id=f"c{t}",
            output="a.py:1: todo ✓\n",
            exit_code=0,
            status="completed",
        ),
        _item(
            "mcp_tool_call",
            i + "mcp",
            tool_name="docs.search",
            arguments={"q": "serde", "limit": 5, "nested": {"a": [1, 2, {"b": None}]}},
            result="3 hits",
            status="completed",
        ),
        _item(
            "web_search",
            i + "ws",
            query="serde flatten",
            provider="local",
            results=["https://serde.rs/attr-flatten.html"],
        ),
        _item(
            "file_change",
            i + "fc",
            changes=[{"path": "a.py", "kind": "update"}, {"path": "b.py", "kind": "add"}],
            status="completed",
        ),
        _item(
            "harness",
            i + "h",
            event="tool_latency_recorded",
            message="grep 3 ms",
            duration_ms=3,
            attempt=1,
        ),
        _item("error", i + "e", message="warning: ünïcode path"),
        _item("agent_message", i + "a", text="Done — 2 files changed ✓"),
    ]
    for it in items:
        yield {"type": "item.completed", "item": it}
    yield {
        "type": "context.reset",
        "thread_id": SID,
        "turn_id": f"turn_{t}",
        "trigger": "plan_approval",
        "plan_preserved": True,
        "previous_context_usage_percent": 63,
        "tool_budget_reset": True,
    }
    yield {"type": "error", "message": "transient: retrying"}
    yield {"type": "turn.completed", "usage": USAGE}


def _reverse(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _reverse(value[k]) for k in reversed(value)}
    if isinstance(value, list):
        return [_reverse(v) for v in value]
    return value


def _float_args(ev: Event) -> Event:
    item = ev.get("item")
    if isinstance(item, dict) and isinstance(item.get("arguments"), dict):
        item["arguments"] = {**item["arguments"], "timeout_s": 1.5, "temperature": 0.25}
    return ev


def _big_output(ev: Event) -> Event:
    item = ev.get("item")
    if isinstance(item, dict) and ev.get("type") == "item.completed":
        for key in ("output", "aggregated_output"):
            if key in item:
                item[key] = (item[key] + "x" * 8192)[:8192]
    return ev


def _mix(events: list[Event]) -> list[Event]:
    out: list[Event] = []
    turn = 0
    for ev in events:
        if ev["type"] == "turn.started" and turn % 4 == 0:
            out.extend(every_type_turn(turn))
        if ev["type"] == "turn.started":
            turn += 1
        out.append(ev)
    return out


def _compact(value: Any) -> bytes:
    return orjson.dumps(value)


def _python_default(value: Any) -> bytes:
    return json.dumps(value).encode()


Variant = tuple[str, Callable[[Event], Event] | None, Callable[[Any], bytes], bool]
# (name, event transform, encoder, vtcode envelope with seq/ts)
VARIANTS: list[Variant] = [
    ("vtcode", None, _compact, True),
    ("upstream", None, _compact, False),
    ("json.dumps defaults", None, _python_default, False),
    ("reordered keys", _reverse, _compact, False),
    ("floats in arguments", _float_args, _compact, False),
    ("8 KiB outputs", _big_output, _compact, False),
    ("every type, json.dumps", None, _python_default, False),
]


def write_variants(base: Path, folder: Path) -> list[tuple[str, Path, int]]:
    """`(label, path, lines)` for each variant of the wrapped log `base`, raw and wrapped."""
    records = [orjson.loads(line) for line in base.open("rb")]
    events = [r["event"] for r in records]
    version = records[0]["schema_version"]
    mixed = _mix(events)
    out: list[tuple[str, Path, int]] = []
    for name, transform, encode, envelope in VARIANTS:
        source = mixed if name.startswith("every type") else events
        for wrapped in (False, True):
            label = f"{name}, {'wrapped' if wrapped else 'raw'}"
            path = folder / (label.replace(" ", "_").replace(",", "") + ".jsonl")
            with path.open("wb", buffering=1 << 20) as f:
                for seq, ev in enumerate(source, 1):
                    ev = transform(orjson.loads(orjson.dumps(ev))) if transform else ev
                    if not wrapped:
                        line: Any = ev
                    elif envelope:
                        stamp = records[min(seq, len(records)) - 1].get("ts")
                        line = {"schema_version": version, "seq": seq, "ts": stamp, "event": ev}
                    else:
                        line = {"schema_version": version, "event": ev}
                    f.write(encode(line) + b"\n")
            out.append((label, path, len(source)))
    return out
