"""One response with 200,000 tool calls (issue 23 item 9), from a real HTTP server on 127.0.0.1
speaking OpenAI chat-completions SSE to the real CLI.

Calls past the per-turn cap are counted, not recorded: the first `max_tool_calls_per_turn` are
recorded and answered, the rest give one `error` item naming how many were dropped. The run ends
cleanly, the log stays small, peak RSS stays bounded (measured in a child with `resource`), and
`vtcode validate` accepts the log. A small case (cap 3, 10 calls) is snapshot with syrupy, every
line validated against the thread-event schema.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ScriptedReply, SSEServer
from tests.exec_support import normalise, raw_events, vtcode


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-flood",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body, separators=(",", ":")).encode() + b"\n\n"


def flood(calls: int) -> bytes:
    """One response: a little text, then `calls` list_files calls, each its own chunk."""
    parts = [_chunk({"role": "assistant", "content": "Listing everything."})]
    for i in range(calls):
        call = {
            "index": i,
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": "list_files", "arguments": '{"path":"."}'},
        }
        parts.append(_chunk({"tool_calls": [call]}))
    parts.append(_chunk({}, "tool_calls"))
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    parts.append(b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n")
    return b"".join(parts) + b"data: [DONE]\n\n"


def answer(text: str) -> bytes:
    return _chunk({"role": "assistant", "content": text}) + _chunk({}, "stop") + b"data: [DONE]\n\n"


def _sse(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def _message_start(mid: str) -> bytes:
    usage = {"input_tokens": 10, "output_tokens": 1}
    message = {"id": mid, "type": "message", "role": "assistant", "model": "m", "content": []}
    return _sse("message_start", {"type": "message_start", "message": {**message, "usage": usage}})


def _message_end(stop: str) -> bytes:
    delta = {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 5}}
    return _sse("message_delta", delta) + _sse("message_stop", {"type": "message_stop"})


def anthropic_flood(calls: int) -> bytes:
    """Anthropic Messages SSE: `calls` tool_use blocks, each start, input delta and stop."""
    parts = [_message_start("m1")]
    for i in range(calls):
        block = {"type": "tool_use", "id": f"toolu_{i}", "name": "list_files", "input": {}}
        parts.append(
            _sse(
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": block},
            )
        )
        delta = {"type": "input_json_delta", "partial_json": '{"path":"."}'}
        parts.append(
            _sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta})
        )
        parts.append(_sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    return b"".join(parts) + _message_end("tool_use")


def anthropic_answer(text: str) -> bytes:
    start = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }
    delta = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": text},
    }
    return (
        _message_start("m2")
        + _sse("content_block_start", start)
        + _sse("content_block_delta", delta)
        + _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
        + _message_end("end_turn")
    )


def _completed(rid: str) -> bytes:
    usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
    response = {"id": rid, "status": "completed", "output": [], "usage": usage}
    return _sse("response.completed", {"type": "response.completed", "response": response})


def responses_flood(calls: int) -> bytes:
    """OpenAI Responses SSE: `calls` function_call items, each added, argued and done."""
    parts = []
    for i in range(calls):
        item = {
            "type": "function_call",
            "id": f"fc_{i}",
            "call_id": f"call_{i}",
            "name": "list_files",
        }
        added = {
            "type": "response.output_item.added",
            "output_index": i,
            "item": {**item, "arguments": ""},
        }
        parts.append(_sse("response.output_item.added", added))
        delta = {
            "type": "response.function_call_arguments.delta",
            "output_index": i,
            "delta": '{"path":"."}',
        }
        parts.append(_sse("response.function_call_arguments.delta", delta))
        done = {
            "type": "response.output_item.done",
            "output_index": i,
            "item": {**item, "arguments": '{"path":"."}'},
        }
        parts.append(_sse("response.output_item.done", done))
    return b"".join(parts) + _completed("r1")


def responses_answer(text: str) -> bytes:
    delta = {"type": "response.output_text.delta", "output_index": 0, "delta": text}
    return _sse("response.output_text.delta", delta) + _completed("r2")


FORMATS = {
    "openai": (flood, answer),
    "anthropic": (anthropic_flood, anthropic_answer),
    "openai-responses": (responses_flood, responses_answer),
}


def _env(server: SSEServer) -> dict[str, str]:
    return {
        "OPENAI_API_KEY": "sk-test-flood",
        "OPENAI_BASE_URL": server.url + "/v1",
        "ANTHROPIC_API_KEY": "sk-ant-test-flood",
        "ANTHROPIC_BASE_URL": server.url,
    }


def _args(provider: str) -> list[str]:
    return ["exec", "--provider", provider, "--model", "m", "--json", "--session-id", "s1"]


def _error_items(events: list[dict[str, Any]]) -> list[str]:
    return [
        e["item"]["message"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "error"
    ]


@pytest.mark.parametrize("provider", sorted(FORMATS))
def test_200k_tool_calls_are_counted_not_recorded(
    tmp_path: Path, sse_server: SSEServer, provider: str
) -> None:
    make_flood, make_answer = FORMATS[provider]
    body = make_flood(200_000)
    sse_server.queue(
        ScriptedReply.sse_bytes(body, 64 * 1024), ScriptedReply.sse_bytes(make_answer("ok"))
    )
    probe = (
        "import json, resource, subprocess, sys, time\n"
        "t = time.monotonic()\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(json.dumps({'rc': p.returncode, 'out': p.stdout, 'err': p.stderr,"
        " 'rss_kb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,"
        " 'secs': time.monotonic() - t}))\n"
    )
    env = {**os.environ, "NO_COLOR": "1", "VTCODE_HOME": str(tmp_path / "home"), **_env(sse_server)}
    done = subprocess.run(
        [sys.executable, "-c", probe, sys.executable, "-m", "vtcode", *_args(provider), "go"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    run = json.loads(done.stdout)
    assert run["rc"] == 0, run["err"][-2000:]
    events = raw_events(run["out"])
    log = tmp_path / ".vtcode" / "sessions" / "s1" / "events.jsonl"
    size = log.stat().st_size
    print(
        f"{provider} 200k calls: {len(body)} bytes streamed, {run['secs']:.1f} s, "
        f"peak RSS {run['rss_kb'] // 1024} MiB, log {size} bytes, {len(events)} events"
    )
    invocations = [
        e
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "tool_invocation"
    ]
    assert len(invocations) == 120  # the default per-turn cap
    assert _error_items(events) == [
        "the response asked for 200000 tool calls; the first 120 are handled and 199880 were "
        "dropped without running (tool call limit per response: 120)"
    ]
    assert events[-1]["type"] == "thread.completed" and events[-1]["subtype"] == "success"
    assert size < 1_000_000  # was 170 MB
    assert run["rss_kb"] < 200 * 1024  # was 273 MB
    # The model was answered for the calls it got: 120 results in the second request.
    second = sse_server.requests[1].body
    assert second.count(b"tool call limit") == 0
    prefix = b"toolu_" if provider == "anthropic" else b"call_"
    assert second.count(prefix + b"119") >= 2 and prefix + b"120" not in second
    checked = vtcode(["validate", str(log)], tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_small_flood_event_sequence(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: Any
) -> None:
    sse_server.queue(ScriptedReply.sse_bytes(flood(10)), ScriptedReply.sse_bytes(answer("done")))
    args = ["-c", "agent.harness.max_tool_calls_per_turn=3", *_args("openai"), "go"]
    proc = vtcode(args, tmp_path, env=_env(sse_server))
    assert proc.returncode == 0, proc.stderr
    events = raw_events(proc.stdout)  # each line valid against the thread-event schema
    assert _error_items(events) == [
        "the response asked for 10 tool calls; the first 3 are handled and 7 were dropped "
        "without running (tool call limit per response: 3)"
    ]
    assert [normalise(e, tmp_path) for e in events] == snapshot_json
    log = tmp_path / ".vtcode" / "sessions" / "s1" / "events.jsonl"
    assert vtcode(["validate", str(log)], tmp_path).returncode == 0


def test_the_accumulator_keeps_a_bounded_number_of_calls() -> None:
    """`--record` and other collectors read the stream to its end but keep at most
    MAX_COLLECTED_CALLS calls."""
    from vtcode.events.types import Usage
    from vtcode.messages import ResponseCompleted, ToolCallDelta
    from vtcode.providers.collect import MAX_COLLECTED_CALLS, ResponseAccumulator

    acc = ResponseAccumulator()
    for i in range(MAX_COLLECTED_CALLS + 500):
        acc.add(ToolCallDelta(i, id=f"c{i}", name="list_files", arguments="{"))
        acc.add(ToolCallDelta(i, arguments="}"))
    acc.add(ResponseCompleted(stop_reason="tool_calls", usage=Usage()))
    result = acc.result()
    assert len(result.tool_calls) == MAX_COLLECTED_CALLS
    assert result.tool_calls[-1].arguments == "{}"
    assert acc.dropped_calls == 500
    assert result.stop_reason == "tool_calls"
