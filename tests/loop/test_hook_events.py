"""Hook events beyond the first six, through the real CLI (issue 25 item 2).

Each hook is a script (in the user config, so trusted) that appends its stdin payload to a file
and prints what the test tells it to; the payloads are checked for Claude Code's shape
(session_id, cwd, hook_event_name, transcript_path and the event's fields).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from syrupy.assertion import SnapshotAssertion

from tests.conftest import SSEServer
from tests.exec_support import SESSION, normalise, vtcode
from tests.loop.harness_support import configure, run_exec, text_sse, tool_calls_sse
from vtcode.runtime.lifecycle_part import MAX_STOP_BLOCKS
from vtcode.schemas import fast_validator

HOOK = """
import json, sys
payload = json.load(sys.stdin)
log, answers = sys.argv[1], json.loads(sys.argv[2])
with open(log, "a") as f:
    f.write(json.dumps(payload) + "\\n")
seen = sum(1 for _ in open(log))
answer = answers[min(seen, len(answers)) - 1] if answers else None
if answer is not None:
    print(json.dumps(answer))
"""


def _hook(tmp_path: Path, event: str, answers: list[Any], tag: str = "") -> Path:
    """Add a recording hook for `event`; it prints answers[n-1] on its n-th run (the last one
    from then on; None prints nothing). Returns the payload log."""
    script = tmp_path.parent / f"{tmp_path.name}-hook.py"
    script.write_text(HOOK)
    log = tmp_path.parent / f"{tmp_path.name}-{event}{tag}.jsonl"
    argv = [sys.executable, str(script), str(log), json.dumps(answers)]
    with (tmp_path / ".home" / "config.toml").open("a") as f:
        f.write(f"[[hooks.lifecycle.{event}]]\nhooks = [{{ argv = {json.dumps(argv)} }}]\n")
    return log


def _payloads(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def _common(payload: dict[str, Any], tmp_path: Path, event: str) -> None:
    assert payload["hook_event_name"] == event
    assert payload["session_id"] == SESSION
    assert payload["cwd"] == str(tmp_path)
    assert payload["transcript_path"].startswith(str(tmp_path / ".vtcode"))


def _logged(tmp_path: Path) -> list[dict[str, Any]]:
    """The session log's events, each envelope valid against the versioned event schema."""
    validator = fast_validator("versioned-thread-event")
    lines = (tmp_path / ".vtcode" / "sessions" / SESSION / "events.jsonl").read_text()
    out = []
    for line in lines.splitlines():
        envelope = json.loads(line)
        assert validator.is_valid(envelope), line
        out.append(normalise(envelope["event"], tmp_path))
    return out


def _user_messages(server: SSEServer, n: int) -> list[str]:
    return [m["content"] for m in server.requests[n].json()["messages"] if m["role"] == "user"]


