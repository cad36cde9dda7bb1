"""A compact run shows the model its own turns as the example does (loop/lead_in.as_written).

Sent as calls and tool results, llama.cpp's Qwen2.5 template wraps them in `<tool_call>` and
`<tool_response>` tags the model then copies (eval of 2026-12-07). The requests a real run
sends are read back from the 127.0.0.1 server that served them.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import ScriptedReply, SSEServer
from tests.loop.test_text_tool_calls_cli import _config, _exec, chat_sse
from vtcode.loop.lead_in import as_written
from vtcode.messages import Message, ToolCall

F = "```"


def test_a_block_turn_is_sent_as_written_with_its_results_as_one_user_message(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _config(tmp_path, sse_server, "qwen0.5b")
    reply = f"a.txt\n{F}\nalpha\n{F}\n\nb.txt\n{F}\nbeta\n{F}"
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(reply)))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Both files are written.")))
    code, events, err = _exec(tmp_path, "Create a.txt holding alpha and b.txt holding beta.")
    assert code == 0 and events[-1]["outcome_code"] == "success", err
    assert (tmp_path / "a.txt").read_text() == "alpha\n"
    second = sse_server.requests[1].json()["messages"]
    assert all(m["role"] in ("system", "user", "assistant") for m in second)
    assert not any(m.get("tool_calls") for m in second)
    assert second[-2] == {"role": "assistant", "content": reply}
    assert second[-1]["role"] == "user"
    assert second[-1]["content"] == "created a.txt (6 bytes)\ncreated b.txt (5 bytes)"


def test_json_calls_written_as_text_come_back_as_that_json() -> None:
    args = json.dumps({"path": "a.txt"})
    history = [
        Message(role="user", content="task"),
        Message(
            role="assistant",
            content="",
            tool_calls=(ToolCall(id="call_text_1_0", name="read_file", arguments=args),),
        ),
        Message(role="tool", content="alpha", tool_call_id="call_text_1_0", name="read_file"),
        Message(role="user", content="a nudge"),
    ]
    out = as_written(history)
    assert [m.role for m in out] == ["user", "assistant", "user", "user"]
    assert json.loads(out[1].content) == {"name": "read_file", "arguments": {"path": "a.txt"}}
    assert out[1].tool_calls == () and out[2].content == "alpha"


def test_native_calls_are_left_as_calls() -> None:
    """A model that called natively (ids the server gave) keeps the call/result form."""
    call = ToolCall(id="call_abc", name="read_file", arguments="{}")
    history = [
        Message(role="assistant", content="", tool_calls=(call,)),
        Message(role="tool", content="x", tool_call_id="call_abc", name="read_file"),
    ]
    assert as_written(history) == history
