"""Extended thinking across a tool call, through the real CLI against a 127.0.0.1 Messages server.

The Messages API rejects a tool-use continuation whose assistant turn lacks the thinking blocks
it produced (with their signatures, and redacted_thinking with its data). These tests check that
vtcode sends them back verbatim and in order, keeps them in the transcript, and that
`exec resume` sends them again from the transcript alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from syrupy.assertion import SnapshotAssertion
from test_providers_config import exec_json, local_table, user_config

from tests.conftest import ScriptedReply, SSEServer
from tests.exec_support import SESSION, canonical_snapshot, vtcode
from tests.sdk_judge import judge_anthropic
from vtcode.messages import Message, ReasoningBlock, ToolCall
from vtcode.store.transcript import message_from_json, message_to_json

SIG = "EqQBCkYIARgCKkBsig+/opaque=="
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"


def _sse(*items: dict[str, Any]) -> ScriptedReply:
    body = "".join(f"event: {d['type']}\ndata: {json.dumps(d)}\n\n" for d in items)
    return ScriptedReply.sse_bytes(body.encode())


def _thinking_then_tool_use() -> ScriptedReply:
    return _sse(
        {"type": "message_start", "message": {"usage": {"input_tokens": 40}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "I should read "},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "the notes."},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": SIG},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "redacted_thinking", "data": REDACTED},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {
                "type": "tool_use",
                "id": "toolu_01",
                "name": "read_file",
                "input": {},
            },
        },
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": '{"path": "NOTES.md"}'},
        },
        {"type": "content_block_stop", "index": 2},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 30},
        },
        {"type": "message_stop"},
    )


def _text(answer: str) -> ScriptedReply:
    return _sse(
        {"type": "message_start", "message": {"usage": {"input_tokens": 80}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": answer},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 5},
        },
        {"type": "message_stop"},
    )


EXPECTED_ASSISTANT = [
    {"type": "thinking", "thinking": "I should read the notes.", "signature": SIG},
    {"type": "redacted_thinking", "data": REDACTED},
    {"type": "tool_use", "id": "toolu_01", "name": "read_file", "input": {"path": "NOTES.md"}},
]


def _assistant_with_tool_use(body: dict[str, Any]) -> list[dict[str, Any]]:
    (turn,) = [
        m["content"]
        for m in body["messages"]
        if m["role"] == "assistant" and any(b["type"] == "tool_use" for b in m["content"])
    ]
    assert isinstance(turn, list)
    return turn


def test_thinking_blocks_go_back_verbatim_and_survive_resume(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    (tmp_path / "NOTES.md").write_text("hello\n")
    user_config(tmp_path, local_table(sse_server, kind="anthropic"))
    sse_server.queue(_thinking_then_tool_use(), _text("The notes say hello."))
    code, events, stderr = exec_json(tmp_path, "Read NOTES.md", "--effort", "medium")
    assert code == 0, stderr
    first, second = sse_server.requests
    for seen in (first, second):
        judge_anthropic(seen.json())
    assert second.json()["thinking"]["type"] == "enabled"
    assert _assistant_with_tool_use(second.json()) == EXPECTED_ASSISTANT
    # the reasoning text still surfaces as a reasoning item
    reasoning = [e for e in events if e.get("item", {}).get("type") == "reasoning"]
    assert any(e["item"]["text"] == "I should read the notes." for e in reasoning)

    sse_server.queue(_text("Still hello."))
    proc = vtcode(
        [
            "exec",
            "resume",
            SESSION,
            "--json",
            "--provider",
            "local",
            "--effort",
            "medium",
            "And now?",
        ],
        tmp_path,
        env={"LOCAL_LLM_KEY": "sk-local-1234", "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""},
    )
    assert proc.returncode == 0, proc.stderr
    third = sse_server.requests[2].json()
    judge_anthropic(third)
    assert _assistant_with_tool_use(third) == EXPECTED_ASSISTANT
    log = tmp_path / ".vtcode" / "sessions" / SESSION / "events.jsonl"
    check = vtcode(["validate", str(log)], tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    assert canonical_snapshot(tmp_path) == snapshot_json


def test_transcript_round_trips_reasoning_blocks() -> None:
    m = Message(
        role="assistant",
        tool_calls=(ToolCall(id="c1", name="read_file", arguments="{}"),),
        reasoning_blocks=(
            ReasoningBlock(kind="thinking", text="t", signature=SIG),
            ReasoningBlock(kind="redacted_thinking", data=REDACTED),
            ReasoningBlock(kind="reasoning_item", id="rs_1", summary=("s",), data="enc"),
        ),
    )
    assert message_from_json(json.loads(json.dumps(message_to_json(m)))) == m
