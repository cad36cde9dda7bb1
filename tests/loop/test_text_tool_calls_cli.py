"""Tool calls written as text, through the real CLI against a real HTTP server (issue 28 item 4).

A 127.0.0.1 server answers in Chat Completions format the way llama.cpp serves a small Qwen
model: the tool call is in the message text (fenced JSON, near-JSON, Hermes tags), never in
`tool_calls`. What users rely on: a call with a catalog name is run (the file really appears),
the run succeeds, and the log says the call was read from text; a reply that is only
tool-call-shaped is never a success: one corrective nudge, then `malformed_tool_call`, exit 1.
Every event line validates against the published schemas and the sequences are snapshots.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from syrupy.assertion import SnapshotAssertion

from tests.conftest import ScriptedReply, SSEServer
from tests.exec_support import SESSION, canonical_snapshot, raw_events, vtcode
from tests.sdk_judge import judge_openai
from vtcode.messages import LEDGER_NAME


def _conversation(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A request's messages without the decision ledger note that ends it (context.ledger)."""
    return [m for m in body["messages"] if m.get("name") != LEDGER_NAME]


def chat_sse(
    text: str, *, prompt_tokens: int = 300, completion_tokens: int = 20, finish: str = "stop"
) -> bytes:
    """A llama.cpp-shaped Chat Completions stream whose whole answer is `text`."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        body = {
            "id": "chatcmpl-local",
            "object": "chat.completion.chunk",
            "created": 1764750000,
            "model": "qwen0.5b",
            "choices": [{"finish_reason": finish, "index": 0, "delta": delta}],
        }
        return f"data: {json.dumps(body)}\n\n"

    parts = [chunk({"role": "assistant", "content": None})]
    parts += [chunk({"content": text[i : i + 7]}) for i in range(0, len(text), 7)]
    parts.append(chunk({}, finish))
    usage = {
        "id": "chatcmpl-local",
        "object": "chat.completion.chunk",
        "created": 1764750000,
        "model": "qwen0.5b",
        "choices": [],
        "usage": {
            "completion_tokens": completion_tokens,
            "prompt_tokens": prompt_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    parts.append(f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n")
    return "".join(parts).encode()


def _config(
    tmp_path: Path, server: SSEServer, model: str = "qwen0.5b", extra: str = "", draws: int = 1
) -> None:
    """A `local` provider table (llama.cpp-shaped server at `server`) in the run's home.

    `draws`: `agent.harness.first_reply_draws`, written out although 1 is the default: the
    server gives its scripted replies in order, and a test of what follows a first reply means
    that reply to be kept (tests/loop/test_first_draws.py draws more)."""
    harness = f"[agent.harness]\nfirst_reply_draws = {draws}\n"
    extra = (
        extra.replace("[agent.harness]\n", harness, 1)
        if "[agent.harness]\n" in extra
        else f"{extra}\n{harness}"
    )
    home = tmp_path / ".home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        f"""
