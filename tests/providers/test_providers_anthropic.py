"""The Anthropic provider against a real HTTP server on 127.0.0.1 replaying Messages API SSE.

Asserts the request (headers, top-level system, tool_result blocks, thinking budget) and the
decoded stream (text, thinking + signature, tool_use by ordinal, usage in upstream's TOTAL-prompt
convention, stop reasons), plus error events, retries and failure classification.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from tests.conftest import ScriptedReply, SSEServer
from tests.sdk_judge import judge_requests
from vtcode.config.model import VtcodeConfig
from vtcode.errors import UsageError
from vtcode.events.types import Usage
from vtcode.messages import (
    Message,
    ModelRequest,
    ResponseCompleted,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolSpec,
)
from vtcode.providers.anthropic import AnthropicProvider, convert_messages
from vtcode.providers.base import FailureKind, ProviderError
from vtcode.providers.collect import collect
from vtcode.providers.registry import make_provider
from vtcode.providers.retry import RetryPolicy

FAST = RetryPolicy(max_retries=2, base_delay=0.001, max_delay=0.002)
MODEL = "claude-sonnet-4-20250514"


@pytest.fixture
def claude(sse_server: SSEServer) -> Iterator[AnthropicProvider]:
    p = AnthropicProvider(model=MODEL, base_url=sse_server.url, api_key="sk-ant-test", retry=FAST)
    yield p
    p.close()


@pytest.fixture(autouse=True)
def _sdk_judges_every_body(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test, every body the test server saw must satisfy the official SDK's types."""
    server = None
    if "sse_server" in request.fixturenames:  # taken now, so it is torn down after this
        server = request.getfixturevalue("sse_server")
    yield
    if isinstance(server, SSEServer):
        judge_requests((r.path, r.json()) for r in server.requests if r.body)


def req(*messages: Message, **kw: Any) -> ModelRequest:
    return ModelRequest(
        model=MODEL, messages=messages or (Message(role="user", content="Hello"),), **kw
    )


def events(*items: tuple[str, dict[str, Any]]) -> ScriptedReply:
    body = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in items)
    return ScriptedReply.sse_bytes(body.encode())


def message_with_stop(stop: str) -> ScriptedReply:
    return events(
        ("message_start", {"type": "message_start", "message": {"usage": {"input_tokens": 3}}}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop}}),
        ("message_stop", {"type": "message_stop"}),
    )


def error_of(stream: Iterator[StreamEvent], got: list[StreamEvent] | None = None) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        for e in stream:
            if got is not None:
                got.append(e)
    return info.value


@pytest.mark.parametrize("chunk_size", [None, 3])
def test_text_stream_headers_and_body(
    sse_server: SSEServer, claude: AnthropicProvider, chunk_size: int | None
) -> None:
    sse_server.queue(ScriptedReply.sse_file("anthropic_text.sse", chunk_size))
    got = list(claude.stream(req()))
    assert collect(got).text == "Hello! How can I help you today?"
    assert got[-1] == ResponseCompleted("end_turn", Usage(input_tokens=472, output_tokens=15))
    (seen,) = sse_server.requests
    assert seen.path == "/v1/messages"
    assert seen.headers["x-api-key"] == "sk-ant-test"
    assert seen.headers["anthropic-version"] == "2023-06-01"
    assert seen.headers["content-type"] == "application/json"
    assert seen.json() == {
        "model": MODEL,
        "max_tokens": 8192,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hello"}]}],
        "stream": True,
    }


