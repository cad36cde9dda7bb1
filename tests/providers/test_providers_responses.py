"""The OpenAI Responses provider through the real CLI against a 127.0.0.1 server speaking the
Responses SSE byte format, with the official SDK judging every request body and reading every
fixture stream.

What users rely on: a tool-call turn's reasoning item (with its encrypted content) and the
function_call / function_call_output pair go back on the next request, as a stateless
(`store: false`) conversation requires; usage and the stop reason map right; a reply cut by the
output cap and a failed response end with their documented outcomes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from openai.types.responses import ResponseStreamEvent
from openai.types.responses.response_create_params import ResponseCreateParamsStreaming
from pydantic import TypeAdapter
from syrupy.assertion import SnapshotAssertion
from test_providers_config import FULL_HARNESS, exec_json, local_table, user_config

from tests.conftest import SSE_FIXTURES, ScriptedReply, SSEServer
from tests.exec_support import SESSION, canonical_snapshot, vtcode
from vtcode.messages import Message, ModelRequest, ReasoningBlock, ToolCall
from vtcode.providers.base import FailureKind, ProviderError
from vtcode.providers.collect import collect
from vtcode.providers.openai_responses import OpenAIResponsesProvider
from vtcode.providers.pricing import context_window_for, pricing_for
from vtcode.providers.retry import RetryPolicy

ENC = "gAAAAABpQ3rS-opaque-encrypted-reasoning=="
SUMMARY = "**Reading notes**\n\nI should read NOTES.md."
_BODY = TypeAdapter(ResponseCreateParamsStreaming)
_EVENT: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
FIXTURES = sorted(p.name for p in SSE_FIXTURES.glob("responses_*.sse"))


def judge_responses(body: Any) -> None:
    """The SDK's own parameter type, strictly; unknown top-level keys are checked by name."""
    known = ResponseCreateParamsStreaming.__required_keys__
    known |= ResponseCreateParamsStreaming.__optional_keys__
    assert not sorted(set(body) - known), body
    _BODY.validate_python(body, strict=True)


@pytest.fixture(autouse=True)
def _sdk_judges_every_body(request: pytest.FixtureRequest) -> Iterator[None]:
    server = None
    if "sse_server" in request.fixturenames:
        server = request.getfixturevalue("sse_server")
    yield
    if isinstance(server, SSEServer):
        for seen in server.requests:
            assert seen.path == "/v1/responses"
            judge_responses(seen.json())


def _responses_table(server: SSEServer) -> str:
    return local_table(server, kind="openai-responses").replace(
        f'base_url = "{server.url}"', f'base_url = "{server.url}/v1"'
    )


@pytest.mark.parametrize("fixture", FIXTURES)
def test_fixtures_are_events_the_sdk_parses(fixture: str) -> None:
    """Every data line of every fixture is a `ResponseStreamEvent` of the SDK, in sequence."""
    blocks = (SSE_FIXTURES / fixture).read_text().split("\n\n")
    events = [_EVENT.validate_json(b.split("data: ", 1)[1]) for b in blocks if b.strip()]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert events[-1].type in ("response.completed", "response.incomplete", "response.failed")


def _sdk_read(server: SSEServer, fixture: str) -> tuple[str, str, Any]:
    """(text, function arguments, final response) as the SDK's own Stream reads the fixture."""
    server.queue(ScriptedReply.sse_file(fixture, 11))
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="sk-x", max_retries=0)
    text, args, final = "", "", None
    with client.responses.create(model="gpt-5-mini", input="x", stream=True) as stream:
        for event in stream:
            if event.type == "response.output_text.delta":
                text += event.delta
            elif event.type == "response.function_call_arguments.delta":
                args += event.delta
            elif event.type in ("response.completed", "response.incomplete"):
                final = event.response
    client.close()
    return text, args, final


