"""The compact harness for small models (issue 28 item 4; docs/harness.md "Small models").

What a user relies on: a model whose name says it is small (qwen0.5b, *-1.5b) gets four tools
with short specs and the workspace's small files in its first request, and nothing it should not
see (dotfiles, secrets-looking names, files a deny rule hides, FIFOs, links out of the folder);
`agent.harness.profile = "full"` (or a model with no small size in its name) gets the full
catalog; every call is still checked against the tool's full schema.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ScriptedReply, SSEServer
from tests.exec_support import SESSION, raw_events, vtcode
from tests.loop.test_text_tool_calls_cli import _config, chat_sse
from vtcode.config.model import HarnessProfile
from vtcode.loop.lead_in import EXAMPLE_EXCHANGE, LeadIn
from vtcode.messages import Message
from vtcode.runtime.harness_profile import (
    INLINE_BUDGET_CHARS,
    choose_profile,
    inlined,
    model_params_from_name,
)

COMPACT = ["exec_command", "list_files", "read_file", "write_file"]


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("qwen0.5b", 0.5e9),
        ("Qwen2.5-Coder-1.5B-Instruct", 1.5e9),
        ("qwen2.5-coder:1.5b", 1.5e9),
        ("qwen2.5-coder-7b-instruct-q4_k_m", 7e9),
        ("smollm2-135m", 135e6),
        ("SmolLM2-360M-Instruct", 360e6),
        ("llama-3.1-8b", 8e9),
        ("mixtral-8x7b", None),  # a mixture: its size is not a parameter count we can compare
        ("gpt-4o-mini", None),
        ("claude-3-5-haiku", None),
        ("o3", None),
    ],
)
def test_the_size_a_model_name_states(name: str, params: float | None) -> None:
    assert model_params_from_name(name) == params


def test_auto_is_compact_only_below_four_billion() -> None:
    assert choose_profile(HarnessProfile.AUTO, "qwen1.5b").compact
    assert not choose_profile(HarnessProfile.AUTO, "qwen2.5-coder-7b").compact
    assert not choose_profile(HarnessProfile.AUTO, "gpt-4.1").compact
    assert choose_profile(HarnessProfile.COMPACT, "gpt-4.1").compact
    assert not choose_profile(HarnessProfile.FULL, "qwen0.5b").compact


def _read(ws: Path) -> Any:
    return lambda rel: (ws / rel).read_text()


def test_inline_files_shows_small_text_and_names_the_rest(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("print(1)\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("X = 2\n")
    (tmp_path / "big.txt").write_text("y\n" * 5000)
    (tmp_path / "my notes.txt").write_text("z\n")
    text, shown = inlined(tmp_path, _read(tmp_path))
    assert shown == {"a.py", "pkg/m.py", "my notes.txt"}
    assert "`my notes.txt`\n```\nz\n```\n" in text  # quoted: the form a block may write back
    assert "a.py\n```\nprint(1)\n```\n" in text and "pkg/m.py\n```\nX = 2\n```\n" in text
    assert "big.txt (10000 bytes)" in text and "y\ny" not in text


def test_inline_files_never_shows_secrets_links_or_special_files(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text("root:x:0:0\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".env").write_text("API_KEY=sk-live-1\n")
    (ws / "id_ed25519").write_text("PRIVATE\n")
    (ws / "server.pem").write_text("PRIVATE\n")
    (ws / "aws_credentials").write_text("PRIVATE\n")
    os.symlink(outside / "passwd", ws / "passwd-link")
    os.symlink(outside, ws / "dir-link")
    os.mkfifo(ws / "pipe")
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / "ok.txt").write_text("fine\n")
    seen: list[str] = []

    def read(rel: str) -> str:
        seen.append(rel)
        return (ws / rel).read_text()

    text, _ = inlined(ws, read)
    assert seen == ["ok.txt"]  # nothing else is even opened
    assert "PRIVATE" not in text and "sk-live" not in text and "root:x" not in text
    assert "fine" in text


def test_inline_files_stays_within_its_budget(tmp_path: Path) -> None:
    for i in range(40):
        (tmp_path / f"f{i:02}.txt").write_text(f"{i}\n" * 400)
    text, _ = inlined(tmp_path, _read(tmp_path))
    assert len(text) < INLINE_BUDGET_CHARS + 1500  # the shown files, then names only
    assert "Other files (too big to show here): " in text


def _run(tmp_path: Path, *args: str, task: str = "Fix it") -> tuple[int, list[dict[str, Any]], str]:
    proc = vtcode(
        ["exec", "--json", "--session-id", SESSION, "--provider", "local", *args, task],
        tmp_path,
        env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""},
    )
    return proc.returncode, raw_events(proc.stdout), proc.stderr


def test_a_small_model_gets_the_example_and_the_files_and_no_specs(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """The compact request (loop/lead_in.py): the system prompt teaches the file-block form, an
    example exchange follows, then the task's message with the files in that same form; no tool
    specs (with them, llama.cpp's template made qwen0.5b answer "Done."), temperature 0.2. A
    call written as JSON text still runs against the compact catalog."""
    _config(tmp_path, sse_server, "qwen0.5b")
    (tmp_path / "sum_to.py").write_text("def sum_to(n):\n    return sum(range(1, n))\n")
    (tmp_path / ".env").write_text("TOKEN=sk-do-not-send\n")
    (tmp_path / "vtcode.toml").write_text('[permissions]\ndeny = ["read_file(hidden.txt)"]\n')
    (tmp_path / "hidden.txt").write_text("a denied file's text\n")
    call = {  # what qwen0.5b writes: the task's function as the tool, write_file's arguments
        "name": "sum_to",
        "arguments": {
            "path": "sum_to.py",
            "content": "def sum_to(n):\n    return sum(range(n + 1))\n",
        },
    }
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(json.dumps(call))))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Fixed the range in sum_to.py.")))
    code, events, err = _run(tmp_path)
    assert code == 0, err
    first = sse_server.requests[0].json()
    assert not first.get("tools") and first["temperature"] == 0.2
    roles = [m["role"] for m in first["messages"]]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    system = first["messages"][0]["content"]
    assert str(tmp_path) in system and "fenced code block" in system and "```sh" in system
    assert first["messages"][2]["content"].startswith("greeting.txt\n```\nHello, world\n```")
    task = first["messages"][-1]["content"]
    assert task.startswith("The folder holds these files:\n\n")
    assert "sum_to.py\n```\ndef sum_to(n):\n    return sum(range(1, n))\n```" in task
    assert task.endswith("\n\nTask: Fix it")
    assert "sk-do-not-send" not in json.dumps(first) and "a denied file" not in json.dumps(first)
    assert (tmp_path / "sum_to.py").read_text().endswith("range(n + 1))\n")
    recovered = [
        e["item"]["message"]
        for e in events
        if e["type"] == "item.completed" and e["item"].get("event") == "error_recovered"
    ]
    assert recovered == [
        "tool call read from the model's text: write_file (repaired: 'sum_to' read as write_file)"
    ]
    done = events[-1]
    assert done["type"] == "thread.completed" and done["subtype"] == "success"
    # the session keeps the task as written: the lead-in is only in the requests
    assert "The folder holds" not in json.dumps(events)
    # its reply as written, then the result as a user message (loop/lead_in.as_written)
    second = sse_server.requests[1].json()["messages"]
    assert second[-2] == {"role": "assistant", "content": json.dumps(call)}
    assert second[-1]["role"] == "user" and second[-1]["content"].startswith("updated sum_to.py")


def test_a_small_model_cannot_call_a_tool_it_was_not_offered(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _config(tmp_path, sse_server, "qwen1.5b")
    patch = "*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch\n"
    call = {"name": "apply_patch", "arguments": {"input": patch}}
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(json.dumps(call))))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Gave up.")))
    code, events, err = _run(tmp_path)
    assert not (tmp_path / "x.txt").exists()
    second = json.dumps(sse_server.requests[1].json())
    assert "apply_patch" in second and "not a tool" in second
    assert code != 0 or events[-1]["subtype"] != "success", err


def test_full_profile_and_a_large_model_keep_the_whole_catalog(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _config(tmp_path, sse_server, "qwen0.5b", '[agent.harness]\nprofile = "full"\n')
    (tmp_path / "a.py").write_text("SECRET_LOOKING = 1\n")
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Nothing to do.")))
    code, _, err = _run(tmp_path)
    assert code == 0, err
    first = sse_server.requests[0].json()
    names = {t["function"]["name"] for t in first["tools"]}
    assert {"apply_patch", "write_stdin", "grep"} <= names
    assert "SECRET_LOOKING" not in json.dumps(first["messages"])  # no files inline
    assert len(first["messages"]) == 2 and "temperature" not in first  # no lead-in


def test_a_command_result_reads_as_output_and_exit_code_and_schema_words_are_dropped(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _config(tmp_path, sse_server, "qwen0.5b")
    call = {
        "name": "exec_command",
        "arguments": {"command": "echo hi | tee note.txt; exit 3", "required": ["command"]},
    }  # it writes a file: a run of "Fix it" that changes nothing is not a success
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(json.dumps(call))))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("The command printed hi and failed.")))
    code, events, err = _run(tmp_path)
    assert code == 0, err
    tool = sse_server.requests[1].json()["messages"][-1]
    assert tool["role"] == "user" and tool["content"] == "hi\n[exit code 3]"
    (out,) = [
        e["item"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "tool_output"
    ]
    assert out["output"] == "hi\n[exit code 3]" and out["exit_code"] == 3


def test_after_a_nudge_only_failed_calls_never_make_a_success(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """qwen0.5b on fix-typo (2026-12-06): a call that failed its schema, a broken call (nudged),
    then '{"summary": "No tool called. Nothing ran."}' was reported as success."""
    _config(tmp_path, sse_server, "qwen0.5b")
    bad = {"name": "read_file", "arguments": {"path": "missing.txt"}}
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(json.dumps(bad))))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse('{"name": "exec_command", "arguments": {')))
    sse_server.queue(
        ScriptedReply.sse_bytes(chat_sse('{"summary": "No tool called. Nothing ran."}'))
    )
    code, events, err = _run(tmp_path)
    done = events[-1]
    assert done["type"] == "thread.completed"
    assert (done["subtype"], done["outcome_code"]) != ("success", "success")
    assert done["outcome_code"] == "unfinished_no_action" and code == 1, err


# An answer, not a claim: a compact run nudges a short reply made before any tool ran.
_NO_CHANGE = "Run the tests and tell me why they fail."  # asks for no change to the files
ANSWER = (
    "There is nothing to change here: the folder holds no file the task names, so no file was "
    "written and no command was run, and the task cannot be done with what is in the folder."
)


def test_a_compact_run_caps_its_output_unless_the_table_says(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """qwen0.5b streams a runaway list of calls after its first one; 8,192 tokens of it take
    minutes on a CPU. A compact run asks for 1,024 at most, unless the table sets its own."""
    home = tmp_path / ".home"
    home.mkdir()
    table = f'[providers.local]\nkind = "openai"\nbase_url = "{sse_server.url}/v1"\n'
    (home / "config.toml").write_text(table + 'model = "qwen0.5b"\n')
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(ANSWER)))
    code, _, err = _run(tmp_path, task=_NO_CHANGE)
    assert code == 0, err
    assert sse_server.requests[0].json()["max_tokens"] == 1024
    _config(tmp_path, sse_server, "qwen0.5b")  # max_output_tokens = 256 in the table
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(ANSWER)))
    code, _, err = _run(tmp_path, "--session-id", "second", task=_NO_CHANGE)
    assert code == 0, err
    assert sse_server.requests[1].json()["max_tokens"] == 256
    (home / "config.toml").write_text(table + 'model = "gpt-4.1"\n')
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Nothing to do.")))
    code, _, err = _run(tmp_path, "--session-id", "third")
    assert code == 0, err
    assert sse_server.requests[2].json()["max_tokens"] == 8192


def test_a_read_with_an_extra_key_still_reads_and_a_write_with_one_is_refused(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """qwen0.5b on answer-from-config (2026-12-06): read_file {"path", "content"} failed its
    schema three times in a row. A read changes nothing, so its extra keys are dropped; a
    write's are not (the call fails the full schema, and nothing is written)."""
    _config(tmp_path, sse_server, "qwen0.5b")
    (tmp_path / "config.ini").write_text("[server]\nport = 8443\n")
    read = {"name": "read_file", "arguments": {"path": "config.ini", "content": "port = 1"}}
    write = {"name": "write_file", "arguments": {"path": "a.txt", "content": "x", "mode": "w"}}
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(json.dumps(read))))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(json.dumps(write))))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("The port is 8443.")))
    code, events, err = _run(tmp_path, task=_NO_CHANGE)
    outputs = [
        e["item"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "tool_output"
    ]
    assert outputs[0]["status"] == "completed" and "port = 8443" in outputs[0]["output"]
    assert outputs[1]["status"] == "failed" and "'mode' was unexpected" in outputs[1]["output"]
    assert not (tmp_path / "a.txt").exists()
    assert code == 0, err


def test_a_run_whose_every_call_was_refused_is_never_a_success(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """qwen0.5b with the full harness on fix-typo (2026-12-06): four exec_command calls with an
    argument the tool does not take, each refused before running, then the answer "}": the run
    said success. A run in which nothing ran ends unfinished_no_action, in every profile."""
    _config(tmp_path, sse_server, "qwen0.5b", '[agent.harness]\nprofile = "full"\n')
    bad = {"name": "exec_command", "arguments": {"command": "ls", "timeout_seconds": 5}}
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(json.dumps(bad))))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("}")))
    code, events, err = _run(tmp_path)
    done = events[-1]
    assert done["type"] == "thread.completed" and done["outcome_code"] == "unfinished_no_action"
    assert code == 1, err


