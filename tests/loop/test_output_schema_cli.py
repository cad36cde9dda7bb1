"""`exec --output-schema` through the real CLI against a recording 127.0.0.1 server (issue 24.2).

The server answers in each provider's wire format and keeps every request body, so the test
sees what the model was sent: the schema as the provider's native structured output (checked
against the official SDK's types) and, after a wrong answer, the validation errors. What users
rely on: a valid answer's JSON is `thread.completed.result` and the `-o` file; an answer that
never validates ends `error_during_execution` / `output_schema_invalid`, exit 1, with the last
answer in the log; a bad schema file is exit 2 before anything runs (no session, no request).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from openai.types.responses.response_create_params import ResponseCreateParamsStreaming
from pydantic import TypeAdapter
from syrupy.assertion import SnapshotAssertion

from tests.conftest import ScriptedReply, SSEServer
from tests.exec_support import SESSION, canonical_snapshot, raw_events, vtcode
from tests.loop.test_text_tool_calls_cli import chat_sse
from tests.sdk_judge import judge_anthropic, judge_openai

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Todo count",
    "type": "object",
    "properties": {"count": {"type": "integer"}, "files": {"type": "array"}},
    "required": ["count", "files"],
    "additionalProperties": False,
}
GOOD = '{"count": 2, "files": ["a.py"]}'


def _setup(tmp_path: Path, server: SSEServer, kind: str = "openai") -> Path:
    home = tmp_path / ".home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        f'[providers.local]\nkind = "{kind}"\nbase_url = "{server.url}/v1"\nmodel = "m"\n'
    )
    schema = tmp_path / "answer.schema.json"
    schema.write_text(json.dumps(SCHEMA))
    return schema


def _exec(tmp_path: Path, *extra: str) -> tuple[int, list[dict[str, Any]], str]:
    proc = vtcode(
        ["exec", "--json", "--session-id", SESSION, "--provider", "local", *extra],
        tmp_path,
        env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "ANTHROPIC_API_KEY": "k"},
    )
    return proc.returncode, raw_events(proc.stdout), proc.stderr


def _harness(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        e["item"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "harness"
    ]


def test_wrong_twice_then_right_is_success_with_the_json_as_result(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    schema = _setup(tmp_path, sse_server)
    sse_server.queue(
        ScriptedReply.sse_bytes(chat_sse("There are two TODOs."), 13),
        ScriptedReply.sse_bytes(chat_sse('{"count": "two", "files": []}'), 13),
        ScriptedReply.sse_bytes(chat_sse(f"Here it is:\n```json\n{GOOD}\n```"), 13),
    )
    out = tmp_path / "answer.json"
    code, events, stderr = _exec(
        tmp_path, "--output-schema", str(schema), "-o", str(out), "count the TODOs"
    )
    assert code == 0, stderr
    done = events[-1]
    assert (done["subtype"], done["outcome_code"]) == ("success", "success")
    assert json.loads(done["result"]) == {"count": 2, "files": ["a.py"]}
    assert out.read_text() == done["result"]
    retries = _harness(events)
    assert [h["error_category"] for h in retries] == ["output_schema", "output_schema"]
    assert "not a JSON value" in retries[0]["message"]
    assert "'two' is not of type 'integer'" in retries[1]["message"]
    bodies = [r.json() for r in sse_server.requests]
    assert len(bodies) == 3
    for body in bodies:
        judge_openai(body)
        fmt = body["response_format"]
        assert fmt["type"] == "json_schema"
        assert fmt["json_schema"] == {"name": "Todo_count", "schema": SCHEMA, "strict": False}
    # The model is told what was wrong, as a user message after its answer.
    last_user = bodies[2]["messages"][-1]
    assert last_user["role"] == "user" and "'two' is not of type 'integer'" in last_user["content"]
    assert canonical_snapshot(tmp_path) == snapshot_json


def test_never_right_ends_output_schema_invalid_exit_1_and_keeps_the_answer(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    schema = _setup(tmp_path, sse_server)
    sse_server.queue(
        *(ScriptedReply.sse_bytes(chat_sse(f'{{"count": {n}}}')) for n in range(3)),
    )
    out = tmp_path / "answer.json"
    code, events, stderr = _exec(
        tmp_path, "--output-schema", str(schema), "-o", str(out), "count the TODOs"
    )
    assert code == 1, stderr
    done = events[-1]
    assert (done["subtype"], done["outcome_code"]) == (
        "error_during_execution",
        "output_schema_invalid",
    )
    assert "result" not in done
    assert len(sse_server.requests) == 3  # the answer and agent.output_schema_retries (2)
    messages = [
        e["item"]["text"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "agent_message"
    ]
    assert messages[-1] == '{"count": 2}'  # the last invalid answer stays in the log
    assert "'files' is a required property" in stderr
    assert canonical_snapshot(tmp_path) == snapshot_json


def test_retries_come_from_config_and_zero_means_one_answer(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    schema = _setup(tmp_path, sse_server)
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("[]")))
    code, events, _ = _exec(
        tmp_path,
        "-c",
        f"agent.output_schema={json.dumps(str(schema))}",
        "-c",
        "agent.output_schema_retries=0",
        "go",
    )
    assert code == 1
    assert events[-1]["outcome_code"] == "output_schema_invalid"
    assert len(sse_server.requests) == 1
    assert "response_format" in sse_server.requests[0].json()


def test_resume_takes_the_schema_too(tmp_path: Path, sse_server: SSEServer) -> None:
    schema = _setup(tmp_path, sse_server)
    sse_server.queue(
        ScriptedReply.sse_bytes(chat_sse("free text is fine without a schema")),
        ScriptedReply.sse_bytes(chat_sse(GOOD)),
    )
    code, _, stderr = _exec(tmp_path, "first")
    assert code == 0, stderr
    proc = vtcode(
        [
            *("exec", "resume", SESSION, "--json", "--provider", "local"),
            *("--output-schema", str(schema), "now as JSON"),
        ],
        tmp_path,
        env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""},
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(raw_events(proc.stdout)[-1]["result"]) == json.loads(GOOD)
    first, second = (r.json() for r in sse_server.requests)
    assert "response_format" not in first and "response_format" in second


def _responses_sse(text: str) -> bytes:
    events = [
        {"type": "response.output_text.delta", "item_id": "msg_1", "delta": text},
        {
            "type": "response.completed",
            "response": {
                "id": "resp_1",
                "status": "completed",
                "output": [],
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        },
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def test_responses_sends_text_format(tmp_path: Path, sse_server: SSEServer) -> None:
    schema = _setup(tmp_path, sse_server, "openai-responses")
    sse_server.queue(ScriptedReply.sse_bytes(_responses_sse(GOOD)))
    code, events, stderr = _exec(tmp_path, "--output-schema", str(schema), "go")
    assert code == 0, stderr
    assert json.loads(events[-1]["result"]) == json.loads(GOOD)
    body = sse_server.requests[0].json()
    TypeAdapter(ResponseCreateParamsStreaming).validate_python(body, strict=True)
    assert body["text"] == {
        "format": {"type": "json_schema", "name": "Todo_count", "schema": SCHEMA, "strict": False}
    }


def _anthropic_sse(answer: dict[str, Any], prose: str = "") -> bytes:
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {"id": "msg_1", "usage": {"input_tokens": 10, "output_tokens": 1}},
        }
    ]
    index = 0
    if prose:
        events += [
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": prose},
            },
            {"type": "content_block_stop", "index": 0},
        ]
        index = 1
    text = json.dumps(answer)
    events += [
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "structured_output",
                "input": {},
            },
        },
        *(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": text[i : i + 5]},
            }
            for i in range(0, len(text), 5)
        ),
        {"type": "content_block_stop", "index": index},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def test_anthropic_with_thinking_offers_the_tool_without_forcing_it(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    schema = _setup(tmp_path, sse_server, "anthropic")
    sse_server.queue(ScriptedReply.sse_bytes(_anthropic_sse(json.loads(GOOD))))
    code, _, stderr = _exec(tmp_path, "--output-schema", str(schema), "--effort", "low", "go")
    assert code == 0, stderr
    body = sse_server.requests[0].json()
    judge_anthropic(body)
    assert body["tool_choice"] == {"type": "auto"} and body["thinking"]["type"] == "enabled"


def test_a_schema_that_is_not_an_object_is_not_sent_to_anthropic_but_still_checked(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _setup(tmp_path, sse_server, "anthropic")
    schema = tmp_path / "list.json"
    schema.write_text('{"type": "array", "items": {"type": "string"}}')
    text = ScriptedReply.sse_file("anthropic_text.sse")
    sse_server.queue(text)
    code, events, _ = _exec(
        tmp_path, "--output-schema", str(schema), "-c", "agent.output_schema_retries=0", "go"
    )
    assert code == 1 and events[-1]["outcome_code"] == "output_schema_invalid"
    body = sse_server.requests[0].json()
    assert "tool_choice" not in body
    assert all(t["name"] != "structured_output" for t in body.get("tools", []))


def test_anthropic_answers_through_the_forced_tool(tmp_path: Path, sse_server: SSEServer) -> None:
    schema = _setup(tmp_path, sse_server, "anthropic")
    sse_server.queue(
        ScriptedReply.sse_bytes(_anthropic_sse({"count": "x", "files": []}, "Done. ")),
        ScriptedReply.sse_bytes(_anthropic_sse(json.loads(GOOD))),
    )
    code, events, stderr = _exec(tmp_path, "--output-schema", str(schema), "go")
    assert code == 0, stderr
    assert json.loads(events[-1]["result"]) == json.loads(GOOD)
    first, second = (r.json() for r in sse_server.requests)
    for body in (first, second):
        judge_anthropic(body)
        assert body["tool_choice"] == {"type": "any"}
        (answer_tool,) = [t for t in body["tools"] if t["name"] == "structured_output"]
        assert answer_tool["input_schema"] == SCHEMA
    # The answer went back as the assistant's text, the errors as the next user message.
    assistant, user = second["messages"][-2:]
    assert assistant["role"] == "assistant"
    assert assistant["content"][0]["text"] == 'Done. {"count": "x", "files": []}'
    assert user["role"] == "user" and "'x' is not of type 'integer'" in json.dumps(user)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "the output schema is not JSON"),
        ('{"type": "objekt"}', "not a valid JSON Schema (2020-12) at type"),
        ("[1]", "must be a JSON object"),
        (b"\xff\xfe{}", "not UTF-8"),
        (None, "not a regular file"),
        ("missing", "cannot read the output schema"),
        ('{"$ref": "https://example.com/s.json"}', "only references inside the file"),
        ('{"properties": {"a": {"$ref": "#/$defs/nope"}}}', "'#/$defs/nope' does not resolve"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"items": ' * 3000 + "{}" + "}" * 3000, "nested too deeply"),
    ],
)
def test_a_bad_schema_file_is_exit_2_before_anything_runs(
    tmp_path: Path, sse_server: SSEServer, content: str | bytes | None, message: str
) -> None:
    _setup(tmp_path, sse_server)
    bad = tmp_path / "bad.json"
    if content is None:
        os.mkfifo(bad)  # no writer: must not block
    elif isinstance(content, bytes):
        bad.write_bytes(content)
    elif content != "missing":
        bad.write_text(content)
    code, events, stderr = _exec(tmp_path, "--output-schema", str(bad), "go")
    assert code == 2
    assert message in stderr and "--output-schema" in stderr and "Traceback" not in stderr
    assert events == []
    assert not sse_server.requests
    assert not (tmp_path / ".vtcode" / "sessions" / SESSION).exists()


def test_an_untrusted_workspace_cannot_set_the_schema(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """The schema file is sent to the provider: a workspace could name a secret JSON file."""
    schema = _setup(tmp_path, sse_server)
    (tmp_path / "vtcode.toml").write_text(f"[agent]\noutput_schema = {json.dumps(str(schema))}\n")
    sse_server.queue(
        ScriptedReply.sse_bytes(chat_sse("plain text")),
        ScriptedReply.sse_bytes(chat_sse(GOOD)),
    )
    code, _, stderr = _exec(tmp_path, "go")
    assert code == 0 and "agent.output_schema ignored" in stderr
    assert "response_format" not in sse_server.requests[0].json()
    proc = vtcode(
        ["exec", "--json", "--provider", "local", "go"],
        tmp_path,
        env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "VTCODE_TRUST_WORKSPACE": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    assert sse_server.requests[1].json()["response_format"]["json_schema"]["schema"] == SCHEMA
