"""The OpenAI-compatible provider against a real HTTP server on 127.0.0.1 replaying the API's SSE.

What users rely on: the exact request (headers, body mapping of messages and tools, stream flags),
the stream events (text, reasoning, tool calls by index, usage, mapped stop reasons), retries
before the first delta only, and one clear, classified line for every failure.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from syrupy.assertion import SnapshotAssertion

from tests.conftest import ScriptedReply, SSEServer
from tests.sdk_judge import judge_requests
from vtcode.config.model import AgentConfig, VtcodeConfig
from vtcode.errors import ExitCode, UsageError
from vtcode.events.types import Usage
from vtcode.jsontypes import encode
from vtcode.messages import (
    Message,
    ModelRequest,
    ReasoningDelta,
    ResponseCompleted,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolSpec,
)
from vtcode.providers.anthropic import AnthropicProvider
from vtcode.providers.base import FailureKind, ProviderError
from vtcode.providers.collect import collect
from vtcode.providers.openai import OpenAIProvider, map_finish_reason
from vtcode.providers.openai_responses import OpenAIResponsesProvider
from vtcode.providers.registry import make_provider
from vtcode.providers.retry import RetryPolicy

FAST = RetryPolicy(max_retries=2, base_delay=0.001, max_delay=0.002)
USER = Message(role="user", content="Say hello")


@pytest.fixture
def openai(sse_server: SSEServer) -> Iterator[OpenAIProvider]:
    p = make(sse_server)
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


def make(server: SSEServer, **kw: Any) -> OpenAIProvider:
    kw.setdefault("retry", FAST)
    kw.setdefault("api_key", "sk-test")
    return OpenAIProvider(model="gpt-4o-mini", base_url=f"{server.url}/v1", **kw)


def req(*messages: Message, **kw: Any) -> ModelRequest:
    return ModelRequest(model="gpt-4o-mini", messages=messages or (USER,), **kw)


def error_of(events: Iterator[StreamEvent], got: list[StreamEvent] | None = None) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        for e in events:
            if got is not None:
                got.append(e)
    return info.value


def sse(*chunks: dict[str, Any] | str) -> ScriptedReply:
    import json

    body = "".join(c if isinstance(c, str) else "data: " + json.dumps(c) + "\n\n" for c in chunks)
    return ScriptedReply.sse_bytes(body.encode())


def delta(d: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": d, "finish_reason": finish}]}


# ---- the happy paths --------------------------------------------------------------------


@pytest.mark.parametrize("chunk_size", [None, 1, 7])
def test_text_stream_and_request_shape(
    sse_server: SSEServer, openai: OpenAIProvider, chunk_size: int | None
) -> None:
    sse_server.queue(ScriptedReply.sse_file("openai_text.sse", chunk_size))
    events = list(openai.stream(req()))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == (
        "Hello! How can I help you today?"
    )
    assert events[-1] == ResponseCompleted(
        "end_turn", Usage(input_tokens=1117, cached_input_tokens=1024, output_tokens=46)
    )
    (seen,) = sse_server.requests
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == "Bearer sk-test"
    assert seen.headers["content-type"] == "application/json"
    assert seen.headers["accept"] == "text/event-stream"
    assert seen.json() == {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "Say hello"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 8192,  # the default output cap, on every request
    }


def test_tool_call_history_tools_and_parallel_tool_call_deltas(
    sse_server: SSEServer, openai: OpenAIProvider, snapshot_json: SnapshotAssertion
) -> None:
    sse_server.queue(ScriptedReply.sse_file("openai_tool_calls.sse", 11))
    history = (
        Message(role="system", content="You are vtcode."),
        Message(role="user", content="What is here?"),
        Message(
            role="assistant",
            content="",
            tool_calls=(ToolCall(id="call_1", name="list_files", arguments='{"path":"."}'),),
        ),
        Message(role="tool", tool_call_id="call_1", name="list_files", content="README.md"),
        Message(role="assistant", content="One file."),
        Message(role="user", content="Show it and the listing."),
    )
    spec = ToolSpec(
        name="exec_command",
        description="Run a command",
        parameters={"type": "object", "properties": {"command": {"type": "string"}}},
    )
    events = list(
        openai.stream(req(*history, tools=(spec,), reasoning_effort="low", max_output_tokens=512))
    )
    got = collect(events)
    assert [(c.id, c.name, c.arguments) for c in got.tool_calls] == [
        ("call_DdmO9pD3xa9XTPNJ32zg2hcA", "exec_command", '{"command":"ls -la"}'),
        ("call_ABmO9pD3xa9XTPNJ32zg2hcB", "read_file", '{"path": "README.md"}'),
    ]
    assert got.stop_reason == "tool_calls"
    assert got.usage.output_tokens == 31
    body = sse_server.requests[0].json()
    # not api.openai.com: the widely understood key; the low effort's 2,048-token reasoning
    # budget is added, since reasoning tokens count against the cap
    assert body["max_tokens"] == 512 + 2048
    assert body["reasoning_effort"] == "low"
    assert body == snapshot_json(name="request")
    assert [{"kind": type(e).__name__, **encode(e)} for e in events] == snapshot_json(name="events")


def test_reasoning_content_crlf_keepalives_and_length(
    sse_server: SSEServer, openai: OpenAIProvider
) -> None:
    sse_server.queue(ScriptedReply.sse_file("openai_reasoning_crlf.sse", 5))
    events = list(openai.stream(req()))
    got = collect(events)
    assert got.reasoning == "The user asks for a number."
    assert got.text == "Forty-two"
    assert got.stop_reason == "max_tokens"
    assert isinstance(events[0], ReasoningDelta)


@pytest.mark.parametrize(
    ("finish", "saw_tools", "stop"),
    [
        ("stop", False, "end_turn"),
        ("length", False, "max_tokens"),
        ("tool_calls", True, "tool_calls"),
        ("content_filter", False, "content_filter"),
        ("stop", True, "tool_calls"),  # Ollama reports stop after tool calls
        ("something_new", False, "something_new"),
    ],
)
def test_finish_reason_mapping(finish: str, saw_tools: bool, stop: str) -> None:
    assert map_finish_reason(finish, saw_tool_calls=saw_tools) == stop


def test_official_endpoint_uses_max_completion_tokens() -> None:
    p = OpenAIProvider(model="o3", base_url="https://api.openai.com/v1", api_key="sk-x")
    try:
        body = p.body(req(max_output_tokens=100))
    finally:
        p.close()
    assert body["max_completion_tokens"] == 100
    assert "max_tokens" not in body
    assert p.pricing is not None and p.context_window == 200_000


@pytest.mark.parametrize("kind", [OpenAIProvider, OpenAIResponsesProvider, AnthropicProvider])
def test_temperature_is_sent_only_without_a_reasoning_effort(
    kind: type[OpenAIProvider | OpenAIResponsesProvider | AnthropicProvider],
) -> None:
    """The compact lead-in asks for 0.2; reasoning models and thinking refuse a temperature."""
    p = kind(model="m", base_url="http://127.0.0.1:9", api_key="k")
    try:
        assert p.body(req(temperature=0.2))["temperature"] == 0.2
        assert "temperature" not in p.body(req(temperature=0.2, reasoning_effort="low"))
        assert "temperature" not in p.body(req())
    finally:
        p.close()


@pytest.mark.parametrize("kind", [OpenAIProvider, OpenAIResponsesProvider])
@pytest.mark.parametrize(
    ("model", "sent"),
    [
        ("o3", False),
        ("o4-mini", False),
        ("O1-preview", False),
        ("gpt-5-mini", False),
        ("openai/o3", False),  # a router's prefix
        ("gpt-4.1-mini", True),
        ("qwen2.5-coder-0.5b", True),
        ("olmo-1b", True),  # an o, but not o<digit>
    ],
)
def test_openai_reasoning_models_never_get_a_temperature(
    kind: type[OpenAIProvider | OpenAIResponsesProvider], model: str, sent: bool
) -> None:
    """A compact run forced on an OpenAI reasoning model (`profile = "compact"` with o3) still
    asks for 0.2; those models answer 400 to any temperature, so it is left out."""
    p = kind(model=model, base_url="http://127.0.0.1:9", api_key="k")
    try:
        request = ModelRequest(model=model, messages=(USER,), temperature=0.2)
        assert ("temperature" in p.body(request)) is sent
    finally:
        p.close()


def test_done_without_finish_reason_and_refusal(sse_server: SSEServer) -> None:
    p = make(sse_server)
    sse_server.queue(sse(delta({"refusal": "I can't help with that."}), "data: [DONE]\n\n"))
    got = collect(p.stream(req()))
    assert (got.text, got.stop_reason) == ("I can't help with that.", "refusal")
    p.close()


# ---- retries ------------------------------------------------------------------------------


def test_429_with_retry_after_zero_then_success(sse_server: SSEServer) -> None:
    p = make(sse_server, retry=RetryPolicy(max_retries=2, base_delay=30.0))  # would block if used
    sse_server.queue(
        ScriptedReply.json(
            429,
            {"error": {"message": "Rate limit reached for gpt-4o-mini", "type": "requests"}},
            {"retry-after": "0"},
        ),
        ScriptedReply.sse_file("openai_text.sse"),
    )
    assert collect(p.stream(req())).text == "Hello! How can I help you today?"
    assert len(sse_server.requests) == 2
    p.close()


def test_500_until_max_retries_gives_one_clear_line(
    sse_server: SSEServer, openai: OpenAIProvider
) -> None:
    body = {"error": {"message": "The server had an error", "type": "server_error"}}
    sse_server.queue(*[ScriptedReply.json(500, body) for _ in range(3)])
    err = error_of(openai.stream(req()))
    assert err.kind is FailureKind.TRANSIENT
    assert err.status == 500
    assert err.message == (
        "openai server error (HTTP 500): The server had an error (after 3 attempts)"
    )
    assert len(sse_server.requests) == 3  # max_retries=2: one try plus two retries


def test_x_should_retry_header_overrides_the_status(
    sse_server: SSEServer, openai: OpenAIProvider
) -> None:
    """As the official SDKs do: `x-should-retry: true` retries a 400, `false` stops a 503."""
    bad = {"error": {"message": "try again", "type": "invalid_request_error"}}
    sse_server.queue(
        ScriptedReply.json(400, bad, {"x-should-retry": "true"}),
        ScriptedReply.sse_file("openai_text.sse"),
    )
    assert collect(openai.stream(req())).text == "Hello! How can I help you today?"
    assert len(sse_server.requests) == 2
    busy = {"error": {"message": "maintenance", "type": "server_error"}}
    sse_server.queue(ScriptedReply.json(503, busy, {"x-should-retry": "false"}))
    err = error_of(openai.stream(req()))
    assert err.kind is FailureKind.FATAL and err.status == 503
    assert len(sse_server.requests) == 3  # not retried


def test_retry_after_longer_than_the_cap_is_not_waited_for(sse_server: SSEServer) -> None:
    p = make(sse_server, retry=RetryPolicy(max_retries=2, max_retry_after=5))
    sse_server.queue(
        ScriptedReply.json(429, {"error": {"message": "slow down"}}, {"retry-after": "120"})
    )
    err = error_of(p.stream(req()))
    assert err.message == (
        "rate limited by openai (HTTP 429): slow down (server asked to retry after 120 s)"
    )
    assert len(sse_server.requests) == 1
    p.close()


def test_disconnect_before_any_delta_is_retried(
    sse_server: SSEServer, openai: OpenAIProvider
) -> None:
    sse_server.queue(
        ScriptedReply(chunks=[b": hello\n\n"], disconnect=True),
        ScriptedReply.sse_file("openai_text.sse"),
    )
    assert collect(openai.stream(req())).stop_reason == "end_turn"
    assert len(sse_server.requests) == 2


def test_mid_stream_disconnect_after_deltas_is_transient_and_not_retried(
    sse_server: SSEServer, openai: OpenAIProvider
) -> None:
    raw = (Path(__file__).parents[1] / "fixtures" / "sse" / "openai_text.sse").read_bytes()
    sse_server.queue(ScriptedReply(chunks=[raw[: len(raw) // 2]], disconnect=True))
    got: list[StreamEvent] = []
    err = error_of(openai.stream(req()), got)
    assert err.kind is FailureKind.TRANSIENT
    assert err.message.startswith("connection to openai broke mid-response")
    assert any(isinstance(e, TextDelta) for e in got)
    assert len(sse_server.requests) == 1


def test_clean_close_without_finish_is_transient(sse_server: SSEServer) -> None:
    p = make(sse_server, retry=RetryPolicy(max_retries=0))
    sse_server.queue(sse(delta({"content": "Hel"})))
    err = error_of(p.stream(req()))
    assert (err.kind, err.message) == (
        FailureKind.TRANSIENT,
        "openai stream ended before the response completed",
    )
    p.close()


def test_error_object_mid_stream_is_classified(
    sse_server: SSEServer, openai: OpenAIProvider
) -> None:
    sse_server.queue(ScriptedReply.sse_file("openai_error_midstream.sse"))
    got: list[StreamEvent] = []
    err = error_of(openai.stream(req()), got)
    assert err.kind is FailureKind.TRANSIENT
    assert err.message == (
        "openai server error (HTTP 502): Provider returned error: upstream connect error"
    )
    assert collect(got).reasoning == "Thinking"
    assert len(sse_server.requests) == 1


def test_read_timeout_is_transient_and_names_the_limit(sse_server: SSEServer) -> None:
    p = make(
        sse_server,
        retry=RetryPolicy(max_retries=0),
        timeout=httpx.Timeout(connect=5.0, read=0.3, write=5.0, pool=5.0),
    )
    sse_server.queue(ScriptedReply(chunks=[b": waiting\n\n"], hang=True))
    err = error_of(p.stream(req()))
    assert err.kind is FailureKind.TRANSIENT
    assert err.message == (
        f"openai request timed out (read after 0.3 s) at {sse_server.url}/v1/chat/completions"
    )
    p.close()


def test_connection_refused_is_transient() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = OpenAIProvider(
        model="m", base_url=f"http://127.0.0.1:{port}/v1", retry=RetryPolicy(max_retries=0)
    )
    err = error_of(p.stream(req()))
    assert err.kind is FailureKind.TRANSIENT
    assert err.message.startswith(f"cannot connect to openai at http://127.0.0.1:{port}/v1/")
    p.close()


# ---- errors that must not be retried --------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body", "kind", "message"),
    [
        (
            401,
            {
                "error": {
                    "message": "Incorrect API key provided: sk-bad.",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            },
            FailureKind.FATAL,
            "authentication failed for openai (check OPENAI_API_KEY): "
            "Incorrect API key provided: sk-bad.",
        ),
        (
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 128000 tokens. However, "
                    "your messages resulted in 130512 tokens. Please reduce the length of the "
                    "messages.",
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }
            },
            FailureKind.CONTEXT_LENGTH,
            "context length exceeded for openai (HTTP 400): This model's maximum context length",
        ),
        (  # llama.cpp's llama-server (server-context.cpp), what small local models overflow
            400,
            {
                "error": {
                    "code": 400,
                    "message": "request (9412 tokens) exceeds the available context size "
                    "(8192 tokens), try increasing it",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": 9412,
                    "n_ctx": 8192,
                }
            },
            FailureKind.CONTEXT_LENGTH,
            "context length exceeded for openai (HTTP 400): request (9412 tokens) exceeds",
        ),
        (
            404,
            {
                "error": {
                    "message": "The model `gpt-4o-mini` does not exist or you do not have "
                    "access to it.",
                    "type": "invalid_request_error",
                    "code": "model_not_found",
                }
            },
            FailureKind.FATAL,
            "model 'gpt-4o-mini' not found at openai (HTTP 404): The model",
        ),
        (
            400,
            {"error": {"message": "Invalid value for 'tools'", "type": "invalid_request_error"}},
            FailureKind.FATAL,
            "openai rejected the request (HTTP 400): Invalid value for 'tools'",
        ),
    ],
)
def test_status_errors_map_to_one_line(
    sse_server: SSEServer,
    openai: OpenAIProvider,
    status: int,
    body: dict[str, Any],
    kind: FailureKind,
    message: str,
) -> None:
    sse_server.queue(ScriptedReply.json(status, body))
    err = error_of(openai.stream(req()))
    assert err.kind is kind
    assert err.message.startswith(message)
    assert "\n" not in err.message
    assert len(sse_server.requests) == 1


def test_malformed_sse_data_is_fatal_and_not_retried(
    sse_server: SSEServer, openai: OpenAIProvider
) -> None:
    sse_server.queue(ScriptedReply.sse_bytes(b'data: {"choices": [\n\n'))
    err = error_of(openai.stream(req()))
    assert err.kind is FailureKind.FATAL
    assert err.message == "malformed stream from openai: event data is not JSON: '{\"choices\": ['"
    assert len(sse_server.requests) == 1


def test_plain_text_error_body(sse_server: SSEServer, openai: OpenAIProvider) -> None:
    html = ScriptedReply(status=502, chunks=[b"<html>Bad Gateway</html>"], headers={})
    sse_server.queue(html, html, html)
    err = error_of(openai.stream(req()))
    assert err.message == (
        "openai server error (HTTP 502): <html>Bad Gateway</html> (after 3 attempts)"
    )


# ---- configuration ------------------------------------------------------------------------


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(UsageError) as info:
        OpenAIProvider(model="gpt-4o")
    assert info.value.exit_code is ExitCode.USAGE
    assert info.value.message == (
        "OPENAI_API_KEY is not set (needed for openai at https://api.openai.com/v1)"
    )


def test_local_server_needs_no_key_and_env_base_url(
    sse_server: SSEServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{sse_server.url}/v1/")
    cfg = VtcodeConfig(agent=AgentConfig(provider="openai", model="llama3.2", max_task_retries=0))
    p = make_provider("openai", config=cfg, model=None, script=None, workspace=tmp_path)
    sse_server.queue(ScriptedReply.sse_file("openai_text.sse"))
    assert collect(p.stream(req())).stop_reason == "end_turn"
    assert "authorization" not in sse_server.requests[0].headers
    assert (p.model, p.pricing, p.context_window) == ("llama3.2", None, None)
    p.close()


def test_make_provider_requires_a_model_and_rejects_scripts(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="the openai provider needs a model"):
        make_provider("openai", config=VtcodeConfig(), model=None, script=None, workspace=tmp_path)
    with pytest.raises(UsageError, match="--script only applies to the replay provider"):
        make_provider("openai", config=VtcodeConfig(), model="m", script="x", workspace=tmp_path)


def test_invalid_base_url_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "localhost:11434")
    with pytest.raises(UsageError, match="invalid base URL for openai"):
        OpenAIProvider(model="m")


def test_interrupt_from_another_thread_aborts_a_silent_stream(sse_server: SSEServer) -> None:
    import threading

    from vtcode.providers.base import ProviderInterrupted

    p = make(sse_server, retry=RetryPolicy(max_retries=0), timeout=20.0)
    sse_server.queue(ScriptedReply(chunks=[b": waiting\n\n"], hang=True))
    outcome: list[BaseException] = []

    def consume() -> None:
        try:
            list(p.stream(req()))
        except BaseException as exc:
            outcome.append(exc)

    t = threading.Thread(target=consume)
    t.start()
    assert sse_server.arrived.wait(5)
    p.interrupt()
    t.join(5)
    assert not t.is_alive()
    assert [type(e) for e in outcome] == [ProviderInterrupted]
    p.close()


def test_json_answer_to_a_stream_request(sse_server: SSEServer, openai: OpenAIProvider) -> None:
    completion = {"object": "chat.completion", "choices": [{"message": {"content": "hi"}}]}
    sse_server.queue(ScriptedReply.json(200, completion))
    err = error_of(openai.stream(req()))
    assert err.kind is FailureKind.FATAL
    assert err.message == (
        "openai answered with application/json instead of an event stream "
        "(does the server support stream: true?)"
    )
    loading = ScriptedReply.json(200, {"error": {"message": "model is loading", "code": 503}})
    sse_server.queue(loading, loading, loading)  # transient: retried twice
    err = error_of(openai.stream(req()))
    assert err.kind is FailureKind.TRANSIENT
    assert err.message == "openai server error (HTTP 503): model is loading (after 3 attempts)"