@pytest.mark.parametrize(
    ("fixture", "stop"),
    [
        ("responses_reasoning_tool_call.sse", "tool_calls"),
        ("responses_text.sse", "end_turn"),
        ("responses_incomplete.sse", "max_tokens"),
    ],
)
def test_streams_read_as_the_sdk_reads_them(sse_server: SSEServer, fixture: str, stop: str) -> None:
    text, args, final = _sdk_read(sse_server, fixture)
    sse_server.queue(ScriptedReply.sse_file(fixture, 7))
    p = OpenAIResponsesProvider(model="gpt-5-mini", base_url=sse_server.url + "/v1", api_key="k")
    try:
        got = collect(list(p.stream(ModelRequest(model="gpt-5-mini", messages=(USER,)))))
    finally:
        p.close()
    assert got.text == text
    assert "".join(c.arguments for c in got.tool_calls) == args
    assert got.stop_reason == stop
    assert got.usage.input_tokens == final.usage.input_tokens
    assert got.usage.cached_input_tokens == final.usage.input_tokens_details.cached_tokens
    assert got.usage.output_tokens == final.usage.output_tokens


USER = Message(role="user", content="Read NOTES.md")


def test_history_maps_to_input_items_in_order(sse_server: SSEServer) -> None:
    """System -> instructions; reasoning items verbatim before their function calls; an item
    without encrypted content is not sent (store: false could not resolve it by id)."""
    history = (
        Message(role="system", content="Be brief."),
        USER,
        Message(
            role="assistant",
            content="Reading.",
            tool_calls=(ToolCall(id="call_01", name="read_file", arguments='{"path":"N"}'),),
            reasoning_blocks=(
                ReasoningBlock(kind="reasoning_item", id="rs_01", summary=("s1",), data=ENC),
                ReasoningBlock(kind="reasoning_item", id="rs_02"),  # no encrypted content
                ReasoningBlock(kind="thinking", text="not ours", signature="sig"),
            ),
        ),
        Message(role="tool", tool_call_id="call_01", content="hello"),
    )
    p = OpenAIResponsesProvider(model="gpt-5-mini", base_url=sse_server.url + "/v1", api_key="k")
    body = p.body(ModelRequest(model="gpt-5-mini", messages=history, reasoning_effort="low"))
    p.close()
    judge_responses(body)
    assert body["instructions"] == "Be brief."
    assert body["input"] == [
        {"role": "user", "content": "Read NOTES.md"},
        {
            "type": "reasoning",
            "id": "rs_01",
            "summary": [{"type": "summary_text", "text": "s1"}],
            "encrypted_content": ENC,
        },
        {"role": "assistant", "content": "Reading."},
        {
            "type": "function_call",
            "call_id": "call_01",
            "name": "read_file",
            "arguments": '{"path":"N"}',
        },
        {"type": "function_call_output", "call_id": "call_01", "output": "hello"},
    ]
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}
    assert body["max_output_tokens"] == 8192 + 2048  # the cap plus the effort's reasoning budget


