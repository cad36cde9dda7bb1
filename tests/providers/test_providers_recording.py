"""Recording a real (local) OpenAI-compatible session and replaying the script gives the same
responses: text, reasoning, tool calls byte for byte, usage, stop reasons and failures.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ScriptedReply, SSEServer
from vtcode.messages import Message, ModelRequest, ToolCall
from vtcode.providers.base import FailureKind, ProviderError
from vtcode.providers.collect import CollectedResponse, collect
from vtcode.providers.openai import OpenAIProvider
from vtcode.providers.recording import RecordingProvider
from vtcode.providers.replay import ReplayProvider
from vtcode.providers.retry import RetryPolicy
from vtcode.providers.script import load_script

HISTORY = (Message(role="user", content="Look around"),)


def request(purpose: str = "turn") -> ModelRequest:
    return ModelRequest(model="gpt-4o", messages=HISTORY, purpose=purpose)  # type: ignore[arg-type]


def outcome(provider: object, req: ModelRequest) -> CollectedResponse | tuple[str, FailureKind]:
    try:
        return collect(provider.stream(req))  # type: ignore[attr-defined]
    except ProviderError as exc:
        return ("error", exc.kind)


def test_record_then_replay_gives_the_same_responses(sse_server: SSEServer, tmp_path: Path) -> None:
    raw_text = (Path(__file__).parents[1] / "fixtures" / "sse" / "openai_text.sse").read_bytes()
    sse_server.queue(
        ScriptedReply.sse_file("openai_tool_calls.sse", 13),
        ScriptedReply.sse_file("openai_reasoning_crlf.sse", 9),
        ScriptedReply(chunks=[raw_text[: len(raw_text) // 2]], disconnect=True),
        ScriptedReply.json(401, {"error": {"message": "Incorrect API key provided"}}),
        ScriptedReply.sse_file("openai_text.sse"),  # answers the summary request
    )
    out = tmp_path / "recorded.toml"
    inner = OpenAIProvider(
        model="gpt-4o",
        base_url=f"{sse_server.url}/v1",
        api_key="sk",
        retry=RetryPolicy(max_retries=0),
    )
    rec = RecordingProvider(inner, out)
    requests = [request(), request(), request(), request(), request("summary")]
    live = [outcome(rec, r) for r in requests]
    rec.close()

    assert isinstance(live[0], CollectedResponse)
    assert live[0].tool_calls[1] == ToolCall(
        id="call_ABmO9pD3xa9XTPNJ32zg2hcB", name="read_file", arguments='{"path": "README.md"}'
    )
    assert live[2] == ("error", FailureKind.TRANSIENT)
    assert live[3] == ("error", FailureKind.FATAL)

    script = load_script(out)
    assert script.provider.model == "gpt-4o"
    assert script.provider.pricing is not None
    assert len(script.turn) == 4 and len(script.summary) == 1
    assert script.turn[2].fail == "transient" and script.turn[2].fail_mid_stream
    replay = ReplayProvider(script, source=str(out))
    replayed = [outcome(replay, r) for r in requests]
    assert replayed[:2] == live[:2]
    assert replayed[4] == live[4]
    assert replayed[2:4] == live[2:4]
    # the partial text before the disconnect streams again before the failure
    assert script.turn[2].text and live[0] != replayed[2]


def test_recorded_file_is_valid_after_every_response(sse_server: SSEServer, tmp_path: Path) -> None:
    out = tmp_path / "r.toml"
    inner = OpenAIProvider(model="m", base_url=f"{sse_server.url}/v1", api_key="sk")
    rec = RecordingProvider(inner, out)
    sse_server.queue(ScriptedReply.sse_file("openai_text.sse"))
    collect(rec.stream(request()))
    # not closed yet: a killed process would still leave this valid script behind
    assert [t.text for t in load_script(out).turn] == ["Hello! How can I help you today?"]
    assert out.read_text(encoding="utf-8").startswith("# Recorded by vtcode")
    rec.close()
    rec.close()  # idempotent
    assert len(load_script(out).turn) == 1


def test_interrupted_streams_are_not_recorded(tmp_path: Path) -> None:
    script_path = Path(__file__).parents[2] / "fixtures" / "scripts" / "slow-turn.toml"
    inner = ReplayProvider.from_file(script_path)
    rec = RecordingProvider(inner, tmp_path / "r.toml")
    stream = rec.stream(request())
    inner.interrupt()  # set before the delay: the first wait sees it at once
    with pytest.raises(ProviderError):
        list(stream)
    rec.close()
    assert load_script(tmp_path / "r.toml").turn == []