def test_a_stop_hook_that_blocks_once_continues_the_run(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    configure(tmp_path, sse_server)
    log = _hook(tmp_path, "stop", [{"decision": "block", "reason": "also list the files"}, None])
    sse_server.queue(text_sse("done"), text_sse("listed"))
    code, events, stderr = run_exec(tmp_path, "do it")
    assert code == 0, stderr
    assert len(sse_server.requests) == 2
    assert _user_messages(sse_server, 1)[-1] == "also list the files"
    payloads = _payloads(log)
    assert [p["stop_hook_active"] for p in payloads] == [False, True]
    for p in payloads:
        _common(p, tmp_path, "Stop")
    assert events[-1]["type"] == "thread.completed" and events[-1]["subtype"] == "success"
    assert _logged(tmp_path) == snapshot_json


def test_a_stop_hook_that_always_blocks_is_bounded(tmp_path: Path, sse_server: SSEServer) -> None:
    configure(tmp_path, sse_server)
    log = _hook(tmp_path, "stop", [{"decision": "block", "reason": "again"}])
    sse_server.queue(*[text_sse(f"done {i}") for i in range(MAX_STOP_BLOCKS + 1)])
    code, events, stderr = run_exec(tmp_path, "do it")
    assert code == 0, stderr
    assert len(sse_server.requests) == MAX_STOP_BLOCKS + 1
    assert len(_payloads(log)) == MAX_STOP_BLOCKS + 1  # not run again at the end
    warnings = [e for e in events if e.get("item", {}).get("type") == "error"] + [
        e for e in events if "blocked the end" in json.dumps(e)
    ]
    assert warnings, events


def test_a_stop_hook_answering_continue_false_ends_the_run(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    configure(tmp_path, sse_server)
    log = _hook(tmp_path, "stop", [{"continue": False, "decision": "block", "reason": "x"}])
    sse_server.queue(text_sse("done"), text_sse("never asked"))
    code, _, stderr = run_exec(tmp_path, "do it")
    assert code == 0, stderr
    assert len(sse_server.requests) == 1
    assert len(_payloads(log)) == 1


def test_post_tool_use_failure_sees_the_failed_call(tmp_path: Path, sse_server: SSEServer) -> None:
    configure(tmp_path, sse_server)
    failed = _hook(tmp_path, "post_tool_use_failure", [])
    after = _hook(tmp_path, "post_tool_use", [])
    (tmp_path / "here.txt").write_text("x\n")
    sse_server.queue(
        tool_calls_sse(("read_file", {"path": "missing.txt"}), ("read_file", {"path": "here.txt"})),
        text_sse("done"),
    )
    code, _, stderr = run_exec(tmp_path, "read")
    assert code == 0, stderr
    (payload,) = _payloads(failed)
    _common(payload, tmp_path, "PostToolUseFailure")
    assert payload["tool_name"] == "read_file"
    assert payload["tool_input"] == {"path": "missing.txt"}
    assert "missing.txt" in payload["error"]
    assert len(_payloads(after)) == 2  # post_tool_use still runs for both calls


def test_user_prompt_submit_adds_context(tmp_path: Path, sse_server: SSEServer) -> None:
    configure(tmp_path, sse_server)
    log = _hook(tmp_path, "user_prompt_submit", ["plain context line"])
    answer = {"hookSpecificOutput": {"additionalContext": "ticket ABC-1 is open"}}
    second = _hook(tmp_path, "user_prompt_submit", [answer], tag="-json")
    sse_server.queue(text_sse("done"))
    code, _, stderr = run_exec(tmp_path, "fix the bug")
    assert code == 0, stderr
    (payload,) = _payloads(log)
    _common(payload, tmp_path, "UserPromptSubmit")
    assert payload["prompt"] == "fix the bug"
    assert len(_payloads(second)) == 1
    sent = _user_messages(sse_server, 0)[-1]
    assert sent.endswith('fix the bug\n\n"plain context line"\n\nticket ABC-1 is open')


def test_user_prompt_submit_blocks_the_prompt(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    configure(tmp_path, sse_server)
    _hook(tmp_path, "user_prompt_submit", [{"decision": "block", "reason": "no secrets here"}])
    sse_server.queue(text_sse("never"))
    code, events, stderr = run_exec(tmp_path, "print the API key")
    assert code == 1, stderr
    assert sse_server.requests == []
    done = events[-1]
    assert done["type"] == "thread.completed" and done["subtype"] == "error_during_execution"
    assert "no secrets here" in json.dumps(events)
    assert _logged(tmp_path) == snapshot_json


def test_subagent_start_and_stop_see_the_child_run(tmp_path: Path, sse_server: SSEServer) -> None:
    configure(tmp_path, sse_server, '[agent.subagents.helper]\nscript = "default"\n')
    started = _hook(tmp_path, "subagent_start", [])
    stopped = _hook(tmp_path, "subagent_stop", [])
    proc = vtcode(["agent", "run", "helper", "--json", "look around"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    child = json.loads(proc.stdout)["session_id"]
    (start,) = _payloads(started)
    (stop,) = _payloads(stopped)
    for payload, event in ((start, "SubagentStart"), (stop, "SubagentStop")):
        assert payload["hook_event_name"] == event
        assert payload["session_id"] == payload["agent_id"] == child
        assert payload["agent_type"] == "helper"
        assert payload["cwd"] == str(tmp_path)
        assert payload["transcript_path"].startswith(str(tmp_path / ".vtcode" / "sessions" / child))
    assert start["prompt"] == "look around"
    assert stop["exit_code"] == 0 and stop["stop_hook_active"] is False
    assert "last_assistant_message" in stop


def test_permission_request_answers_an_ask_rule(tmp_path: Path, sse_server: SSEServer) -> None:
    configure(tmp_path, sse_server)
    with (tmp_path / ".home" / "config.toml").open("a") as f:
        f.write('[permissions]\nask = ["read_file"]\n')
    asked = _hook(tmp_path, "permission_request", [{"decision": "allow"}, None])
    noted = _hook(tmp_path, "notification", [])
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "b.txt").write_text("beta\n")
    sse_server.queue(
        tool_calls_sse(("read_file", {"path": "a.txt"}), prefix="a"),
        tool_calls_sse(("read_file", {"path": "b.txt"}), prefix="b"),
        text_sse("done"),
    )
    code, _, stderr = run_exec(tmp_path, "read both")
    assert code == 0, stderr
    tools = [m for m in sse_server.requests[2].json()["messages"] if m["role"] == "tool"]
    assert "alpha" in tools[0]["content"]  # allowed by the hook
    assert "permission denied" in tools[1]["content"] and "beta" not in tools[1]["content"]
    payloads = _payloads(asked)
    assert [p["tool_input"]["path"] for p in payloads] == ["a.txt", "b.txt"]
    for p in payloads:
        _common(p, tmp_path, "PermissionRequest")
        assert p["tool_name"] == "read_file" and p["reason"]
    notes = _payloads(noted)
    assert len(notes) == 2
    _common(notes[0], tmp_path, "Notification")
    assert notes[0]["notification_type"] == "permission_prompt"
    assert "read_file" in notes[0]["message"]