def test_tool_use_usage_and_history_mapping(
    sse_server: SSEServer, claude: AnthropicProvider, snapshot_json: SnapshotAssertion
) -> None:
    sse_server.queue(ScriptedReply.sse_file("anthropic_tool_use.sse", 17))
    history = (
        Message(role="system", content="You are vtcode."),
        Message(role="user", content="Weather in SF, and list files"),
        Message(
            role="assistant",
            content="Checking.",
            tool_calls=(
                ToolCall(id="toolu_a", name="get_weather", arguments='{"location":"SF"}'),
                ToolCall(id="toolu_b", name="broken", arguments='{"oops'),
            ),
        ),
        Message(role="tool", tool_call_id="toolu_a", content="68F"),
        Message(role="tool", tool_call_id="toolu_b", content=""),
        Message(role="user", content="steering: use fahrenheit"),
        Message(role="system", content="Previous conversation summary: none"),
    )
    spec = ToolSpec(name="get_weather", description="Weather", parameters={"type": "object"})
    got = list(claude.stream(req(*history, tools=(spec,), max_output_tokens=1000)))
    result = collect(got)
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [
        (
            "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
            "get_weather",
            '{"location": "San Francisco, CA", "unit": "fahrenheit"}',
        ),
        ("toolu_02NoArgs", "list_files", "{}"),
    ]
    assert all(e.index in (0, 1) for e in got if isinstance(e, ToolCallDelta))
    assert result.text == "Okay, let's check the weather for San Francisco, CA:"
    assert result.stop_reason == "tool_calls"
    assert result.usage == Usage(
        input_tokens=24 + 3000 + 1200,
        cached_input_tokens=3000,
        cache_creation_tokens=1200,
        output_tokens=89,
    )
    body = sse_server.requests[0].json()
    assert body["system"] == "You are vtcode.\n\nPrevious conversation summary: none"
    assert body["tools"] == [
        {"name": "get_weather", "description": "Weather", "input_schema": {"type": "object"}}
    ]
    assert body == snapshot_json(name="request")


def test_thinking_budget_signature_and_replayed_thinking(
    sse_server: SSEServer, claude: AnthropicProvider
) -> None:
    sse_server.queue(ScriptedReply.sse_file("anthropic_thinking.sse", 29))
    prior = Message(
        role="assistant",
        content="",
        reasoning="earlier thought",
        reasoning_signature="sig-1",
        tool_calls=(ToolCall(id="toolu_x", name="t", arguments="{}"),),
    )
    history = (
        Message(role="user", content="27 * 453?"),
        prior,
        Message(role="tool", tool_call_id="toolu_x", content="ok"),
    )
    got = list(claude.stream(req(*history, reasoning_effort="medium")))
    result = collect(got)
    assert result.reasoning.startswith("Let me solve this step by step")
    assert result.text == "27 * 453 = 12,231"
    assert result.reasoning_signature == "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
    body = sse_server.requests[0].json()
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert body["max_tokens"] == 8192 + 8192
    assert body["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "earlier thought",
        "signature": "sig-1",
    }


@pytest.mark.parametrize(
    ("raw", "stop"),
    [
        ("end_turn", "end_turn"),
        ("tool_use", "tool_calls"),
        ("max_tokens", "max_tokens"),
        ("pause_turn", "pause_turn"),
        ("refusal", "refusal"),
        ("stop_sequence", "end_turn"),
        ("model_context_window_exceeded", "model_context_window_exceeded"),
    ],
)
def test_stop_reasons(
    sse_server: SSEServer, claude: AnthropicProvider, raw: str, stop: str
) -> None:
    sse_server.queue(message_with_stop(raw))
    assert collect(claude.stream(req())).stop_reason == stop


def test_overloaded_error_event_before_any_delta_is_retried(
    sse_server: SSEServer, claude: AnthropicProvider
) -> None:
    sse_server.queue(
        ScriptedReply.sse_file("anthropic_error_first.sse"),
        ScriptedReply.sse_file("anthropic_text.sse"),
    )
    assert collect(claude.stream(req())).text == "Hello! How can I help you today?"
    assert len(sse_server.requests) == 2


def test_error_event_after_a_delta_is_transient_and_not_retried(
    sse_server: SSEServer, claude: AnthropicProvider
) -> None:
    sse_server.queue(ScriptedReply.sse_file("anthropic_error_overloaded.sse"))
    got: list[StreamEvent] = []
    err = error_of(claude.stream(req()), got)
    assert err.kind is FailureKind.TRANSIENT
    assert err.message == "anthropic server error (overloaded_error): Overloaded"
    assert got == [TextDelta("Hel")]
    assert len(sse_server.requests) == 1


def test_529_overloaded_status_is_retried_until_the_limit(
    sse_server: SSEServer, claude: AnthropicProvider
) -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    sse_server.queue(*[ScriptedReply.json(529, body) for _ in range(3)])
    err = error_of(claude.stream(req()))
    assert err.message == ("anthropic server error (HTTP 529): Overloaded (after 3 attempts)")
    assert len(sse_server.requests) == 3