def test_tool_call_turn_sends_reasoning_and_call_back_through_the_cli(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    (tmp_path / "NOTES.md").write_text("hello\n")
    user_config(tmp_path, FULL_HARNESS + _responses_table(sse_server))  # tool specs sent
    sse_server.queue(
        ScriptedReply.sse_file("responses_reasoning_tool_call.sse", 97),
        ScriptedReply.sse_file("responses_text.sse", 97),
    )
    code, events, stderr = exec_json(tmp_path, "Read NOTES.md", "--effort", "medium")
    assert code == 0, stderr
    first, second = (r.json() for r in sse_server.requests)
    assert sse_server.requests[0].headers["authorization"] == "Bearer sk-local-1234"
    for body in (first, second):
        assert body["stream"] is True and body["store"] is False
        assert body["include"] == ["reasoning.encrypted_content"]
        assert body["reasoning"] == {"effort": "medium", "summary": "auto"}
        assert body["max_output_tokens"] == 256 + 8192  # the table's cap + medium's budget
        assert {t["name"] for t in body["tools"]} >= {"read_file"}
    assert first["input"] == [{"role": "user", "content": "Read NOTES.md"}]
    reasoning, call, output = second["input"][1:4]  # (then the full harness's decision ledger)
    assert reasoning == {
        "type": "reasoning",
        "id": "rs_01",
        "summary": [{"type": "summary_text", "text": SUMMARY}],
        "encrypted_content": ENC,
    }
    assert call == {
        "type": "function_call",
        "call_id": "call_01",
        "name": "read_file",
        "arguments": '{"path":"NOTES.md"}',
    }
    assert output["type"] == "function_call_output" and output["call_id"] == "call_01"
    assert "hello" in output["output"]
    turns = [e for e in events if e["type"] == "turn.completed"]
    assert [t["usage"]["input_tokens"] for t in turns] == [120, 200], turns
    assert [t["usage"]["cached_input_tokens"] for t in turns] == [64, 128]
    assert [t["usage"]["output_tokens"] for t in turns] == [48, 6]
    assert events[-1]["type"] == "thread.completed" and events[-1]["subtype"] == "success"
    assert any(e.get("item", {}).get("text") == SUMMARY for e in events)  # the summary streamed
    log = tmp_path / ".vtcode" / "sessions" / SESSION / "events.jsonl"
    check = vtcode(["validate", "--strict", str(log)], tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    assert canonical_snapshot(tmp_path) == snapshot_json

    # exec resume rebuilds the history from the transcript alone: the reasoning item goes again
    sse_server.queue(ScriptedReply.sse_file("responses_text.sse"))
    proc = vtcode(
        ["exec", "resume", SESSION, "--json", "--provider", "local", "--effort", "medium", "More?"],
        tmp_path,
        env={"LOCAL_LLM_KEY": "sk-local-1234", "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""},
    )
    assert proc.returncode == 0, proc.stderr
    third = sse_server.requests[2].json()
    assert third["input"][1:4] == [reasoning, call, output]


def test_reply_cut_by_the_output_cap_ends_max_output_tokens(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    user_config(tmp_path, _responses_table(sse_server))
    sse_server.queue(ScriptedReply.sse_file("responses_incomplete.sse"))
    code, events, stderr = exec_json(tmp_path, "Tell a story.")
    assert code == 1, stderr
    assert "max_output_tokens" in json.dumps(events)
    log = tmp_path / ".vtcode" / "sessions" / SESSION / "events.jsonl"
    check = vtcode(["validate", "--strict", str(log)], tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    assert canonical_snapshot(tmp_path) == snapshot_json


def test_failed_response_is_a_classified_provider_failure(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    user_config(tmp_path, _responses_table(sse_server))
    sse_server.queue(ScriptedReply.sse_file("responses_failed.sse"))
    code, events, stderr = exec_json(tmp_path, "Hi", "-c", "agent.max_task_retries=0")
    assert code == 1, stderr
    assert "openai-responses server error (server_error)" in json.dumps(events)
    log = tmp_path / ".vtcode" / "sessions" / SESSION / "events.jsonl"
    check = vtcode(["validate", "--strict", str(log)], tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    assert canonical_snapshot(tmp_path) == snapshot_json


@pytest.mark.parametrize(
    ("data", "kind", "text"),
    [
        (
            {"type": "error", "code": "rate_limit_exceeded", "message": "slow down"},
            FailureKind.TRANSIENT,
            "rate limited by openai-responses (rate_limit_exceeded): slow down",
        ),
        (
            {"type": "error", "code": "context_length_exceeded", "message": "too long"},
            FailureKind.CONTEXT_LENGTH,
            "context length exceeded for openai-responses (context_length_exceeded): too long",
        ),
    ],
)
def test_error_events_are_classified(
    sse_server: SSEServer, data: dict[str, Any], kind: FailureKind, text: str
) -> None:
    raw = f"event: error\ndata: {json.dumps({**data, 'sequence_number': 0})}\n\n".encode()
    _EVENT.validate_json(raw.decode().split("data: ", 1)[1])
    sse_server.queue(ScriptedReply.sse_bytes(raw))
    p = OpenAIResponsesProvider(
        model="gpt-5-mini",
        base_url=sse_server.url + "/v1",
        api_key="k",
        retry=RetryPolicy(max_retries=0),
    )
    try:
        with pytest.raises(ProviderError) as caught:
            list(p.stream(ModelRequest(model="gpt-5-mini", messages=(USER,))))
    finally:
        p.close()
    assert caught.value.kind is kind
    assert caught.value.message == text


def test_known_openai_models_keep_their_price_and_window(sse_server: SSEServer) -> None:
    """The Responses API serves the Chat Completions models: same price table, same window."""
    p = OpenAIResponsesProvider(model="gpt-4o-2024-08-06", base_url=sse_server.url, api_key="k")
    p.close()
    assert p.pricing == pricing_for("openai", "gpt-4o")
    assert p.pricing is not None
    assert p.context_window == context_window_for("openai", "gpt-4o") == 128_000