[providers.local]
kind = "openai"
base_url = "{server.url}/v1"
model = "{model}"
max_output_tokens = 256
{extra}
"""
    )


def _exec(tmp_path: Path, prompt: str, *extra: str) -> tuple[int, list[dict[str, Any]], str]:
    """`vtcode exec --json` on the `local` provider (`_config`): exit code, events, stderr."""
    proc = vtcode(
        ["exec", "--json", "--session-id", SESSION, "--provider", "local", *extra, prompt],
        tmp_path,
        env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""},
    )
    return proc.returncode, raw_events(proc.stdout), proc.stderr


def _items(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [
        e["item"] for e in events if e["type"] == "item.completed" and e["item"]["type"] == kind
    ]


WRITE_CALL = (
    "I will create the file.\n```json\n"
    "{'name': 'write_file', 'arguments': {'path': 'hello.txt', 'content': 'hi\nthere',}}\n```"
)


def test_a_call_written_as_text_runs_and_the_run_succeeds(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    _config(tmp_path, sse_server)
    sse_server.queue(
        ScriptedReply.sse_bytes(chat_sse(WRITE_CALL), 29),
        ScriptedReply.sse_bytes(chat_sse("Created hello.txt."), 29),
    )
    code, events, stderr = _exec(tmp_path, "Create hello.txt saying hi")
    assert code == 0, stderr
    assert (tmp_path / "hello.txt").read_text() == "hi\nthere"
    done = events[-1]
    assert (done["subtype"], done["outcome_code"]) == ("success", "success")
    assert done["result"] == "Created hello.txt."
    (recovered,) = _items(events, "harness")
    assert recovered["event"] == "error_recovered"
    assert recovered["error_category"] == "tool_call_in_text"
    assert "write_file" in recovered["message"] and "trailing comma" in recovered["message"]
    (call,) = _items(events, "tool_invocation")
    assert call["tool_name"] == "write_file" and call["status"] == "completed"
    assert call["arguments"] == {"path": "hello.txt", "content": "hi\nthere"}
    first, second = (r.json() for r in sse_server.requests)
    judge_openai(first)
    judge_openai(second)
    # A compact run shows the model its reply as written, then the result as a user message
    # (loop/lead_in.as_written): no tool call or tool result for llama.cpp's template to wrap.
    assistant, result = _conversation(second)[-2:]
    assert assistant == {"role": "assistant", "content": WRITE_CALL}
    assert result["role"] == "user" and result["content"].startswith("created hello.txt")
    assert canonical_snapshot(tmp_path) == snapshot_json


def test_hermes_calls_in_one_message_all_run(tmp_path: Path, sse_server: SSEServer) -> None:
    _config(tmp_path, sse_server)
    (tmp_path / "a.txt").write_text("alpha\n")
    text = (
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "write_file", "arguments": {"path": "b.txt", "content": "beta"}}'
        "\n</tool_call>"
    )
    sse_server.queue(
        ScriptedReply.sse_bytes(chat_sse(text), 31),
        ScriptedReply.sse_bytes(chat_sse("Read a.txt and wrote b.txt."), 31),
    )
    code, events, stderr = _exec(tmp_path, "copy")
    assert code == 0, stderr
    assert (tmp_path / "b.txt").read_text() == "beta"
    names = [c["tool_name"] for c in _items(events, "tool_invocation")]
    assert names == ["read_file", "write_file"]
    outputs = _items(events, "tool_output")
    assert "alpha" in outputs[0]["output"]


def test_only_tool_call_shaped_nonsense_is_never_success(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    _config(tmp_path, sse_server)
    nonsense = '```json\n{"name": "sum_to", "arguments": {"n": 10}}\n```'
    sse_server.queue(
        ScriptedReply.sse_bytes(chat_sse(nonsense), 23),
        ScriptedReply.sse_bytes(chat_sse('{"name": "greet.py", "arguments": {}}'), 23),
        ScriptedReply.sse_bytes(chat_sse("never asked for"), 23),
    )
    code, events, stderr = _exec(tmp_path, "fix sum_to")
    assert code == 1, stderr
    done = events[-1]
    assert (done["subtype"], done["outcome_code"]) == (
        "error_during_execution",
        "malformed_tool_call",
    )
    assert done.get("result") is None
    assert len(sse_server.requests) == 2  # one nudge, bounded
    (nudge,) = _items(events, "harness")
    assert nudge["event"] == "continuation_started"
    assert nudge["error_category"] == "tool_call_in_text"
    # A compact run (qwen0.5b) is told the block form its example taught, never JSON: asked
    # for JSON there, qwen0.5b dropped its file and ran `echo` until the loop limit.
    assert "'sum_to' is not a tool" in nudge["message"] and "```sh" in nudge["message"]
    assert '{"name"' not in nudge["message"]
    second = sse_server.requests[1].json()
    judge_openai(second)
    assert second["messages"][-1] == {"role": "user", "content": nudge["message"]}
    failed = [e for e in events if e["type"] == "turn.failed"]
    assert failed and "greet.py" in failed[0]["message"]
    assert "tool call written as text" in stderr
    assert not _items(events, "tool_invocation")
    assert canonical_snapshot(tmp_path) == snapshot_json


def test_the_full_harness_is_told_the_call_form_and_the_tools(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _config(tmp_path, sse_server, extra='[agent.harness]\nprofile = "full"\n')
    nonsense = '```json\n{"name": "sum_to", "arguments": {"n": 10}}\n```'
    sse_server.queue(
        ScriptedReply.sse_bytes(chat_sse(nonsense), 23),
        ScriptedReply.sse_bytes(chat_sse(nonsense), 23),
    )
    code, events, stderr = _exec(tmp_path, "fix sum_to")
    assert code == 1 and events[-1]["outcome_code"] == "malformed_tool_call", stderr
    (nudge,) = _items(events, "harness")
    assert "'sum_to' is not a tool" in nudge["message"] and "read_file" in nudge["message"]
    assert '{"name": "<tool>"' in nudge["message"]


def test_a_nudge_that_works_ends_in_success(tmp_path: Path, sse_server: SSEServer) -> None:
    _config(tmp_path, sse_server)
    sse_server.queue(
        ScriptedReply.sse_bytes(chat_sse("<tool_call>make the file</tool_call>"), 23),
        ScriptedReply.sse_bytes(
            chat_sse('{"name": "write_file", "arguments": {"path": "x.txt", "content": "x"}}'), 23
        ),
        ScriptedReply.sse_bytes(chat_sse("Wrote x.txt."), 23),
    )
    code, events, stderr = _exec(tmp_path, "make x.txt")
    assert code == 0, stderr
    assert (tmp_path / "x.txt").read_text() == "x"
    kinds = [i["event"] for i in _items(events, "harness")]
    assert kinds == ["continuation_started", "error_recovered"]


def test_announcing_again_after_the_nudge_is_not_a_success(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _config(tmp_path, sse_server)
    sse_server.queue(
        ScriptedReply.sse_bytes(chat_sse("Let me look at the files first:"), 23),
        ScriptedReply.sse_bytes(chat_sse("I'll check them."), 23),
        ScriptedReply.sse_bytes(chat_sse("never asked for"), 23),
    )
    code, events, stderr = _exec(tmp_path, "tidy up")
    assert code == 1, stderr  # nothing was done: never exit 0
    assert len(sse_server.requests) == 2  # one nudge, not a loop
    (nudge,) = _items(events, "harness")
    assert (nudge["event"], nudge["error_category"]) == ("continuation_started", "no_action")
    done = events[-1]
    assert (done["subtype"], done["outcome_code"]) == (
        "error_during_execution",
        "unfinished_no_action",
    )
    assert done.get("result") is None
    assert "Stopped: nothing was done" in stderr


def test_a_claim_after_the_nudge_with_no_tool_run_is_not_a_success(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """Told to use the tools, the model never did: its answer cannot have been checked."""
    _config(tmp_path, sse_server)
    sse_server.queue(
        ScriptedReply.sse_bytes(chat_sse('{"name": "sum_to", "arguments": {"n": 10}}'), 23),
        ScriptedReply.sse_bytes(chat_sse('{"summary": "Test passed", "json": "{}"}'), 23),
    )
    code, events, stderr = _exec(tmp_path, "fix sum_to")
    assert code == 1, stderr
    assert len(sse_server.requests) == 2
    done = events[-1]
    assert (done["subtype"], done["outcome_code"]) == (
        "error_during_execution",
        "unfinished_no_action",
    )
    assert done.get("result") is None


def test_a_plain_answer_is_not_nudged(tmp_path: Path, sse_server: SSEServer) -> None:
    _config(tmp_path, sse_server)
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("2 + 2 = 4."), 23))
    code, events, stderr = _exec(tmp_path, "what is 2+2")
    assert code == 0, stderr
    assert len(sse_server.requests) == 1
    assert not _items(events, "harness")


def test_a_repeated_successful_write_says_so_and_how_to_finish(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _config(tmp_path, sse_server)
    call = '{"name": "write_file", "arguments": {"path": "h.txt", "content": "hi"}}'
    sse_server.queue(
        ScriptedReply.sse_bytes(chat_sse(call), 23),
        ScriptedReply.sse_bytes(chat_sse(call), 23),
        ScriptedReply.sse_bytes(chat_sse("Wrote h.txt."), 23),
    )
    code, events, stderr = _exec(tmp_path, "write h.txt")
    assert code == 0, stderr
    first, second = (o["output"] for o in _items(events, "tool_output"))
    assert "already succeeded" not in first
    assert "this exact write_file call already succeeded" in second
    assert "one-line summary" in second
    sent = _conversation(sse_server.requests[2].json())[-1]
    assert sent["role"] == "user" and sent["content"] == second  # the log shows what it saw


def test_a_reply_cut_off_by_the_cap_runs_its_first_whole_call(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """qwen0.5b's runaway reply after a write: a list of calls until the output cap. The first
    whole call runs (the rest were written without a result); it is not a max_output_tokens end."""
    _config(tmp_path, sse_server)
    runaway = (
        '{"name": "write_file", "arguments": {"path": "a.txt", "content": "a"}}\n'
        '{"name": "write_file", "arguments": {"path": "b.txt", "content": "b"}}\n'
        '{"name": "exec_command", "arguments": {"command": "echo hi; echo hi; ec'
    )
    sse_server.queue(
        ScriptedReply.sse_bytes(chat_sse(runaway, finish="length"), 23),
        ScriptedReply.sse_bytes(chat_sse("Wrote a.txt."), 23),
    )
    code, events, stderr = _exec(tmp_path, "write a.txt")
    assert code == 0, stderr
    assert (tmp_path / "a.txt").read_text() == "a"
    assert not (tmp_path / "b.txt").exists()
    (recovered,) = _items(events, "harness")
    assert "the 1 call after the first did not run" in recovered["message"]
    assert [i["tool_name"] for i in _items(events, "tool_invocation")] == ["write_file"]
    assert events[-1]["outcome_code"] == "success"


def test_a_cut_off_reply_with_no_whole_call_still_ends_max_output_tokens(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _config(tmp_path, sse_server)
    cut = '{"name": "write_file", "arguments": {"path": "a.txt", "content": "aaaa'
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(cut, finish="length"), 23))
    code, events, stderr = _exec(tmp_path, "write a.txt")
    assert code == 1, stderr
    assert events[-1]["outcome_code"] == "max_output_tokens"
    assert not (tmp_path / "a.txt").exists()