@pytest.mark.parametrize(
    ("status", "etype", "text", "kind", "message"),
    [
        (
            401,
            "authentication_error",
            "invalid x-api-key",
            FailureKind.FATAL,
            "authentication failed for anthropic (check ANTHROPIC_API_KEY): invalid x-api-key",
        ),
        (
            400,
            "invalid_request_error",
            "prompt is too long: 210455 tokens > 200000 maximum",
            FailureKind.CONTEXT_LENGTH,
            "context length exceeded for anthropic (HTTP 400): prompt is too long: "
            "210455 tokens > 200000 maximum",
        ),
        (
            404,
            "not_found_error",
            f"model: {MODEL}",
            FailureKind.FATAL,
            f"model '{MODEL}' not found at anthropic (HTTP 404): model: {MODEL}",
        ),
        (
            429,
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute rate limit",
            FailureKind.TRANSIENT,
            "rate limited by anthropic (HTTP 429): Number of request tokens",
        ),
    ],
)
def test_status_errors(
    sse_server: SSEServer,
    status: int,
    etype: str,
    text: str,
    kind: FailureKind,
    message: str,
) -> None:
    p = AnthropicProvider(
        model=MODEL, base_url=sse_server.url, api_key="k", retry=RetryPolicy(max_retries=0)
    )
    body = {"type": "error", "error": {"type": etype, "message": text}}
    sse_server.queue(
        ScriptedReply.json(status, body, {"request-id": "req_011CSHoEeqs5C35K2UUqR7Fy"})
    )
    err = error_of(p.stream(req()))
    assert (err.kind, err.status) == (kind, status)
    assert err.message.startswith(message)
    p.close()


def test_stream_without_message_stop_is_transient(sse_server: SSEServer) -> None:
    p = AnthropicProvider(
        model=MODEL, base_url=sse_server.url, api_key="k", retry=RetryPolicy(max_retries=0)
    )
    raw = (Path(__file__).parents[1] / "fixtures" / "sse" / "anthropic_text.sse").read_bytes()
    sse_server.queue(ScriptedReply(chunks=[raw[: raw.index(b"event: message_stop")]]))
    err = error_of(p.stream(req()))
    assert (err.kind, err.message) == (
        FailureKind.TRANSIENT,
        "anthropic stream ended before message_stop",
    )
    p.close()


def test_mid_stream_disconnect(sse_server: SSEServer, claude: AnthropicProvider) -> None:
    raw = (Path(__file__).parents[1] / "fixtures" / "sse" / "anthropic_text.sse").read_bytes()
    cut = raw.index(b"event: content_block_stop")
    sse_server.queue(ScriptedReply(chunks=[raw[:cut]], disconnect=True))
    got: list[StreamEvent] = []
    err = error_of(claude.stream(req()), got)
    assert err.kind is FailureKind.TRANSIENT
    assert "broke mid-response" in err.message
    assert collect(got).text == "Hello! How can I help you today?"
    assert len(sse_server.requests) == 1


def test_malformed_event_data_is_fatal(sse_server: SSEServer, claude: AnthropicProvider) -> None:
    sse_server.queue(ScriptedReply.sse_bytes(b"event: message_start\ndata: {oops\n\n"))
    err = error_of(claude.stream(req()))
    assert err.kind is FailureKind.FATAL
    assert err.message.startswith("malformed stream from anthropic")


def test_unknown_effort_is_fatal_and_key_is_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with pytest.raises(UsageError) as info:
        make_provider(
            "anthropic", config=VtcodeConfig(), model=MODEL, script=None, workspace=Path(".")
        )
    assert info.value.message == (
        "ANTHROPIC_API_KEY is not set (needed for anthropic at https://api.anthropic.com)"
    )
    p = AnthropicProvider(model=MODEL, api_key="k")
    with pytest.raises(ProviderError, match="unknown reasoning effort 'extreme'"):
        p.body(req(reasoning_effort="extreme"))
    assert p.pricing is not None and p.pricing.cache_write_per_mtok == 3.75
    assert p.context_window == 200_000
    p.close()


def test_tool_results_come_first_when_merged_with_user_text() -> None:
    system, messages = convert_messages(
        (
            Message(role="user", content="go"),
            Message(role="assistant", tool_calls=(ToolCall(id="a", name="t", arguments="{}"),)),
            Message(role="user", content="(steer)"),
            Message(role="tool", tool_call_id="a", content="done"),
        )
    )
    assert system == ""
    assert messages[-1] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "a", "content": "done"},
            {"type": "text", "text": "(steer)"},
        ],
    }