def test_a_call_that_ran_and_failed_still_lets_the_run_answer(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """The rule above is about calls that never ran: a command that ran and exited 1 (the
    tests fail, and the answer says why) is work done, and the run may succeed."""
    _config(tmp_path, sse_server, "qwen0.5b")
    call = {"name": "exec_command", "arguments": {"command": "echo failing; exit 1"}}
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(json.dumps(call))))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("The command fails: it prints failing.")))
    code, events, err = _run(tmp_path, task=_NO_CHANGE)
    assert code == 0, err
    assert events[-1]["outcome_code"] == "success"


def test_a_compacted_history_keeps_its_system_messages_before_the_example() -> None:
    """After a compaction the history opens with the summary and the envelope (system
    messages); the example exchange goes after them, so every system message still precedes the
    conversation as in any request (chat templates such as Mistral's refuse a system message
    after an assistant turn, and the example ends with one)."""
    history = [
        Message(role="system", content="summary", name="summary"),
        Message(role="system", content="envelope", name="envelope"),
        Message(role="user", content="Fix it"),
        Message(role="assistant", content="ok"),
    ]
    shaped = LeadIn(files="a.txt\n```\n1\n```").shape(history)
    roles = [m.role for m in shaped]
    assert roles == ["system", "system", *(m.role for m in EXAMPLE_EXCHANGE), "user", "assistant"]
    assert shaped[len(EXAMPLE_EXCHANGE) + 2].content.endswith("Task: Fix it")
